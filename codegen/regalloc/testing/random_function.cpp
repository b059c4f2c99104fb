// Random machine functions; see random_function.h. The CFG is a chain of
// blocks with extra random edges (forward, backward, self), then critical
// edges are split. Dominators come from Cooper, Harvey and Kennedy, "A Simple,
// Fast Dominance Algorithm" (2001); instructions are generated in dominator
// tree preorder, so every operand can be drawn from the values of the block
// itself or of a dominator. Everything is linear in the function's size, so
// the benchmark can ask for a million instructions.
#include "codegen/regalloc/testing/random_function.h"

#include <algorithm>
#include <array>

namespace heron::ra::testing {

uint64_t RandomSource::next64() {
    if (data_) {
        uint64_t v = 0;
        for (int k = 0; k < 3; ++k) v = v << 8 | (pos_ < size_ ? data_[pos_++] : 0);
        return v;
    }
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint32_t RandomSource::below(uint32_t n) { return n <= 1 ? 0 : static_cast<uint32_t>(next64() % n); }

MachineEnv x64_env() {
    MachineEnv env;
    for (uint8_t hw : {0, 1, 2, 6, 7, 8, 9, 10, 3, 12, 13, 14, 15}) env.allocatable[0].push_back(PReg(hw, RegClass::Int));
    for (uint8_t hw = 0; hw < 15; ++hw) env.allocatable[1].push_back(PReg(hw, RegClass::Float));
    env.scratch[0] = PReg(11, RegClass::Int);
    env.scratch[1] = PReg(15, RegClass::Float);
    return env;
}

MachineEnv tiny_env(unsigned int_regs, unsigned float_regs) {
    MachineEnv env;
    for (unsigned hw = 0; hw < int_regs; ++hw) env.allocatable[0].push_back(PReg(static_cast<uint8_t>(hw), RegClass::Int));
    for (unsigned hw = 0; hw < float_regs; ++hw)
        env.allocatable[1].push_back(PReg(static_cast<uint8_t>(hw), RegClass::Float));
    env.scratch[0] = PReg(static_cast<uint8_t>(int_regs), RegClass::Int);
    env.scratch[1] = PReg(static_cast<uint8_t>(float_regs), RegClass::Float);
    return env;
}

std::vector<NamedEnv> test_envs() {
    return {{"x64", x64_env()},           {"tiny4", tiny_env(4, 4)}, {"tiny3", tiny_env(3, 3)},
            {"tiny2", tiny_env(2, 2)},    {"mixed", tiny_env(3, 2)}, {"wide", tiny_env(6, 3)}};
}

GenOptions varied_options(RandomSource& meta) {
    GenOptions opt;
    opt.max_blocks = meta.between(1, 40);
    opt.min_blocks = meta.between(1, opt.max_blocks);
    opt.max_insts = meta.between(1, 20);
    opt.min_insts = meta.between(0, opt.max_insts);
    opt.extra_edge_percent = meta.below(90);
    opt.max_params = meta.below(7);
    opt.float_percent = meta.below(60);
    opt.fixed_percent = meta.below(40);
    opt.call_percent = meta.below(25);
    opt.call_clobbers_all_percent = meta.below(100);
    opt.far_use_percent = meta.below(50);
    opt.any_percent = meta.below(60);
    opt.edge_window = meta.chance(50) ? meta.between(1, 10) : 0;
    return opt;
}

PRegSet caller_saved(const MachineEnv& env) {
    PRegSet set;
    const bool x64 = env.allocatable[0].size() == 13 && env.scratch[0].hw == 11;
    if (x64) {
        for (uint8_t hw : {0, 1, 2, 6, 7, 8, 9, 10, 11}) set.add(PReg(hw, RegClass::Int));
        for (uint8_t hw = 0; hw < 16; ++hw) set.add(PReg(hw, RegClass::Float));
        return set;
    }
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        const auto& regs = env.allocatable[c];
        for (size_t k = 0; k < (regs.size() + 1) / 2; ++k) set.add(regs[k]);
    }
    return set;
}

namespace {

constexpr uint32_t kNoBlock = ~uint32_t{0};

struct GenInst {
    std::vector<Operand> ops;
    uint8_t flags = 0;
    PRegSet clobbers;
};

class Generator {
public:
    Generator(RandomSource& rng, const MachineEnv& env, const GenOptions& opt) : rng_(rng), env_(env), opt_(opt) {}
    Function run();

private:
    void build_cfg();
    uint32_t nest_loop(uint32_t head, uint32_t latch);
    void compute_dominators();
    void gen_block(uint32_t b);
    void gen_inst(uint32_t b);
    void gen_call(uint32_t b);
    bool gen_fixed(uint32_t b, RegClass c);
    void gen_plain(uint32_t b, RegClass c);
    void gen_terminator(uint32_t b);

