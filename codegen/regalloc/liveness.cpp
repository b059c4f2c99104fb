// Input validation, use positions, liveness and live ranges.
//
// Liveness is computed per vreg by path exploration, as in Boissinot et al.,
// "Computing Liveness Sets for SSA-Form Programs" (INRIA RR-7503, 2011) and
// Brandner et al.: from every block where the vreg is used, walk predecessors
// upwards, marking the vreg live-in, until its defining block. Each (block,
// vreg) pair is visited once, so the cost is linear in the size of the
// liveness sets, with no fixpoint iteration and no need for loop structure.
// Under SSA the def dominates every use, so reaching the entry block means
// a use of an undefined value: reported as an error.
//
// The live ranges then follow per block (Wimmer and Franz, CGO 2010,
// section 4 "BuildIntervals"): a block where the vreg is live-in and live-out
// is covered whole; otherwise the range stops at the last use or starts at
// the def. Fixed ranges reserve registers for Fixed operands and clobbers.
#include <algorithm>
#include <cassert>

#include "codegen/regalloc/alloc_state.h"

namespace heron::ra {
namespace {

using std::to_string;

std::string vname(uint32_t v) { return "v" + to_string(v); }

std::string check_csr(const std::vector<uint32_t>& begin, size_t n, size_t total, const char* name) {
    if (begin.size() != n + 1) return std::string(name) + ": wrong size";
    if (begin[0] != 0 || begin[n] != total) return std::string(name) + ": wrong bounds";
    for (size_t i = 0; i < n; ++i)
        if (begin[i] > begin[i + 1]) return std::string(name) + ": not monotone";
    return {};
}

std::string validate_env(const MachineEnv& env, Context::Impl& s) {
    s.allocatable = PRegSet();
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        const PReg scratch = env.scratch[c];
        if (static_cast<unsigned>(scratch.cls) != c || scratch.hw >= kMaxRegsPerClass)
            return "machine env: bad scratch register";
        s.scan_regs[c].clear();
        for (PReg r : env.allocatable[c]) {
            if (static_cast<unsigned>(r.cls) != c || r.hw >= kMaxRegsPerClass || r == scratch ||
                s.allocatable.contains(r))
                return "machine env: bad allocatable register list";
            s.allocatable.add(r);
            s.scan_regs[c].push_back(r.index());
        }
    }
    return {};
}

std::string validate_cfg(const Function& f) {
    const uint32_t nb = f.num_blocks();
    const uint32_t ni = f.num_insts();
    if (nb == 0) return "function has no blocks";
    if (f.block_insts_begin[0] != 0 || f.block_insts_begin[nb] != ni) return "block_insts_begin: wrong bounds";
    for (uint32_t b = 0; b < nb; ++b)
        if (f.block_insts_begin[b] >= f.block_insts_begin[b + 1]) return "block" + to_string(b) + " is empty";
    if (ni >= (uint32_t{1} << 29)) return "function too large";
    std::string e;
    if (!(e = check_csr(f.succs_begin, nb, f.succs.size(), "succs_begin")).empty()) return e;
    if (!(e = check_csr(f.preds_begin, nb, f.preds.size(), "preds_begin")).empty()) return e;
    if (!(e = check_csr(f.params_begin, nb, f.params.size(), "params_begin")).empty()) return e;
    if (!(e = check_csr(f.branch_args_begin, f.succs.size(), f.branch_args.size(), "branch_args_begin")).empty())
        return e;
    if (!(e = check_csr(f.operands_begin, ni, f.operands.size(), "operands_begin")).empty()) return e;
    if (f.loop_depth.size() != nb) return "loop_depth: wrong size";
    if (f.flags.size() != ni) return "flags: wrong size";
    if (f.succs.size() != f.preds.size()) return "successor and predecessor lists disagree";
    for (uint32_t b = 0; b < nb; ++b) {
        const uint32_t nsucc = f.succs_begin[b + 1] - f.succs_begin[b];
        for (uint32_t e2 = f.succs_begin[b]; e2 < f.succs_begin[b + 1]; ++e2) {
            const uint32_t t = f.succs[e2];
            if (t >= nb) return "block" + to_string(b) + ": successor out of range";
            const uint32_t npred = f.preds_begin[t + 1] - f.preds_begin[t];
            if (nsucc > 1 && npred > 1)
                return "critical edge block" + to_string(b) + " -> block" + to_string(t) + " (split it)";
            if (!std::count(f.preds.begin() + f.preds_begin[t], f.preds.begin() + f.preds_begin[t + 1], b))
                return "block" + to_string(t) + " does not list predecessor block" + to_string(b);
            const uint32_t nargs = f.branch_args_begin[e2 + 1] - f.branch_args_begin[e2];
            if (nargs != f.params_begin[t + 1] - f.params_begin[t])
                return "block" + to_string(b) + " -> block" + to_string(t) + ": argument count mismatch";
            for (uint32_t k = 0; k < nargs; ++k) {
                const VReg a = f.branch_args[f.branch_args_begin[e2] + k];
                const VReg p = f.params[f.params_begin[t] + k];
                if (!a.is_valid() || a.index() >= f.num_vregs || a.cls() != p.cls())
                    return "block" + to_string(b) + " -> block" + to_string(t) + ": bad argument " + to_string(k);
            }
        }
        for (uint32_t k = f.preds_begin[b]; k < f.preds_begin[b + 1]; ++k) {
            const uint32_t q = f.preds[k];
            if (q >= nb) return "block" + to_string(b) + ": predecessor out of range";
            if (!std::count(f.succs.begin() + f.succs_begin[q], f.succs.begin() + f.succs_begin[q + 1], b))
                return "block" + to_string(q) + " does not list successor block" + to_string(b);
        }
    }
    if (f.params_begin[1] != 0) return "the entry block has parameters (define arguments with Fixed defs)";
    for (size_t k = 0; k < f.clobbers.size(); ++k) {
        if (f.clobbers[k].first >= ni) return "clobber of an instruction out of range";
        if (k > 0 && f.clobbers[k - 1].first > f.clobbers[k].first) return "clobbers not sorted";
    }
    return {};
}

// Checks operands and records each vreg's single definition.
std::string validate_operands(Context::Impl& s) {
    const Function& f = *s.func;
    const MachineEnv& env = *s.env;
    const uint32_t nb = f.num_blocks();
    s.def_pos.assign(f.num_vregs, kNone);
    s.def_block.assign(f.num_vregs, kNone);
    s.raw_uses.assign(f.num_vregs, 0);

    auto define = [&](VReg v, uint32_t block, uint32_t pos) -> std::string {
        if (!v.is_valid() || v.index() >= f.num_vregs) return "vreg out of range";
        if (s.def_pos[v.index()] != kNone) return vname(v.index()) + " is defined twice";
        s.def_pos[v.index()] = pos;
        s.def_block[v.index()] = block;
        return {};
    };
    for (uint32_t b = 0; b < nb; ++b) {
        for (uint32_t k = f.params_begin[b]; k < f.params_begin[b + 1]; ++k) {
            std::string e = define(f.params[k], b, s.block_start(b));
            if (!e.empty()) return "block" + to_string(b) + " parameter: " + e;
        }
        const uint32_t first = f.block_insts_begin[b], last = f.block_insts_begin[b + 1] - 1;
        const uint32_t nsucc = f.succs_begin[b + 1] - f.succs_begin[b];
        for (uint32_t i = first; i <= last; ++i) {
            const uint32_t ob = f.operands_begin[i], oe = f.operands_begin[i + 1];
            if (oe - ob > 255) return "inst" + to_string(i) + ": too many operands";
            for (uint32_t o = ob; o < oe; ++o) {
                const Operand& op = f.operands[o];
                auto where = [&] { return "inst" + to_string(i) + " operand " + to_string(o - ob) + ": "; };
                if (!op.vreg.is_valid() || op.vreg.index() >= f.num_vregs) return where() + "vreg out of range";
                const unsigned c = static_cast<unsigned>(op.vreg.cls());
                if (op.constraint == Constraint::Fixed) {
                    if (op.aux >= kMaxRegsPerClass) return where() + "fixed register out of range";
                    if (op.fixed_reg() == env.scratch[c]) return where() + "fixed to the scratch register";
                }
                if (op.constraint == Constraint::Reuse) {
                    if (op.kind != OperandKind::Def) return where() + "Reuse constraint on a use";
                    if (op.aux >= oe - ob) return where() + "Reuse of an operand out of range";
                    const Operand& in = f.operands[ob + op.aux];
                    if (in.kind != OperandKind::Use || in.pos != OperandPos::Early || in.vreg.cls() != op.vreg.cls() ||
                        in.constraint == Constraint::Reuse)
                        return where() + "Reuse of an operand that is not an early use of the same class";
                    for (uint32_t o2 = ob; o2 < o; ++o2)
                        if (f.operands[o2].constraint == Constraint::Reuse && f.operands[o2].aux == op.aux)
                            return where() + "two defs reuse one operand";
                }
                if (op.kind == OperandKind::Use) {
                    ++s.raw_uses[op.vreg.index()];
                    continue;
                }
                if (i == last && nsucc > 0) return where() + "a branch defines a value";
                uint32_t pos = op.pos == OperandPos::Early ? pos_early(i) : pos_late(i);
                if (op.constraint == Constraint::Reuse)
                    pos = f.operands[ob + op.aux].constraint == Constraint::Fixed ? pos_late(i) : pos_early(i);
                std::string e = define(op.vreg, b, pos);
                if (!e.empty()) return where() + e;
            }
            for (uint32_t o = ob; o < oe; ++o) {
                const Operand& a = f.operands[o];
                const bool a_fixed_def = a.kind == OperandKind::Def && a.constraint == Constraint::Fixed;
                if (a.constraint != Constraint::Fixed) continue;
                for (uint32_t o2 = o + 1; o2 < oe; ++o2) {
                    const Operand& b2 = f.operands[o2];
                    if (b2.constraint != Constraint::Fixed || b2.kind != a.kind || b2.fixed_reg() != a.fixed_reg())
                        continue;
                    if (a_fixed_def || b2.vreg != a.vreg)
                        return "inst" + to_string(i) + ": two operands fixed to one register";
                }
            }
            if (i == last && nsucc == 1 && oe > ob) {
                const uint32_t t = f.succs[f.succs_begin[b]];
                if (f.preds_begin[t + 1] - f.preds_begin[t] > 1)
                    return "inst" + to_string(i) + ": a jump with operands to a block with several predecessors";
            }
        }
    }
    for (VReg a : f.branch_args) ++s.raw_uses[a.index()];
    return {};
}

}  // namespace

