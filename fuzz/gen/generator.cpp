// The random IR generator (see generator.h for the contract).
//
// One `FunctionGen` builds one function through a FuncCursor. It keeps a
// pool of the SSA values visible at the cursor: entering a region (an arm, a
// loop body, a switch case) remembers the pool's size and leaving it cuts the
// pool back, so a value is only ever used where its definition dominates.
// Regions are nested like this:
//
//   sequence := item*            item := inst | diamond | brif-select | loop
//                                       | switch | break
//   diamond  := brif c, T(a), E(b);  T: sequence, jump M(x) | terminator
//                                    E: sequence, jump M(y)
//   loop     := jump H(0, init); H(i, c..): sequence, i' = i+-1,
//               brif (i' in range), H(i', c'..), X(c'..)     (breaks go to X)
//   switch   := br_table idx, D(a), [C1(b), C2, C1(c) ..]; each case jumps
//               to the merge M or (not the default) ends with a terminator
//
// Every choice is one `Entropy` draw; an exhausted byte source draws zeros,
// and zero always picks the first (cheapest) option, so generation ends.
#include "fuzz/gen/generator.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <initializer_list>
#include <string>

#include "codegen/ir/cursor.h"

namespace heron::gen {

// ---------------------------------------------------------------------------
// Entropy

uint8_t Entropy::byte() {
    if (rng_) return static_cast<uint8_t>((*rng_)() >> 56);
    if (pos_ >= bytes_.size()) return 0;
    return bytes_[pos_++];
}

uint64_t Entropy::u64() {
    if (rng_) return (*rng_)();
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return v;
}

uint32_t Entropy::below(uint32_t n) {
    HERON_ASSERT(n > 0 && "below(0) has no answer");
    if (n == 1) return 0;
    if (rng_) return static_cast<uint32_t>((*rng_)() % n);
    if (n <= 256) return byte() % n;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | byte();
    return v % n;
}

const Function* Module::find(std::string_view name) const {
    for (const auto& f : functions) {
        if (f->name.name == name) return f.get();
    }
    return nullptr;
}

namespace {

// ---------------------------------------------------------------------------
// Interesting values, shared by constants in the code and by test inputs.

constexpr uint32_t kF32Edges[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000, 0x40200000,
    0xbfc00000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc00001, 0xffc12345,
    0x7f800001, 0xff812345, 0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
    0x4f000000, 0xcf000000, 0x5f000000, 0xdf000000, 0x4f800000, 0x5f800000, 0x4b000000,
    0x42fe0000, 0xc3000000, 0x437f0000, 0x477fff00, 0x3effffff, 0xbf000000, 0x40490fdb,
};

constexpr uint64_t kF64Edges[] = {
    0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
    0x3fe0000000000000, 0x3ff8000000000000, 0x4004000000000000, 0xbff8000000000000,
    0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0xfff8000000000000,
    0x7ff8000000000001, 0xfff80000deadbeef, 0x7ff0000000000001, 0xfff4000000000000,
    0x0000000000000001, 0x800fffffffffffff, 0x0010000000000000, 0x7fefffffffffffff,
    0xffefffffffffffff, 0x41e0000000000000, 0xc1e0000000000000, 0x43e0000000000000,
    0xc3e0000000000000, 0x41f0000000000000, 0x43f0000000000000, 0x4330000000000000,
    0x405fc00000000000, 0xc060000000000000, 0x41dfffffffc00000, 0xc1e0000000200000,
    0x3fdfffffffffffff, 0x400921fb54442d18, 0x36a0000000000000,
};

constexpr uint64_t kIntEdges[] = {
    0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
    0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000, 0x5555555555555555,
    0xaaaaaaaaaaaaaaaa, 0x7fffffffffffffff, 0x8000000000000000,
    ~uint64_t{0}, ~uint64_t{1}, ~uint64_t{6},
};

uint64_t int_min(Type t) { return uint64_t{1} << (t.bits() - 1); }
uint64_t int_max(Type t) { return int_min(t) - 1; }

uint64_t interesting_int(Entropy& e, Type t) {
    switch (e.below(5)) {
    case 0: return e.pick(kIntEdges) & t.mask();
    case 1: return int_min(t);
    case 2: return int_max(t);
    case 3: return (e.chance(50) ? 0 - uint64_t{e.range(1, 20)} : uint64_t{e.below(40)}) & t.mask();
    default: return e.u64() & t.mask();
    }
}

uint64_t interesting_float(Entropy& e, Type t) {
    bool f32 = t == types::F32;
    switch (e.below(4)) {
    case 0:
    case 1: return f32 ? e.pick(kF32Edges) : e.pick(kF64Edges);
    case 2: {
        // A small integer, some exact halves: rounding and conversion fodder.
        double d = static_cast<double>(static_cast<int>(e.below(601)) - 300);
        if (e.chance(30)) d += 0.5;
        return f32 ? std::bit_cast<uint32_t>(static_cast<float>(d)) : std::bit_cast<uint64_t>(d);
    }
    default: return e.u64() & t.mask();
    }
}

constexpr Type kIntTypes[] = {types::I8, types::I16, types::I32, types::I64};
constexpr Type kFloatTypes[] = {types::F32, types::F64};

/// What the function generator knows about an earlier function.
struct Callee {
    std::string name;
    Signature sig;
    uint64_t cost = 0;  // estimated dynamic instructions of one call
};

// ---------------------------------------------------------------------------
// One function.

class FunctionGen {
public:
    FunctionGen(Entropy& e, const GenOptions& o, std::span<const Callee> callees, Function& f)
        : e_(e), o_(o), callees_(callees), f_(f), cur_(f), refs_(callees.size()) {
        for (Type t : kIntTypes) types_.push_back(t);
        if (o_.floats) {
            for (Type t : kFloatTypes) types_.push_back(t);
        }
    }

    /// Builds the body; returns the estimated dynamic instruction count.
    uint64_t build() {
        Block entry = new_block();
        switch_to(entry);
        for (const AbiParam& p : f_.signature.params) def(f_.dfg.append_block_param(entry, p.type));
        gen_stack_slots();
        gen_sequence();
        gen_function_end();
        account();
        return cost_;
    }

private:
    struct LoopCtx {
        Block exit;
        std::vector<Type> exit_types;
    };
    /// A slot used like a frontend's local variables: each cell (offset,
    /// type, byte order) is only ever accessed as itself (mem2reg can
    /// promote it). Empty `cells`: any access anywhere in the slot.
    struct Cell {
        uint32_t offset;
        Type type;
        bool big;
    };
    struct Slot {
        StackSlot ss;
        uint32_t size;
        std::vector<Cell> cells;
    };
    struct Import {
        FuncRef fn;
        SigRef sig;
    };

