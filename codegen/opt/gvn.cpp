// GVN with the rewrite rules: see gvn.h. The rules are rules.def, the
// constant folds fold.def.
#include "codegen/opt/gvn.h"

#include <algorithm>
#include <utility>

#include "codegen/interp/int_ops.h"
#include "codegen/opt/effects.h"
#include "codegen/opt/fold.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

/// By opcode, from the tables: which ones commute (HERON_COMMUTES), which
/// have rules (HERON_RULES), which fold.def folds.
struct OpcodeTables {
    std::array<bool, 256> commutes{}, has_rules{}, folds{};
};
constexpr OpcodeTables kTables = [] {
    OpcodeTables t;
#define HERON_COMMUTES(Op) t.commutes[static_cast<unsigned>(Opcode::Op)] = true;
#define HERON_RULES(Op) t.has_rules[static_cast<unsigned>(Opcode::Op)] = true;
#define HERON_RULE(cond, result)
#include "codegen/opt/rules.def"
#undef HERON_COMMUTES
#undef HERON_RULES
#undef HERON_RULE
#define HERON_FOLD(Op, expr) t.folds[static_cast<unsigned>(Opcode::Op)] = true;
#define HERON_FOLD_PAIR(Op, expr, flag) HERON_FOLD(Op, expr)
#define HERON_FOLD_TRAPPING(Op, expr) HERON_FOLD(Op, expr)
#include "codegen/opt/fold.def"
#undef HERON_FOLD
#undef HERON_FOLD_PAIR
#undef HERON_FOLD_TRAPPING
    return t;
}();
constexpr const auto& kCommutes = kTables.commutes;
constexpr const auto& kHasRules = kTables.has_rules;
constexpr const auto& kFolds = kTables.folds;

/// Pure opcodes (effects.h: no memory, trap, call or control) but nop.
constexpr auto kPure = [] {
    std::array<bool, 256> t{};
    for (unsigned op = 0; op < kNumOpcodes; ++op) {
        const uint8_t f = detail::kOpcodeInfo[op].flags;
        using namespace opflags;
        t[op] = op != static_cast<unsigned>(Opcode::Nop) && (f & (TERM | BRANCH | CALL | TRAP | LOAD | STORE)) == 0;
    }
    return t;
}();

/// What a rule turns an instruction into.
struct Rewrite {
    enum Kind : uint8_t { None, Same, Const, Inst, Take };
    Kind kind = None;
    Opcode op = Opcode::Nop;
    uint8_t code = 0;
    Value a, b;  // Same: a; Inst: the operands
    uint64_t bits = 0;  // Const: the constant; Take: the destination
};

constexpr bool pow2(uint64_t k) { return k != 0 && (k & (k - 1)) == 0; }
constexpr uint64_t log2(uint64_t k) { return static_cast<uint64_t>(__builtin_ctzll(k)); }

class Numberer {
public:
    Numberer(Function& func, const DominatorTree& dt, GvnScratch& s)
        : dfg_(func.dfg), layout_(func.layout), dt_(dt), s_(s) {}

    uint32_t run(Block entry) {
        const uint32_t nv = dfg_.num_values();
        s_.repl.assign(nv, Value());
        s_.is_const.assign(nv, 0);
        s_.bits.resize(nv);
        size_t cap = 64;
        while (cap < 2 * static_cast<size_t>(dfg_.num_insts())) cap *= 2;
        s_.table.assign(cap, 0);
        count_ = 0;
        s_.stack.clear();
        s_.stack.push_back(entry);
        while (!s_.stack.empty()) {
            block_ = s_.stack.back();
            s_.stack.pop_back();
            for (auto i = layout_.first_inst(block_); i; i = layout_.next_inst(*i)) visit(*i);
            const auto kids = dt_.children(block_);
            for (size_t k = kids.size(); k-- > 0;) s_.stack.push_back(kids[k]);
        }
        return changes_;
    }

