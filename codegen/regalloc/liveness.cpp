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
std::string operand_where(uint32_t inst, uint32_t k) { return "inst" + to_string(inst) + " operand " + to_string(k) + ": "; }
// The entry k of a CSR array's elements belongs to: the last e with
// begin[e] <= k (for error messages).
uint32_t csr_owner(const std::vector<uint32_t>& begin, size_t k) {
    return static_cast<uint32_t>(std::upper_bound(begin.begin(), begin.end(), k) - begin.begin() - 1);
}

// What is wrong with a CSR offset array, or nullptr.
const char* csr_error(const std::vector<uint32_t>& begin, size_t n, size_t total) {
    if (begin.size() != n + 1) return ": wrong size";
    if (begin[0] != 0 || begin[n] != total) return ": wrong bounds";
    for (size_t i = 0; i < n; ++i)
        if (begin[i] > begin[i + 1]) return ": not monotone";
    return nullptr;
}

std::string validate_env(const MachineEnv& env, Context::Impl& s) {
    if (s.checked_env.same_as(env)) return {};
    s.checked_env.valid = false;
    std::string err = check_machine_env(env);
    if (!err.empty()) return err;
    s.allocatable = PRegSet();
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        s.scan_regs[c].clear();
        for (PReg r : env.allocatable[c]) {
            s.allocatable.add(r);
            s.scan_regs[c].push_back(r.index());
        }
    }
    s.checked_env.remember(env);
    return {};
}

}  // namespace