    VReg fresh(RegClass c) { return VReg(next_vreg_++, c); }
    VReg pick(uint32_t b, RegClass c, size_t own_count);
    VReg pick_here(uint32_t b, RegClass c) { return pick(b, c, defs_[static_cast<unsigned>(c)][b].size()); }
    void emit(uint32_t b, GenInst inst) {
        for (const Operand& op : inst.ops)
            if (op.kind == OperandKind::Def) defs_[static_cast<unsigned>(op.vreg.cls())][b].push_back(op.vreg);
        code_[b].push_back(std::move(inst));
    }
    unsigned nregs(RegClass c) const { return static_cast<unsigned>(env_.allocatable[static_cast<unsigned>(c)].size()); }
    PReg reg_with_hw(RegClass c, uint8_t hw, unsigned fallback) const {
        for (PReg r : env_.allocatable[static_cast<unsigned>(c)])
            if (r.hw == hw) return r;
        return env_.allocatable[static_cast<unsigned>(c)][fallback];
    }
    PReg random_reg(RegClass c) {
        const auto& regs = env_.allocatable[static_cast<unsigned>(c)];
        return regs[rng_.below(static_cast<uint32_t>(regs.size()))];
    }
    Operand use_maybe_any(VReg v) { return rng_.chance(opt_.any_percent) ? Operand::use_any(v) : Operand::use(v); }

