// The data-flow graph: what every instruction, value and block *is*, with no
// notion of order (that is the Layout's job). Values are defined by an
// instruction result, a block parameter, or are aliases of another value.
#pragma once

#include <span>
#include <vector>

#include "codegen/ir/entity.h"
#include "codegen/ir/instructions.h"
#include "codegen/ir/signature.h"
#include "codegen/ir/types.h"

namespace heron {

/// Where a value comes from.
struct ValueDef {
    enum class Kind : uint8_t { Result, Param, Alias };
    Kind kind;
    uint32_t owner;  // Inst index, Block index, or the aliased Value index
    uint32_t num;    // result / parameter position

    Inst inst() const { return Inst(owner); }
    Block block() const { return Block(owner); }
    bool is_result() const { return kind == Kind::Result; }
    bool is_param() const { return kind == Kind::Param; }
};

struct ValueData {
    Type type;
    ValueDef::Kind kind = ValueDef::Kind::Result;
    uint32_t num = 0;
    uint32_t owner = 0;
};

struct BlockData {
    ValueList params;
};

class DataFlowGraph {
public:
    /// Forgets everything but keeps the memory for the next function.
    void clear();

    // --- instructions -------------------------------------------------------
    /// Adds an instruction without results; see make_inst_results.
    Inst make_inst(const InstructionData& data);
    uint32_t num_insts() const { return insts_.size(); }
    InstructionData& operator[](Inst i) { return insts_[i]; }
    const InstructionData& operator[](Inst i) const { return insts_[i]; }
    bool inst_is_valid(Inst i) const { return insts_.is_valid(i); }

    /// Creates the result values of `inst` from its opcode and controlling
    /// type (calls take the callee's signature). Returns how many.
    uint32_t make_inst_results(Inst inst, Type ctrl);
    /// The result types `inst` would get; empty span for calls to an
    /// invalid reference.
    void result_types(Inst inst, Type ctrl, std::vector<Type>& out) const;
    /// The result types of an opcode with a fixed result count (not a
    /// call) into `out`; returns how many.
    static unsigned fixed_result_types(const OpcodeInfo& info, Type ctrl, Type out[2]);
    std::span<const Value> inst_results(Inst inst) const {
        const InstResults& r = results(inst);
        if (r.list.empty()) return {&r.single, r.single.is_valid() ? 1u : 0u};
        return r.list.as_span(value_lists);
    }
    uint32_t num_results(Inst inst) const {
        const InstResults& r = results(inst);
        return r.list.empty() ? (r.single.is_valid() ? 1 : 0) : r.list.size(value_lists);
    }
    Value first_result(Inst inst) const {
        const InstResults& r = results(inst);
        HERON_ASSERT((r.single.is_valid() || !r.list.empty()) && "instruction has no results");
        return r.list.empty() ? r.single : r.list.get(0, value_lists);
    }
    bool has_results(Inst inst) const {
        const InstResults& r = results(inst);
        return r.single.is_valid() || !r.list.empty();
    }
    /// Drops the result list (the values stay defined but orphaned).
    void clear_results(Inst inst);
    /// Adds one result value of `type` to `inst` (used by parsers that name
    /// results themselves).
    Value append_result(Inst inst, Type type);

    /// The controlling type of `inst` (ir-reference.md 1.5).
    Type ctrl_typevar(Inst inst) const;

    /// Value operands that are not branch arguments, in operand order:
    /// fixed args, then the variable list.
    void inst_fixed_values(Inst inst, std::vector<Value>& out) const;
    /// Calls f(Value&) for every value operand including branch arguments.
    template <typename F>
    void for_each_inst_value(Inst inst, F&& f);
    template <typename F>
    void for_each_inst_value(Inst inst, F&& f) const;
    /// Replaces every operand `v` of `inst` by resolve_aliases(v).
    void resolve_aliases_in_arguments(Inst inst);

    /// The variable operand list as a span (call arguments, return values).
    std::span<const Value> inst_variable_args(Inst inst) const { return insts_[inst].vargs.as_span(value_lists); }
    /// Call arguments without the callee of call_indirect.
    std::span<const Value> call_args(Inst inst) const {
        const InstructionData& d = insts_[inst];
        const auto all = d.vargs.as_span(value_lists);
        if (d.format() == InstructionFormat::CallIndirect && !all.empty()) return all.subspan(1);
        return all;
    }

    /// Branch destinations of a branch (empty for anything else); for
    /// br_table [default, entries...].
    std::span<const BlockCall> branch_destinations(Inst inst) const {
        const InstructionData& d = insts_[inst];
        switch (d.format()) {
        case InstructionFormat::Jump: return {d.dests.data(), 1};
        case InstructionFormat::Brif: return {d.dests.data(), 2};
        case InstructionFormat::BranchTable: return table_destinations(d);
        default: return {};
        }
    }
    std::span<BlockCall> branch_destinations_mut(Inst inst) {
        InstructionData& d = insts_[inst];
        switch (d.format()) {
        case InstructionFormat::Jump: return {d.dests.data(), 1};
        case InstructionFormat::Brif: return {d.dests.data(), 2};
        case InstructionFormat::BranchTable:
            if (!jump_tables.is_valid(d.jump_table())) return {};
            return jump_tables[d.jump_table()].all;
        default: return {};
        }
    }