    bool cfg_changed() const { return cfg_changed_; }

private:
    // --- values --------------------------------------------------------------
    // The tables by value cover every value: grow_values() follows each
    // one the pass creates.
    Value resolve(Value v) const {
        if (dfg_.value_is_alias(v)) v = dfg_.resolve_aliases(v);
        const Value r = s_.repl[v.index()];
        return r.is_valid() ? r : v;
    }
    void grow_values() {
        const uint32_t nv = dfg_.num_values();
        if (s_.repl.size() >= nv) return;
        s_.repl.resize(nv, Value());
        s_.is_const.resize(nv, 0);
        s_.bits.resize(nv);
    }
    bool is_k(Value v) const { return v.is_valid() && s_.is_const[v.index()]; }
    uint64_t bits_of(Value v) const { return is_k(v) ? s_.bits[v.index()] : 0; }
    void note_constant(Value v, uint64_t bits) {
        s_.is_const[v.index()] = 1;
        s_.bits[v.index()] = bits;
    }
    void replace(Value from, Value to) {
        s_.repl[from.index()] = to;
        ++changes_;
    }
    /// The instruction defining `v` (a result), if any.
    const InstructionData* def_of(Value v) const {
        if (!v.is_valid()) return nullptr;
        const ValueDef d = dfg_.value_def(v);
        return d.is_result() ? &dfg_[d.inst()] : nullptr;
    }

    // --- the hash table of pure instructions ---------------------------------
    static bool is_pure(const InstructionData& d) { return kPure[static_cast<unsigned>(d.opcode)] && d.vargs.empty(); }
    /// The fixed operands, commutative ones in a fixed order.
    static std::array<Value, 3> key_args(const InstructionData& d) {
        std::array<Value, 3> a{};
        const unsigned n = d.num_fixed_args();
        for (unsigned k = 0; k < n; ++k) a[k] = d.args[k];
        if (kCommutes[static_cast<unsigned>(d.opcode)] && a[1].index() < a[0].index()) std::swap(a[0], a[1]);
        return a;
    }
    static size_t hash(const InstructionData& d, const std::array<Value, 3>& a) {
        uint64_t h = (static_cast<uint64_t>(d.opcode) | uint64_t{d.type.code()} << 8 | uint64_t{d.code} << 16 |
                      uint64_t{d.flags.bits} << 24 | uint64_t{d.flags.trap} << 32) ^
                     (uint64_t{a[0].index()} * 0x9e3779b97f4a7c15ull) ^ (uint64_t{a[1].index()} * 0xc2b2ae3d27d4eb4full) ^
                     (uint64_t{a[2].index()} * 0x165667b19e3779f9ull) ^ (d.imm * 0xd6e8feb86659fd93ull) ^
                     ((uint64_t{d.entity} << 32 | static_cast<uint32_t>(d.offset)) * 0x94d049bb133111ebull);
        return static_cast<size_t>(h ^ (h >> 31));
    }
    static bool same_key(const InstructionData& p, const InstructionData& q, const std::array<Value, 3>& qa) {
        return p.opcode == q.opcode && p.type == q.type && p.code == q.code && p.flags == q.flags &&
               p.imm == q.imm && p.entity == q.entity && p.offset == q.offset && key_args(p) == qa;
    }
    bool available(Inst e) const {
        const Block b = *layout_.inst_block(e);
        return b == block_ || dt_.dominates(b, block_);
    }
    /// An available pure instruction equal to `d`, if any; else `self`
    /// (when valid) takes its slot.
    PackedOption<Inst> find_or_insert(const InstructionData& d, PackedOption<Inst> self) {
        const size_t mask = s_.table.size() - 1;
        const auto args = key_args(d);
        for (size_t h = hash(d, args) & mask;; h = (h + 1) & mask) {
            uint32_t& slot = s_.table[h];
            if (slot == 0) {
                if (!self) return std::nullopt;
                slot = self->index() + 1;
                if (++count_ * 2 > s_.table.size()) grow();
                return std::nullopt;
            }
            const Inst e(slot - 1);
            if (!same_key(dfg_[e], d, args)) continue;
            if (available(e)) return e;
            if (self) slot = self->index() + 1;  // e's dominator subtree is done
            return std::nullopt;
        }
    }
    void grow() {
        std::vector<uint32_t> old;
        old.swap(s_.table);
        s_.table.assign(old.size() * 2, 0);
        const size_t mask = s_.table.size() - 1;
        for (uint32_t slot : old) {
            if (slot == 0) continue;
            const InstructionData& d = dfg_[Inst(slot - 1)];
            size_t h = hash(d, key_args(d)) & mask;
            while (s_.table[h] != 0) h = (h + 1) & mask;
            s_.table[h] = slot;
        }
    }

