// Self-recursion into a loop with an accumulator: see tail_accumulate.h.
#include "codegen/opt/tail_accumulate.h"

#include <vector>

#include "codegen/ir/cursor.h"
#include "codegen/opt/effects.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

bool names_self(const Function& func, FuncRef f) {
    const ExtFuncData& ext = func.dfg.ext_funcs[f];
    return ext.name == func.name && func.dfg.signatures[ext.signature] == func.signature;
}

bool accumulates(Opcode op) {
    switch (op) {
    case Opcode::Iadd: case Opcode::Imul: case Opcode::Band: case Opcode::Bor: case Opcode::Bxor: return true;
    default: return false;
    }
}

int64_t identity_of(Opcode op) {
    switch (op) {
    case Opcode::Imul: return 1;
    case Opcode::Band: return -1;
    default: return 0;  // iadd, bor, bxor
    }
}

Value combine(FuncCursor& cur, Opcode op, Value a, Value b) {
    switch (op) {
    case Opcode::Imul: return cur.ins().imul(a, b);
    case Opcode::Band: return cur.ins().band(a, b);
    case Opcode::Bor: return cur.ins().bor(a, b);
    case Opcode::Bxor: return cur.ins().bxor(a, b);
    default: return cur.ins().iadd(a, b);
    }
}

class TailAccumulate {
public:
    TailAccumulate(Function& func, TailAccumulateScratch& s)
        : func_(func), dfg_(func.dfg), uses_(s.uses), sites_(s.sites), returns_(s.returns), vals_(s.vals),
          args_(s.args) {}

    uint32_t run() {
        if (!func_.stack_slots.empty()) return 0;
        const std::optional<Block> entry = func_.layout.entry_block();
        if (!entry) return 0;
        if (!scan()) return 0;
        Opcode op = Opcode::Nop;
        Type type;
        for (Site& s : sites_) classify(s, op, type);
        if (op != Opcode::Nop && other_tail_call_) {
            for (Site& s : sites_) {
                if (s.op) s.ok = false;
            }
            op = Opcode::Nop;
        }
        uint32_t n = 0;
        for (const Site& s : sites_) n += s.ok;
        if (n == 0) return 0;
        rewrite(*entry, op, type);
        return n;
    }

private:
    using Site = TailAccumulateScratch::Site;

    /// One walk: the use counts, the self-calls and the returns. False when
    /// there is no self-call.
    bool scan() {
        uses_.assign(dfg_.num_values(), 0);
        sites_.clear();
        returns_.clear();
        other_tail_call_ = false;
        for (Block b : func_.layout.blocks()) {
            for (Inst i : func_.layout.block_insts(b)) {
                dfg_.for_each_inst_value(i, [&](Value v) { ++uses_[dfg_.resolve_aliases(v).index()]; });
                const InstructionData& d = dfg_[i];
                switch (d.opcode) {
                case Opcode::Return: returns_.push_back(i); break;
                case Opcode::Call:
                    if (names_self(func_, d.func_ref())) sites_.push_back({i, std::nullopt, false});
                    break;
                case Opcode::ReturnCall:
                    if (names_self(func_, d.func_ref())) {
                        sites_.push_back({i, std::nullopt, true});
                    } else {
                        other_tail_call_ = true;
                    }
                    break;
                case Opcode::ReturnCallIndirect: other_tail_call_ = true; break;
                default: break;
                }
            }
        }
        return !sites_.empty();
    }

    Value resolved(Value v) const { return dfg_.resolve_aliases(v); }

    /// The values `term` returns into `vals_`: a `return`'s own, or for a
    /// `jump` to a block holding only a `return`, that return's values with
    /// the block's parameters replaced by the jump's arguments.
    bool returned_values(Inst term) {
        vals_.clear();
        const InstructionData& d = dfg_[term];
        if (d.opcode == Opcode::Return) {
            for (Value v : d.vargs.as_span(dfg_.value_lists)) vals_.push_back(resolved(v));
            return true;
        }
        if (d.opcode != Opcode::Jump) return false;
        const BlockCall& bc = dfg_.branch_destinations(term)[0];
        const Block to = bc.block(dfg_.value_lists);
        const std::optional<Inst> ret = func_.layout.first_inst(to);
        if (!ret || dfg_[*ret].opcode != Opcode::Return) return false;
        const std::span<const Value> params = dfg_.block_params(to);
        const std::span<const Value> args = bc.args(dfg_.value_lists);
        for (Value v : dfg_[*ret].vargs.as_span(dfg_.value_lists)) {
            v = resolved(v);
            for (size_t k = 0; k < params.size(); ++k) {
                if (params[k] == v) {
                    v = resolved(args[k]);
                    break;
                }
            }
            vals_.push_back(v);
        }
        return true;
    }