    RandomSource& rng_;
    const MachineEnv& env_;
    const GenOptions& opt_;
    uint32_t nb_ = 0;
    std::vector<std::vector<uint32_t>> succ_, pred_;
    std::vector<std::pair<uint32_t, uint32_t>> outer_loops_;  // maximal (head, latch), by head
    std::vector<uint32_t> idom_, preorder_;
    std::vector<uint32_t> anc_[kNumRegClasses];  // nearest strict dominator with values of the class
    std::vector<std::vector<VReg>> params_;
    std::vector<std::vector<VReg>> defs_[kNumRegClasses];
    std::vector<std::vector<GenInst>> code_;
    uint32_t next_vreg_ = 0;
};

// Moves the head of a new loop ending at `latch` out to the head of any
// earlier loop it would cut into, so that loops nest; returns the head.
uint32_t Generator::nest_loop(uint32_t head, uint32_t latch) {
    while (!outer_loops_.empty() && outer_loops_.back().second >= head && outer_loops_.back().first < head)
        head = outer_loops_.back().first;
    while (!outer_loops_.empty() && outer_loops_.back().first >= head) outer_loops_.pop_back();
    outer_loops_.push_back({head, latch});
    return head;
}

void Generator::build_cfg() {
    const uint32_t n = rng_.between(std::max(opt_.min_blocks, 1u), std::max(opt_.max_blocks, opt_.min_blocks));
    std::vector<std::vector<uint32_t>> orig(n);
    std::vector<uint32_t> npred(n, 0);
    for (uint32_t b = 0; b + 1 < n; ++b) {
        orig[b].push_back(b + 1);
        for (int extra = 0; extra < 2 && rng_.chance(extra == 0 ? opt_.extra_edge_percent : opt_.extra_edge_percent / 3);
             ++extra) {
            uint32_t t = 1 + rng_.below(n - 1);
            if (opt_.edge_window > 0) {
                const uint32_t lo = b > opt_.edge_window ? b - opt_.edge_window : 1;
                t = std::min(n - 1, lo + rng_.below(b + opt_.edge_window - lo + 1));
                if (t <= b) t = nest_loop(t, b);
            }
            if (std::find(orig[b].begin(), orig[b].end(), t) == orig[b].end()) orig[b].push_back(t);
        }
        if (orig[b].size() > 1 && rng_.chance(50)) std::swap(orig[b][0], orig[b][1]);
        for (uint32_t t : orig[b]) ++npred[t];
    }
    // Number the blocks, inserting a block on every critical edge right after its source.
    std::vector<uint32_t> id(n);
    std::vector<std::vector<uint32_t>> split(n);
    nb_ = 0;
    for (uint32_t b = 0; b < n; ++b) {
        id[b] = nb_++;
        for (uint32_t t : orig[b]) split[b].push_back(orig[b].size() > 1 && npred[t] > 1 ? nb_++ : kNoBlock);
    }
    succ_.assign(nb_, {});
    pred_.assign(nb_, {});
    for (uint32_t b = 0; b < n; ++b) {
        for (size_t k = 0; k < orig[b].size(); ++k) {
            const uint32_t t = id[orig[b][k]];
            if (split[b][k] == kNoBlock) {
                succ_[id[b]].push_back(t);
                continue;
            }
            succ_[id[b]].push_back(split[b][k]);
            succ_[split[b][k]].push_back(t);
        }
    }
    for (uint32_t b = 0; b < nb_; ++b)
        for (uint32_t t : succ_[b]) pred_[t].push_back(b);
}

void Generator::compute_dominators() {
    // Reverse postorder by an explicit-stack DFS.
    std::vector<uint32_t> rpo, rpo_num(nb_, kNoBlock), stack{0};
    std::vector<uint32_t> next_child(nb_, 0);
    std::vector<uint8_t> seen(nb_, 0);
    seen[0] = 1;
    while (!stack.empty()) {
        const uint32_t b = stack.back();
        if (next_child[b] < succ_[b].size()) {
            const uint32_t t = succ_[b][next_child[b]++];
            if (!seen[t]) {
                seen[t] = 1;
                stack.push_back(t);
            }
            continue;
        }
        rpo.push_back(b);
        stack.pop_back();
    }
    std::reverse(rpo.begin(), rpo.end());
    for (uint32_t k = 0; k < rpo.size(); ++k) rpo_num[rpo[k]] = k;
    idom_.assign(nb_, kNoBlock);
    idom_[0] = 0;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t k = 1; k < rpo.size(); ++k) {
            const uint32_t b = rpo[k];
            uint32_t nd = kNoBlock;
            for (uint32_t p : pred_[b]) {
                if (idom_[p] == kNoBlock) continue;
                if (nd == kNoBlock) {
                    nd = p;
                    continue;
                }
                uint32_t x = p, y = nd;
                while (x != y) {
                    while (rpo_num[x] > rpo_num[y]) x = idom_[x];
                    while (rpo_num[y] > rpo_num[x]) y = idom_[y];
                }
                nd = x;
            }
            if (nd != idom_[b]) {
                idom_[b] = nd;
                changed = true;
            }
        }
    }
    // Dominator-tree preorder.
    std::vector<std::vector<uint32_t>> kids(nb_);
    for (uint32_t b = 1; b < nb_; ++b) kids[idom_[b]].push_back(b);
    preorder_.clear();
    stack.assign(1, 0);
    while (!stack.empty()) {
        const uint32_t b = stack.back();
        stack.pop_back();
        preorder_.push_back(b);
        for (size_t k = kids[b].size(); k-- > 0;) stack.push_back(kids[b][k]);
    }
}

