// InstBuilder: one method per opcode, generated from opcodes.def by format.
// A builder is anything that can take an InstructionData, put it somewhere
// and make its results: `Derived` provides
//     DataFlowGraph& builder_dfg();
//     Inst build(const InstructionData& data, Type ctrl);
// (the cursor inserts at its position; the frontend appends to the current
// block and records predecessors). Methods return the single result value,
// a pair for two results, and the Inst for none or a call's variable results.
#pragma once

#include <initializer_list>
#include <span>
#include <utility>

#include "codegen/ir/dfg.h"
#include "codegen/ir/instructions.h"

namespace heron {

template <typename Derived>
class InstBuilder {
public:
    // Helpers with no opcode of their own: emit iconst + op (ir-reference.md
    // 1.6 has no *_imm forms).
    Value iadd_imm(Value x, int64_t imm) {
        return self().iadd(x, self().iconst(dfg().value_type(x), imm));
    }
    Value icmp_imm(IntCC cc, Value x, int64_t imm) {
        return self().icmp(cc, x, self().iconst(dfg().value_type(x), imm));
    }
    Value f32const(float f) { return f32const(Ieee32::with_float(f)); }
    Value f64const(double d) { return f64const(Ieee64::with_double(d)); }
    Inst jump(Block b, std::initializer_list<Value> args) {
        return jump(b, std::span<const Value>(args.begin(), args.size()));
    }
    Inst jump(Block b) { return jump(b, std::span<const Value>()); }
    Inst brif(Value c, Block t, Block e) { return brif(c, t, {}, e, {}); }
    Inst return_(std::initializer_list<Value> vals) {
        return return_(std::span<const Value>(vals.begin(), vals.size()));
    }

// --- generated, one macro per (format, ctrl source, result count) ----------
#define HERON_RESULT_1 Value
#define HERON_RESULT_2 std::pair<Value, Value>
#define HERON_RESULT_0 Inst
#define HERON_RESULT_VAR Inst

#define HERON_B_UnaryImm_Result_1(E, m)                    \
    Value m(Type t, int64_t imm) {                         \
        InstructionData d;                                 \
        d.opcode = Opcode::E;                              \
        d.type = t;                                        \
        d.imm = static_cast<uint64_t>(imm) & t.mask();     \
        return one(d, t);                                  \
    }
#define HERON_B_UnaryIeee32_None_1(E, m) \
    Value m(Ieee32 v) {                  \
        InstructionData d;               \
        d.opcode = Opcode::E;            \
        d.imm = v.bits;                  \
        return one(d, types::F32);       \
    }
#define HERON_B_UnaryIeee64_None_1(E, m) \
    Value m(Ieee64 v) {                  \
        InstructionData d;               \
        d.opcode = Opcode::E;            \
        d.imm = v.bits;                  \
        return one(d, types::F64);       \
    }
#define HERON_B_NullAry_None_0(E, m) \
    Inst m() {                       \
        InstructionData d;           \
        d.opcode = Opcode::E;        \
        return self().build(d, Type()); \
    }
#define HERON_B_Unary_Arg0_1(E, m)                \
    Value m(Value x) {                            \
        InstructionData d;                        \
        d.opcode = Opcode::E;                     \
        d.args[0] = x;                            \
        return one(d, dfg().value_type(x));       \
    }
#define HERON_B_Unary_Result_1(E, m) \
    Value m(Type t, Value x) {       \
        InstructionData d;           \
        d.opcode = Opcode::E;        \
        d.type = t;                  \
        d.args[0] = x;               \
        return one(d, t);            \
    }
#define HERON_B_UnaryFlags_Result_1(E, m)        \
    Value m(Type t, Value x, MemFlags f = {}) {  \
        InstructionData d;                       \
        d.opcode = Opcode::E;                    \
        d.type = t;                              \
        d.flags = f;                             \
        d.args[0] = x;                           \
        return one(d, t);                        \
    }
#define HERON_B_Binary_Arg0_1(E, m)          \
    Value m(Value x, Value y) {              \
        InstructionData d;                   \
        d.opcode = Opcode::E;                \
        d.args[0] = x;                       \
        d.args[1] = y;                       \
        return one(d, dfg().value_type(x));  \
    }
#define HERON_B_Binary_Arg0_2(E, m)                 \
    std::pair<Value, Value> m(Value x, Value y) {   \
        InstructionData d;                          \
        d.opcode = Opcode::E;                       \
        d.args[0] = x;                              \
        d.args[1] = y;                              \
        return two(d, dfg().value_type(x));         \
    }
#define HERON_B_Ternary_Arg1_1(E, m)         \
    Value m(Value x, Value y, Value z) {     \
        InstructionData d;                   \
        d.opcode = Opcode::E;                \
        d.args = {x, y, z};                  \
        return one(d, dfg().value_type(y));  \
    }
#define HERON_B_Ternary_Arg1_2(E, m)                         \
    std::pair<Value, Value> m(Value x, Value y, Value z) {   \
        InstructionData d;                                   \
        d.opcode = Opcode::E;                                \
        d.args = {x, y, z};                                  \
        return two(d, dfg().value_type(y));                  \
    }
#define HERON_B_IntAddTrap_Arg0_1(E, m)           \
    Value m(Value x, Value y, TrapCode code) {    \
        InstructionData d;                        \
        d.opcode = Opcode::E;                     \
        d.args[0] = x;                            \
        d.args[1] = y;                            \
        d.code = code.byte;                       \
        return one(d, dfg().value_type(x));       \
    }
#define HERON_B_IntCompare_Arg0_1(E, m)         \
    Value m(IntCC cc, Value x, Value y) {       \
        InstructionData d;                      \
        d.opcode = Opcode::E;                   \
        d.code = static_cast<uint8_t>(cc);      \
        d.args[0] = x;                          \
        d.args[1] = y;                          \
        return one(d, dfg().value_type(x));     \
    }
#define HERON_B_FloatCompare_Arg0_1(E, m)       \
    Value m(FloatCC cc, Value x, Value y) {     \
        InstructionData d;                      \
        d.opcode = Opcode::E;                   \
        d.code = static_cast<uint8_t>(cc);      \
        d.args[0] = x;                          \
        d.args[1] = y;                          \
        return one(d, dfg().value_type(x));     \
    }
#define HERON_B_Load_Result_1(E, m)                              \
    Value m(Type t, MemFlags f, Value p, int32_t offset = 0) {   \
        InstructionData d;                                       \
        d.opcode = Opcode::E;                                    \
        d.type = t;                                              \
        d.flags = f;                                             \
        d.args[0] = p;                                           \
        d.offset = offset;                                       \
        return one(d, t);                                        \
    }
#define HERON_B_Store_Arg0_0(E, m)                                       \
    Inst m(MemFlags f, Value x, Value p, int32_t offset = 0) {           \
        InstructionData d;                                               \
        d.opcode = Opcode::E;                                            \
        d.flags = f;                                                     \
        d.args[0] = x;                                                   \
        d.args[1] = p;                                                   \
        d.offset = offset;                                               \
        return self().build(d, dfg().value_type(x));                     \
    }
#define HERON_B_StackAddr_Result_1(E, m)                    \
    Value m(Type t, StackSlot ss, int32_t offset = 0) {     \
        InstructionData d;                                  \
        d.opcode = Opcode::E;                               \
        d.type = t;                                         \
        d.entity = ss.index();                              \
        d.offset = offset;                                  \
        return one(d, t);                                   \
    }
#define HERON_B_FuncAddr_Result_1(E, m)  \
    Value m(Type t, FuncRef fn) {        \
        InstructionData d;               \
        d.opcode = Opcode::E;            \
        d.type = t;                      \
        d.entity = fn.index();           \
        return one(d, t);                \
    }
#define HERON_B_Jump_None_0(E, m)                             \
    Inst m(Block b, std::span<const Value> args) {            \
        InstructionData d;                                    \
        d.opcode = Opcode::E;                                 \
        d.dests[0] = dfg().block_call(b, args);               \
        return self().build(d, Type());                       \
    }
#define HERON_B_Brif_Arg0_0(E, m)                                                   \
    Inst m(Value c, Block t, std::span<const Value> targs, Block e,                 \
           std::span<const Value> eargs) {                                          \
        InstructionData d;                                                          \
        d.opcode = Opcode::E;                                                       \
        d.args[0] = c;                                                              \
        d.dests[0] = dfg().block_call(t, targs);                                    \
        d.dests[1] = dfg().block_call(e, eargs);                                    \
        return self().build(d, dfg().value_type(c));                                \
    }
#define HERON_B_BranchTable_None_0(E, m)  \
    Inst m(Value index, JumpTable jt) {   \
        InstructionData d;                \
        d.opcode = Opcode::E;             \
        d.args[0] = index;                \
        d.entity = jt.index();            \
        return self().build(d, Type());   \
    }
#define HERON_B_MultiAry_None_0(E, m)                                       \
    Inst m(std::span<const Value> vals) {                                   \
        InstructionData d;                                                  \
        d.opcode = Opcode::E;                                               \
        d.vargs = ValueList::from(vals.begin(), vals.end(), dfg().value_lists); \
        return self().build(d, Type());                                     \
    }
#define HERON_B_Trap_None_0(E, m)       \
    Inst m(TrapCode code) {             \
        InstructionData d;              \
        d.opcode = Opcode::E;           \
        d.code = code.byte;             \
        return self().build(d, Type()); \
    }
#define HERON_B_CondTrap_Arg0_0(E, m)                 \
    Inst m(Value c, TrapCode code) {                  \
        InstructionData d;                            \
        d.opcode = Opcode::E;                         \
        d.args[0] = c;                                \
        d.code = code.byte;                           \
        return self().build(d, dfg().value_type(c));  \
    }
#define HERON_B_CALL(E, m)                                                  \
    Inst m(FuncRef fn, std::span<const Value> args) {                       \
        InstructionData d;                                                  \
        d.opcode = Opcode::E;                                               \
        d.entity = fn.index();                                              \
        d.vargs = ValueList::from(args.begin(), args.end(), dfg().value_lists); \
        return self().build(d, Type());                                     \
    }
#define HERON_B_CALL_INDIRECT(E, m)                                          \
    Inst m(SigRef sig, Value callee, std::span<const Value> args) {          \
        InstructionData d;                                                   \
        d.opcode = Opcode::E;                                                \
        d.entity = sig.index();                                              \
        d.vargs.push(callee, dfg().value_lists);                             \
        for (Value a : args) d.vargs.push(a, dfg().value_lists);             \
        return self().build(d, dfg().value_type(callee));                    \
    }
#define HERON_B_Call_None_VAR(E, m) HERON_B_CALL(E, m)
#define HERON_B_Call_None_0(E, m) HERON_B_CALL(E, m)
#define HERON_B_CallIndirect_Arg0_VAR(E, m) HERON_B_CALL_INDIRECT(E, m)
#define HERON_B_CallIndirect_Arg0_0(E, m) HERON_B_CALL_INDIRECT(E, m)

#define HERON_OPCODE(E, ident, text, fmt, res, ctrl, typing, flags) HERON_B_##fmt##_##ctrl##_##res(E, ident)
#include "codegen/ir/opcodes.def"
#undef HERON_OPCODE

#undef HERON_B_CALL
#undef HERON_B_CALL_INDIRECT
#undef HERON_RESULT_0
#undef HERON_RESULT_1
#undef HERON_RESULT_2
#undef HERON_RESULT_VAR

private:
    Derived& self() { return static_cast<Derived&>(*this); }
    DataFlowGraph& dfg() { return self().builder_dfg(); }
    Value one(const InstructionData& d, Type ctrl) {
        return dfg().first_result(self().build(d, ctrl));
    }
    std::pair<Value, Value> two(const InstructionData& d, Type ctrl) {
        auto r = dfg().inst_results(self().build(d, ctrl));
        return {r[0], r[1]};
    }
};

}  // namespace heron