std::string check_machine_env(const MachineEnv& env) {
    PRegSet seen;
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        const PReg scratch = env.scratch[c];
        if (static_cast<unsigned>(scratch.cls) != c || scratch.hw >= kMaxRegsPerClass)
            return "machine env: bad scratch register";
        for (PReg r : env.allocatable[c]) {
            if (static_cast<unsigned>(r.cls) != c || r.hw >= kMaxRegsPerClass || r == scratch || seen.contains(r))
                return "machine env: bad allocatable register list";
            seen.add(r);
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
    if (const char* e = csr_error(f.succs_begin, nb, f.succs.size())) return std::string("succs_begin") + e;
    if (const char* e = csr_error(f.preds_begin, nb, f.preds.size())) return std::string("preds_begin") + e;
    if (const char* e = csr_error(f.params_begin, nb, f.params.size())) return std::string("params_begin") + e;
    if (const char* e = csr_error(f.branch_args_begin, f.succs.size(), f.branch_args.size()))
        return std::string("branch_args_begin") + e;
    if (const char* e = csr_error(f.operands_begin, ni, f.operands.size())) return std::string("operands_begin") + e;
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

namespace {

// The first walk over the operands, flat (not per instruction): counts
// each vreg's operands (s.use_begin[v + 1], made a CSR later) and uses
// (raw_uses), and checks that every operand names a vreg in range. The
// other checks of the operands, and the definitions, are made per
// instruction by the use-position walk in build_liveness, which decodes
// each operand anyway.
std::string count_operands(Context::Impl& s) {
    const Function& f = *s.func;
    const uint32_t nv = f.num_vregs;
    s.def_pos.assign(nv, kNone);
    s.def_block.resize(nv);  // read only for defined vregs
    s.raw_uses.assign(nv, 0);
    s.vreg_hinted.assign((nv + 63) / 64, 0);  // bits set by the use-position walk
    s.vreg_class.resize(nv);  // read only for defined vregs
    s.use_begin.assign(nv + 1, 0);
    // Hints are read and written only for defined vregs: each gets kNone at
    // its definition, so the array needs no fill.
    if (s.hint_vreg.size() < nv) s.hint_vreg.resize(nv);
    if (s.remat_inst.size() < nv) s.remat_inst.resize(nv);  // likewise written at each definition
    uint32_t* raw_uses = s.raw_uses.data();
    uint32_t* count = s.use_begin.data() + 1;
    const Operand* ops = f.operands.data();
    const size_t nops = f.operands.size();
    for (size_t o = 0; o < nops; ++o) {
        const Operand& op = ops[o];
        // An invalid VReg has index 2^31 - 1, so the bound covers it
        // unless num_vregs is above that.
        const uint32_t v = op.vreg.index();
        if (v >= nv || !op.vreg.is_valid()) [[unlikely]] {
            const uint32_t i = csr_owner(f.operands_begin, o);
            return operand_where(i, static_cast<uint32_t>(o - f.operands_begin[i])) + "vreg out of range";
        }
        ++count[v];
        raw_uses[v] += op.kind == OperandKind::Use;
    }
    // Block parameters are defined in the use-position walk, but whether
    // one is used is read before it.
    for (size_t k = 0; k < f.params.size(); ++k) {
        if (f.params[k].index() >= nv || !f.params[k].is_valid()) [[unlikely]] {
            return "block" + to_string(csr_owner(f.params_begin, k)) + " parameter: vreg out of range";
        }
    }
    for (VReg a : f.branch_args) ++raw_uses[a.index()];
    return {};
}

// Where the current vreg's range in block b ends: the block's end if the
// vreg is live out of b, else the last position a use in b needs. Forced
// inline: GCC inlines no lambda into build_liveness (it is too large).
[[gnu::always_inline]] inline uint32_t range_to(uint32_t b, uint32_t stamp, const uint32_t* lo_stamp,
                                                const uint32_t* lu_end, const uint32_t* insts_begin) {
    return lo_stamp[b] == stamp ? pos_before(insts_begin[b + 1]) : lu_end[b];
}

// Raises the last position block b needs the current vreg for (stamp) to
// `live_to`, starting from 0 at the vreg's first use in b.
[[gnu::always_inline]] inline void note_use_end(uint32_t* lu_stamp, uint32_t* lu_end, uint32_t b, uint32_t stamp,
                                                uint32_t live_to) {
    if (lu_stamp[b] != stamp) {
        lu_stamp[b] = stamp;
        lu_end[b] = 0;
    }
    lu_end[b] = std::max(lu_end[b], live_to);
}

// Appends r, which starts after every range before it, to the ranges of
// one vreg (those from `first` up to nr), merged into the last one when
// they touch.
[[gnu::always_inline]] inline void merge_range(Range* ranges, uint32_t& nr, uint32_t first, Range r) {
    if (nr > first && ranges[nr - 1].to >= r.from) {
        ranges[nr - 1].to = std::max(ranges[nr - 1].to, r.to);
    } else {
        ranges[nr++] = r;
    }
}

}  // namespace

void build_scan_tables(Context::Impl& s) {
    static constexpr double kDepthWeight[9] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
    const uint32_t nv = s.func->num_vregs;
    const uint32_t nu = s.use_begin[nv];
    s.use_weight.resize(nu + 1);
    s.next_must.resize(nu);
    const UsePos* uses = s.uses.data();
    const uint32_t* use_begin = s.use_begin.data();
    const uint32_t* inst_block = s.inst_block.data();
    const uint8_t* block_depth = s.block_depth.data();
    double* use_weight = s.use_weight.data();
    uint32_t* next_must = s.next_must.data();
    // One running sum over all uses, vreg after vreg (the CSR order).
    double weight_sum = 0;
    use_weight[0] = 0;
    for (uint32_t k = 0; k < nu; ++k) {
        weight_sum += kDepthWeight[block_depth[inst_block[uses[k].pos / 4]]];
        use_weight[k + 1] = weight_sum;
    }
    for (uint32_t v = 0; v < nv; ++v) {
        const uint32_t ub = use_begin[v], ue = use_begin[v + 1];
        uint32_t next = ue;
        for (uint32_t k = ue; k-- > ub;) {
            if (uses[k].must_reg) next = k;
            next_must[k] = next;
        }
    }

    // Sparse table for "shallowest block in a range" (latest on ties).
    const uint32_t nb = s.func->num_blocks();
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
    s.scan_tables_ready = true;
}

void build_livein_lists(Context::Impl& s) {
    const uint32_t nb = s.func->num_blocks();
    s.livein_begin.assign(nb + 1, 0);
    for (auto [b, v] : s.livein_pairs) ++s.livein_begin[b + 1];
    for (uint32_t b = 0; b < nb; ++b) s.livein_begin[b + 1] += s.livein_begin[b];
    s.livein.resize(s.livein_pairs.size());
    std::vector<uint32_t>& fill = s.work;
    fill.assign(s.livein_begin.begin(), s.livein_begin.end() - 1);
    for (auto [b, v] : s.livein_pairs) s.livein[fill[b]++] = v;
}

std::string build_liveness(Context::Impl& s) {
    const Function& f = *s.func;
    std::string err = validate_env(*s.env, s);
    if (err.empty() && !s.trust_block_structure) err = validate_cfg(f);
    if (!err.empty()) return err;
    const uint32_t nb = f.num_blocks(), ni = f.num_insts(), nv = f.num_vregs;

    s.inst_block.resize(ni);
    s.inst_special.assign((ni + 63) / 64, 0);  // bits set by the use-position walk
    s.inst_reused.resize(ni);  // written for every instruction by the use walk
    s.block_depth.resize(nb);
    for (uint32_t b = 0; b < nb; ++b) s.block_depth[b] = static_cast<uint8_t>(std::min<uint32_t>(f.loop_depth[b], 8));
    if (!(err = count_operands(s)).empty()) return err;
    const Operand* ops = f.operands.data();
    const uint32_t nops = static_cast<uint32_t>(f.operands.size());

    // Every use names a defined vreg of its class: checked in the walk over
    // the operands below, which also makes the definitions. A use laid out
    // before its definition fails that check too; only then does this look
    // again, with every definition known, for the first bad use (in
    // operand order, then branch arguments) to name in the message, or
    // find none.
    const uint32_t* vclass = s.vreg_class.data();
    const uint32_t* def_pos = s.def_pos.data();
    auto use_ok = [&](VReg v) { return def_pos[v.index()] != kNone && vclass[v.index()] == static_cast<uint32_t>(v.cls()); };
    auto use_error = [&](VReg v, const std::string& where) -> std::string {
        if (def_pos[v.index()] == kNone) return where + vname(v.index()) + " is used but never defined";
        return where + vname(v.index()) + " used with the wrong class";
    };
    auto first_use_error = [&]() -> std::string {
        for (uint32_t o = 0; o < nops; ++o) {
            if (ops[o].kind == OperandKind::Use && !use_ok(ops[o].vreg)) {
                return use_error(ops[o].vreg, "inst" + to_string(csr_owner(f.operands_begin, o)) + ": ");
            }
        }
        for (VReg a : f.branch_args)
            if (!use_ok(a)) return use_error(a, "branch argument: ");
        return {};
    };
    bool uses_ok = true;

    // --- Use positions, in position order per vreg; fixed ranges and
    // copy/reuse affinities from the same walk over the operands. ---
    const uint32_t* raw_uses = s.raw_uses.data();
    auto param_live = [&](VReg p) { return raw_uses[p.index()] > 0; };
    uint32_t* use_begin = s.use_begin.data();
    for (uint32_t p = 0; p < f.params.size(); ++p)
        if (param_live(f.params[p])) ++use_begin[f.params[p].index() + 1];
    for (uint32_t e = 0; e < f.succs.size(); ++e) {
        const uint32_t t = f.succs[e];
        const VReg* args = f.branch_args.data() + f.branch_args_begin[e];
        const VReg* params = f.params.data() + f.params_begin[t];
        const uint32_t n = f.branch_args_begin[e + 1] - f.branch_args_begin[e];
        for (uint32_t k = 0; k < n; ++k)
            if (param_live(params[k])) ++use_begin[args[k].index() + 1];
    }
    for (uint32_t v = 0; v < nv; ++v) use_begin[v + 1] += use_begin[v];
    s.uses.resize(use_begin[nv]);
    UsePos* uses = s.uses.data();
    std::vector<uint32_t>& fill = s.work;
    fill.assign(s.use_begin.begin(), s.use_begin.end() - 1);
    uint32_t* fillp = fill.data();
    // Uses are added in layout order, so a vreg's positions only go back
    // within one instruction (a Fixed or reused use, at Before(i), after an
    // Early one of the same vreg): append_use when the position is not below
    // any added before, add_use (sorted insertion, stable) otherwise.
    auto append_use = [&](uint32_t v, UsePos u) { uses[fillp[v]++] = u; };
    auto add_use = [&](uint32_t v, UsePos u) {
        uint32_t k = fillp[v]++;
        while (k > use_begin[v] && uses[k - 1].pos > u.pos) {
            uses[k] = uses[k - 1];
            --k;
        }
        uses[k] = u;
    };
    for (unsigned c = 0; c < kNumRegClasses; ++c)
        for (uint64_t bits = s.fixed_used.bits[c]; bits; bits &= bits - 1) {
            const unsigned r = c * kMaxRegsPerClass + static_cast<unsigned>(__builtin_ctzll(bits));
            s.fixed[r].clear();
            s.fixed_cursor[r] = 0;
        }
    s.fixed_used = PRegSet();
    auto reserve = [&](PReg r, uint32_t from, uint32_t to, uint32_t owner) {
        if (!s.allocatable.contains(r)) return;
        s.fixed[r.index()].push_back({from, to, owner});
        s.fixed_used.add(r);
    };
    s.hint_pos.resize(nv);  // read only where hint_vreg is set
    uint32_t* hint_vreg = s.hint_vreg.data();
    uint32_t* hint_pos = s.hint_pos.data();
    uint64_t* inst_reused = s.inst_reused.data();
    uint32_t* def_pos_w = s.def_pos.data();
    uint32_t* def_block_w = s.def_block.data();
    uint32_t* vreg_class_w = s.vreg_class.data();
    uint32_t* remat_inst = s.remat_inst.data();
    uint32_t* inst_block_w = s.inst_block.data();
    uint64_t* inst_special = s.inst_special.data();
    uint64_t* hinted = s.vreg_hinted.data();
    const uint8_t* inst_flags = f.flags.data();
    const PReg* scratch = s.env->scratch;
    // Records v's single definition; false if it has one already (every
    // index is in range: count_operands checked them).
    auto define = [&](VReg v, uint32_t block, uint32_t pos, uint32_t remat) -> bool {
        const uint32_t x = v.index();
        if (def_pos_w[x] != kNone) return false;
        def_pos_w[x] = pos;
        hint_vreg[x] = kNone;
        remat_inst[x] = remat;
        def_block_w[x] = block;
        vreg_class_w[x] = static_cast<uint32_t>(v.cls());
        return true;
    };
    size_t ci = 0;
    for (uint32_t b = 0; b < nb; ++b) {
        for (uint32_t k = f.params_begin[b]; k < f.params_begin[b + 1]; ++k) {
            const VReg p = f.params[k];
            if (!define(p, b, s.block_start(b), kNone))
                return "block" + to_string(b) + " parameter: " + vname(p.index()) + " is defined twice";
            if (param_live(p)) append_use(p.index(), {s.block_start(b), s.block_start(b) + 1, 0, kNoHint, kUseDef});
        }
        const uint32_t last = f.block_insts_begin[b + 1] - 1;
        const bool branches = f.succs_begin[b + 1] > f.succs_begin[b];
        for (uint32_t i = f.block_insts_begin[b]; i <= last; ++i) {
            inst_block_w[i] = b;
            const uint32_t ob = f.operands_begin[i], oe = f.operands_begin[i + 1];
            if (oe - ob > 255) return "inst" + to_string(i) + ": too many operands";
            // Operands (of the first 64) whose use a Reuse def consumes.
            uint64_t reused_mask = 0;
            // Operands (of the first 64) named by a Reuse operand so far,
            // uses included (for the check that two defs reuse one).
            uint64_t named = 0;
            bool wide = oe - ob > 64;
            bool special = false;  // a Fixed operand or a Reuse def
            uint32_t num_fixed = 0;
            PRegSet fixed_defs;
            uint32_t inst_max = 0;  // highest use position added for this instruction
            // Checks of every operand, and the definitions, fixed ranges and
            // reuse affinities of the defs.
            for (uint32_t o = ob; o < oe; ++o) {
                const Operand& op = ops[o];
                if (op.constraint == Constraint::Fixed) {
                    if (op.aux >= kMaxRegsPerClass) return operand_where(i, o - ob) + "fixed register out of range";
                    if (op.fixed_reg() == scratch[static_cast<unsigned>(op.vreg.cls())])
                        return operand_where(i, o - ob) + "fixed to the scratch register";
                    ++num_fixed;
                    special = true;
                }
                if (op.kind == OperandKind::Use) {
                    if (op.constraint == Constraint::Reuse && op.aux < 64) named |= uint64_t{1} << op.aux;
                    continue;
                }
                const uint32_t v = op.vreg.index();
                uint32_t pos = op.pos == OperandPos::Early ? pos_early(i) : pos_late(i);
                const Operand* in = nullptr;
                if (op.constraint == Constraint::Reuse) {
                    if (op.aux >= oe - ob) return operand_where(i, o - ob) + "Reuse of an operand out of range";
                    in = &ops[ob + op.aux];
                    if (in->kind != OperandKind::Use || in->pos != OperandPos::Early || in->vreg.cls() != op.vreg.cls() ||
                        in->constraint == Constraint::Reuse)
                        return operand_where(i, o - ob) + "Reuse of an operand that is not an early use of the same class";
                    bool twice = op.aux < 64 ? ((named >> op.aux) & 1) != 0 : false;
                    if (op.aux >= 64)
                        for (uint32_t o2 = ob; o2 < o; ++o2)
                            twice |= ops[o2].constraint == Constraint::Reuse && ops[o2].aux == op.aux;
                    if (twice) return operand_where(i, o - ob) + "two defs reuse one operand";
                    if (op.aux < 64) {
                        named |= uint64_t{1} << op.aux;
                        reused_mask |= uint64_t{1} << op.aux;
                    }
                    special = true;
                    pos = in->constraint == Constraint::Fixed ? pos_late(i) : pos_early(i);
                }
                if (i == last && branches) return operand_where(i, o - ob) + "a branch defines a value";
                if (!define(op.vreg, b, pos, (inst_flags[i] & inst_flags::kRemat) ? i : kNone))
                    return operand_where(i, o - ob) + vname(v) + " is defined twice";
                PReg r;
                if (in) {
                    hint_vreg[v] = in->vreg.index();
                    hint_pos[v] = pos_before(i);
                    if (in->constraint != Constraint::Fixed) continue;
                    r = in->fixed_reg();
                } else if (op.constraint == Constraint::Fixed) {
                    r = op.fixed_reg();
                } else {
                    continue;
                }
                reserve(r, pos, pos_after(i) + 1, v);
                fixed_defs.add(r);
            }
            if (special) inst_special[i / 64] |= uint64_t{1} << (i % 64);
            for (uint32_t o = ob; num_fixed > 1 && o < oe; ++o) {
                const Operand& a = ops[o];
                const bool a_fixed_def = a.kind == OperandKind::Def && a.constraint == Constraint::Fixed;
                if (a.constraint != Constraint::Fixed) continue;
                for (uint32_t o2 = o + 1; o2 < oe; ++o2) {
                    const Operand& b2 = ops[o2];
                    if (b2.constraint != Constraint::Fixed || b2.kind != a.kind || b2.fixed_reg() != a.fixed_reg())
                        continue;
                    if (a_fixed_def || b2.vreg != a.vreg)
                        return "inst" + to_string(i) + ": two operands fixed to one register";
                }
            }
            if (i == last && oe > ob && f.succs_begin[b + 1] - f.succs_begin[b] == 1) {
                const uint32_t t = f.succs[f.succs_begin[b]];
                if (f.preds_begin[t + 1] - f.preds_begin[t] > 1)
                    return "inst" + to_string(i) + ": a jump with operands to a block with several predecessors";
            }
            inst_reused[i] = reused_mask;
            for (uint32_t o = ob; o < oe; ++o) {
                const Operand& op = ops[o];
                const uint8_t hint = op.constraint == Constraint::Fixed ? op.aux : kNoHint;
                const uint8_t must = op.constraint == Constraint::Reg ? 1 : 0;
                UsePos u;
                if (op.kind == OperandKind::Use) {
                    uses_ok &= use_ok(op.vreg);
                    bool reused = o - ob < 64 && ((reused_mask >> (o - ob)) & 1);
                    if (wide && !reused)
                        for (uint32_t o2 = ob; o2 < oe; ++o2)
                            reused |= ops[o2].constraint == Constraint::Reuse && ops[o2].aux == o - ob;
                    if (op.constraint == Constraint::Fixed) {
                        u = {pos_before(i), pos_before(i) + 1, 0, hint, 0};
                        hinted[op.vreg.index() / 64] |= uint64_t{1} << (op.vreg.index() % 64);
                        reserve(op.fixed_reg(), pos_before(i), op.pos == OperandPos::Early ? pos_late(i) : pos_after(i),
                                op.vreg.index());
                    } else if (reused) {
                        u = {pos_before(i), pos_before(i) + 1, 0, hint, 0};
                    } else if (op.pos == OperandPos::Early) {
                        u = {pos_early(i), pos_early(i) + 1, must, kNoHint, 0};
                    } else {
                        u = {pos_late(i), pos_late(i) + 1, must, kNoHint, 0};
                    }
                } else if (op.constraint == Constraint::Reuse) {
                    const Operand& in = ops[ob + op.aux];
                    if (in.constraint == Constraint::Fixed) {
                        u = {pos_late(i), pos_after(i) + 1, 0, in.aux, kUseDef};
                        hinted[op.vreg.index() / 64] |= uint64_t{1} << (op.vreg.index() % 64);
                    } else {
                        u = {pos_early(i), pos_late(i) + 1, 1, kNoHint, kUseDef};
                    }
                } else if (op.constraint == Constraint::Fixed) {
                    const uint32_t p = op.pos == OperandPos::Early ? pos_early(i) : pos_late(i);
                    u = {p, pos_after(i) + 1, 0, hint, kUseDef};
                    hinted[op.vreg.index() / 64] |= uint64_t{1} << (op.vreg.index() % 64);
                } else {
                    const uint32_t p = op.pos == OperandPos::Early ? pos_early(i) : pos_late(i);
                    u = {p, pos_late(i) + 1, must, kNoHint, kUseDef};
                }
                if (u.pos >= inst_max) {
                    inst_max = u.pos;
                    append_use(op.vreg.index(), u);
                } else {
                    add_use(op.vreg.index(), u);
                }
            }
            if ((f.flags[i] & inst_flags::kMove) && oe - ob == 2 && ops[ob].kind == OperandKind::Use &&
                ops[ob + 1].kind == OperandKind::Def) {
                hint_vreg[ops[ob + 1].vreg.index()] = ops[ob].vreg.index();
                hint_pos[ops[ob + 1].vreg.index()] = pos_early(i);
            }
            if (ci < f.clobbers.size() && f.clobbers[ci].first == i) {
                PRegSet clob;
                for (; ci < f.clobbers.size() && f.clobbers[ci].first == i; ++ci) clob |= f.clobbers[ci].second;
                for (unsigned c = 0; c < kNumRegClasses; ++c) {
                    for (uint64_t bits = clob.bits[c]; bits; bits &= bits - 1) {
                        const PReg r(static_cast<uint8_t>(__builtin_ctzll(bits)), static_cast<RegClass>(c));
                        if (!fixed_defs.contains(r)) reserve(r, pos_late(i), pos_late(i) + 1, kNone);
                    }
                }
            }
        }
        for (uint32_t e = f.succs_begin[b]; e < f.succs_begin[b + 1]; ++e) {
            const uint32_t t = f.succs[e];
            // (Bounds and rows read once: the stores to uses may alias them.)
            const VReg* args = f.branch_args.data() + f.branch_args_begin[e];
            const VReg* params = f.params.data() + f.params_begin[t];
            const uint32_t n = f.branch_args_begin[e + 1] - f.branch_args_begin[e];
            const uint32_t edge_end = s.block_end(b);
            for (uint32_t k = 0; k < n; ++k) {
                const VReg a = args[k];
                uses_ok &= use_ok(a);
                if (param_live(params[k])) append_use(a.index(), {pos_after(last), edge_end, 0, kNoHint, kUseEdge});
            }
        }
    }
    if (!uses_ok)
        if (std::string e = first_use_error(); !e.empty()) return e;
    s.scan_tables_ready = false;  // build_scan_tables makes them when the scan first asks

    // --- Per vreg, in one walk over its uses: liveness by path exploration,
    // live ranges, its interval. ---
    const uint32_t* inst_block = s.inst_block.data();
    const uint32_t* def_block = s.def_block.data();
    // The block stamps persist across calls: this call's stamps (base + v + 1)
    // are above every earlier one, so the arrays are zeroed only when they
    // grow or the stamps would wrap.
    if (s.li_stamp.size() < nb || uint64_t{s.stamp_base} + nv + 1 > UINT32_MAX) {
        const size_t n = std::max<size_t>(nb, s.li_stamp.size());
        s.li_stamp.assign(n, 0);
        s.lo_stamp.assign(n, 0);
        s.lu_stamp.assign(n, 0);
        s.lu_end.resize(n);  // read only where lu_stamp is this vreg's
        s.stamp_base = 0;
    }
    const uint32_t stamp_base = s.stamp_base;
    s.stamp_base += nv + 1;
    uint32_t* li_stamp = s.li_stamp.data();
    uint32_t* lo_stamp = s.lo_stamp.data();
    uint32_t* lu_stamp = s.lu_stamp.data();
    uint32_t* lu_end = s.lu_end.data();
    s.livein_pairs.clear();
    s.range_begin.resize(nv + 1);
    uint32_t* range_begin = s.range_begin.data();
    // Ranges are written through a count (s.ranges may be longer than the
    // ranges in use; readers go by the intervals' range_begin/range_end).
    uint32_t nr = 0;
    s.intervals.clear();
    if (s.intervals.capacity() < nv) s.intervals.reserve(nv);  // one per vreg at most, before splits
    if (s.first_interval.size() < nv) s.first_interval.resize(nv);  // written for every vreg below
    uint32_t* first_interval = s.first_interval.data();
    if (s.spill_slot.size() < nv) s.spill_slot.resize(nv);  // written for every vreg with an interval
    uint32_t* spill_slot = s.spill_slot.data();
    // The search's stack of blocks: each at most once per vreg.
    if (s.work.size() < nb) s.work.resize(nb);
    uint32_t* const stack = s.work.data();
    const uint32_t* const preds_begin = f.preds_begin.data();
    const uint32_t* const preds = f.preds.data();
    const uint32_t* insts_begin = f.block_insts_begin.data();
    // With at most 64 blocks, the search goes by block masks: each block's
    // predecessors as bits.
    const bool small = nb <= 64;
    if (small) s.pred_mask.resize(nb);
    uint64_t* const pred_mask = s.pred_mask.data();
    for (uint32_t b = 0; small && b < nb; ++b) {
        uint64_t m = 0;
        for (uint32_t k = preds_begin[b]; k < preds_begin[b + 1]; ++k) m |= uint64_t{1} << preds[k];
        pred_mask[b] = m;
    }
    // Every vreg with a use gets at least one range: room for one each up
    // front (the array is kept between calls, so this grows it once).
    if (s.ranges.size() < nv + 64) s.ranges.resize(2 * static_cast<size_t>(nv) + 64);
    for (uint32_t v = 0; v < nv; ++v) {
        range_begin[v] = nr;
        const uint32_t ub = use_begin[v], ue = use_begin[v + 1];
        if (ub == ue) {
            first_interval[v] = kNone;
            continue;
        }
        const uint32_t d = def_block[v];
        if (uses[ub].pos >= def_pos[v] && uses[ue - 1].pos < pos_before(insts_begin[d + 1])) {
            // Local to its defining block (every use at or after the
            // definition and before the block's end; the usual case): one
            // range, from the definition to the furthest position a use
            // needs (a branch argument's reaches the block's end), with
            // none of the walk below.
            uint32_t to = 0;
            for (uint32_t k = ub; k < ue; ++k) to = std::max(to, uses[k].live_to);
            if (nr == s.ranges.size()) s.ranges.resize(2 * static_cast<size_t>(nr) + 64);
            s.ranges[nr++] = {def_pos[v], to};
        } else if (small) {
            // Blocks as bits: the search marks live-in blocks a whole
            // predecessor mask at a time, and the ranges are made from
            // the live-in mask in block order, each merged into the one
            // before when they touch (no staging list, no sort).
            const uint32_t stamp = stamp_base + v + 1;
            const uint64_t dbit = uint64_t{1} << d;
            uint64_t live_in = 0, live_out = 0;
            for (uint32_t k = ub; k < ue; ++k) {
                const UsePos& u = uses[k];
                const uint32_t b = inst_block[u.pos / 4];
                note_use_end(lu_stamp, lu_end, b, stamp, u.live_to);
                if (u.kind == kUseDef) continue;
                const uint64_t bit = uint64_t{1} << b;
                if (u.kind == kUseEdge) live_out |= bit;
                if (b == d) {
                    if (u.pos < def_pos[v]) return "inst" + to_string(u.pos / 4) + ": " + vname(v) + " used before its definition";
                    continue;
                }
                // Block 0 (the entry) never has a live-in value: the
                // definition would not dominate the use.
                uint64_t work = bit & ~live_in;
                live_in |= work;
                while (work != 0 && !(work & 1)) {
                    const uint64_t p = pred_mask[__builtin_ctzll(work)];
                    work &= work - 1;
                    live_out |= p;
                    const uint64_t fresh = p & ~live_in & ~dbit;
                    live_in |= fresh;
                    work |= fresh;
                }
                if (work & 1) return vname(v) + " is used where its definition does not dominate";
            }
            // At most one range per block (a popcount would be a libgcc
            // call without -mpopcnt).
            if (nr + 64 > s.ranges.size()) s.ranges.resize(2 * static_cast<size_t>(nr) + 128);
            Range* ranges = s.ranges.data();
            for (uint64_t bits = live_in | dbit; bits; bits &= bits - 1) {
                const uint32_t b = static_cast<uint32_t>(__builtin_ctzll(bits));
                if (b != d) s.livein_pairs.push_back({b, v});
                assert(lu_stamp[b] == stamp || ((live_out >> b) & 1));
                const Range r{b == d ? def_pos[v] : s.block_start(b),
                              (live_out >> b) & 1 ? s.block_end(b) : lu_end[b]};
                merge_range(ranges, nr, range_begin[v], r);
            }
        } else {
            const uint32_t stamp = stamp_base + v + 1;
            const size_t livein_mark = s.livein_pairs.size();
            uint32_t depth = 0;
            auto mark_live_in = [&](uint32_t b) -> bool {
                if (li_stamp[b] == stamp) return true;
                if (b == 0) return false;
                li_stamp[b] = stamp;
                s.livein_pairs.push_back({b, v});
                stack[depth++] = b;
                return true;
            };
            bool ok = true;
            for (uint32_t k = ub; k < ue; ++k) {
                const UsePos& u = uses[k];
                const uint32_t b = inst_block[u.pos / 4];
                note_use_end(lu_stamp, lu_end, b, stamp, u.live_to);
                if (u.kind == kUseDef) continue;
                if (u.kind == kUseEdge) lo_stamp[b] = stamp;
                if (b != d) {
                    ok = mark_live_in(b);
                } else if (u.pos < def_pos[v]) {
                    return "inst" + to_string(u.pos / 4) + ": " + vname(v) + " used before its definition";
                }
                while (ok && depth != 0) {
                    const uint32_t x = stack[--depth];
                    // (The bound is read once: lo_stamp's stores may alias it.)
                    const uint32_t pe = preds_begin[x + 1];
                    for (uint32_t k2 = preds_begin[x]; k2 < pe && ok; ++k2) {
                        const uint32_t q = preds[k2];
                        lo_stamp[q] = stamp;
                        if (q != d) ok = mark_live_in(q);
                    }
                }
                if (!ok) return vname(v) + " is used where its definition does not dominate";
            }
            // Ranges are written through a pointer (a push_back is not inlined).
            const size_t most = nr + 1 + (s.livein_pairs.size() - livein_mark);
            if (most > s.ranges.size()) s.ranges.resize(2 * most + 64);
            Range* ranges = s.ranges.data();
            assert(lu_stamp[d] == stamp || lo_stamp[d] == stamp);
            auto& rs = s.tmp_ranges;
            rs.clear();
            rs.push_back({def_pos[v], range_to(d, stamp, lo_stamp, lu_end, insts_begin)});
            bool sorted = true;
            for (size_t k = livein_mark; k < s.livein_pairs.size(); ++k) {
                const uint32_t b = s.livein_pairs[k].first;
                sorted &= s.block_start(b) > rs.back().from;
                assert(lu_stamp[b] == stamp || lo_stamp[b] == stamp);
                rs.push_back({s.block_start(b), range_to(b, stamp, lo_stamp, lu_end, insts_begin)});
            }
            // Starts are distinct (one range per block): any sort gives one
            // order. Blocks are usually marked in layout order already.
            if (!sorted) std::sort(rs.begin(), rs.end(), [](Range a, Range b) { return a.from < b.from; });
            for (Range r : rs) merge_range(ranges, nr, range_begin[v], r);
        }

        // One interval per vreg that has a location.
        const uint32_t rb = range_begin[v], re = nr;
        const Range* ranges = s.ranges.data();
        Interval it;
        it.vreg = v;
        it.cls = static_cast<RegClass>(vclass[v]);
        it.hinted = (hinted[v / 64] >> (v % 64)) & 1;
        it.start = ranges[rb].from;
        it.end = ranges[re - 1].to;
        it.range_begin = it.cursor = rb;
        it.range_end = re;
        it.use_begin = ub;
        it.use_end = ue;
        first_interval[v] = static_cast<uint32_t>(s.intervals.size());
        s.intervals.push_back(it);
        spill_slot[v] = kNone;
    }
    range_begin[nv] = nr;

    // (The live-in lists per block are made from livein_pairs by
    // build_livein_lists, when resolution needs them.)

    // --- Fixed ranges: sorted, touching ranges of one owner merged. ---
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        for (uint64_t bits = s.fixed_used.bits[c]; bits; bits &= bits - 1) {
            const unsigned r = c * kMaxRegsPerClass + static_cast<unsigned>(__builtin_ctzll(bits));
            auto& list = s.fixed[r];
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
            list.erase(list.begin() + static_cast<std::ptrdiff_t>(w), list.end());  // inline (a resize is a call)
        }
    }

    // --- Affinities of block parameters and branch arguments (after those of
    // moves and reuses, which take precedence). ---
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

    return {};
}

}  // namespace heron::ra