    /// The callee signature of a call (or return_call), if it is one.
    std::optional<SigRef> call_signature(Inst inst) const;

    // --- values -------------------------------------------------------------
    uint32_t num_values() const { return values_.size(); }
    bool value_is_valid(Value v) const { return values_.is_valid(v); }
    Type value_type(Value v) const { return values_[v].type; }
    void set_value_type(Value v, Type t) { values_[v].type = t; }
    ValueDef value_def(Value v) const {
        const ValueData& vd = values_[v];
        return ValueDef{vd.kind, vd.owner, vd.num};
    }
    /// Follows alias chains to the real value.
    Value resolve_aliases(Value v) const;
    /// Makes `dest` an alias of `src` (dest's old definition is forgotten).
    void change_to_alias(Value dest, Value src);
    /// Creates a value that will be an alias; used by the parser for
    /// `vA -> vB` lines before vB exists.
    Value make_value_alias(Value src, Type type);
    bool value_is_alias(Value v) const { return values_[v].kind == ValueDef::Kind::Alias; }
    /// Creates a value with no definition yet, to be bound later with
    /// attach_result / attach_param (parser forward references).
    Value make_value_placeholder(Type type);

    // --- blocks -------------------------------------------------------------
    Block make_block();
    uint32_t num_blocks() const { return blocks_.size(); }
    bool block_is_valid(Block b) const { return blocks_.is_valid(b); }
    Value append_block_param(Block b, Type t);
    std::span<const Value> block_params(Block b) const { return blocks_[b].params.as_span(value_lists); }
    uint32_t num_block_params(Block b) const { return blocks_[b].params.size(value_lists); }
    /// Removes parameter `i` of `b`; the value is orphaned.
    void remove_block_param(Block b, uint32_t i);
    /// Attach an existing (placeholder) value as the next param of b.
    void attach_block_param(Block b, Value v);
    /// Attach an existing value as the next result of inst.
    void attach_result(Inst inst, Value v);

    BlockCall block_call(Block b, std::span<const Value> args) {
        return BlockCall::make(b, args, value_lists);
    }

    // --- the tables as arrays -----------------------------------------------
    // For loops over many instructions or values that check each index
    // against num_insts() / num_values() once (the verifier): no reload of
    // the vectors' pointers through the DFG for every read.
    const InstructionData* inst_data() const { return insts_.data(); }
    const ValueData* value_data() const { return values_.data(); }

    // --- preamble entities --------------------------------------------------
    PrimaryMap<SigRef, Signature> signatures;
    PrimaryMap<FuncRef, ExtFuncData> ext_funcs;
    PrimaryMap<JumpTable, JumpTableData> jump_tables;

    /// Shared storage for every value list (operands, block params, branch
    /// arguments).
    ValueListPool value_lists;

private:
    PrimaryMap<Inst, InstructionData> insts_;
    PrimaryMap<Block, BlockData> blocks_;
    PrimaryMap<Value, ValueData> values_;

    /// An instruction's results: a single result (most instructions) is
    /// held here; two or more live in the value-list pool, `single` then
    /// unused (reserved).
    struct InstResults {
        Value single;
        ValueList list;
    };
    /// By instruction, pushed by make_inst: every instruction has an entry.
    std::vector<InstResults> results_;
    const InstResults& results(Inst inst) const {
        HERON_ASSERT(inst.index() < results_.size() && "instruction out of range");
        return results_[inst.index()];
    }
    /// Appends `v` to the results of `inst` (append_result, attach_result).
    void push_result(Inst inst, Value v);
    std::span<const BlockCall> table_destinations(const InstructionData& d) const {
        if (!jump_tables.is_valid(d.jump_table())) return {};
        return jump_tables[d.jump_table()].all;
    }
};

template <typename F>
void DataFlowGraph::for_each_inst_value(Inst inst, F&& f) {
    InstructionData& d = insts_[inst];
    unsigned n = d.num_fixed_args();
    for (unsigned i = 0; i < n; ++i) f(d.args[i]);
    uint32_t nv = d.vargs.size(value_lists);
    for (uint32_t i = 0; i < nv; ++i) {
        Value v = d.vargs.get(i, value_lists);
        Value w = v;
        f(w);
        if (w != v) d.vargs.set(i, w, value_lists);
    }
    for (BlockCall& bc : branch_destinations_mut(inst)) {
        for (Value& v : bc.args_mut(value_lists)) f(v);
    }
}

template <typename F>
void DataFlowGraph::for_each_inst_value(Inst inst, F&& f) const {
    const InstructionData& d = insts_[inst];
    unsigned n = d.num_fixed_args();
    for (unsigned i = 0; i < n; ++i) f(d.args[i]);
    for (Value v : d.vargs.as_span(value_lists)) f(v);
    for (const BlockCall& bc : branch_destinations(inst)) {
        for (Value v : bc.args(value_lists)) f(v);
    }
}

}  // namespace heron