VReg Generator::pick(uint32_t b, RegClass c, size_t own_count) {
    const unsigned ci = static_cast<unsigned>(c);
    const auto& own = defs_[ci][b];
    if (own_count > 0 && rng_.chance(50)) return own[rng_.below(static_cast<uint32_t>(own_count))];
    const uint32_t steps =
        rng_.chance(opt_.far_use_percent) ? rng_.between(2, std::max(2u, opt_.far_use_max_steps)) : 1;
    uint32_t found = kNoBlock;
    for (uint32_t x = b, s = 0; s < steps && anc_[ci][x] != kNoBlock; ++s) found = x = anc_[ci][x];
    if (found != kNoBlock) return defs_[ci][found][rng_.below(static_cast<uint32_t>(defs_[ci][found].size()))];
    return own[rng_.below(static_cast<uint32_t>(own_count))];
}

void Generator::gen_call(uint32_t b) {
    GenInst inst;
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        const RegClass cls = static_cast<RegClass>(c);
        auto regs = env_.allocatable[c];
        const uint32_t nargs = rng_.below(std::min<uint32_t>(4, static_cast<uint32_t>(regs.size())) + 1);
        for (uint32_t k = 0; k < nargs; ++k) {
            std::swap(regs[k], regs[k + rng_.below(static_cast<uint32_t>(regs.size() - k))]);
            inst.ops.push_back(Operand::use_fixed(pick_here(b, cls), regs[k]));
        }
        if (rng_.chance(30)) inst.ops.push_back(Operand::use_any(pick_here(b, cls)));  // a stack argument
    }
    if (rng_.chance(opt_.call_clobbers_all_percent)) {
        for (unsigned c = 0; c < kNumRegClasses; ++c)
            for (PReg r : env_.allocatable[c]) inst.clobbers.add(r);
    } else {
        inst.clobbers = caller_saved(env_);
    }
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        std::vector<PReg> results;
        for (PReg r : env_.allocatable[c])
            if (inst.clobbers.contains(r)) results.push_back(r);
        const uint32_t n = rng_.below(std::min<uint32_t>(2, static_cast<uint32_t>(results.size())) + 1);
        for (uint32_t k = 0; k < n; ++k)
            inst.ops.push_back(Operand::def_fixed(fresh(static_cast<RegClass>(c)), results[k]));
    }
    emit(b, std::move(inst));
}

// Instructions with fixed registers; false when the environment is too small.
bool Generator::gen_fixed(uint32_t b, RegClass c) {
    const unsigned n = nregs(c);
    GenInst inst;
    switch (rng_.below(5)) {
        case 0: {  // division: rdx:rax / divisor -> rax, rdx
            if (c != RegClass::Int || n < 3) return false;
            const PReg ra = reg_with_hw(c, 0, 0), rd = reg_with_hw(c, 2, 1);
            if (ra == rd) return false;
            inst.ops = {Operand::use_fixed(pick_here(b, c), ra), Operand::use_fixed(pick_here(b, c), rd),
                        use_maybe_any(pick_here(b, c)), Operand::def_fixed(fresh(c), ra),
                        Operand::def_fixed(fresh(c), rd)};
            break;
        }
        case 1: {  // shift: x <<= cl
            if (c != RegClass::Int || n < 2) return false;
            const PReg rc = reg_with_hw(c, 1, n - 1);
            inst.ops = {Operand::use(pick_here(b, c)), Operand::use_fixed(pick_here(b, c), rc),
                        Operand::def_reuse(fresh(c), 0)};
            break;
        }
        case 2: {  // one vreg in two fixed registers and a plain one
            if (n < 3) return false;
            const auto& regs = env_.allocatable[static_cast<unsigned>(c)];
            const uint32_t k1 = rng_.below(n), k2 = (k1 + 1 + rng_.below(n - 1)) % n;
            const PReg r1 = regs[k1], r2 = regs[k2];
            const VReg v = pick_here(b, c);
            inst.ops = {Operand::use_fixed(v, r1), Operand::use(v), Operand::use_fixed(v, r2), Operand::def(fresh(c))};
            break;
        }
        case 3: {  // fixed and Reg on one vreg, result fixed too
            if (n < 2) return false;
            const VReg v = pick_here(b, c);
            const PReg r = random_reg(c);
            inst.ops = {Operand::use(v), Operand::use_fixed(v, r), Operand::def_fixed(fresh(c), random_reg(c))};
            break;
        }
        default: {  // a Late use in a fixed register
            if (n < 2) return false;
            Operand late = Operand::use_fixed(pick_here(b, c), random_reg(c));
            late.pos = OperandPos::Late;
            const VReg u = pick_here(b, c);
            inst.ops = {late, n < 3 ? Operand::use_any(u) : Operand::use(u), Operand::def(fresh(c))};
            break;
        }
    }
    emit(b, std::move(inst));
    return true;
}

