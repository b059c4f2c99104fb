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

bool is_constant(Opcode op) { return op == Opcode::Iconst || op == Opcode::F32const || op == Opcode::F64const; }

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
        : func_(func), dfg_(func.dfg), s_(s), uses_(s.uses), sites_(s.sites), returns_(s.returns), vals_(s.vals),
          args_(s.args) {}

    uint32_t run() {
        if (!func_.stack_slots.empty()) return 0;
        const PackedOption<Block> entry = func_.layout.entry_block();
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
        const PackedOption<Inst> ret = func_.layout.first_inst(to);
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
        PackedOption<Inst> i = func_.layout.next_inst(s.call);
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
            identity_ = cur.ins().iconst(type, identity_of(op));
            args_.push_back(identity_);
            acc = dfg_.append_block_param(header, type);
        }
        s_.head_args.assign(args_.begin(), args_.end());

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
        if (acc) {
            // Every remaining return gives acc OP its value.
            for (Inst ret : returns_) {
                if (!func_.layout.inst_block(ret)) continue;  // a site's, removed
                InstructionData& d = dfg_[ret];
                cur.at_inst(ret);
                const Value v = combine(cur, op, *acc, d.vargs.get(0, dfg_.value_lists));
                dfg_[ret].vargs.set(0, v, dfg_.value_lists);
            }
        }
        op_ = op;
        if (!rotate(entry, header)) {
            cur.at_bottom(entry);
            cur.ins().jump(header, s_.head_args);
        }
    }

    // --- rotation: the first test before the loop --------------------------------

    /// Pure, not a branch, no variable operands: can be copied as it is.
    bool clonable(Inst i) const {
        const InstructionData& d = dfg_[i];
        return effects_of(d.opcode).movable() && d.vargs.empty();
    }

    bool defined_in(Value v, Block b) const {
        const ValueDef d = dfg_.value_def(v);
        return d.is_result() ? func_.layout.inst_block(d.inst()) == b : Block(d.owner) == b;
    }

    Value mapped(Value v) const {
        v = resolved(v);
        return v.index() < s_.map.size() && s_.map[v.index()].is_valid() ? s_.map[v.index()] : v;
    }

    /// Copies `i` at the cursor with its operands mapped and maps its
    /// results. `acc OP v` with acc mapped to the identity is just v.
    void clone(FuncCursor& cur, Inst i) {
        const InstructionData& src = dfg_[i];
        if (src.opcode == op_ && identity_.is_valid() && src.num_fixed_args() == 2) {
            const Value a = mapped(src.args[0]), b = mapped(src.args[1]);
            if (a == identity_ || b == identity_) {
                s_.map[dfg_.first_result(i).index()] = a == identity_ ? b : a;
                return;
            }
        }
        InstructionData d = src;
        for (unsigned k = 0; k < d.num_fixed_args(); ++k) d.args[k] = mapped(d.args[k]);
        const Inst n = cur.build(d, dfg_.ctrl_typevar(i));
        const std::span<const Value> from = dfg_.inst_results(i);
        for (size_t k = 0; k < from.size(); ++k) s_.map[from[k].index()] = dfg_.inst_results(n)[k];
    }

    /// Loop rotation, so that the base case runs without a frame: when the
    /// header H (the old entry) is pure up to a `brif` into a block X that
    /// only H enters and that is pure up to a `return`, and into a block S
    /// that only H enters, the new entry gets copies of H's instructions
    /// and branches itself, to S or to a copy of X (entered from it alone).
    /// S then has two predecessors: the values of H read below S become
    /// S's parameters. False (nothing changed) when the shape is not there.
    bool rotate(Block entry, Block header) {
        const Inst br = *func_.layout.last_inst(header);
        if (dfg_[br].opcode != Opcode::Brif) return false;
        for (Inst i : func_.layout.block_insts(header)) {
            if (i != br && !clonable(i)) return false;
        }
        const Block t[2] = {dfg_[br].dests[0].block(dfg_.value_lists), dfg_[br].dests[1].block(dfg_.value_lists)};
        if (t[0] == t[1] || t[0] == header || t[1] == header) return false;
        std::vector<uint32_t>& preds = s_.preds;
        preds.assign(dfg_.num_blocks(), 0);
        for (Block b : func_.layout.blocks()) {
            const PackedOption<Inst> last = func_.layout.last_inst(b);
            if (!last) continue;
            for (const BlockCall& bc : dfg_.branch_destinations(*last)) ++preds[bc.block(dfg_.value_lists).index()];
        }
        if (preds[t[0].index()] != 1 || preds[t[1].index()] != 1) return false;
        unsigned xk = 2;
        for (unsigned k = 0; k < 2 && xk == 2; ++k) {
            if (pure_return(t[k], header)) xk = k;
        }
        if (xk == 2) return false;
        const Block x = t[xk], body = t[1 - xk];

        // The entry: H's instructions on the entry's parameters.
        s_.map.assign(dfg_.num_values(), Value());
        const std::span<const Value> hp = dfg_.block_params(header);
        for (size_t k = 0; k < hp.size(); ++k) s_.map[hp[k].index()] = s_.head_args[k];
        FuncCursor cur(func_);
        cur.at_bottom(entry);
        for (Inst i : func_.layout.block_insts(header)) {
            if (i != br) clone(cur, i);
        }
        // X's copy, entered from the entry alone.
        const Block x2 = dfg_.make_block();
        func_.layout.insert_block_after(x2, entry);
        s_.vals.assign(dfg_.block_params(x).begin(), dfg_.block_params(x).end());
        for (Value p : s_.vals) {
            const Value q = dfg_.append_block_param(x2, dfg_.value_type(p));
            if (p.index() < s_.map.size()) s_.map[p.index()] = q;
        }
        cur.at_bottom(x2);
        const Inst ret = *func_.layout.last_inst(x);
        for (Inst i : func_.layout.block_insts(x)) {
            if (i != ret) clone(cur, i);
        }
        s_.vals.clear();
        for (Value v : dfg_[ret].vargs.as_span(dfg_.value_lists)) s_.vals.push_back(mapped(v));
        cur.ins().return_(s_.vals);

        // H's values read below S (outside H and X) become S's parameters.
        std::vector<Value>& to_body = s_.to_body;
        std::vector<Value>& body_vals = s_.body_vals;
        to_body.assign(dfg_.num_values(), Value());
        body_vals.clear();
        for (Block b : func_.layout.blocks()) {
            if (b == entry || b == header || b == x || b == x2) continue;
            for (Inst i : func_.layout.block_insts(b)) {
                dfg_.for_each_inst_value(i, [&](Value v) {
                    v = resolved(v);
                    if (v.index() >= to_body.size() || to_body[v.index()].is_valid() || !defined_in(v, header)) return;
                    to_body[v.index()] = v;  // marked; the parameter comes below
                    body_vals.push_back(v);
                });
            }
        }
        // Constants are made again at S's top instead (no register to carry).
        size_t kept = 0;
        for (Value v : body_vals) {
            const ValueDef d = dfg_.value_def(v);
            if (d.is_result() && is_constant(dfg_[d.inst()].opcode)) {
                const Value in_entry = s_.map[v.index()];
                cur.at_first_inst(body);
                clone(cur, d.inst());
                to_body[v.index()] = s_.map[v.index()];
                s_.map[v.index()] = in_entry;
                continue;
            }
            to_body[v.index()] = dfg_.append_block_param(body, dfg_.value_type(v));
            body_vals[kept++] = v;
        }
        body_vals.resize(kept);
        for (Block b : func_.layout.blocks()) {
            if (b == entry || b == header || b == x || b == x2) continue;
            for (Inst i : func_.layout.block_insts(b)) {
                dfg_.for_each_inst_value(i, [&](Value& v) {
                    const Value r = resolved(v);
                    if (r.index() < to_body.size() && to_body[r.index()].is_valid()) v = to_body[r.index()];
                });
            }
        }
        // The branches: H passes its values on, the entry their copies.
        BlockCall& hb = dfg_.branch_destinations_mut(br)[1 - xk];
        for (Value v : body_vals) hb.append_arg(v, dfg_.value_lists);
        s_.args.clear();
        for (Value v : dfg_[br].dests[1 - xk].args(dfg_.value_lists)) s_.args.push_back(mapped(v));
        s_.xargs.clear();
        for (Value v : dfg_[br].dests[xk].args(dfg_.value_lists)) s_.xargs.push_back(mapped(v));
        const Value c = mapped(dfg_[br].args[0]);
        cur.at_bottom(entry);
        if (xk == 0) {
            cur.ins().brif(c, x2, s_.xargs, body, s_.args);
        } else {
            cur.ins().brif(c, body, s_.args, x2, s_.xargs);
        }
        return true;
    }

    /// `x` is pure up to a `return` and reads only its own and `header`'s
    /// values.
    bool pure_return(Block x, Block header) const {
        const PackedOption<Inst> last = func_.layout.last_inst(x);
        if (!last || dfg_[*last].opcode != Opcode::Return) return false;
        bool ok = true;
        for (Inst i : func_.layout.block_insts(x)) {
            if (i != *last && !clonable(i)) return false;
            dfg_.for_each_inst_value(i, [&](Value v) {
                v = resolved(v);
                ok = ok && (defined_in(v, x) || defined_in(v, header));
            });
        }
        return ok;
    }

    Function& func_;
    DataFlowGraph& dfg_;
    TailAccumulateScratch& s_;
    std::vector<uint32_t>& uses_;  // by value index (aliases resolved)
    std::vector<Site>& sites_;
    std::vector<Inst>& returns_;
    std::vector<Value>& vals_;
    std::vector<Value>& args_;
    bool other_tail_call_ = false;  // a return_call to another function
    Opcode op_ = Opcode::Nop;       // the accumulating operation, if any
    Value identity_;                // its identity in the new entry
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