std::string build_liveness(Context::Impl& s) {
    const Function& f = *s.func;
    std::string err = validate_env(*s.env, s);
    if (err.empty()) err = validate_cfg(f);
    if (!err.empty()) return err;
    const uint32_t nb = f.num_blocks(), ni = f.num_insts(), nv = f.num_vregs;

    s.inst_block.resize(ni);
    s.block_depth.resize(nb);
    for (uint32_t b = 0; b < nb; ++b) {
        s.block_depth[b] = static_cast<uint8_t>(std::min<uint32_t>(f.loop_depth[b], 8));
        for (uint32_t i = f.block_insts_begin[b]; i < f.block_insts_begin[b + 1]; ++i) s.inst_block[i] = b;
    }
    if (!(err = validate_operands(s)).empty()) return err;

    // Class of each vreg, from its definition; every mention must agree.
    std::vector<uint32_t>& vclass = s.vreg_class;
    vclass.assign(nv, 2);
    for (uint32_t k = 0; k < f.params.size(); ++k) vclass[f.params[k].index()] = static_cast<uint32_t>(f.params[k].cls());
    for (const Operand& op : f.operands)
        if (op.kind == OperandKind::Def) vclass[op.vreg.index()] = static_cast<uint32_t>(op.vreg.cls());
    auto check_use = [&](VReg v, const std::string& where) -> std::string {
        if (s.def_pos[v.index()] == kNone) return where + vname(v.index()) + " is used but never defined";
        if (vclass[v.index()] != static_cast<uint32_t>(v.cls())) return where + vname(v.index()) + " used with the wrong class";
        return {};
    };
    auto use_ok = [&](VReg v) { return s.def_pos[v.index()] != kNone && vclass[v.index()] == static_cast<uint32_t>(v.cls()); };
    for (uint32_t i = 0; i < ni; ++i)
        for (uint32_t o = f.operands_begin[i]; o < f.operands_begin[i + 1]; ++o)
            if (f.operands[o].kind == OperandKind::Use && !use_ok(f.operands[o].vreg))
                return check_use(f.operands[o].vreg, "inst" + to_string(i) + ": ");
    for (VReg a : f.branch_args)
        if (!use_ok(a)) return check_use(a, "branch argument: ");

    // --- Use positions, in position order per vreg. ---
    auto param_live = [&](VReg p) { return s.raw_uses[p.index()] > 0; };
    s.use_begin.assign(nv + 1, 0);
    for (const Operand& op : f.operands) ++s.use_begin[op.vreg.index() + 1];
    for (uint32_t p = 0; p < f.params.size(); ++p)
        if (param_live(f.params[p])) ++s.use_begin[f.params[p].index() + 1];
    for (uint32_t e = 0; e < f.succs.size(); ++e) {
        const uint32_t t = f.succs[e];
        for (uint32_t k = 0; k < f.branch_args_begin[e + 1] - f.branch_args_begin[e]; ++k)
            if (param_live(f.params[f.params_begin[t] + k]))
                ++s.use_begin[f.branch_args[f.branch_args_begin[e] + k].index() + 1];
    }
    for (uint32_t v = 0; v < nv; ++v) s.use_begin[v + 1] += s.use_begin[v];
    s.uses.resize(s.use_begin[nv]);
    s.use_weight.resize(s.uses.size() + 1);
    std::vector<uint32_t>& fill = s.work;
    fill.assign(s.use_begin.begin(), s.use_begin.end() - 1);
    auto add_use = [&](uint32_t v, UsePos u) {
        uint32_t k = fill[v]++;
        while (k > s.use_begin[v] && s.uses[k - 1].pos > u.pos) {
            s.uses[k] = s.uses[k - 1];
            --k;
        }
        s.uses[k] = u;
    };
    for (uint32_t b = 0; b < nb; ++b) {
        for (uint32_t k = f.params_begin[b]; k < f.params_begin[b + 1]; ++k)
            if (param_live(f.params[k]))
                add_use(f.params[k].index(), {s.block_start(b), s.block_start(b) + 1, 0, kNoHint, kUseDef});
        const uint32_t last = f.block_insts_begin[b + 1] - 1;
        for (uint32_t i = f.block_insts_begin[b]; i <= last; ++i) {
            const uint32_t ob = f.operands_begin[i], oe = f.operands_begin[i + 1];
            for (uint32_t o = ob; o < oe; ++o) {
                const Operand& op = f.operands[o];
                const uint8_t hint = op.constraint == Constraint::Fixed ? op.aux : kNoHint;
                const uint8_t must = op.constraint == Constraint::Reg ? 1 : 0;
                UsePos u;
                if (op.kind == OperandKind::Use) {
                    bool reused = false;
                    for (uint32_t o2 = ob; o2 < oe; ++o2)
                        reused |= f.operands[o2].constraint == Constraint::Reuse && f.operands[o2].aux == o - ob;
                    if (op.constraint == Constraint::Fixed || reused)
                        u = {pos_before(i), pos_before(i) + 1, 0, hint, 0};
                    else if (op.pos == OperandPos::Early)
                        u = {pos_early(i), pos_early(i) + 1, must, kNoHint, 0};
                    else
                        u = {pos_late(i), pos_late(i) + 1, must, kNoHint, 0};
                } else if (op.constraint == Constraint::Reuse) {
                    const Operand& in = f.operands[ob + op.aux];
                    if (in.constraint == Constraint::Fixed)
                        u = {pos_late(i), pos_after(i) + 1, 0, in.aux, kUseDef};
                    else
                        u = {pos_early(i), pos_late(i) + 1, 1, kNoHint, kUseDef};
                } else if (op.constraint == Constraint::Fixed) {
                    const uint32_t p = op.pos == OperandPos::Early ? pos_early(i) : pos_late(i);
                    u = {p, pos_after(i) + 1, 0, hint, kUseDef};
                } else {
                    const uint32_t p = op.pos == OperandPos::Early ? pos_early(i) : pos_late(i);
                    u = {p, pos_late(i) + 1, must, kNoHint, kUseDef};
                }
                add_use(op.vreg.index(), u);
            }
        }
        for (uint32_t e = f.succs_begin[b]; e < f.succs_begin[b + 1]; ++e) {
            const uint32_t t = f.succs[e];
            for (uint32_t k = 0; k < f.branch_args_begin[e + 1] - f.branch_args_begin[e]; ++k)
                if (param_live(f.params[f.params_begin[t] + k]))
                    add_use(f.branch_args[f.branch_args_begin[e] + k].index(),
                            {pos_after(last), s.block_end(b), 0, kNoHint, kUseEdge});
        }
    }
    static constexpr double kDepthWeight[9] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
    s.use_weight[0] = 0;
    for (uint32_t k = 0; k < s.uses.size(); ++k)
        s.use_weight[k + 1] = s.use_weight[k] + kDepthWeight[s.block_depth[s.block_of(s.uses[k].pos)]];
    s.next_must.resize(s.uses.size());
    for (uint32_t v = 0; v < nv; ++v) {
        uint32_t next = s.use_begin[v + 1];
        for (uint32_t k = s.use_begin[v + 1]; k-- > s.use_begin[v];) {
            if (s.uses[k].must_reg) next = k;
            s.next_must[k] = next;
        }
    }

    // --- Liveness by path exploration, then ranges per vreg. ---
    s.li_stamp.assign(nb, 0);
    s.lo_stamp.assign(nb, 0);
    s.lu_stamp.assign(nb, 0);
    s.lu_end.resize(nb);
    s.livein_pairs.clear();
    s.range_begin.assign(nv + 1, 0);
    s.ranges.clear();
    std::vector<uint32_t>& stack = s.work;
    for (uint32_t v = 0; v < nv; ++v) {
        s.range_begin[v] = static_cast<uint32_t>(s.ranges.size());
        const uint32_t ub = s.use_begin[v], ue = s.use_begin[v + 1];
        if (ub == ue) continue;
        const uint32_t stamp = v + 1, d = s.def_block[v];
        stack.clear();
        auto mark_live_in = [&](uint32_t b) -> bool {
            if (s.li_stamp[b] == stamp) return true;
            if (b == 0) return false;
            s.li_stamp[b] = stamp;
            s.livein_pairs.push_back({b, v});
            stack.push_back(b);
            return true;
        };
        bool ok = true;
        for (uint32_t k = ub; k < ue && ok; ++k) {
            const UsePos& u = s.uses[k];
            if (u.kind == kUseDef) continue;
            const uint32_t b = s.block_of(u.pos);
            if (u.kind == kUseEdge) s.lo_stamp[b] = stamp;
            if (b != d) {
                ok = mark_live_in(b);
            } else if (u.pos < s.def_pos[v]) {
                return "inst" + to_string(u.pos / 4) + ": " + vname(v) + " used before its definition";
            }
            while (ok && !stack.empty()) {
                const uint32_t x = stack.back();
                stack.pop_back();
                for (uint32_t k2 = f.preds_begin[x]; k2 < f.preds_begin[x + 1] && ok; ++k2) {
                    const uint32_t q = f.preds[k2];
                    s.lo_stamp[q] = stamp;
                    if (q != d) ok = mark_live_in(q);
                }
            }
        }
        if (!ok) return vname(v) + " is used where its definition does not dominate";

        // Last position each block needs the value for, from its uses.
        for (uint32_t k = ub; k < ue; ++k) {
            const uint32_t b = s.block_of(s.uses[k].pos);
            if (s.lu_stamp[b] != stamp) {
                s.lu_stamp[b] = stamp;
                s.lu_end[b] = 0;
            }
            s.lu_end[b] = std::max(s.lu_end[b], s.uses[k].live_to);
        }
        auto& rs = s.tmp_ranges;
        rs.clear();
        auto block_range = [&](uint32_t b, uint32_t from) {
            const uint32_t to = s.lo_stamp[b] == stamp ? s.block_end(b) : s.lu_end[b];
            assert(s.lu_stamp[b] == stamp || s.lo_stamp[b] == stamp);
            rs.push_back({from, to});
        };
        block_range(d, s.def_pos[v]);
        for (size_t k = s.livein_pairs.size(); k-- > 0 && s.livein_pairs[k].second == v;)
            block_range(s.livein_pairs[k].first, s.block_start(s.livein_pairs[k].first));
        std::sort(rs.begin(), rs.end(), [](Range a, Range b) { return a.from < b.from; });
        for (Range r : rs) {
            if (s.ranges.size() > s.range_begin[v] && s.ranges.back().to >= r.from) {
                s.ranges.back().to = std::max(s.ranges.back().to, r.to);
                continue;
            }
            s.ranges.push_back(r);
        }
    }
    s.range_begin[nv] = static_cast<uint32_t>(s.ranges.size());

    // Live-in lists per block.
    s.livein_begin.assign(nb + 1, 0);
    for (auto [b, v] : s.livein_pairs) ++s.livein_begin[b + 1];
    for (uint32_t b = 0; b < nb; ++b) s.livein_begin[b + 1] += s.livein_begin[b];
    s.livein.resize(s.livein_pairs.size());
    fill.assign(s.livein_begin.begin(), s.livein_begin.end() - 1);
    for (auto [b, v] : s.livein_pairs) s.livein[fill[b]++] = v;

    // --- Fixed ranges. ---
    for (unsigned c = 0; c < kNumRegClasses; ++c)
        for (unsigned r : s.scan_regs[c]) s.fixed[r].clear();
    size_t ci = 0;
    for (uint32_t i = 0; i < ni; ++i) {
        const uint32_t ob = f.operands_begin[i], oe = f.operands_begin[i + 1];
        auto reserve = [&](PReg r, uint32_t from, uint32_t to, uint32_t owner) {
            if (s.allocatable.contains(r)) s.fixed[r.index()].push_back({from, to, owner});
        };
        PRegSet fixed_defs;
        for (uint32_t o = ob; o < oe; ++o) {
            const Operand& op = f.operands[o];
            const uint32_t v = op.vreg.index();
            if (op.kind == OperandKind::Use && op.constraint == Constraint::Fixed) {
                reserve(op.fixed_reg(), pos_before(i), op.pos == OperandPos::Early ? pos_late(i) : pos_after(i), v);
                continue;
            }
            if (op.kind != OperandKind::Def) continue;
            PReg r;
            if (op.constraint == Constraint::Fixed) {
                r = op.fixed_reg();
            } else if (op.constraint == Constraint::Reuse && f.operands[ob + op.aux].constraint == Constraint::Fixed) {
                r = f.operands[ob + op.aux].fixed_reg();
            } else {
                continue;
            }
            reserve(r, s.def_pos[v], pos_after(i) + 1, v);
            fixed_defs.add(r);
        }
        PRegSet clob;
        for (; ci < f.clobbers.size() && f.clobbers[ci].first == i; ++ci) clob |= f.clobbers[ci].second;
        for (unsigned c = 0; c < kNumRegClasses; ++c) {
            for (uint64_t bits = clob.bits[c]; bits; bits &= bits - 1) {
                const PReg r(static_cast<uint8_t>(__builtin_ctzll(bits)), static_cast<RegClass>(c));
                if (!fixed_defs.contains(r)) reserve(r, pos_late(i), pos_late(i) + 1, kNone);
            }
        }
    }
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        for (unsigned r : s.scan_regs[c]) {
            auto& list = s.fixed[r];
            if (list.empty()) continue;
            // Ranges come in instruction order and start inside their instruction,
            // so only ranges of one instruction can be out of order: a stable
            // insertion sort is linear here.
            for (size_t k = 1; k < list.size(); ++k) {
                const FixedRange x = list[k];
                size_t j = k;
                for (; j > 0 && list[j - 1].from > x.from; --j) list[j] = list[j - 1];
                list[j] = x;
            }
            size_t w = 0;
            for (size_t k = 0; k < list.size(); ++k) {
                if (w > 0 && list[w - 1].to > list[k].from) {
                    if (list[w - 1].owner != list[k].owner || list[k].owner == kNone)
                        return "inst" + to_string(list[k].from / 4) + ": register " + to_string(r % kMaxRegsPerClass) +
                               " is required by two operands at once";
                    list[w - 1].to = std::max(list[w - 1].to, list[k].to);
                    continue;
                }
                list[w++] = list[k];
            }
            list.resize(w);
        }
    }

    // --- One interval per vreg that has a location. ---
    s.intervals.clear();
    s.first_interval.assign(nv, kNone);
    for (uint32_t v = 0; v < nv; ++v) {
        const uint32_t rb = s.range_begin[v], re = s.range_begin[v + 1];
        if (rb == re) continue;
        Interval it;
        it.vreg = v;
        it.cls = static_cast<RegClass>(vclass[v]);
        it.start = s.ranges[rb].from;
        it.end = s.ranges[re - 1].to;
        it.range_begin = it.cursor = rb;
        it.range_end = re;
        it.use_begin = s.use_begin[v];
        it.use_end = s.use_begin[v + 1];
        s.first_interval[v] = static_cast<uint32_t>(s.intervals.size());
        s.intervals.push_back(it);
    }

    // --- Affinities: moves, reuses and block parameters prefer one register. ---
    s.hint_vreg.assign(nv, kNone);
    s.hint_pos.assign(nv, 0);
    for (uint32_t i = 0; i < ni; ++i) {
        const uint32_t ob = f.operands_begin[i], oe = f.operands_begin[i + 1];
        for (uint32_t o = ob; o < oe; ++o) {
            const Operand& op = f.operands[o];
            if (op.kind != OperandKind::Def || op.constraint != Constraint::Reuse) continue;
            s.hint_vreg[op.vreg.index()] = f.operands[ob + op.aux].vreg.index();
            s.hint_pos[op.vreg.index()] = pos_before(i);
        }
        if ((f.flags[i] & inst_flags::kMove) && oe - ob == 2 && f.operands[ob].kind == OperandKind::Use &&
            f.operands[ob + 1].kind == OperandKind::Def) {
            s.hint_vreg[f.operands[ob + 1].vreg.index()] = f.operands[ob].vreg.index();
            s.hint_pos[f.operands[ob + 1].vreg.index()] = pos_early(i);
        }
    }
    for (uint32_t b = 0; b < nb; ++b) {
        for (uint32_t e = f.succs_begin[b]; e < f.succs_begin[b + 1]; ++e) {
            const uint32_t t = f.succs[e];
            for (uint32_t k = 0; k < f.branch_args_begin[e + 1] - f.branch_args_begin[e]; ++k) {
                const uint32_t a = f.branch_args[f.branch_args_begin[e] + k].index();
                const uint32_t p = f.params[f.params_begin[t] + k].index();
                if (b < t && s.hint_vreg[p] == kNone) {
                    s.hint_vreg[p] = a;
                    s.hint_pos[p] = s.block_end(b) - 1;
                } else if (b >= t && s.hint_vreg[a] == kNone) {
                    s.hint_vreg[a] = p;
                    s.hint_pos[a] = s.block_start(t);
                }
            }
        }
    }

    // --- Sparse table for "shallowest block in a range" (latest on ties). ---
    s.rmq_levels = 1;
    while ((uint32_t{1} << s.rmq_levels) <= nb) ++s.rmq_levels;
    s.rmq.resize(static_cast<size_t>(s.rmq_levels) * nb);
    for (uint32_t b = 0; b < nb; ++b) s.rmq[b] = b;
    for (uint32_t l = 1; l < s.rmq_levels; ++l) {
        const uint32_t half = uint32_t{1} << (l - 1);
        for (uint32_t b = 0; b + (uint32_t{1} << l) <= nb; ++b) {
            const uint32_t x = s.rmq[(l - 1) * nb + b], y = s.rmq[(l - 1) * nb + b + half];
            s.rmq[l * nb + b] = s.block_depth[y] <= s.block_depth[x] ? y : x;
        }
    }
    return {};
}

}  // namespace heron::ra