    // --- constants -----------------------------------------------------------
    static InstructionData constant_data(Type t, uint64_t bits) {
        InstructionData d;
        if (t == types::F32) {
            d.opcode = Opcode::F32const;
        } else if (t == types::F64) {
            d.opcode = Opcode::F64const;
        } else {
            d.opcode = Opcode::Iconst;
            d.type = t;
        }
        d.imm = bits & t.mask();
        return d;
    }
    /// The constant `bits` of type `t` before the current instruction (an
    /// available equal one if there is).
    Value materialize(Type t, uint64_t bits) {
        const InstructionData kd = constant_data(t, bits);
        if (auto e = find_or_insert(kd, std::nullopt)) return dfg_.first_result(*e);
        const Inst ni = dfg_.make_inst(kd);
        dfg_.make_inst_results(ni, t);
        layout_.insert_inst(ni, cur_);
        grow_values();
        const Value v = dfg_.first_result(ni);
        note_constant(v, kd.imm);
        find_or_insert(kd, ni);
        return v;
    }
    /// `op a[, b]` of type `t` before the current instruction (an available
    /// equal one if there is): the steps of a multi-instruction rewrite.
    Value emit(Opcode op, Type t, Value a, Value b = Value()) {
        InstructionData nd;
        nd.opcode = op;
        nd.args = {a, b, Value()};
        if (auto e = find_or_insert(nd, std::nullopt)) return dfg_.first_result(*e);
        const Inst ni = dfg_.make_inst(nd);
        dfg_.make_inst_results(ni, t);
        layout_.insert_inst(ni, cur_);
        grow_values();
        find_or_insert(nd, ni);
        return dfg_.first_result(ni);
    }

    // Division by a constant as a multiply-high (Granlund and Montgomery,
    // "Division by invariant integers using multiplication", 1994: the
    // unsigned method of their figure 4.1, exact for every N-bit dividend
    // and divisor 1 < d < 2^N, and the signed one of figure 5.1, for
    // d other than 0, 1 and -1). The magic numbers are computed in 128 bits.

    /// x /u d.
    Value udiv_magic(Type t, Value x, uint64_t d) {
        using interp::UInt128;
        const unsigned n = t.bits();
        unsigned l = 0;
        while ((UInt128{1} << l) < d) ++l;  // ceil(log2 d)
        const UInt128 m = ((UInt128{1} << n) * ((UInt128{1} << l) - d)) / d + 1;
        const Value hi = emit(Opcode::Umulhi, t, x, materialize(t, static_cast<uint64_t>(m)));
        const Value half = emit(Opcode::Ushr, t, emit(Opcode::Isub, t, x, hi), materialize(t, l == 0 ? 0 : 1));
        return emit(Opcode::Ushr, t, emit(Opcode::Iadd, t, hi, half), materialize(t, l == 0 ? 0 : l - 1));
    }
    /// x /s d, rounded toward zero.
    Value sdiv_magic(Type t, Value x, uint64_t d) {
        using interp::Int128;
        using interp::UInt128;
        const unsigned n = t.bits();
        const int64_t sd = interp::sext(d, n);
        const UInt128 ad = sd < 0 ? static_cast<UInt128>(-static_cast<Int128>(sd)) : static_cast<UInt128>(sd);
        unsigned l = 0;
        while ((UInt128{1} << l) < ad) ++l;
        if (l == 0) l = 1;
        const UInt128 m = 1 + (UInt128{1} << (n + l - 1)) / ad;  // m - 2^N as an N-bit pattern
        const Value hi = emit(Opcode::Smulhi, t, x, materialize(t, static_cast<uint64_t>(m)));
        const Value q = emit(Opcode::Sshr, t, emit(Opcode::Iadd, t, x, hi), materialize(t, l - 1));
        const Value neg = emit(Opcode::Ushr, t, x, materialize(t, n - 1));  // 1 for a negative x
        const Value r = emit(Opcode::Iadd, t, q, neg);
        return sd < 0 ? emit(Opcode::Ineg, t, r) : r;
    }