    // --- small helpers ------------------------------------------------------
    Type ty(Value v) const { return f_.dfg.value_type(v); }
    void def(Value v) { pool_.push_back(v); }
    Type rand_int_type() { return e_.pick(kIntTypes); }
    Type rand_float_type() { return e_.pick(kFloatTypes); }
    Type rand_type() { return types_[e_.below(static_cast<uint32_t>(types_.size()))]; }
    std::vector<Type> rand_types(uint32_t n) {
        std::vector<Type> out;
        for (uint32_t i = 0; i < n; ++i) out.push_back(rand_type());
        return out;
    }

    /// Picks an index by weight; zero-weight entries are never picked. With
    /// zero entropy the first entry of nonzero weight wins.
    uint32_t weighted(std::initializer_list<uint32_t> weights) {
        uint32_t total = 0;
        for (uint32_t w : weights) total += w;
        HERON_ASSERT(total > 0 && "nothing to choose from");
        uint32_t r = e_.below(total), i = 0;
        for (uint32_t w : weights) {
            if (r < w) return i;
            r -= w;
            ++i;
        }
        return 0;
    }

    TrapCode rand_trap_code() {
        if (e_.chance(75)) return TrapCode::user(static_cast<uint8_t>(e_.range(1, 250)));
        constexpr uint8_t kCodes[] = {TrapCode::kIntegerOverflow, TrapCode::kHeapOutOfBounds,
                                      TrapCode::kIntegerDivisionByZero,
                                      TrapCode::kBadConversionToInteger, TrapCode::kStackOverflow};
        return TrapCode{e_.pick(kCodes)};
    }

    // --- building -----------------------------------------------------------
    Inst build(const InstructionData& d, Type ctrl) { return cur_.build(d, ctrl); }
    Value build1(const InstructionData& d, Type ctrl) { return f_.dfg.first_result(build(d, ctrl)); }

    Value unary(Opcode op, Value x) {
        InstructionData d;
        d.opcode = op;
        d.args[0] = x;
        return build1(d, ty(x));
    }
    Value unary_to(Opcode op, Type t, Value x) {
        InstructionData d;
        d.opcode = op;
        d.type = t;
        d.args[0] = x;
        return build1(d, t);
    }
    Value binary(Opcode op, Value x, Value y) {
        InstructionData d;
        d.opcode = op;
        d.args[0] = x;
        d.args[1] = y;
        return build1(d, ty(x));
    }
    std::pair<Value, Value> binary2(Opcode op, Value x, Value y) {
        InstructionData d;
        d.opcode = op;
        d.args[0] = x;
        d.args[1] = y;
        auto r = f_.dfg.inst_results(build(d, ty(x)));
        return {r[0], r[1]};
    }
    /// Ternary format; the controlling type is the second operand's.
    Inst ternary_inst(Opcode op, Value x, Value y, Value z) {
        InstructionData d;
        d.opcode = op;
        d.args = {x, y, z};
        return build(d, ty(y));
    }

    Value iconst(Type t, uint64_t v) { return cur_.ins().iconst(t, static_cast<int64_t>(v)); }
    Value fconst(Type t, uint64_t bits) {
        if (t == types::F32) return cur_.ins().f32const(Ieee32{static_cast<uint32_t>(bits)});
        return cur_.ins().f64const(Ieee64{bits});
    }
    Value fconst_exact(Type t, double d) {
        if (t == types::F32) return fconst(t, std::bit_cast<uint32_t>(static_cast<float>(d)));
        return fconst(t, std::bit_cast<uint64_t>(d));
    }
    Value constant(Type t) {
        return t.is_int() ? iconst(t, interesting_int(e_, t)) : fconst(t, interesting_float(e_, t));
    }

    /// The result of an arithmetic float op (NaN sign and payload
    /// unspecified, ir-reference.md 1.4); with canonicalize_nans a NaN is
    /// replaced by the positive canonical NaN right here, before any
    /// bit-exact op (bitcast, fneg, store, ...) can expose its bits.
    Value arith(Value r) {
        if (!o_.canonicalize_nans) return r;
        Type t = ty(r);
        Value is_nan = cur_.ins().fcmp(FloatCC::Uno, r, r);
        Value nan = fconst(t, t == types::F32 ? 0x7fc00000 : 0x7ff8000000000000);
        return ternary_result(Opcode::Select, is_nan, nan, r);
    }
    Value ternary_result(Opcode op, Value x, Value y, Value z) {
        return f_.dfg.first_result(ternary_inst(op, x, y, z));
    }

    // --- the value pool -----------------------------------------------------
    /// A value of type `t` visible here: usually from the pool (recent ones
    /// preferred), else a conversion of a visible value or a constant.
    Value get(Type t) {
        cands_.clear();
        for (Value v : pool_) {
            if (ty(v) == t) cands_.push_back(v);
        }
        if (!cands_.empty() && !e_.chance(12)) {
            size_t n = cands_.size();
            if (n > 3 && e_.chance(50)) return cands_[n - 1 - e_.below(3)];
            return cands_[e_.below(static_cast<uint32_t>(n))];
        }
        Value v = e_.chance(40) ? convert_to(t) : Value();
        if (!v.is_valid()) v = constant(t);
        def(v);
        return v;
    }

    /// Like get(t), but tries not to return `x` again (`iadd v1, v1` is
    /// less interesting than `iadd v1, v2`).
    Value get_other(Type t, Value x) {
        Value y = get(t);
        if (y == x) y = get(t);
        return y;
    }

    /// Any visible integer value (a constant if none).
    Value get_int() {
        cands_.clear();
        for (Value v : pool_) {
            if (ty(v).is_int()) cands_.push_back(v);
        }
        if (!cands_.empty() && !e_.chance(10)) return cands_[e_.below(static_cast<uint32_t>(cands_.size()))];
        Value v = constant(rand_int_type());
        def(v);
        return v;
    }

    /// A branch / select condition: a fresh comparison or any integer.
    Value get_cond() {
        if (e_.chance(55)) return get_int();
        if (o_.floats && e_.chance(30)) {
            Type t = rand_float_type();
            Value r = cur_.ins().fcmp(static_cast<FloatCC>(e_.below(kNumFloatCC)), get(t), get(t));
            def(r);
            return r;
        }
        Type t = rand_int_type();
        Value x = get(t);
        Value y = e_.chance(40) ? iconst(t, interesting_int(e_, t)) : get(t);
        Value r = cur_.ins().icmp(static_cast<IntCC>(e_.below(kNumIntCC)), x, y);
        def(r);
        return r;
    }

