// Turns a Function into the interpreter's flat DecodedFunction (decoded.h):
// one DOp per instruction in layout order, registers = value indices after
// alias resolution, branch edges with their argument/parameter lists, call
// sites, and the frame layout of the stack slots. Structural problems that
// would make execution crash on unverified IR are recorded in `error`.
#include <algorithm>
#include <string>

#include "codegen/interp/decoded.h"

namespace heron::interp {
namespace {

bool is_pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }
uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

class Decoder {
public:
    Decoder(const Function& f, DecodedFunction& out) : f_(f), dfg_(f.dfg), out_(out) {}

    void run() {
        out_.func = &f_;
        out_.name = f_.name.to_string();
        out_.num_regs = dfg_.num_values();
        for (const AbiParam& p : f_.signature.params) out_.param_types.push_back(p.type);
        for (const AbiParam& p : f_.signature.returns) out_.return_types.push_back(p.type);
        if (!layout_slots()) return;
        if (!layout_code()) return;
        for (Edge& e : out_.edges) e.target = block_pc_[e.block.index()];
    }

private:
    bool fail(std::string msg) {
        if (out_.error.empty()) out_.error = out_.name + ": " + std::move(msg);
        return false;
    }
    bool fail_at(Inst inst, const std::string& msg) {
        auto b = f_.layout.inst_block(inst);
        return fail(inst.to_string() + (b ? " in " + b->to_string() : std::string()) + " (" +
                    std::string(opcode_name(dfg_[inst].opcode)) + "): " + msg);
    }

    bool layout_slots() {
        uint64_t off = 0;
        for (StackSlot ss : f_.stack_slots.keys()) {
            const StackSlotData& d = f_.stack_slots[ss];
            if (!is_pow2(d.align) || d.align > 4096) return fail(ss.to_string() + ": bad alignment");
            uint64_t a = std::max<uint64_t>(8, d.align);
            out_.frame_align = std::max(out_.frame_align, a);
            off = align_up(off, a);
            out_.slots.push_back({off, d.size});
            if (d.size != 0) out_.slots_by_offset.push_back(ss.index());
            off += d.size;
        }
        out_.frame_bytes = align_up(off, 16);
        return true;
    }

    bool layout_code() {
        auto entry = f_.layout.entry_block();
        if (!entry) return fail("function has no blocks");
        auto params = dfg_.block_params(*entry);
        if (params.size() != f_.signature.params.size()) {
            return fail("entry block has " + std::to_string(params.size()) + " parameters, signature " +
                        std::to_string(f_.signature.params.size()));
        }
        for (Value v : params) out_.entry_params.push_back(v.index());
        block_pc_.assign(dfg_.num_blocks(), UINT32_MAX);
        for (Block b : f_.layout.blocks()) {
            block_pc_[b.index()] = static_cast<uint32_t>(out_.code.size());
            auto last = f_.layout.last_inst(b);
            if (!last) return fail(b.to_string() + " is empty");
            if (!is_terminator(dfg_[*last].opcode)) return fail(b.to_string() + " does not end with a terminator");
            for (Inst i : f_.layout.block_insts(b)) {
                DOp op;
                if (!decode_inst(i, op)) return false;
                out_.code.push_back(op);
                out_.src_inst.push_back(i.index());
            }
        }
        for (const Edge& e : out_.edges) {
            if (e.block.index() >= block_pc_.size() || block_pc_[e.block.index()] == UINT32_MAX) {
                return fail("branch to " + e.block.to_string() + ", which is not in the layout");
            }
        }
        return true;
    }

    // --- operands -----------------------------------------------------------

    bool reg(Inst inst, Value v, uint32_t& out) {
        if (!v.is_valid() || !dfg_.value_is_valid(v)) return fail_at(inst, "invalid value operand " + v.to_string());
        out = dfg_.resolve_aliases(v).index();
        return true;
    }
    Type vtype(Value v) const { return dfg_.value_type(dfg_.resolve_aliases(v)); }