void Generator::gen_plain(uint32_t b, RegClass c) {
    const unsigned n = nregs(c);
    GenInst inst;
    // With one register, a Reg use that stays live and a Reg def cannot
    // coexist: only constants, two-address ops and copies from memory.
    const uint32_t kind = n < 2 ? std::array<uint32_t, 3>{0, 1, 2}[rng_.below(3)] : rng_.below(8);
    switch (kind) {
        case 0: {  // constant, maybe straight to memory
            inst.ops = {rng_.chance(opt_.any_percent) ? Operand{fresh(c), OperandKind::Def, OperandPos::Late,
                                                                Constraint::Any, 0}
                                                      : Operand::def(fresh(c))};
            break;
        }
        case 1: {  // copy
            const VReg v = pick_here(b, c);
            inst.ops = {n < 2 ? Operand::use_any(v) : Operand::use(v), Operand::def(fresh(c))};
            inst.flags = inst_flags::kMove;
            break;
        }
        case 2:
        case 3: {  // two-address ALU op
            const VReg y = pick_here(b, c);
            inst.ops = {Operand::use(pick_here(b, c)), n < 2 ? Operand::use_any(y) : use_maybe_any(y),
                        Operand::def_reuse(fresh(c), 0)};
            break;
        }
        case 4: {  // Early def
            if (n < 2) return gen_plain(b, c);
            const VReg y = pick_here(b, c);
            inst.ops = {Operand::use(pick_here(b, c)), n < 3 ? Operand::use_any(y) : use_maybe_any(y),
                        Operand::def_early(fresh(c))};
            break;
        }
        case 5: {  // Late use
            if (n < 2) return gen_plain(b, c);
            const VReg y = pick_here(b, c);
            inst.ops = {Operand::use_late(pick_here(b, c)), n < 3 ? Operand::use_any(y) : Operand::use(y),
                        Operand::def(fresh(c))};
            break;
        }
        default: {  // three-address op
            const VReg y = pick_here(b, c);
            inst.ops = {Operand::use(pick_here(b, c)), n < 3 ? Operand::use_any(y) : use_maybe_any(y),
                        Operand::def(fresh(c))};
            break;
        }
    }
    emit(b, std::move(inst));
}

void Generator::gen_inst(uint32_t b) {
    const RegClass c = rng_.chance(opt_.float_percent) ? RegClass::Float : RegClass::Int;
    if (rng_.chance(opt_.call_percent)) return gen_call(b);
    if (rng_.chance(opt_.fixed_percent) && gen_fixed(b, c)) return;
    gen_plain(b, c);
}

void Generator::gen_terminator(uint32_t b) {
    GenInst inst;
    inst.flags = inst_flags::kTerminator;
    if (succ_[b].empty()) {
        inst.flags |= inst_flags::kReturn;
        inst.ops.push_back(Operand::use_fixed(pick_here(b, RegClass::Int), env_.allocatable[0][0]));
        if (rng_.chance(40))
            inst.ops.push_back(Operand::use_fixed(pick_here(b, RegClass::Float), env_.allocatable[1][0]));
    } else if (succ_[b].size() > 1) {
        inst.ops.push_back(use_maybe_any(pick_here(b, RegClass::Int)));
    }
    code_[b].push_back(std::move(inst));
}