    /// Converts some visible value of another type to `t`; invalid if none.
    Value convert_to(Type t) {
        if (pool_.empty()) return Value();
        Value x = pool_[e_.below(static_cast<uint32_t>(pool_.size()))];
        Type s = ty(x);
        if (s == t) return Value();
        if (t.is_int() && s.is_int()) {
            if (t.bits() < s.bits()) return unary_to(Opcode::Ireduce, t, x);
            return unary_to(e_.chance(50) ? Opcode::Uextend : Opcode::Sextend, t, x);
        }
        if (t.bits() == s.bits() && e_.chance(50)) return cur_.ins().bitcast(t, x);
        if (t.is_int()) {
            return unary_to(e_.chance(50) ? Opcode::FcvtToSintSat : Opcode::FcvtToUintSat, t, x);
        }
        if (s.is_int()) {
            return unary_to(e_.chance(50) ? Opcode::FcvtFromSint : Opcode::FcvtFromUint, t, x);
        }
        return arith(unary_to(t == types::F64 ? Opcode::Fpromote : Opcode::Fdemote, t, x));
    }

    std::vector<Value> values_for(std::span<const Type> tys) {
        std::vector<Value> out;
        for (Type t : tys) out.push_back(get(t));
        return out;
    }
    std::vector<Type> return_types() const {
        std::vector<Type> out;
        for (const AbiParam& p : f_.signature.returns) out.push_back(p.type);
        return out;
    }

    // --- blocks and budgets -------------------------------------------------
    Block new_block() { return f_.dfg.make_block(); }
    /// Appends `b` to the layout and continues there.
    void switch_to(Block b) {
        f_.layout.append_block(b);
        cur_.at_bottom(b);
    }
    void add_params(Block b, std::span<const Type> tys) {
        for (Type t : tys) def(f_.dfg.append_block_param(b, t));
    }

    /// Adds the instructions emitted since the last call at the current
    /// loop multiplier. Called whenever the multiplier changes.
    void account() {
        uint32_t n = f_.dfg.num_insts();
        cost_ += uint64_t{n - accounted_} * mult_;
        accounted_ = n;
    }
    bool afford(uint64_t dynamic) {
        account();
        return cost_ + dynamic <= o_.max_dynamic_insts;
    }
    /// Room for about `insts` more instructions and `blocks` more blocks.
    bool room(uint32_t insts, uint32_t blocks = 0) {
        if (f_.dfg.num_insts() + insts > o_.max_insts) return false;
        if (f_.dfg.num_blocks() + blocks > o_.max_blocks) return false;
        return afford(mult_ * insts);
    }

    // --- structure ----------------------------------------------------------
    void gen_sequence() {
        uint32_t items = 1 + e_.below(depth_ == 0 ? 12 : 5);
        for (uint32_t i = 0; i < items; ++i) {
            if (!room(4)) return;
            bool nest = depth_ < o_.max_depth;
            switch (weighted({12,
                              nest && room(12, 4) ? 3u : 0u,
                              room(6, 1) ? 1u : 0u,
                              o_.loops && nest && room(16, 3) && afford(mult_ * o_.max_loop_trips * 8)
                                  ? 2u : 0u,
                              o_.br_table && nest && room(16, 5) ? 2u : 0u,
                              !loops_.empty() && room(4, 1) ? 1u : 0u})) {
            case 0: gen_straight(); break;
            case 1: gen_diamond(); break;
            case 2: gen_brif_select(); break;
            case 3: gen_loop(); break;
            case 4: gen_switch(); break;
            case 5: gen_break(); break;
            }
        }
    }

    void gen_straight() {
        uint32_t n = e_.range(1, 4);
        for (uint32_t i = 0; i < n && room(6); ++i) gen_inst();
    }

    /// One arm of a diamond or switch: `b` with `params`, a sequence, then a
    /// jump to `merge` (or, if allowed, a terminator). True if it terminated.
    bool gen_arm(Block b, std::span<const Type> params, std::span<const Type> merge_types, Block merge,
                 bool may_terminate) {
        size_t mark = pool_.size();
        switch_to(b);
        add_params(b, params);
        ++depth_;
        gen_sequence();
        --depth_;
        bool terminated = may_terminate && e_.chance(12);
        if (terminated) {
            if (gen_terminator(/*allow_trap=*/o_.traps) && e_.chance(50)) f_.layout.set_cold(b);
        } else {
            std::vector<Value> args = values_for(merge_types);
            cur_.ins().jump(merge, args);
        }
        pool_.resize(mark);
        return terminated;
    }

    std::vector<Type> maybe_types(uint32_t percent, uint32_t max) {
        return e_.chance(percent) ? rand_types(e_.range(1, max)) : std::vector<Type>{};
    }

    void gen_diamond() {
        Value c = get_cond();
        Block tb = new_block(), eb = new_block(), mb = new_block();
        std::vector<Type> tparams = maybe_types(30, 2), eparams = maybe_types(30, 2);
        std::vector<Type> merge_types = maybe_types(70, 3);
        std::vector<Value> targs = values_for(tparams), eargs = values_for(eparams);
        cur_.ins().brif(c, tb, targs, eb, eargs);
        bool then_ended = gen_arm(tb, tparams, merge_types, mb, true);
        gen_arm(eb, eparams, merge_types, mb, !then_ended);
        switch_to(mb);
        add_params(mb, merge_types);
    }

    /// `brif c, B(x..), B(y..)`: both edges to one block, the arguments
    /// decide.
    void gen_brif_select() {
        Value c = get_cond();
        std::vector<Type> tys = rand_types(e_.range(1, 2));
        std::vector<Value> a = values_for(tys), b = values_for(tys);
        Block blk = new_block();
        cur_.ins().brif(c, blk, a, blk, b);
        switch_to(blk);
        add_params(blk, tys);
    }

    void gen_loop() {
        Type ct = rand_int_type();
        uint32_t trips = e_.range(1, o_.max_loop_trips);
        bool count_down = e_.chance(40);
        bool unbounded = o_.unbounded_loops && e_.chance(30);
        // The trip limit: a constant, or min(data, constant) so it varies.
        Value limit = iconst(ct, trips);
        if (e_.chance(50)) limit = binary(Opcode::Umin, get(ct), limit);
        std::vector<Type> carried = maybe_types(75, 3);
        std::vector<Value> init = values_for(carried);
        std::vector<Value> entry_args{count_down ? limit : iconst(ct, 0)};
        entry_args.insert(entry_args.end(), init.begin(), init.end());

        Block header = new_block(), exit = new_block();
        cur_.ins().jump(header, entry_args);
        account();
        uint64_t outer_mult = mult_;
        mult_ *= count_down ? trips + 1 : trips;

        size_t mark = pool_.size();
        switch_to(header);
        Value i = f_.dfg.append_block_param(header, ct);
        def(i);
        add_params(header, carried);
        loops_.push_back({exit, carried});
        ++depth_;
        gen_sequence();
        --depth_;
        loops_.pop_back();

        // Latch: step the counter, then go round or leave.
        Value one = iconst(ct, 1);
        Value next_i = binary(count_down ? Opcode::Isub : Opcode::Iadd, i, one);
        Value again;
        if (unbounded) {
            again = get_cond();
        } else if (count_down) {
            // i runs limit, limit-1, ..., 0; the body runs limit+1 times.
            again = cur_.ins().icmp(IntCC::Sge, next_i, iconst(ct, 0));
        } else if (e_.chance(50)) {
            again = cur_.ins().icmp(IntCC::Ult, next_i, limit);
        } else {
            again = cur_.ins().icmp(IntCC::Ugt, limit, next_i);
        }
        std::vector<Value> next = values_for(carried);
        std::vector<Value> header_args{next_i};
        header_args.insert(header_args.end(), next.begin(), next.end());
        cur_.ins().brif(again, header, header_args, exit, next);
        account();
        mult_ = outer_mult;
        pool_.resize(mark);

        switch_to(exit);
        add_params(exit, carried);
    }