    /// Decides whether the self-call `s` is a site (tail_accumulate.h); the
    /// first accumulator site sets `op` and `type`.
    void classify(Site& s, Opcode& op, Type& type) {
        if (s.ok) return;  // a return_call: a plain site as it stands
        const std::span<const Value> results = dfg_.inst_results(s.call);
        std::optional<Inst> acc_inst;
        std::optional<Inst> i = func_.layout.next_inst(s.call);
        for (; i && !is_terminator(dfg_[*i].opcode); i = func_.layout.next_inst(*i)) {
            if (!effects_of(dfg_[*i].opcode).movable()) return;
            bool reads = false;
            dfg_.for_each_inst_value(*i, [&](Value v) {
                v = resolved(v);
                for (Value r : results) reads |= r == v;
            });
            if (!reads) continue;
            if (acc_inst || results.size() != 1 || !accumulates(dfg_[*i].opcode)) return;
            acc_inst = *i;
        }
        if (!i || !returned_values(*i)) return;
        for (Value r : results) {
            if (uses_[r.index()] != 1) return;
        }
        if (!acc_inst) {
            if (vals_.size() != results.size()) return;
            for (size_t k = 0; k < results.size(); ++k) {
                if (vals_[k] != results[k]) return;
            }
            s.ok = true;
            return;
        }
        const InstructionData& d = dfg_[*acc_inst];
        const Value x = dfg_.first_result(*acc_inst);
        const Type t = dfg_.value_type(x);
        if (resolved(d.args[0]) == resolved(d.args[1]) || !t.is_int() || uses_[x.index()] != 1) return;
        if (vals_.size() != 1 || vals_[0] != x) return;
        if (op == Opcode::Nop) {
            op = d.opcode;
            type = t;
        } else if (op != d.opcode || type != t) {
            return;
        }
        s.op = acc_inst;
        s.ok = true;
    }

    void rewrite(Block header, Opcode op, Type type) {
        // The new entry passes the parameters (and the identity) on.
        const Block entry = dfg_.make_block();
        func_.layout.insert_block(entry, header);
        // (The parameter lists share a pool that appending may move.)
        vals_.assign(dfg_.block_params(header).begin(), dfg_.block_params(header).end());
        args_.clear();
        for (Value p : vals_) args_.push_back(dfg_.append_block_param(entry, dfg_.value_type(p)));
        FuncCursor cur(func_);
        cur.at_bottom(entry);
        std::optional<Value> acc;
        if (op != Opcode::Nop) {
            args_.push_back(cur.ins().iconst(type, identity_of(op)));
            acc = dfg_.append_block_param(header, type);
        }
        cur.ins().jump(header, args_);

        for (const Site& s : sites_) {
            if (!s.ok) continue;
            const Block b = *func_.layout.inst_block(s.call);
            const Inst term = *func_.layout.last_inst(b);
            args_.assign(dfg_.call_args(s.call).begin(), dfg_.call_args(s.call).end());
            if (acc) {
                if (s.op) {
                    // x = y OP r becomes x = y OP acc: the new accumulator.
                    InstructionData& d = dfg_[*s.op];
                    const Value r = dfg_.first_result(s.call);
                    d.args[resolved(d.args[0]) == r ? 0 : 1] = *acc;
                    args_.push_back(dfg_.first_result(*s.op));
                } else {
                    args_.push_back(*acc);
                }
            }
            cur.at_inst(term);
            cur.ins().jump(header, args_);
            func_.layout.remove_inst(term);
            if (s.call != term) func_.layout.remove_inst(s.call);
        }
        if (!acc) return;
        // Every remaining return gives acc OP its value.
        for (Inst ret : returns_) {
            if (!func_.layout.inst_block(ret)) continue;  // a site's, removed
            InstructionData& d = dfg_[ret];
            cur.at_inst(ret);
            const Value v = combine(cur, op, *acc, d.vargs.get(0, dfg_.value_lists));
            dfg_[ret].vargs.set(0, v, dfg_.value_lists);
        }
    }

    Function& func_;
    DataFlowGraph& dfg_;
    std::vector<uint32_t>& uses_;  // by value index (aliases resolved)
    std::vector<Site>& sites_;
    std::vector<Inst>& returns_;
    std::vector<Value>& vals_;
    std::vector<Value>& args_;
    bool other_tail_call_ = false;  // a return_call to another function
};

}  // namespace

bool declares_self(const Function& func) {
    for (FuncRef f : func.dfg.ext_funcs.keys()) {
        if (names_self(func, f)) return true;
    }
    return false;
}

uint32_t accumulate_tail_calls(Function& func, PassContext& ctx) {
    return TailAccumulate(func, ctx.scratch().tail_accumulate).run();
}

}  // namespace heron