    /// What x /s 2^k adds to x before shifting, so that the shift rounds
    /// toward zero: 2^k - 1 for a negative x, else 0
    /// ((x >>s (N-1)) >>u (N-k); for k = 1 just x >>u (N-1)).
    Value shift_bias(Type t, Value x, unsigned k) {
        const unsigned n = t.bits();
        const Value sign = k == 1 ? x : emit(Opcode::Sshr, t, x, materialize(t, n - 1));
        return emit(Opcode::Ushr, t, sign, materialize(t, n - k));
    }

    /// The current instruction's one result becomes the constant `bits`:
    /// an available equal constant, or the instruction itself rewritten.
    void become_constant(uint64_t bits) {
        const Value r = dfg_.first_result(cur_);
        const InstructionData kd = constant_data(dfg_.value_type(r), bits);
        if (auto e = find_or_insert(kd, std::nullopt)) {
            replace(r, dfg_.first_result(*e));
            return;
        }
        dfg_[cur_] = kd;
        note_constant(r, kd.imm);
        find_or_insert(kd, cur_);
        ++changes_;
    }

    // --- one instruction -----------------------------------------------------
    void visit(Inst i) {
        cur_ = i;
        InstructionData& d = dfg_[i];
        if (d.num_fixed_args() != 0 || !d.vargs.empty() || is_branch(d.opcode))
            dfg_.for_each_inst_value(i, [&](Value& v) { v = resolve(v); });
        switch (d.opcode) {
        case Opcode::Iconst:
        case Opcode::F32const:
        case Opcode::F64const: note_constant(dfg_.first_result(i), d.imm); break;
        default:
            if (!kFolds[static_cast<unsigned>(d.opcode)] && !kHasRules[static_cast<unsigned>(d.opcode)]) break;
            for (int round = 0; round < 4; ++round) {
                const Step s = simplify(i);
                if (s == Step::Replaced) return;
                if (s == Step::Kept) break;
            }
        }
        if (!dfg_.has_results(i) || !is_pure(dfg_[i])) return;
        if (auto e = find_or_insert(dfg_[i], i)) {
            const auto from = dfg_.inst_results(i);
            const auto to = dfg_.inst_results(*e);
            for (size_t k = 0; k < from.size(); ++k) replace(from[k], to[k]);
        }
    }

    enum class Step : uint8_t { Kept, Rewritten, Replaced };

    Step simplify(Inst i) {
        InstructionData& d = dfg_[i];
        const unsigned n = d.num_fixed_args();
        if (n == 0) return Step::Kept;
        const bool has_results = dfg_.has_results(i);
        const Type ctrl =
            opcode_info(d.opcode).ctrl == CtrlSource::Arg0 ? dfg_.value_type(d.args[0]) : dfg_.ctrl_typevar(i);
        if (has_results && kFolds[static_cast<unsigned>(d.opcode)]) {
            FoldInput in{d.opcode, d.code, ctrl.bits(), dfg_.value_type(d.args[0]).bits(), {}};
            bool all = true;
            for (unsigned k = 0; k < n && all; ++k) {
                all = is_k(d.args[k]);
                in.k[k] = bits_of(d.args[k]);
            }
            uint64_t out[2];
            const unsigned folded = all ? fold_constants(in, out) : 0;
            if (folded == 1) {
                become_constant(out[0]);
                return Step::Replaced;
            }
            if (folded == 2) {
                const auto res = dfg_.inst_results(i);
                const Value r0 = res[0], r1 = res[1];
                const Value k0 = materialize(dfg_.value_type(r0), out[0]);
                const Value k1 = materialize(dfg_.value_type(r1), out[1]);
                replace(r0, k0);
                replace(r1, k1);
                return Step::Replaced;
            }
            if (kCommutes[static_cast<unsigned>(d.opcode)] && is_k(d.args[0]) && !is_k(d.args[1])) {
                std::swap(d.args[0], d.args[1]);
                ++changes_;
            }
        }
        if (!kHasRules[static_cast<unsigned>(d.opcode)]) return Step::Kept;
        const Rewrite r = match(i, ctrl);
        switch (r.kind) {
        case Rewrite::None: return Step::Kept;
        case Rewrite::Same: replace(dfg_.first_result(i), r.a); return Step::Replaced;
        case Rewrite::Const: become_constant(r.bits); return Step::Replaced;
        case Rewrite::Inst: {
            InstructionData& w = dfg_[i];
            w.opcode = r.op;
            w.code = r.code;
            w.args = {r.a, r.b, Value()};
            ++changes_;
            return Step::Rewritten;
        }
        case Rewrite::Take: {
            InstructionData& w = dfg_[i];
            w.opcode = Opcode::Jump;
            if (r.bits == 1) w.dests[0] = w.dests[1];
            w.dests[1] = BlockCall();
            w.args = {};
            cfg_changed_ = true;
            ++changes_;
            return Step::Kept;
        }
        }
        return Step::Kept;
    }