    /// Leaves the innermost loop early when a condition holds.
    void gen_break() {
        const LoopCtx& loop = loops_.back();
        Value c = get_cond();
        std::vector<Value> args = values_for(loop.exit_types);
        Block cont = new_block();
        if (e_.chance(50)) {
            cur_.ins().brif(c, loop.exit, args, cont, {});
        } else {
            cur_.ins().brif(c, cont, {}, loop.exit, args);
        }
        switch_to(cont);
    }

    void gen_switch() {
        Value x = get_int();
        Value idx = x;
        if (ty(x).bits() > 32) idx = unary_to(Opcode::Ireduce, types::I32, x);
        if (ty(x).bits() < 32) idx = unary_to(Opcode::Uextend, types::I32, x);
        uint32_t entries = e_.below(7);
        // Usually fold the index onto the table (a nonzero divisor: no trap).
        if (e_.chance(60)) idx = binary(Opcode::Urem, idx, iconst(types::I32, entries + 1));

        uint32_t ncases = e_.range(1, 4);
        std::vector<Block> cases(ncases);
        std::vector<std::vector<Type>> case_params(ncases);
        std::vector<bool> used(ncases, false);
        for (uint32_t c = 0; c < ncases; ++c) {
            cases[c] = new_block();
            case_params[c] = maybe_types(30, 2);
        }
        Block dflt = new_block(), merge = new_block();
        std::vector<Type> dflt_params = maybe_types(30, 2);
        std::vector<Type> merge_types = maybe_types(70, 3);

        JumpTableData jt;
        jt.all.push_back(f_.dfg.block_call(dflt, values_for(dflt_params)));
        std::vector<uint32_t> order;
        for (uint32_t k = 0; k < entries; ++k) {
            uint32_t c = e_.below(ncases);
            if (!used[c]) order.push_back(c);
            used[c] = true;
            jt.all.push_back(f_.dfg.block_call(cases[c], values_for(case_params[c])));
        }
        cur_.ins().br_table(idx, f_.create_jump_table(std::move(jt)));

        gen_arm(dflt, dflt_params, merge_types, merge, false);
        for (uint32_t c : order) gen_arm(cases[c], case_params[c], merge_types, merge, true);
        switch_to(merge);
        add_params(merge, merge_types);
    }

    // --- terminators --------------------------------------------------------
    /// Callees a `return_call` may target: both `tail`, same returns.
    std::vector<uint32_t> tail_callees() {
        std::vector<uint32_t> out;
        if (!o_.calls || f_.signature.call_conv != CallConv::Tail) return out;
        for (uint32_t j = 0; j < callees_.size(); ++j) {
            const Signature& s = callees_[j].sig;
            if (s.call_conv == CallConv::Tail && s.returns == f_.signature.returns &&
                afford(mult_ * callees_[j].cost)) {
                out.push_back(j);
            }
        }
        return out;
    }

    /// Ends the current block with return, trap or a tail call. Returns true
    /// if it was a trap.
    bool gen_terminator(bool allow_trap) {
        std::vector<uint32_t> tails = tail_callees();
        switch (weighted({6, allow_trap ? 4u : 0u, tails.empty() ? 0u : 3u})) {
        case 1:
            cur_.ins().trap(rand_trap_code());
            return true;
        case 2:
            gen_tail_call(tails[e_.below(static_cast<uint32_t>(tails.size()))]);
            return false;
        default: {
            std::vector<Value> vals = values_for(return_types());
            cur_.ins().return_(vals);
            return false;
        }
        }
    }

    void gen_function_end() { gen_terminator(/*allow_trap=*/false); }

    void gen_tail_call(uint32_t j) {
        Import imp = import(j);
        std::vector<Type> ptys;
        for (const AbiParam& p : callees_[j].sig.params) ptys.push_back(p.type);
        std::vector<Value> args = values_for(ptys);
        cost_ += mult_ * callees_[j].cost;
        if (e_.chance(60)) {
            cur_.ins().return_call(imp.fn, args);
        } else {
            Value addr = cur_.ins().func_addr(types::I64, imp.fn);
            cur_.ins().return_call_indirect(imp.sig, addr, args);
        }
    }

    // --- single instructions ------------------------------------------------
    void gen_inst() {
        bool i = o_.ints, fl = o_.floats;
        bool mem = o_.memory && !slots_.empty();
        bool calls = o_.calls && !callees_.empty();
        switch (weighted({i ? 8u : 0u, i ? 4u : 0u, i ? 3u : 0u, i ? 3u : 0u, i ? 2u : 0u,
                          i ? 1u : 0u, i ? 1u : 0u, 3, 2, 1, i ? 1u : 0u, i ? 3u : 0u,
                          fl ? 5u : 0u, fl ? 3u : 0u, fl ? 1u : 0u, fl ? 2u : 0u, fl ? 3u : 0u,
                          fl ? 1u : 0u, 2, mem ? 5u : 0u, calls ? 3u : 0u, o_.traps ? 1u : 0u, 1})) {
        case 0: gen_int_binary(); break;
        case 1: gen_int_unary(); break;
        case 2: gen_shift(); break;
        case 3: gen_divrem(); break;
        case 4: gen_overflow(); break;
        case 5: gen_carry(); break;
        case 6: gen_add_trap(); break;
        case 7: gen_icmp(); break;
        case 8: gen_select(); break;
        case 9: gen_bitselect(); break;
        case 10: gen_bmask(); break;
        case 11: gen_int_conversion(); break;
        case 12: gen_float_binary(); break;
        case 13: gen_float_unary(); break;
        case 14: gen_fma(); break;
        case 15: gen_fcmp(); break;
        case 16: gen_float_conversion(); break;
        case 17: gen_float_bitwise(); break;
        case 18: def(constant(rand_type())); break;
        case 19: gen_memory(); break;
        case 20: gen_call(); break;
        case 21: gen_cond_trap(); break;
        case 22: cur_.ins().nop(); break;
        }
    }