void Generator::gen_block(uint32_t b) {
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        if (b == 0) {
            anc_[c][b] = kNoBlock;
            continue;
        }
        const uint32_t d = idom_[b];
        anc_[c][b] = defs_[c][d].empty() ? anc_[c][d] : d;
    }
    for (VReg p : params_[b]) defs_[static_cast<unsigned>(p.cls())][b].push_back(p);
    if (b == 0) {
        const uint32_t nint = rng_.between(2, 3), nfloat = rng_.between(1, 2);
        for (uint32_t k = 0; k < nint; ++k) emit(b, {{Operand::def(fresh(RegClass::Int))}, 0, {}});
        for (uint32_t k = 0; k < nfloat; ++k) emit(b, {{Operand::def(fresh(RegClass::Float))}, 0, {}});
    }
    const uint32_t count = rng_.between(opt_.min_insts, std::max(opt_.max_insts, opt_.min_insts));
    for (uint32_t k = 0; k < count; ++k) gen_inst(b);
    gen_terminator(b);
}

Function Generator::run() {
    build_cfg();
    compute_dominators();
    params_.assign(nb_, {});
    for (unsigned c = 0; c < kNumRegClasses; ++c) {
        defs_[c].assign(nb_, {});
        anc_[c].assign(nb_, kNoBlock);
    }
    code_.assign(nb_, {});
    for (uint32_t b = 1; b < nb_; ++b) {
        if (rng_.chance(50)) continue;
        const uint32_t np = rng_.between(1, std::max(opt_.max_params, 1u));
        for (uint32_t k = 0; k < np; ++k)
            params_[b].push_back(fresh(rng_.chance(opt_.float_percent) ? RegClass::Float : RegClass::Int));
    }
    for (uint32_t b : preorder_) gen_block(b);

    Function f;
    f.num_vregs = next_vreg_;
    for (uint32_t b = 0; b < nb_; ++b) {
        f.block_insts_begin.push_back(static_cast<uint32_t>(f.flags.size()));
        for (GenInst& inst : code_[b]) {
            const uint32_t i = static_cast<uint32_t>(f.flags.size());
            f.operands_begin.push_back(static_cast<uint32_t>(f.operands.size()));
            f.operands.insert(f.operands.end(), inst.ops.begin(), inst.ops.end());
            f.flags.push_back(inst.flags);
            if (!inst.clobbers.empty()) f.clobbers.push_back({i, inst.clobbers});
        }
    }
    f.block_insts_begin.push_back(static_cast<uint32_t>(f.flags.size()));
    f.operands_begin.push_back(static_cast<uint32_t>(f.operands.size()));

    std::vector<int32_t> depth_delta(nb_ + 1, 0);
    for (uint32_t b = 0; b < nb_; ++b) {
        f.succs_begin.push_back(static_cast<uint32_t>(f.succs.size()));
        f.preds_begin.push_back(static_cast<uint32_t>(f.preds.size()));
        f.params_begin.push_back(static_cast<uint32_t>(f.params.size()));
        f.params.insert(f.params.end(), params_[b].begin(), params_[b].end());
        f.preds.insert(f.preds.end(), pred_[b].begin(), pred_[b].end());
        for (uint32_t t : succ_[b]) {
            f.succs.push_back(t);
            f.branch_args_begin.push_back(static_cast<uint32_t>(f.branch_args.size()));
            for (VReg p : params_[t]) f.branch_args.push_back(pick_here(b, p.cls()));
            if (t <= b) {  // a back edge: blocks t..b form a loop
                ++depth_delta[t];
                --depth_delta[b + 1];
            }
        }
    }
    f.succs_begin.push_back(static_cast<uint32_t>(f.succs.size()));
    f.preds_begin.push_back(static_cast<uint32_t>(f.preds.size()));
    f.params_begin.push_back(static_cast<uint32_t>(f.params.size()));
    f.branch_args_begin.push_back(static_cast<uint32_t>(f.branch_args.size()));
    int32_t depth = 0;
    for (uint32_t b = 0; b < nb_; ++b) {
        depth += depth_delta[b];
        f.loop_depth.push_back(static_cast<uint32_t>(depth));
    }
    return f;
}

}  // namespace

Function random_function(RandomSource& rng, const MachineEnv& env, const GenOptions& options) {
    return Generator(rng, env, options).run();
}

}  // namespace heron::ra::testing