    /// Appends registers of `vals` to the pool; returns false on a bad value.
    bool push_regs(Inst inst, std::span<const Value> vals, uint32_t& at) {
        at = static_cast<uint32_t>(out_.pool.size());
        for (Value v : vals) {
            uint32_t r = 0;
            if (!reg(inst, v, r)) return false;
            out_.pool.push_back(r);
        }
        return true;
    }

    bool edge(Inst inst, const BlockCall& bc, uint32_t& id) {
        if (!bc.is_valid()) return fail_at(inst, "missing branch destination");
        Block target = bc.block(dfg_.value_lists);
        if (!dfg_.block_is_valid(target)) return fail_at(inst, "branch to invalid " + target.to_string());
        auto args = bc.args(dfg_.value_lists);
        auto params = dfg_.block_params(target);
        if (args.size() != params.size()) {
            return fail_at(inst, "passes " + std::to_string(args.size()) + " arguments to " + target.to_string() +
                                     ", which has " + std::to_string(params.size()) + " parameters");
        }
        Edge e;
        e.block = target;
        e.count = static_cast<uint32_t>(args.size());
        if (!push_regs(inst, args, e.args)) return false;
        e.params = static_cast<uint32_t>(out_.pool.size());
        for (Value p : params) out_.pool.push_back(p.index());
        out_.max_edge_args = std::max(out_.max_edge_args, e.count);
        id = static_cast<uint32_t>(out_.edges.size());
        out_.edges.push_back(e);
        return true;
    }

    bool call_site(Inst inst, const InstructionData& d, uint32_t& id) {
        CallSite cs;
        std::optional<SigRef> sig;
        if (d.format() == InstructionFormat::Call || d.opcode == Opcode::FuncAddr) {
            if (!dfg_.ext_funcs.is_valid(d.func_ref())) return fail_at(inst, "invalid " + d.func_ref().to_string());
            const ExtFuncData& ext = dfg_.ext_funcs[d.func_ref()];
            cs.callee_key = ext.name.to_string();
            sig = ext.signature;
        } else {
            sig = d.sig_ref();
        }
        if (!dfg_.signatures.is_valid(*sig)) return fail_at(inst, "invalid " + sig->to_string());
        cs.sig = &dfg_.signatures[*sig];
        if (d.opcode != Opcode::FuncAddr) {
            auto args = dfg_.call_args(inst);
            if (args.size() != cs.sig->params.size()) return fail_at(inst, "argument count does not match the signature");
            cs.num_args = static_cast<uint32_t>(args.size());
            if (!push_regs(inst, args, cs.args)) return false;
        }
        if (d.opcode == Opcode::Call || d.opcode == Opcode::CallIndirect) {
            auto res = dfg_.inst_results(inst);
            if (res.size() != cs.sig->returns.size()) return fail_at(inst, "result count does not match the signature");
            cs.num_results = static_cast<uint32_t>(res.size());
            if (!push_regs(inst, res, cs.results)) return false;
        }
        if (d.opcode == Opcode::ReturnCall || d.opcode == Opcode::ReturnCallIndirect) {
            bool same = cs.sig->returns.size() == f_.signature.returns.size();
            for (size_t i = 0; same && i < cs.sig->returns.size(); ++i) {
                same = cs.sig->returns[i].type == f_.signature.returns[i].type;
            }
            if (!same) return fail_at(inst, "tail callee's return types differ from the caller's");
        }
        id = static_cast<uint32_t>(out_.calls.size());
        out_.calls.push_back(std::move(cs));
        return true;
    }

    // --- types the helpers rely on (widths 8..64, int vs float) ----------------