    void gen_int_binary() {
        constexpr Opcode kOps[] = {Opcode::Iadd, Opcode::Isub, Opcode::Imul,  Opcode::Umulhi,
                                   Opcode::Smulhi, Opcode::Smin, Opcode::Smax, Opcode::Umin,
                                   Opcode::Umax, Opcode::Band, Opcode::Bor,   Opcode::Bxor};
        Type t = rand_int_type();
        Value x = get(t);
        Value y = get_other(t, x);
        def(binary(e_.pick(kOps), x, y));
    }

    void gen_int_unary() {
        constexpr Opcode kOps[] = {Opcode::Ineg, Opcode::Iabs, Opcode::Bnot,   Opcode::Clz,
                                   Opcode::Cls,  Opcode::Ctz,  Opcode::Popcnt, Opcode::Bitrev,
                                   Opcode::Bswap};
        Opcode op = e_.pick(kOps);
        Type t = op == Opcode::Bswap ? kIntTypes[e_.range(1, 3)] : rand_int_type();
        def(unary(op, get(t)));
    }

    void gen_shift() {
        constexpr Opcode kOps[] = {Opcode::Ishl, Opcode::Ushr, Opcode::Sshr, Opcode::Rotl, Opcode::Rotr};
        Type t = rand_int_type();
        Value x = get(t);
        Type at = rand_int_type();
        Value amount = e_.chance(40) ? iconst(at, e_.below(2 * t.bits() + 2)) : get(at);
        def(binary(e_.pick(kOps), x, amount));
    }

    /// A divisor that can make neither a zero divide nor (signed) MIN / -1.
    Value safe_divisor(Value y, bool is_signed) {
        Type t = ty(y);
        if (e_.chance(30)) {
            uint64_t k = interesting_int(e_, t);
            if (k == 0 || (is_signed && k == t.mask())) k = 7;
            return iconst(t, k);
        }
        if (!is_signed) {
            Value is_zero = cur_.ins().icmp(IntCC::Eq, y, iconst(t, 0));
            return ternary_result(Opcode::Select, is_zero, iconst(t, 1), y);
        }
        // y in {-1, 0} <=> y + 1 <u 2.
        Value bumped = binary(Opcode::Iadd, y, iconst(t, 1));
        Value bad = cur_.ins().icmp(IntCC::Ult, bumped, iconst(t, 2));
        return ternary_result(Opcode::Select, bad, iconst(t, 3), y);
    }

    void gen_divrem() {
        constexpr Opcode kOps[] = {Opcode::Udiv, Opcode::Sdiv, Opcode::Urem, Opcode::Srem};
        Opcode op = e_.pick(kOps);
        Type t = rand_int_type();
        Value x = get(t);
        Value y = get_other(t, x);
        bool is_signed = op == Opcode::Sdiv || op == Opcode::Srem;
        if (!(o_.traps && e_.chance(30))) {
            y = safe_divisor(y, is_signed);
        } else if (is_signed && e_.chance(20)) {
            y = iconst(t, t.mask());  // -1: MIN / -1 traps int_ovf for sdiv, is 0 for srem
        }
        def(binary(op, x, y));
    }

    void gen_overflow() {
        constexpr Opcode kOps[] = {Opcode::UaddOverflow, Opcode::SaddOverflow, Opcode::UsubOverflow,
                                   Opcode::SsubOverflow, Opcode::UmulOverflow, Opcode::SmulOverflow};
        Type t = rand_int_type();
        Value x = get(t);
        Value y = get_other(t, x);
        auto [a, flag] = binary2(e_.pick(kOps), x, y);
        def(a);
        def(flag);
    }

    void gen_carry() {
        constexpr Opcode kOps[] = {Opcode::UaddOverflowCin, Opcode::SaddOverflowCin,
                                   Opcode::UsubOverflowBin, Opcode::SsubOverflowBin};
        Type t = rand_int_type();
        Value x = get(t);
        Value y = get_other(t, x), c = get(types::I8);
        Inst inst = ternary_inst(e_.pick(kOps), x, y, c);
        auto r = f_.dfg.inst_results(inst);
        Value a = r[0], flag = r[1];
        def(a);
        def(flag);
    }

    void gen_add_trap() {
        Type t = e_.chance(50) ? types::I32 : types::I64;
        Value x = get(t), y = get(t);
        if (!(o_.traps && e_.chance(35))) {
            // Halving both operands makes the sum fit.
            Value one = iconst(t, 1);
            x = binary(Opcode::Ushr, x, one);
            y = binary(Opcode::Ushr, y, one);
        }
        def(cur_.ins().uadd_overflow_trap(x, y, rand_trap_code()));
    }

    void gen_icmp() {
        Type t = rand_int_type();
        Value x = get(t);
        Value y = e_.chance(20) ? x : get_other(t, x);
        def(cur_.ins().icmp(static_cast<IntCC>(e_.below(kNumIntCC)), x, y));
    }

    void gen_select() {
        Type t = rand_type();
        Value c = get_cond();
        Value x = get(t);
        Value y = get_other(t, x);
        def(ternary_result(e_.chance(20) ? Opcode::SelectSpectreGuard : Opcode::Select, c, x, y));
    }

    void gen_bitselect() {
        Type t = rand_type();
        Value c = get(t), x = get(t), y = get(t);
        def(ternary_result(Opcode::Bitselect, c, x, y));
    }

    void gen_bmask() { def(unary_to(Opcode::Bmask, rand_int_type(), get_int())); }

    void gen_int_conversion() {
        Value x = get_int();
        Type s = ty(x);
        // Any other integer type (no redrawing loop: zero entropy must end).
        unsigned from = static_cast<unsigned>(std::countr_zero(s.bits()) - 3);
        Type t = kIntTypes[(from + e_.range(1, 3)) % 4];
        if (t.bits() < s.bits()) {
            def(unary_to(Opcode::Ireduce, t, x));
        } else {
            def(unary_to(e_.chance(50) ? Opcode::Uextend : Opcode::Sextend, t, x));
        }
    }

    void gen_float_binary() {
        constexpr Opcode kOps[] = {Opcode::Fadd, Opcode::Fsub, Opcode::Fmul, Opcode::Fdiv,
                                   Opcode::Fmin, Opcode::Fmax, Opcode::Fcopysign};
        Type t = rand_float_type();
        Value x = get(t);
        Value y = get_other(t, x);
        Opcode op = e_.pick(kOps);
        Value r = binary(op, x, y);
        def(op == Opcode::Fcopysign ? r : arith(r));
    }

