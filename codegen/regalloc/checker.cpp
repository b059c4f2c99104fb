// The allocation checker: symbolic execution of the allocated program over
// the CFG, in the spirit of regalloc2's checker (Fallin, "Cranelift,
// Part 4: A New Register Allocator", 2022) and of translation validation for
// register allocation (Rideau and Leroy, "Validating Register Allocation and
// Spilling", CC 2010).
//
// It reads only the Function and the Output, never the allocator's own data,
// so that it can catch the allocator's mistakes.
//
// Abstract state: for every location (register or spill slot) the set of
// vregs whose current value it holds; a set because after a block parameter
// is bound, the argument's location holds both. Per instruction:
//     edits at Before(i)           (a move copies the set)
//     every Use must find its vreg in its allocation
//     clobbered registers are emptied, then each Def's location holds {def}
//     edits at After(i)
// Along an edge, each location holding a branch argument also holds the
// parameter; the state is cut down to the vregs live into the successor (so
// a value left over from an earlier loop iteration cannot be mistaken for a
// fresh one), and the states of all predecessors meet by intersection. The
// states only shrink, so iterating blocks until nothing changes terminates,
// and a failed use check on the way would fail at the fixpoint too: the first
// one is reported.
//
// Besides the dataflow, every instruction's allocations are checked against
// the operand constraints (Fixed, Reg, Any, Reuse, classes) and against the
// sharing rules of the contract: an Early Def or a Late Use shares its
// location with no other operand; two Defs never share.
#include <algorithm>
#include <queue>

#include "codegen/regalloc/regalloc.h"

namespace heron::ra {
namespace {

using std::to_string;

constexpr uint32_t kRegLocs = kNumRegClasses * kMaxRegsPerClass;

std::string loc_name(uint32_t loc) {
    if (loc >= kRegLocs) return "stack" + to_string(loc - kRegLocs);
    const PReg r = PReg::from_index(loc);
    return (r.cls == RegClass::Int ? "r" : "f") + to_string(r.hw);
}

std::string alloc_name(Allocation a) {
    switch (a.kind) {
        case Allocation::Kind::None: return "none";
        case Allocation::Kind::Reg: return loc_name(a.index);
        case Allocation::Kind::Stack: return "stack" + to_string(a.index);
        case Allocation::Kind::Remat: return "remat(inst" + to_string(a.index) + ")";
    }
    return "?";
}

class Checker {
public:
    Checker(const Function& f, const MachineEnv& env, const Output& out) : f_(f), env_(env), out_(out) {}
    std::string run();

private:
    bool valid_alloc(Allocation a, RegClass cls) const {
        if (a.kind == Allocation::Kind::Stack) return a.index < out_.num_spill_slots;
        if (a.kind != Allocation::Kind::Reg || a.index >= kRegLocs) return false;
        return a.as_reg().cls == cls;
    }
    uint32_t loc_of(Allocation a) const { return a.is_reg() ? a.index : kRegLocs + a.index; }
    bool allocatable(Allocation a) const {
        if (!a.is_reg()) return false;
        const PReg r = a.as_reg();
        const auto& list = env_.allocatable[static_cast<unsigned>(r.cls)];
        return std::find(list.begin(), list.end(), r) != list.end();
    }
    std::string inst_where(uint32_t i, uint32_t o) const {
        return "inst" + to_string(i) + " operand " + to_string(o - f_.operands_begin[i]) + " (v" +
               to_string(f_.operands[o].vreg.index()) + "): ";
    }
    std::string check_edits();
    std::string check_operands(uint32_t i) const;
    void compute_liveness();
    std::string run_block(uint32_t b);
    void apply_edits(uint32_t point);
    void set_loc(uint32_t loc, uint32_t v) {
        touch(loc);
        cur_[loc].assign(1, v);
    }
    void touch(uint32_t loc) {
        if (touched_flag_[loc]) return;
        touched_flag_[loc] = 1;
        touched_.push_back(loc);
    }
    std::string describe(uint32_t loc) const;