    bool check_types(Inst inst, const InstructionData& d, Type ctrl) {
        auto need = [&](bool ok, const char* what) { return ok || fail_at(inst, what); };
        Type in = d.num_fixed_args() > 0 && d.args[0].is_valid() && dfg_.value_is_valid(d.args[0]) ? vtype(d.args[0])
                                                                                              : Type();
        switch (opcode_info(d.opcode).typing) {
        case Typing::NoTyping:
        case Typing::F32Const:
        case Typing::F64Const:
        case Typing::Address:
        case Typing::Condition:
        case Typing::BrTable:
        case Typing::Callee:
            return true;
        case Typing::IntConst:
        case Typing::Int1:
        case Typing::Int2:
        case Typing::IntOverflow:
        case Typing::IntCarry:
        case Typing::IntAddTrap:
        case Typing::Shift:
        case Typing::Bswap:
        case Typing::IntCmp:
            return need(ctrl.is_int(), "controlling type must be an integer type");
        case Typing::Bmask:
        case Typing::Extend:
        case Typing::Reduce:
            return need(ctrl.is_int() && in.is_int(), "operand and result must be integer types");
        case Typing::Bitwise1:
        case Typing::Bitwise2:
        case Typing::Bitwise3:
        case Typing::Select:
            return need(ctrl.is_valid(), "missing controlling type");
        case Typing::Float1:
        case Typing::Float2:
        case Typing::Float3:
        case Typing::FloatCmp:
            return need(ctrl.is_float(), "controlling type must be f32 or f64");
        case Typing::Fpromote:
            return need(ctrl == types::F64 && in == types::F32, "fpromote takes f32 to f64");
        case Typing::Fdemote:
            return need(ctrl == types::F32 && in == types::F64, "fdemote takes f64 to f32");
        case Typing::FloatToInt:
            return need(ctrl.is_int() && in.is_float(), "float operand and integer result required");
        case Typing::IntToFloat:
            return need(ctrl.is_float() && in.is_int(), "integer operand and float result required");
        case Typing::Bitcast:
            return need(ctrl.is_valid() && in.is_valid() && ctrl.bits() == in.bits(), "bitcast needs equal widths");
        case Typing::Load:
            return need(ctrl.is_valid(), "load needs a result type");
        case Typing::Store:
            return need(ctrl.is_valid(), "store needs a typed value");
        }
        return true;
    }

    static unsigned access_bytes(Opcode op, Type t) {
        switch (op) {
        case Opcode::Uload8: case Opcode::Sload8: case Opcode::Istore8: return 1;
        case Opcode::Uload16: case Opcode::Sload16: case Opcode::Istore16: return 2;
        case Opcode::Uload32: case Opcode::Sload32: case Opcode::Istore32: return 4;
        default: return t.bytes();
        }
    }