    void gen_float_unary() {
        constexpr Opcode kOps[] = {Opcode::Sqrt, Opcode::Ceil, Opcode::Floor, Opcode::Trunc,
                                   Opcode::Nearest, Opcode::Fneg, Opcode::Fabs};
        Type t = rand_float_type();
        Opcode op = e_.pick(kOps);
        Value r = unary(op, get(t));
        def(op == Opcode::Fneg || op == Opcode::Fabs ? r : arith(r));
    }

    void gen_fma() {
        Type t = rand_float_type();
        Value x = get(t), y = get(t), z = get(t);
        def(arith(ternary_result(Opcode::Fma, x, y, z)));
    }

    void gen_fcmp() {
        Type t = rand_float_type();
        Value x = get(t);
        Value y = e_.chance(20) ? x : get_other(t, x);
        def(cur_.ins().fcmp(static_cast<FloatCC>(e_.below(kNumFloatCC)), x, y));
    }

    /// Replaces `x` by 0.0 unless fcvt_to_[su]int.T of it is in range.
    Value guard_float_to_int(Value x, Type t, bool is_signed) {
        Type ft = ty(x);
        unsigned b = t.bits();
        // Both bounds are powers of two (or -1), exact in either float type;
        // the accepted set is a subset of the non-trapping one.
        Value lo = fconst_exact(ft, is_signed ? -std::ldexp(1.0, static_cast<int>(b) - 1) : -1.0);
        Value hi = fconst_exact(ft, std::ldexp(1.0, static_cast<int>(is_signed ? b - 1 : b)));
        Value above = cur_.ins().fcmp(is_signed ? FloatCC::Ge : FloatCC::Gt, x, lo);
        Value below = cur_.ins().fcmp(FloatCC::Lt, x, hi);
        Value ok = binary(Opcode::Band, above, below);
        return ternary_result(Opcode::Select, ok, x, fconst(ft, 0));
    }

    void gen_float_conversion() {
        switch (e_.below(6)) {
        case 0: def(arith(unary_to(Opcode::Fpromote, types::F64, get(types::F32)))); break;
        case 1: def(arith(unary_to(Opcode::Fdemote, types::F32, get(types::F64)))); break;
        case 2: {
            Value x = get_int();
            def(unary_to(e_.chance(50) ? Opcode::FcvtFromSint : Opcode::FcvtFromUint, rand_float_type(), x));
            break;
        }
        case 3: {
            Value x = get(rand_float_type());
            bool is_signed = e_.chance(50);
            Type t = rand_int_type();
            if (!(o_.traps && e_.chance(35))) x = guard_float_to_int(x, t, is_signed);
            def(unary_to(is_signed ? Opcode::FcvtToSint : Opcode::FcvtToUint, t, x));
            break;
        }
        case 4: {
            Value x = get(rand_float_type());
            def(unary_to(e_.chance(50) ? Opcode::FcvtToSintSat : Opcode::FcvtToUintSat, rand_int_type(), x));
            break;
        }
        default: {
            Value x = get(rand_type());
            Type s = ty(x);
            Type t = s;
            if (!e_.chance(15)) {
                if (s.is_int()) t = s.bits() == 32 ? types::F32 : s.bits() == 64 ? types::F64 : s;
                else t = s.as_int();
            }
            MemFlags flags;
            switch (e_.below(3)) {
            case 1: flags.set(MemFlags::Little); break;
            case 2: flags.set(MemFlags::Big); break;
            default: break;
            }
            def(cur_.ins().bitcast(t, x, flags));
            break;
        }
        }
    }

    void gen_float_bitwise() {
        constexpr Opcode kOps[] = {Opcode::Band, Opcode::Bor, Opcode::Bxor, Opcode::Bnot};
        Type t = rand_float_type();
        Opcode op = e_.pick(kOps);
        Value x = get(t);
        def(op == Opcode::Bnot ? unary(op, x) : binary(op, x, get(t)));
    }

    void gen_cond_trap() {
        Value c;
        if (e_.chance(50)) {
            // Rarely true: equality with one particular value.
            Type t = rand_int_type();
            c = cur_.ins().icmp(IntCC::Eq, get(t), iconst(t, interesting_int(e_, t)));
        } else {
            c = get_int();
        }
        TrapCode code = rand_trap_code();
        if (e_.chance(50)) {
            cur_.ins().trapnz(c, code);
        } else {
            cur_.ins().trapz(c, code);
        }
    }

    // --- memory -------------------------------------------------------------
    /// Creates the stack slots and fills every byte of them, so no load
    /// ever reads unspecified contents (engines would differ).
    void gen_stack_slots() {
        if (!o_.memory || o_.max_stack_slots == 0) return;
        constexpr uint32_t kSizes[] = {1, 2, 3, 4, 8, 11, 16, 16, 24, 32, 40, 64};
        constexpr uint32_t kAligns[] = {1, 1, 2, 4, 8, 16};
        uint32_t n = e_.below(o_.max_stack_slots + 1);
        for (uint32_t s = 0; s < n; ++s) {
            StackSlotData data;
            data.size = e_.pick(kSizes);
            data.align = e_.pick(kAligns);
            if (e_.chance(10)) data.key = e_.u64();
            StackSlot ss = f_.create_stack_slot(data);
            Slot slot{ss, data.size, {}};
            const bool locals = e_.chance(40);
            Value base = cur_.ins().stack_addr(types::I64, ss);
            uint32_t off = 0;
            while (off < data.size) {
                uint32_t w = 8;
                while (off + w > data.size || (w > 1 && e_.chance(20))) w /= 2;
                Type t = Type::int_with_bits(w * 8);
                if (o_.floats && w >= 4 && e_.chance(30)) t = w == 4 ? types::F32 : types::F64;
                MemFlags flags;
                flags.set(MemFlags::Notrap);
                if (off % w == 0 && e_.chance(50)) flags.set(MemFlags::Aligned);
                if (e_.chance(20)) flags.set(e_.chance(50) ? MemFlags::Big : MemFlags::Little);
                if (locals) slot.cells.push_back({off, t, flags.has(MemFlags::Big)});
                cur_.ins().store(flags, get(t), base, static_cast<int32_t>(off));
                off += w;
            }
            slots_.push_back(std::move(slot));
        }
    }

    struct Access {
        Opcode op;
        Type type;      // loaded type, or stored value's type
        uint32_t bytes;
    };