    const Function& f_;
    const MachineEnv& env_;
    const Output& out_;
    std::vector<uint32_t> edit_begin_;  // per ProgPoint bits, CSR into out_.edits
    std::vector<std::vector<uint32_t>> live_in_;
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> in_state_;  // sorted (loc, vreg)
    std::vector<uint8_t> visited_, queued_;
    std::vector<std::vector<uint32_t>> cur_;  // per location, the vregs it holds
    std::vector<uint32_t> remat_loc_;         // per instruction: its virtual location if kRemat
    static constexpr uint32_t kNoLoc = ~uint32_t{0};
    std::vector<uint32_t> touched_;
    std::vector<uint8_t> touched_flag_;
    std::vector<uint32_t> mark_;
    uint32_t token_ = 0;
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> queue_;
};

std::string Checker::check_edits() {
    const uint32_t ni = f_.num_insts();
    edit_begin_.assign(2 * ni + 1, 0);
    for (size_t k = 0; k < out_.edits.size(); ++k) {
        const Edit& e = out_.edits[k];
        const std::string where = "edit " + to_string(k) + ": ";
        if (e.point.inst() >= ni) return where + "at an instruction out of range";
        if (k > 0 && e.point < out_.edits[k - 1].point) return where + "edits are not sorted by point";
        if (e.from.is_remat()) {
            const uint32_t i = e.from.index;
            if (i >= ni || !(f_.flags[i] & inst_flags::kRemat) || f_.operands_begin[i + 1] != f_.operands_begin[i] + 1 ||
                f_.operands[f_.operands_begin[i]].kind != OperandKind::Def ||
                f_.operands[f_.operands_begin[i]].vreg.cls() != e.cls || !valid_alloc(e.to, e.cls))
                return where + "bad rematerialization " + alloc_name(e.from) + " -> " + alloc_name(e.to);
            ++edit_begin_[e.point.bits + 1];
            continue;
        }
        if (!valid_alloc(e.from, e.cls) || !valid_alloc(e.to, e.cls))
            return where + "bad location " + alloc_name(e.from) + " -> " + alloc_name(e.to);
        if (e.from.is_stack() && e.to.is_stack()) return where + "stack-to-stack move";
        ++edit_begin_[e.point.bits + 1];
    }
    for (uint32_t p = 0; p < 2 * ni; ++p) edit_begin_[p + 1] += edit_begin_[p];
    for (uint32_t b = 0; b < f_.num_blocks(); ++b) {
        const uint32_t last = f_.block_insts_begin[b + 1] - 1;
        const uint32_t p = ProgPoint::after(last).bits;
        if (edit_begin_[p] != edit_begin_[p + 1])
            return "edits after inst" + to_string(last) + ", the last of block" + to_string(b) + ", never run";
    }
    return {};
}

std::string Checker::check_operands(uint32_t i) const {
    const uint32_t ob = f_.operands_begin[i], oe = f_.operands_begin[i + 1];
    PRegSet clobbered;
    for (auto it = std::lower_bound(f_.clobbers.begin(), f_.clobbers.end(), i,
                                    [](const std::pair<uint32_t, PRegSet>& c, uint32_t x) { return c.first < x; });
         it != f_.clobbers.end() && it->first == i; ++it)
        clobbered |= it->second;
    for (uint32_t o = ob; o < oe; ++o) {
        const Operand& op = f_.operands[o];
        const Allocation a = out_.allocs[o];
        const std::string where = inst_where(i, o);
        if (!valid_alloc(a, op.vreg.cls())) return where + "bad allocation " + alloc_name(a);
        switch (op.constraint) {
            case Constraint::Any:
                if (!a.is_stack() && !allocatable(a)) return where + "Any operand in " + alloc_name(a);
                break;
            case Constraint::Reg:
                if (!allocatable(a)) return where + "Reg operand in " + alloc_name(a);
                break;
            case Constraint::Fixed:
                if (a != Allocation::reg(op.fixed_reg()))
                    return where + "Fixed operand wants " + loc_name(op.fixed_reg().index()) + ", got " + alloc_name(a);
                break;
            case Constraint::Reuse:
                if (op.aux >= oe - ob || a != out_.allocs[ob + op.aux] || !a.is_reg())
                    return where + "Reuse operand not in its input's register (" + alloc_name(a) + ")";
                break;
        }
        if (op.kind == OperandKind::Use && op.pos == OperandPos::Late && a.is_reg() && clobbered.contains(a.as_reg()))
            return where + "Late use in clobbered " + alloc_name(a);
        for (uint32_t o2 = o + 1; o2 < oe; ++o2) {
            if (out_.allocs[o2] != a) continue;
            const Operand& op2 = f_.operands[o2];
            const bool def1 = op.kind == OperandKind::Def, def2 = op2.kind == OperandKind::Def;
            if (!def1 && !def2) continue;  // two reads; the dataflow checks what they read
            const Operand& d = def1 ? op : op2;
            const Operand& u = def1 ? op2 : op;
            const uint32_t di = def1 ? o : o2, ui = def1 ? o2 : o;
            if (def1 && def2) return where + "two defs share " + alloc_name(a);
            if (d.constraint == Constraint::Reuse && ob + d.aux == ui) continue;
            if (d.pos == OperandPos::Early && d.constraint != Constraint::Reuse)
                return inst_where(i, di) + "Early def shares " + alloc_name(a) + " with operand " + to_string(ui - ob);
            if (u.pos == OperandPos::Late)
                return inst_where(i, ui) + "Late use shares " + alloc_name(a) + " with def operand " + to_string(di - ob);
        }
    }
    return {};
}

// Live-in vregs per block (parameters excluded), by the classic backward
// fixpoint. Used only to forget values nobody reads any more.
void Checker::compute_liveness() {
    const uint32_t nb = f_.num_blocks();
    live_in_.assign(nb, {});
    mark_.assign(f_.num_vregs, 0);
    std::vector<uint32_t> set;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t b = nb; b-- > 0;) {
            const uint32_t tok = ++token_;
            set.clear();
            auto add = [&](uint32_t v) {
                if (mark_[v] == tok) return;
                mark_[v] = tok;
                set.push_back(v);
            };
            for (uint32_t e = f_.succs_begin[b]; e < f_.succs_begin[b + 1]; ++e) {
                for (uint32_t v : live_in_[f_.succs[e]]) add(v);
                for (uint32_t k = f_.branch_args_begin[e]; k < f_.branch_args_begin[e + 1]; ++k)
                    add(f_.branch_args[k].index());
            }
            for (uint32_t i = f_.block_insts_begin[b + 1]; i-- > f_.block_insts_begin[b];) {
                for (uint32_t o = f_.operands_begin[i]; o < f_.operands_begin[i + 1]; ++o)
                    if (f_.operands[o].kind == OperandKind::Def) mark_[f_.operands[o].vreg.index()] = 0;
                for (uint32_t o = f_.operands_begin[i]; o < f_.operands_begin[i + 1]; ++o)
                    if (f_.operands[o].kind == OperandKind::Use) add(f_.operands[o].vreg.index());
            }
            for (uint32_t k = f_.params_begin[b]; k < f_.params_begin[b + 1]; ++k) mark_[f_.params[k].index()] = 0;
            std::vector<uint32_t> in;
            for (uint32_t v : set)
                if (mark_[v] == tok) in.push_back(v);
            std::sort(in.begin(), in.end());
            in.erase(std::unique(in.begin(), in.end()), in.end());
            if (in != live_in_[b]) {
                live_in_[b] = std::move(in);
                changed = true;
            }
        }
    }
}

