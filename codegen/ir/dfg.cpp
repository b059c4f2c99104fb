// DataFlowGraph: instruction, value and block storage.
#include "codegen/ir/dfg.h"

namespace heron {

void DataFlowGraph::clear() {
    insts_.clear();
    results_.clear();
    blocks_.clear();
    values_.clear();
    signatures.clear();
    ext_funcs.clear();
    jump_tables.clear();
    value_lists.clear();
}

Inst DataFlowGraph::make_inst(const InstructionData& data) {
    Inst i = insts_.push(data);
    results_.push_back(InstResults{});
    return i;
}

Type DataFlowGraph::ctrl_typevar(Inst inst) const {
    const InstructionData& d = insts_[inst];
    switch (opcode_info(d.opcode).ctrl) {
    case CtrlSource::None: return Type();
    case CtrlSource::Result: return d.type;
    case CtrlSource::Arg0:
        if (d.format() == InstructionFormat::CallIndirect) {
            return d.vargs.empty() ? Type() : value_type(d.vargs.get(0, value_lists));
        }
        return d.args[0].is_valid() && values_.is_valid(d.args[0]) ? value_type(d.args[0]) : Type();
    case CtrlSource::Arg1:
        return d.args[1].is_valid() && values_.is_valid(d.args[1]) ? value_type(d.args[1]) : Type();
    }
    return Type();
}

std::optional<SigRef> DataFlowGraph::call_signature(Inst inst) const {
    const InstructionData& d = insts_[inst];
    switch (d.format()) {
    case InstructionFormat::Call:
        if (!ext_funcs.is_valid(d.func_ref())) return std::nullopt;
        return ext_funcs[d.func_ref()].signature;
    case InstructionFormat::CallIndirect:
        return d.sig_ref();
    default:
        return std::nullopt;
    }
}

unsigned DataFlowGraph::fixed_result_types(const OpcodeInfo& info, Type ctrl, Type out[2]) {
    if (info.results == 0) return 0;
    switch (info.typing) {
    case Typing::IntCmp:
    case Typing::FloatCmp:
        out[0] = types::I8;
        return 1;
    case Typing::IntOverflow:
    case Typing::IntCarry:
        out[0] = ctrl;
        out[1] = types::I8;
        return 2;
    case Typing::Address:
        out[0] = ctrl.is_valid() ? ctrl : types::POINTER;
        return 1;
    default:
        out[0] = ctrl;
        return 1;
    }
}


void DataFlowGraph::result_types(Inst inst, Type ctrl, std::vector<Type>& out) const {
    out.clear();
    const InstructionData& d = insts_[inst];
    const OpcodeInfo& info = opcode_info(d.opcode);
    if (info.results == kVarResults) {
        auto sig = call_signature(inst);
        if (!sig || !signatures.is_valid(*sig)) return;
        for (const AbiParam& p : signatures[*sig].returns) out.push_back(p.type);
        return;
    }
    Type fixed[2];
    out.assign(fixed, fixed + fixed_result_types(info, ctrl, fixed));
}

uint32_t DataFlowGraph::make_inst_results(Inst inst, Type ctrl) {
    const OpcodeInfo& info = opcode_info(insts_[inst].opcode);
    if (info.results != kVarResults) {
        // Every builder call comes here: no vector for one or two types.
        Type fixed[2];
        const unsigned n = fixed_result_types(info, ctrl, fixed);
        for (unsigned i = 0; i < n; ++i) append_result(inst, fixed[i]);
        return n;
    }
    thread_local std::vector<Type> tys;
    result_types(inst, ctrl, tys);
    for (Type t : tys) append_result(inst, t);
    return static_cast<uint32_t>(tys.size());
}

Value DataFlowGraph::append_result(Inst inst, Type type) {
    Value v = values_.push(ValueData{type, ValueDef::Kind::Result, num_results(inst), inst.index()});
    push_result(inst, v);
    return v;
}

void DataFlowGraph::attach_result(Inst inst, Value v) {
    const uint32_t num = num_results(inst);
    ValueData& vd = values_[v];
    vd.kind = ValueDef::Kind::Result;
    vd.num = num;
    vd.owner = inst.index();
    push_result(inst, v);
}

void DataFlowGraph::push_result(Inst inst, Value v) {
    HERON_ASSERT(inst.index() < results_.size() && "instruction out of range");
    InstResults& r = results_[inst.index()];
    if (r.list.empty() && !r.single.is_valid()) {  // the first: no list
        r.single = v;
        return;
    }
    if (r.list.empty()) {  // the second: both into the pool
        r.list.push(r.single, value_lists);
        r.single = Value();
    }
    r.list.push(v, value_lists);
}

void DataFlowGraph::clear_results(Inst inst) {
    HERON_ASSERT(inst.index() < results_.size() && "instruction out of range");
    InstResults& r = results_[inst.index()];
    r.list.clear(value_lists);
    r.single = Value();
}

void DataFlowGraph::inst_fixed_values(Inst inst, std::vector<Value>& out) const {
    out.clear();
    const InstructionData& d = insts_[inst];
    unsigned n = d.num_fixed_args();
    for (unsigned i = 0; i < n; ++i) out.push_back(d.args[i]);
    uint32_t nv = d.vargs.size(value_lists);
    for (uint32_t i = 0; i < nv; ++i) out.push_back(d.vargs.get(i, value_lists));
}

void DataFlowGraph::resolve_aliases_in_arguments(Inst inst) {
    for_each_inst_value(inst, [this](Value& v) { v = resolve_aliases(v); });
}

Value DataFlowGraph::resolve_aliases(Value v) const {
    // Alias chains are short in practice; the bound stops a cycle built by a
    // malformed program from hanging (the verifier reports it).
    for (uint32_t steps = 0; steps <= values_.size(); ++steps) {
        const ValueData& vd = values_[v];
        if (vd.kind != ValueDef::Kind::Alias || vd.owner == v.index()) return v;
        v = Value(vd.owner);
    }
    return v;
}

void DataFlowGraph::change_to_alias(Value dest, Value src) {
    ValueData& vd = values_[dest];
    vd.kind = ValueDef::Kind::Alias;
    vd.owner = src.index();
    vd.num = 0;
}

Value DataFlowGraph::make_value_alias(Value src, Type type) {
    return values_.push(ValueData{type, ValueDef::Kind::Alias, 0, src.index()});
}

Value DataFlowGraph::make_value_placeholder(Type type) {
    // A self-alias: resolves to itself until attached.
    Value v = values_.next_key();
    values_.push(ValueData{type, ValueDef::Kind::Alias, 0, v.index()});
    return v;
}

Block DataFlowGraph::make_block() { return blocks_.push(BlockData{}); }

Value DataFlowGraph::append_block_param(Block b, Type t) {
    ValueList& pl = blocks_[b].params;
    Value v = values_.push(ValueData{t, ValueDef::Kind::Param,
                                     static_cast<uint32_t>(pl.size(value_lists)), b.index()});
    pl.push(v, value_lists);
    return v;
}

void DataFlowGraph::attach_block_param(Block b, Value v) {
    ValueList& pl = blocks_[b].params;
    ValueData& vd = values_[v];
    vd.kind = ValueDef::Kind::Param;
    vd.num = static_cast<uint32_t>(pl.size(value_lists));
    vd.owner = b.index();
    pl.push(v, value_lists);
}

void DataFlowGraph::remove_block_param(Block b, uint32_t i) {
    ValueList& pl = blocks_[b].params;
    pl.remove(i, value_lists);
    uint32_t n = pl.size(value_lists);
    for (uint32_t j = i; j < n; ++j) values_[pl.get(j, value_lists)].num = static_cast<uint32_t>(j);
}

}  // namespace heron