    Access rand_access() {
        constexpr Type kWide16[] = {types::I16, types::I32, types::I64};
        constexpr Type kWide32[] = {types::I32, types::I64};
        switch (e_.below(14)) {
        case 0: return {Opcode::Uload8, e_.pick(kWide16), 1};
        case 1: return {Opcode::Sload8, e_.pick(kWide16), 1};
        case 2: return {Opcode::Uload16, e_.pick(kWide32), 2};
        case 3: return {Opcode::Sload16, e_.pick(kWide32), 2};
        case 4: return {Opcode::Uload32, types::I64, 4};
        case 5: return {Opcode::Sload32, types::I64, 4};
        case 6: return {Opcode::Istore8, e_.pick(kWide16), 1};
        case 7: return {Opcode::Istore16, e_.pick(kWide32), 2};
        case 8: return {Opcode::Istore32, types::I64, 4};
        case 9:
        case 10: {
            Type t = rand_type();
            return {Opcode::Store, t, t.bytes()};
        }
        default: {
            Type t = rand_type();
            return {Opcode::Load, t, t.bytes()};
        }
        }
    }

    /// An access to one cell of a locals slot, as the cell's type, or as a
    /// narrow load or store of a wider integer.
    void gen_local_access(const Slot& slot) {
        const Cell c = slot.cells[e_.below(static_cast<uint32_t>(slot.cells.size()))];
        const unsigned w = c.type.bytes();
        const bool load = e_.chance(50);
        Type t = c.type;
        Opcode op = load ? Opcode::Load : Opcode::Store;
        if (c.type.is_int() && w < 8 && e_.chance(50)) {
            t = Type::int_with_bits(w == 4 ? 64 : w == 2 ? (e_.chance(50) ? 32 : 64) : (e_.chance(50) ? 16 : 32));
            if (load) {
                const bool sign = e_.chance(50);
                op = w == 1 ? (sign ? Opcode::Sload8 : Opcode::Uload8)
                     : w == 2 ? (sign ? Opcode::Sload16 : Opcode::Uload16)
                              : (sign ? Opcode::Sload32 : Opcode::Uload32);
            } else {
                op = w == 1 ? Opcode::Istore8 : w == 2 ? Opcode::Istore16 : Opcode::Istore32;
            }
        }
        // The address: stack_addr at some base in the slot, sometimes moved
        // by an iadd of a constant, and the rest in the access's offset.
        const uint32_t base = e_.chance(50) ? 0 : e_.below(slot.size);
        Value addr = cur_.ins().stack_addr(types::I64, slot.ss, static_cast<int32_t>(base));
        int64_t rest = int64_t{c.offset} - base;
        if (e_.chance(20)) {
            const int64_t step = static_cast<int64_t>(e_.below(17)) - 8;
            addr = binary(Opcode::Iadd, addr, iconst(types::I64, static_cast<uint64_t>(step)));
            rest -= step;
        }
        MemFlags flags;
        flags.set(MemFlags::Notrap);
        if (c.offset % w == 0 && e_.chance(30)) flags.set(MemFlags::Aligned);
        if (c.big) flags.set(MemFlags::Big);
        InstructionData d;
        d.opcode = op;
        d.offset = static_cast<int32_t>(rest);
        d.flags = flags;
        if (load) {
            d.type = t;
            d.args[0] = addr;
            def(build1(d, t));
            return;
        }
        d.args[0] = get(t);
        d.args[1] = addr;
        build(d, t);
    }

    void gen_memory() {
        const Slot& chosen = slots_[e_.below(static_cast<uint32_t>(slots_.size()))];
        if (!chosen.cells.empty()) {
            gen_local_access(chosen);
            return;
        }
        // Sometimes the last access's address again in the same block (a
        // load of what it read or wrote): loads the optimizer can reuse or
        // forward, unless something between wrote there.
        const RecentAccess& again = recent_[e_.below(kRecent)];
        if (again.addr.is_valid() && again.block == cur_.current_block() && e_.chance(30)) {
            InstructionData d;
            d.opcode = again.load_op;
            d.type = again.type;
            d.flags = again.flags;
            d.args[0] = again.addr;
            d.offset = again.offset;
            def(build1(d, again.type));
            return;
        }
        const Slot slot = chosen;
        Access acc = rand_access();
        if (acc.bytes > slot.size) acc = {e_.chance(50) ? Opcode::Load : Opcode::Store, types::I8, 1};
        uint32_t span = slot.size - acc.bytes;  // last valid start offset
        Value addr;
        int32_t offset = 0;
        bool aligned_ok = false;
        if (e_.chance(30)) {
            // Dynamic index, reduced into range by a nonzero constant urem;
            // scaled by the access size it keeps the access aligned.
            Value x = get_int();
            if (ty(x) != types::I64) {
                x = unary_to(e_.chance(50) ? Opcode::Uextend : Opcode::Sextend, types::I64, x);
            }
            Value idx;
            if (e_.chance(50)) {
                uint32_t count = span / acc.bytes + 1;
                idx = binary(Opcode::Urem, x, iconst(types::I64, count));
                auto scale = static_cast<uint64_t>(std::countr_zero(acc.bytes));
                idx = binary(Opcode::Ishl, idx, iconst(types::I64, scale));
                aligned_ok = true;
            } else {
                idx = binary(Opcode::Urem, x, iconst(types::I64, span + 1));
                aligned_ok = acc.bytes == 1;
            }
            addr = binary(Opcode::Iadd, cur_.ins().stack_addr(types::I64, slot.ss), idx);
        } else {
            // Static: start = base + offset with base inside the slot; the
            // offset may be negative.
            uint32_t start = e_.below(span + 1);
            uint32_t base = e_.chance(30) ? e_.below(slot.size) : e_.chance(50) ? start : 0;
            addr = cur_.ins().stack_addr(types::I64, slot.ss, static_cast<int32_t>(base));
            offset = static_cast<int32_t>(start) - static_cast<int32_t>(base);
            // Slots start 8-aligned (ir-reference.md 12.3), accesses are <= 8.
            aligned_ok = start % acc.bytes == 0;
        }

        MemFlags flags;
        if (e_.chance(50)) {
            flags.set(MemFlags::Notrap);
        } else if (e_.chance(20)) {
            flags.set_trap_code(rand_trap_code());
        }
        if (aligned_ok && e_.chance(50)) flags.set(MemFlags::Aligned);
        switch (e_.below(4)) {
        case 1: flags.set(MemFlags::Little); break;
        case 2: flags.set(MemFlags::Big); break;
        default: break;
        }
        bool is_load = acc.op == Opcode::Load || acc.op == Opcode::Uload8 || acc.op == Opcode::Sload8 ||
                       acc.op == Opcode::Uload16 || acc.op == Opcode::Sload16 ||
                       acc.op == Opcode::Uload32 || acc.op == Opcode::Sload32;
        InstructionData d;
        d.opcode = acc.op;
        d.offset = offset;
        RecentAccess& recent = recent_[next_recent_++ % kRecent];
        recent = {addr, offset, acc.op, acc.type, flags, cur_.current_block()};
        if (is_load) {
            // `readonly` is never set: the slots are written after entry.
            if (e_.chance(10)) flags.set(MemFlags::CanMove);
            d.type = acc.type;
            d.flags = flags;
            d.args[0] = addr;
            def(build1(d, acc.type));
            return;
        }
        // A store's value reads back through the load of its width.
        switch (acc.op) {
        case Opcode::Istore8: recent.load_op = Opcode::Uload8; break;
        case Opcode::Istore16: recent.load_op = Opcode::Sload16; break;
        case Opcode::Istore32: recent.load_op = Opcode::Uload32; break;
        default: recent.load_op = Opcode::Load; break;
        }
        Value v = get(acc.type);
        d.flags = flags;
        d.args[0] = v;
        d.args[1] = addr;
        build(d, acc.type);
    }