void Checker::apply_edits(uint32_t point) {
    for (uint32_t k = edit_begin_[point]; k < edit_begin_[point + 1]; ++k) {
        const Edit& e = out_.edits[k];
        const uint32_t to = loc_of(e.to);
        touch(to);
        const uint32_t from = e.from.is_remat() ? remat_loc_[e.from.index] : loc_of(e.from);
        if (from != to) cur_[to] = cur_[from];
    }
}

std::string Checker::describe(uint32_t loc) const {
    if (cur_[loc].empty()) return loc_name(loc) + ", which holds no known value";
    std::string s = loc_name(loc) + ", which holds {";
    for (size_t k = 0; k < cur_[loc].size(); ++k) s += (k ? ", v" : "v") + to_string(cur_[loc][k]);
    return s + "}";
}

std::string Checker::run_block(uint32_t b) {
    for (uint32_t loc : touched_) {
        cur_[loc].clear();
        touched_flag_[loc] = 0;
    }
    touched_.clear();
    for (auto [loc, v] : in_state_[b]) {
        touch(loc);
        cur_[loc].push_back(v);
    }
    size_t ci = 0;
    for (uint32_t i = f_.block_insts_begin[b]; i < f_.block_insts_begin[b + 1]; ++i) {
        apply_edits(ProgPoint::before(i).bits);
        const uint32_t ob = f_.operands_begin[i], oe = f_.operands_begin[i + 1];
        for (uint32_t o = ob; o < oe; ++o) {
            const Operand& op = f_.operands[o];
            if (op.kind != OperandKind::Use) continue;
            const uint32_t loc = loc_of(out_.allocs[o]);
            const auto& held = cur_[loc];
            if (std::find(held.begin(), held.end(), op.vreg.index()) == held.end())
                return inst_where(i, o) + "reads " + describe(loc) + " (block" + to_string(b) + ")";
        }
        ci = std::lower_bound(f_.clobbers.begin() + ci, f_.clobbers.end(), i,
                              [](const std::pair<uint32_t, PRegSet>& c, uint32_t x) { return c.first < x; }) -
             f_.clobbers.begin();
        for (; ci < f_.clobbers.size() && f_.clobbers[ci].first == i; ++ci) {
            for (unsigned c = 0; c < kNumRegClasses; ++c)
                for (uint64_t bits = f_.clobbers[ci].second.bits[c]; bits; bits &= bits - 1) {
                    const uint32_t loc = c * kMaxRegsPerClass + __builtin_ctzll(bits);
                    touch(loc);
                    cur_[loc].clear();
                }
        }
        for (uint32_t o = ob; o < oe; ++o)
            if (f_.operands[o].kind == OperandKind::Def) set_loc(loc_of(out_.allocs[o]), f_.operands[o].vreg.index());
        if (remat_loc_[i] != kNoLoc) set_loc(remat_loc_[i], f_.operands[ob].vreg.index());
        apply_edits(ProgPoint::after(i).bits);
    }

    // Out along each edge: bind parameters, keep what the successor needs, meet.
    std::vector<std::pair<uint32_t, uint32_t>> cand;
    for (uint32_t e = f_.succs_begin[b]; e < f_.succs_begin[b + 1]; ++e) {
        const uint32_t t = f_.succs[e];
        const uint32_t tok = ++token_;
        for (uint32_t v : live_in_[t]) mark_[v] = tok;
        cand.clear();
        const uint32_t pb = f_.params_begin[t], np = f_.params_begin[t + 1] - pb;
        for (uint32_t loc : touched_) {
            for (uint32_t v : cur_[loc]) {
                if (mark_[v] == tok) cand.push_back({loc, v});
                for (uint32_t k = 0; k < np; ++k)
                    if (f_.branch_args[f_.branch_args_begin[e] + k].index() == v)
                        cand.push_back({loc, f_.params[pb + k].index()});
            }
        }
        std::sort(cand.begin(), cand.end());
        cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
        auto& in = in_state_[t];
        if (!visited_[t]) {
            visited_[t] = 1;
            in = cand;
        } else {
            std::vector<std::pair<uint32_t, uint32_t>> meet;
            std::set_intersection(in.begin(), in.end(), cand.begin(), cand.end(), std::back_inserter(meet));
            if (meet.size() == in.size()) continue;
            in = std::move(meet);
        }
        if (!queued_[t]) {
            queued_[t] = 1;
            queue_.push(t);
        }
    }
    return {};
}