    /// The first rule of rules.def that applies to `i`.
    Rewrite match(Inst i, Type T) {
        const InstructionData& d = dfg_[i];
        const Value x = d.args[0], y = d.args[1], z = d.args[2];
        const bool kx = is_k(x), ky = is_k(y);
        const uint64_t cx = bits_of(x), cy = bits_of(y);
        const unsigned B = T.bits();
        const uint64_t M = T.mask();
        const uint8_t CC = d.code;
        const InstructionData* defx = def_of(x);
        const InstructionData* defy = def_of(y);
        const Opcode dx = defx ? defx->opcode : Opcode::Nop;
        const Opcode dy = defy ? defy->opcode : Opcode::Nop;
        const Value x0 = defx ? defx->args[0] : Value(), x1 = defx ? defx->args[1] : Value();
        const Value y0 = defy ? defy->args[0] : Value();
        const bool kx1 = is_k(x1);
        const uint64_t cx1 = bits_of(x1);
        (void)z, (void)kx, (void)ky, (void)cx, (void)cy, (void)B, (void)M, (void)CC, (void)dx, (void)dy;
        (void)x0, (void)y0, (void)kx1, (void)cx1;
        auto same = [](Value v) { return Rewrite{Rewrite::Same, Opcode::Nop, 0, v, Value(), 0}; };
        auto konst = [](uint64_t k) { return Rewrite{Rewrite::Const, Opcode::Nop, 0, Value(), Value(), k}; };
        auto rewrite = [&](Opcode op, Value a, Value b = Value()) { return Rewrite{Rewrite::Inst, op, CC, a, b, 0}; };
        auto rewrite_cc = [](IntCC cc, Value a, Value b) {
            return Rewrite{Rewrite::Inst, Opcode::Icmp, static_cast<uint8_t>(cc), a, b, 0};
        };
        auto take = [](uint64_t k) { return Rewrite{Rewrite::Take, Opcode::Nop, 0, Value(), Value(), k}; };
        auto K = [&](uint64_t k) { return materialize(dfg_.value_type(y), k); };
        auto type_of = [&](Value v) { return dfg_.value_type(v); };
        auto emit2 = [&](Opcode op, Value a, Value b) { return emit(op, T, a, b); };
        auto udiv_by = [&](uint64_t k) { return udiv_magic(T, x, k); };
        auto sdiv_by = [&](uint64_t k) { return sdiv_magic(T, x, k); };
        auto sbias = [&](unsigned k) { return shift_bias(T, x, k); };
        (void)same, (void)konst, (void)rewrite, (void)rewrite_cc, (void)take, (void)K, (void)type_of;
        (void)emit2, (void)udiv_by, (void)sdiv_by, (void)sbias;
        using namespace interp;
        switch (d.opcode) {
        default: break;
#define HERON_COMMUTES(Op)
#define HERON_RULES(Op) \
    break;              \
    case Opcode::Op:
#define HERON_RULE(cond, result) \
    if (cond) return result;
#include "codegen/opt/rules.def"
#undef HERON_COMMUTES
#undef HERON_RULES
#undef HERON_RULE
        }
        return {};
    }

    DataFlowGraph& dfg_;
    Layout& layout_;
    const DominatorTree& dt_;
    GvnScratch& s_;
    Block block_;
    Inst cur_;
    size_t count_ = 0;
    uint32_t changes_ = 0;
    bool cfg_changed_ = false;
};

}  // namespace

uint32_t number_values(Function& func, PassContext& ctx) {
    const auto entry = func.layout.entry_block();
    if (!entry) return 0;
    Numberer n(func, ctx.domtree(), ctx.scratch().gvn);
    const uint32_t changes = n.run(*entry);
    if (n.cfg_changed()) ctx.invalidate({Property::CfgValid});
    return changes;
}

}  // namespace heron