    // --- calls --------------------------------------------------------------
    Import import(uint32_t j) {
        if (refs_[j]) return *refs_[j];
        Import imp;
        imp.sig = f_.import_signature(callees_[j].sig);
        ExtFuncData data;
        data.name = ExternalName::testcase(callees_[j].name);
        data.signature = imp.sig;
        data.colocated = e_.chance(50);
        imp.fn = f_.import_function(std::move(data));
        refs_[j] = imp;
        return imp;
    }

    void gen_call() {
        uint32_t j = e_.below(static_cast<uint32_t>(callees_.size()));
        uint64_t cost = callees_[j].cost + 1;
        if (!afford(mult_ * cost)) return;
        Import imp = import(j);
        std::vector<Type> ptys;
        for (const AbiParam& p : callees_[j].sig.params) ptys.push_back(p.type);
        std::vector<Value> args = values_for(ptys);
        Inst call;
        if (e_.chance(35)) {
            Value addr = cur_.ins().func_addr(types::I64, imp.fn);
            // Sometimes choose between two functions of the same signature.
            uint32_t other = e_.below(static_cast<uint32_t>(callees_.size()));
            if (other != j && callees_[other].sig == callees_[j].sig && e_.chance(60) &&
                afford(mult_ * (callees_[other].cost + 1))) {
                Value alt = cur_.ins().func_addr(types::I64, import(other).fn);
                addr = ternary_result(Opcode::Select, get_cond(), addr, alt);
                cost = std::max(cost, callees_[other].cost + 1);
            }
            call = cur_.ins().call_indirect(imp.sig, addr, args);
        } else {
            call = cur_.ins().call(imp.fn, args);
        }
        cost_ += mult_ * cost;
        auto results = f_.dfg.inst_results(call);
        std::vector<Value> copy(results.begin(), results.end());
        for (Value v : copy) def(v);
    }

    Entropy& e_;
    const GenOptions& o_;
    std::span<const Callee> callees_;
    Function& f_;
    FuncCursor cur_;
    std::vector<std::optional<Import>> refs_;
    std::vector<Type> types_;
    std::vector<Value> pool_;
    std::vector<Value> cands_;
    std::vector<LoopCtx> loops_;
    std::vector<Slot> slots_;
    /// The last accesses to slots (gen_memory): where, and the load that
    /// reads what each read or wrote.
    struct RecentAccess {
        Value addr;
        int32_t offset = 0;
        Opcode load_op = Opcode::Load;
        Type type;
        MemFlags flags;
        std::optional<Block> block;
    };
    static constexpr uint32_t kRecent = 4;
    std::array<RecentAccess, kRecent> recent_{};
    uint32_t next_recent_ = 0;
    unsigned depth_ = 0;
    uint64_t cost_ = 0;
    uint64_t mult_ = 1;
    uint32_t accounted_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------
// Module level

DataValue IrGenerator::interesting_value(Type t) {
    uint64_t bits = t.is_int() ? interesting_int(entropy_, t) : interesting_float(entropy_, t);
    return DataValue(t, bits);
}

std::vector<DataValue> IrGenerator::generate_inputs(const Signature& sig) {
    std::vector<DataValue> args;
    for (const AbiParam& p : sig.params) args.push_back(interesting_value(p.type));
    return args;
}

namespace {

Signature random_signature(Entropy& e, const GenOptions& o, std::span<const Callee> earlier) {
    if (!earlier.empty() && e.chance(25)) return earlier[e.below(static_cast<uint32_t>(earlier.size()))].sig;
    std::vector<Type> tys(std::begin(kIntTypes), std::end(kIntTypes));
    if (o.floats) tys.insert(tys.end(), std::begin(kFloatTypes), std::end(kFloatTypes));
    auto param = [&]() {
        AbiParam p(tys[e.below(static_cast<uint32_t>(tys.size()))]);
        if (p.type.is_int() && e.chance(15)) p.ext = e.chance(50) ? ArgExt::Uext : ArgExt::Sext;
        return p;
    };
    Signature sig;
    switch (e.below(10)) {
    case 0: case 1: case 2: case 3: case 4: sig.call_conv = CallConv::Fast; break;
    case 5: case 6: sig.call_conv = CallConv::SystemV; break;
    default: sig.call_conv = CallConv::Tail; break;
    }
    uint32_t nparams = e.below(o.max_params + 1);
    for (uint32_t i = 0; i < nparams; ++i) sig.params.push_back(param());
    // Tail functions sometimes share an earlier tail function's returns, so
    // that `return_call` between them is possible.
    for (const Callee& c : earlier) {
        if (sig.call_conv == CallConv::Tail && c.sig.call_conv == CallConv::Tail && e.chance(50)) {
            sig.returns = c.sig.returns;
            return sig;
        }
    }
    uint32_t nrets = o.max_returns == 0 ? 0 : e.chance(90) ? e.range(1, o.max_returns) : 0;
    for (uint32_t i = 0; i < nrets; ++i) sig.returns.push_back(param());
    return sig;
}

}  // namespace

Module IrGenerator::generate_module() {
    Module m;
    std::vector<Callee> callees;
    uint32_t lo = std::max<uint32_t>(1, options_.min_functions);
    uint32_t hi = std::max(lo, options_.max_functions);
    uint32_t n = entropy_.range(lo, hi);
    for (uint32_t k = 0; k < n; ++k) {
        std::string name = "f" + std::to_string(k);
        auto func = std::make_unique<Function>(ExternalName::testcase(name),
                                               random_signature(entropy_, options_, callees));
        uint64_t cost = FunctionGen(entropy_, options_, callees, *func).build();
        callees.push_back({name, func->signature, cost});
        std::vector<std::vector<DataValue>> inputs;
        for (uint32_t i = 0; i < options_.inputs_per_function; ++i) {
            inputs.push_back(generate_inputs(func->signature));
        }
        m.functions.push_back(std::move(func));
        m.inputs.push_back(std::move(inputs));
    }
    return m;
}

Module generate_module(Entropy& entropy, const GenOptions& options) {
    return IrGenerator(entropy, options).generate_module();
}

}  // namespace heron::gen