std::string Checker::run() {
    if (out_.allocs.size() != f_.operands.size()) return "allocation count differs from operand count";
    const uint32_t nb = f_.num_blocks();
    if (nb == 0) return {};
    std::string err = check_edits();
    if (!err.empty()) return err;
    for (uint32_t i = 0; i < f_.num_insts(); ++i)
        if (!(err = check_operands(i)).empty()) return err;
    compute_liveness();
    if (!live_in_[0].empty()) return "v" + to_string(live_in_[0][0]) + " is live into the entry block";

    // One virtual location per rematerializable instruction, after the
    // slots: it holds the value the instruction defines (and, past edges,
    // the parameters bound to it), so a remat edit copies a set like any
    // move does.
    remat_loc_.assign(f_.num_insts(), kNoLoc);
    uint32_t nloc = kRegLocs + out_.num_spill_slots;
    for (uint32_t i = 0; i < f_.num_insts(); ++i)
        if (f_.flags[i] & inst_flags::kRemat) remat_loc_[i] = nloc++;
    cur_.assign(nloc, {});
    touched_flag_.assign(nloc, 0);
    touched_.clear();
    in_state_.assign(nb, {});
    visited_.assign(nb, 0);
    queued_.assign(nb, 0);
    visited_[0] = queued_[0] = 1;
    queue_.push(0);
    while (!queue_.empty()) {
        const uint32_t b = queue_.top();
        queue_.pop();
        queued_[b] = 0;
        if (!(err = run_block(b)).empty()) return err;
    }
    return {};
}

}  // namespace

std::string check(const Function& func, const MachineEnv& env, const Output& out) {
    return Checker(func, env, out).run();
}

}  // namespace heron::ra