    bool decode_inst(Inst inst, DOp& op) {
        const InstructionData& d = dfg_[inst];
        const OpcodeInfo& info = opcode_info(d.opcode);
        op.op = d.opcode;
        Type ctrl = dfg_.ctrl_typevar(inst);
        op.bits = static_cast<uint8_t>(ctrl.bits());

        unsigned nfixed = d.num_fixed_args();
        uint32_t fixed[3] = {0, 0, 0};
        for (unsigned k = 0; k < nfixed; ++k) {
            if (!reg(inst, d.args[k], fixed[k])) return false;
        }
        if (!check_types(inst, d, ctrl)) return false;

        auto results = dfg_.inst_results(inst);
        if (info.results != kVarResults && results.size() != info.results) {
            return fail_at(inst, "has " + std::to_string(results.size()) + " results, expected " +
                                     std::to_string(info.results));
        }
        if (results.size() > 0) op.dst = results[0].index();
        if (results.size() > 1) op.dst2 = results[1].index();
        op.a = fixed[0];
        op.b = fixed[1];
        op.c = fixed[2];
        if (nfixed > 0) op.aux = static_cast<uint8_t>(vtype(d.args[0]).bits());  // operand width

        switch (d.format()) {
        case InstructionFormat::NullAry:
        case InstructionFormat::Unary:
        case InstructionFormat::UnaryFlags:
        case InstructionFormat::Binary:
        case InstructionFormat::Ternary:
            return true;
        case InstructionFormat::UnaryImm:
            op.imm = d.imm & ctrl.mask();
            return true;
        case InstructionFormat::UnaryIeee32:
            op.imm = d.imm & 0xffff'ffffu;
            return true;
        case InstructionFormat::UnaryIeee64:
            op.imm = d.imm;
            return true;
        case InstructionFormat::IntAddTrap:
        case InstructionFormat::IntCompare:
        case InstructionFormat::FloatCompare:
        case InstructionFormat::Trap:
        case InstructionFormat::CondTrap:
            op.aux = d.code;
            return true;
        case InstructionFormat::Load:
        case InstructionFormat::Store: {
            Type t = d.format() == InstructionFormat::Load ? ctrl : vtype(d.args[0]);
            op.aux = static_cast<uint8_t>(access_bytes(d.opcode, t));
            if (op.aux > t.bytes()) return fail_at(inst, "access wider than its type");
            op.aux2 = d.flags.bits;
            op.x = d.flags.trap_code() ? d.flags.trap_code()->byte : 0;  // 0: notrap
            op.imm = static_cast<uint64_t>(static_cast<int64_t>(d.offset));
            if (d.format() == InstructionFormat::Store) {
                op.a = fixed[1];  // address
                op.b = fixed[0];  // stored value
            }
            return true;
        }
        case InstructionFormat::StackAddr: {
            if (!f_.stack_slots.is_valid(d.stack_slot())) return fail_at(inst, "invalid " + d.stack_slot().to_string());
            op.imm = out_.slots[d.stack_slot().index()].offset + static_cast<uint64_t>(static_cast<int64_t>(d.offset));
            return true;
        }
        case InstructionFormat::FuncAddr:
        case InstructionFormat::Call:
            return call_site(inst, d, op.x);
        case InstructionFormat::CallIndirect: {
            auto va = dfg_.inst_variable_args(inst);
            if (va.empty()) return fail_at(inst, "missing callee operand");
            if (!reg(inst, va[0], op.a)) return false;
            return call_site(inst, d, op.x);
        }
        case InstructionFormat::Jump:
            return edge(inst, d.dests[0], op.x);
        case InstructionFormat::Brif:
            return edge(inst, d.dests[0], op.b) && edge(inst, d.dests[1], op.c);
        case InstructionFormat::BranchTable: {
            if (!dfg_.jump_tables.is_valid(d.jump_table())) return fail_at(inst, "invalid jump table");
            const JumpTableData& jt = dfg_.jump_tables[d.jump_table()];
            if (jt.all.empty()) return fail_at(inst, "jump table without a default");
            std::vector<uint32_t> ids;
            for (const BlockCall& bc : jt.all) {
                uint32_t id = 0;
                if (!edge(inst, bc, id)) return false;
                ids.push_back(id);
            }
            op.x = static_cast<uint32_t>(out_.tables.size());
            out_.tables.push_back(std::move(ids));
            return true;
        }
        case InstructionFormat::MultiAry: {
            auto vals = dfg_.inst_variable_args(inst);
            if (vals.size() != f_.signature.returns.size()) {
                return fail_at(inst, "returns " + std::to_string(vals.size()) + " values, signature has " +
                                         std::to_string(f_.signature.returns.size()));
            }
            op.b = static_cast<uint32_t>(vals.size());
            return push_regs(inst, vals, op.x);
        }
        }
        return true;
    }

    const Function& f_;
    const DataFlowGraph& dfg_;
    DecodedFunction& out_;
    std::vector<uint32_t> block_pc_;
};

}  // namespace

void decode_function(const Function& func, DecodedFunction& out) {
    out = DecodedFunction();
    Decoder(func, out).run();
}

}  // namespace heron::interp
