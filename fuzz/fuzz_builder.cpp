// fuzz_builder: bytes -> a small structured program over typed variables
// (assignments, if/else, switches, loops with break/continue to any
// enclosing loop, early returns, conditional traps, dead code after them;
// expressions that add, multiply, divide and take remainders, so they may
// trap) -> the program is emitted through FunctionBuilder, Switch and
// LoopScopes with the choices the bytes make: which arm is built first,
// when each block is sealed (as soon as its predecessors are known, much
// later, or by seal_all_blocks at the end), when each variable is
// declared, whether a loop tests in its header (loop_while) or breaks out
// of its body (enter_body + break_if).
//
// Checked: the builder reports no error, the function verifies, it has no
// trivial block parameter (Braun et al. minimality, after finalize), and
// for three argument pairs the interpreter (with fuel) does what a direct
// evaluation of the program (the model: a map from variables to values)
// does, and the x86-64 JIT does what the interpreter did: the same returned
// bits or the same trap code. Variables nobody assigned read as zero, as
// the builder promises.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/verifier/verifier.h"
#include "frontend/function_builder.h"
#include "fuzz/gen/diff.h"
#include "fuzz/gen/jit_engine.h"
#include "frontend/loops.h"
#include "frontend/switch.h"

namespace {

using namespace heron;

class Bytes {
public:
    Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
    uint64_t u64() {
        uint64_t v = 0;
        for (int k = 0; k < 8; ++k) v = v << 8 | byte();
        return v;
    }
    uint32_t below(uint32_t n) { return n <= 1 ? 0 : byte() % n; }
    bool flip() { return byte() & 1; }

private:
    const uint8_t* data_;
    size_t size_, pos_ = 0;
};

constexpr uint32_t kVars = 6;        // var0, var1 start as the two parameters
constexpr uint32_t kMaxStmts = 48;   // per program
constexpr uint32_t kMaxDepth = 4;
constexpr uint32_t kMaxTrips = 4;

const Type kTypes[] = {types::I8, types::I16, types::I32, types::I64};

uint64_t sext(uint64_t v, Type t) {
    const unsigned sh = 64 - t.bits();
    return static_cast<uint64_t>(static_cast<int64_t>(v << sh) >> sh);
}

// --- the program ---------------------------------------------------------------

struct Expr {
    enum Op { Var, Const, Add, Sub, Mul, And, Or, Xor, Udiv, Sdiv, Urem, Srem } op = Const;
    Type ty;             // the type it computes in
    uint32_t var = 0;    // Var
    bool sign = false;   // Var of a narrower type: sextend instead of uextend
    uint64_t k = 0;      // Const (masked to ty)
    std::unique_ptr<Expr> a, b;
};

struct Cond {
    enum Kind { NonZero, Ult, Slt, Eq } kind = NonZero;
    std::unique_ptr<Expr> a, b;  // of one type
};

struct Stmt;
using Stmts = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
    enum Kind { Assign, If, Loop, Switch, Break, Continue, BreakIf, ContinueIf, Return, TrapIf } kind = Assign;
    uint32_t var = 0;             // Assign
    std::unique_ptr<Expr> e;      // Assign value, Switch selector
    Cond cond;                    // If, BreakIf, ContinueIf, TrapIf (trapnz)
    uint32_t outer = 0;           // Break/Continue(If): loops out
    uint32_t trips = 0;           // Loop
    bool header_test = true;      // Loop: loop_while, else enter_body + break_if
    std::vector<Stmts> arms;      // If: then, else; Loop: body; Switch: cases..., default
    std::vector<std::pair<uint64_t, uint32_t>> cases;  // Switch: value -> arm
    bool else_first = false;      // If: build the else arm first
    uint64_t site = 0;            // Return: its number, from 1 in program order; TrapIf: user code
};

/// The unstructured mode: numbered blocks with assignments and a
/// terminator each, edges anywhere but to the entry (irreducible loops
/// included). Every block but the entry first counts a hidden fuel variable
/// and leaves through a shared out-of-fuel return after kFuel visits.
struct CfgBlock {
    enum Term { Return, Jump, Brif, Switch } term = Return;
    Stmts body;                   // assignments only
    Cond cond;                    // Brif
    std::unique_ptr<Expr> e;      // Switch selector
    std::vector<uint32_t> targets;                      // Jump: [0]; Brif: then, else; Switch: default
    std::vector<std::pair<uint64_t, uint32_t>> cases;   // Switch: value -> block
    uint64_t site = 0;            // Return
};
using Cfg = std::vector<CfgBlock>;
constexpr uint32_t kFuel = 24;
constexpr uint64_t kOutOfFuelSite = 1000;

class Generator {
public:
    Generator(Bytes& in, const Type (&var_types)[kVars]) : in_(in), types_(var_types) {}

    Stmts program() { return stmts(0, 0); }

    Cfg cfg() {
        Cfg blocks(2 + in_.below(9));
        const uint32_t n = static_cast<uint32_t>(blocks.size());
        auto target = [&] { return 1 + in_.below(n - 1); };
        for (CfgBlock& b : blocks) {
            const uint32_t assigns = in_.below(4);
            for (uint32_t k = 0; k < assigns; ++k) {
                auto a = std::make_unique<Stmt>();
                a->var = in_.below(kVars);
                a->e = expr(types_[a->var], 0);
                b.body.push_back(std::move(a));
            }
            const uint32_t r = in_.below(10);
            if (r < 2) {
                b.term = CfgBlock::Return;
                b.site = ++sites_;
            } else if (r < 5) {
                b.term = CfgBlock::Jump;
                b.targets = {target()};
            } else if (r < 8) {
                b.term = CfgBlock::Brif;
                b.cond = cond();
                b.targets = {target(), target()};
            } else {
                b.term = CfgBlock::Switch;
                const Type ty = kTypes[in_.below(4)];
                b.e = expr(ty, 1);
                b.targets = {target()};
                const uint32_t ncases = in_.below(6);
                for (uint32_t c = 0; c < ncases; ++c) {
                    const uint64_t v = in_.below(6) & ty.mask();
                    bool seen = false;
                    for (auto& [x, t] : b.cases) seen |= x == v;
                    if (!seen) b.cases.emplace_back(v, target());
                }
            }
        }
        return blocks;
    }

private:
    std::unique_ptr<Expr> expr(Type ty, uint32_t depth) {
        auto e = std::make_unique<Expr>();
        e->ty = ty;
        const uint32_t r = in_.below(10);
        if (depth >= 2 || r < 4) {
            e->op = Expr::Var;
            e->var = in_.below(kVars);
            e->sign = in_.flip();
        } else if (r < 6) {
            e->op = Expr::Const;
            e->k = (in_.flip() ? in_.below(8) : in_.u64()) & ty.mask();
        } else {
            // One binary operator in four divides (and may trap); three
            // divisors in four are or-ed with 1, so not every division
            // by a variable nobody assigned ends the run.
            const uint32_t op = in_.below(16);
            e->op = static_cast<Expr::Op>(op < 12 ? Expr::Add + op / 2 : Expr::Udiv + (op - 12));
            e->a = expr(ty, depth + 1);
            e->b = expr(ty, depth + 1);
            if (e->op >= Expr::Udiv && in_.below(4) != 0) {
                auto one = std::make_unique<Expr>();
                one->ty = ty;
                one->k = 1;
                auto guarded = std::make_unique<Expr>();
                guarded->op = Expr::Or;
                guarded->ty = ty;
                guarded->a = std::move(e->b);
                guarded->b = std::move(one);
                e->b = std::move(guarded);
            }
        }
        return e;
    }

    Cond cond() {
        Cond c;
        c.kind = static_cast<Cond::Kind>(in_.below(4));
        const Type ty = kTypes[in_.below(4)];
        c.a = expr(ty, 1);
        if (c.kind != Cond::NonZero) c.b = expr(ty, 1);
        return c;
    }

    Stmts stmts(uint32_t depth, uint32_t loops) {
        Stmts out;
        const uint32_t n = 1 + in_.below(4);
        for (uint32_t i = 0; i < n && count_ < kMaxStmts; ++i) out.push_back(stmt(depth, loops));
        return out;
    }

    std::unique_ptr<Stmt> stmt(uint32_t depth, uint32_t loops) {
        ++count_;
        auto s = std::make_unique<Stmt>();
        uint32_t r = in_.below(100);
        if (depth >= kMaxDepth && r >= 40 && r < 70) r = 0;  // no more nesting
        if (r < 40) {
            s->kind = Stmt::Assign;
            s->var = in_.below(kVars);
            s->e = expr(types_[s->var], 0);
        } else if (r < 52) {
            s->kind = Stmt::If;
            s->cond = cond();
            s->else_first = in_.flip();
            s->arms.push_back(stmts(depth + 1, loops));
            s->arms.push_back(in_.flip() ? stmts(depth + 1, loops) : Stmts{});
        } else if (r < 62) {
            s->kind = Stmt::Loop;
            s->trips = in_.below(kMaxTrips + 1);
            s->header_test = in_.flip();
            s->arms.push_back(stmts(depth + 1, loops + 1));
        } else if (r < 70) {
            s->kind = Stmt::Switch;
            const Type ty = kTypes[in_.below(4)];
            s->e = expr(ty, 1);
            const uint32_t arms = 1 + in_.below(4);
            for (uint32_t a = 0; a <= arms; ++a) s->arms.push_back(stmts(depth + 1, loops));  // last: default
            const uint32_t ncases = in_.below(8);
            uint64_t v = in_.below(4);
            for (uint32_t c = 0; c < ncases; ++c) {
                bool seen = false;
                for (auto& [x, arm] : s->cases) seen |= x == (v & ty.mask());
                if (!seen) s->cases.emplace_back(v & ty.mask(), in_.below(arms));
                v += in_.flip() ? 1 : in_.below(40);
                if (in_.below(8) == 0) v = in_.u64();  // far away, maybe negative
            }
        } else if (loops > 0 && r < 86) {
            static constexpr Stmt::Kind kJumps[] = {Stmt::Break, Stmt::Continue, Stmt::BreakIf, Stmt::ContinueIf};
            s->kind = kJumps[in_.below(4)];
            s->outer = in_.below(loops);
            if (s->kind == Stmt::BreakIf || s->kind == Stmt::ContinueIf) s->cond = cond();
        } else if (r >= 96) {
            s->kind = Stmt::Return;
            s->site = ++sites_;
        } else if (r >= 92) {
            s->kind = Stmt::TrapIf;
            s->cond = cond();
            s->site = ++sites_;  // user trap code 1..kMaxStmts
        } else {
            s->kind = Stmt::Assign;
            s->var = in_.below(kVars);
            s->e = expr(types_[s->var], 0);
        }
        return s;
    }

    Bytes& in_;
    const Type (&types_)[kVars];
    uint32_t count_ = 0;
    uint64_t sites_ = 0;
};

// --- the model -------------------------------------------------------------------

uint64_t convert(uint64_t v, Type from, Type to, bool sign) {
    if (sign && from.bits() < to.bits()) v = sext(v, from);
    return v & to.mask();
}

/// The function's result: every variable folded into one i64, plus where it
/// returned (early returns are numbered in program order, the end is 0).
uint64_t fold(const uint64_t (&vars)[kVars], uint64_t site) {
    uint64_t h = site;
    for (uint32_t k = 0; k < kVars; ++k) h = h * 0x9E3779B1u + vars[k];
    return h;
}

/// What the function does: returns `value`, or traps with `trap`.
struct Outcome {
    uint8_t trap = 0;  // TrapCode byte, 0: returned
    uint64_t value = 0;
};

class Model {
public:
    Model(const Type (&var_types)[kVars], uint64_t a, uint64_t b) : types_(var_types) {
        vars_[0] = a & types_[0].mask();
        vars_[1] = b & types_[1].mask();
    }

    Outcome run(const Stmts& program) {
        Flow f = stmts(program);
        if (f.kind == Flow::Trap) return {trap_, 0};
        return {0, f.kind == Flow::Return ? f.value : fold(vars_, 0)};
    }

    Outcome run(const Cfg& blocks) {
        uint32_t fuel = 0;
        for (uint32_t at = 0;;) {
            if (at != 0 && ++fuel > kFuel) return {0, fold(vars_, kOutOfFuelSite)};
            const CfgBlock& b = blocks[at];
            if (stmts(b.body).kind == Flow::Trap) return {trap_, 0};
            switch (b.term) {
            case CfgBlock::Return: return {0, fold(vars_, b.site)};
            case CfgBlock::Jump: at = b.targets[0]; break;
            case CfgBlock::Brif: {
                const bool t = test(b.cond);
                if (trap_) return {trap_, 0};
                at = b.targets[t ? 0 : 1];
                break;
            }
            case CfgBlock::Switch: {
                const uint64_t v = eval(*b.e);
                if (trap_) return {trap_, 0};
                at = b.targets[0];
                for (auto [x, t] : b.cases)
                    if (x == v) at = t;
                break;
            }
            }
        }
    }

private:
    struct Flow {
        enum Kind { Normal, Break, Continue, Return, Trap } kind = Normal;
        uint32_t outer = 0;
        uint64_t value = 0;
    };

    // Operands are evaluated left to right, as the emitter emits them, so
    // the first trap in that order is the one the function reports.
    void raise(uint8_t code) {
        if (!trap_) trap_ = code;
    }

    uint64_t divide(Expr::Op op, uint64_t x, uint64_t y, Type ty) {
        if (y == 0) {
            raise(TrapCode::kIntegerDivisionByZero);
            return 0;
        }
        const int64_t sx = static_cast<int64_t>(sext(x, ty)), sy = static_cast<int64_t>(sext(y, ty));
        const bool min_by_minus_one = sy == -1 && sx == static_cast<int64_t>(sext(uint64_t{1} << (ty.bits() - 1), ty));
        switch (op) {
        case Expr::Udiv: return x / y;
        case Expr::Urem: return x % y;
        case Expr::Sdiv:
            if (min_by_minus_one) {
                raise(TrapCode::kIntegerOverflow);
                return 0;
            }
            return static_cast<uint64_t>(sx / sy) & ty.mask();
        case Expr::Srem: return min_by_minus_one ? 0 : static_cast<uint64_t>(sx % sy) & ty.mask();
        default: return 0;
        }
    }

    uint64_t eval(const Expr& e) {
        const uint64_t m = e.ty.mask();
        if (e.op == Expr::Var) return convert(vars_[e.var], types_[e.var], e.ty, e.sign);
        if (e.op == Expr::Const) return e.k;
        const uint64_t a = eval(*e.a);
        const uint64_t b = eval(*e.b);
        switch (e.op) {
        case Expr::Add: return (a + b) & m;
        case Expr::Sub: return (a - b) & m;
        case Expr::Mul: return (a * b) & m;
        case Expr::And: return a & b;
        case Expr::Or: return a | b;
        case Expr::Xor: return a ^ b;
        default: return divide(e.op, a, b, e.ty);
        }
    }

    bool test(const Cond& c) {
        const uint64_t a = eval(*c.a);
        if (c.kind == Cond::NonZero) return a != 0;
        const uint64_t b = eval(*c.b);
        switch (c.kind) {
        case Cond::NonZero: return a != 0;
        case Cond::Ult: return a < b;
        case Cond::Slt: return static_cast<int64_t>(sext(a, c.a->ty)) < static_cast<int64_t>(sext(b, c.a->ty));
        case Cond::Eq: return a == b;
        }
        return false;
    }

    Flow stmts(const Stmts& list) {
        for (const auto& s : list) {
            Flow f = stmt(*s);
            if (f.kind != Flow::Normal) return f;
        }
        return {};
    }

    Flow stmt(const Stmt& s) {
        const Flow trapped{Flow::Trap, 0, 0};
        switch (s.kind) {
        case Stmt::Assign: {
            const uint64_t v = eval(*s.e);
            if (trap_) return trapped;
            vars_[s.var] = v;
            return {};
        }
        case Stmt::If: {
            const bool t = test(s.cond);
            if (trap_) return trapped;
            return stmts(s.arms[t ? 0 : 1]);
        }
        case Stmt::Loop:
            for (uint32_t c = 1; c <= s.trips; ++c) {
                Flow f = stmts(s.arms[0]);
                if (f.kind == Flow::Return || f.kind == Flow::Trap) return f;
                if (f.kind == Flow::Break || f.kind == Flow::Continue) {
                    if (f.outer > 0) return Flow{f.kind, f.outer - 1, 0};
                    if (f.kind == Flow::Break) break;
                }
            }
            return {};
        case Stmt::Switch: {
            const uint64_t v = eval(*s.e);
            if (trap_) return trapped;
            for (auto [x, arm] : s.cases)
                if (x == v) return stmts(s.arms[arm]);
            return stmts(s.arms.back());
        }
        case Stmt::Break: return Flow{Flow::Break, s.outer, 0};
        case Stmt::Continue: return Flow{Flow::Continue, s.outer, 0};
        case Stmt::BreakIf:
        case Stmt::ContinueIf:
        case Stmt::TrapIf: {
            const bool t = test(s.cond);
            if (trap_) return trapped;
            if (!t) return {};
            if (s.kind == Stmt::TrapIf) {
                raise(TrapCode::user(static_cast<uint8_t>(s.site)).byte);
                return trapped;
            }
            return Flow{s.kind == Stmt::BreakIf ? Flow::Break : Flow::Continue, s.outer, 0};
        }
        case Stmt::Return: return Flow{Flow::Return, 0, fold(vars_, s.site)};
        }
        return {};
    }

    const Type (&types_)[kVars];
    uint64_t vars_[kVars] = {};
    uint8_t trap_ = 0;
};

// --- the emitter -------------------------------------------------------------------

class Emitter {
public:
    Emitter(FunctionBuilder& b, Bytes& in, const Type (&var_types)[kVars]) : b_(b), in_(in), types_(var_types) {}

    void run(const Stmts& program) {
        enter();
        stmts(program);
        if (!b_.is_filled()) ret(0);
        finish();
    }

    // Program block i > 0 is two IR blocks: heads[i] counts fuel and leaves
    // for `out` when it is spent, bodies[i] holds the assignments and the
    // terminator. Blocks are built in a byte-chosen order after the entry;
    // heads[i] is sealable once every program block branching to i is built.
    void run(const Cfg& blocks) {
        const uint32_t n = static_cast<uint32_t>(blocks.size());
        std::vector<Block> heads(n), bodies(n);
        std::vector<uint32_t> waiting(n, 0);  // program predecessors not built yet
        for (uint32_t i = 1; i < n; ++i) {
            heads[i] = b_.create_block();
            bodies[i] = b_.create_block();
        }
        for (const CfgBlock& b : blocks)
            for (uint32_t t : successors(b)) ++waiting[t];
        Block out = b_.create_block();
        fuel_ = b_.declare_var(types::I32);
        enter();
        b_.def_var(fuel_, b_.ins().iconst(types::I32, 0));
        for (uint32_t i = 1; i < n; ++i)
            if (waiting[i] == 0) sealable(heads[i]);  // unreachable

        std::vector<uint32_t> order;
        for (uint32_t i = 1; i < n; ++i) order.push_back(i);
        for (uint32_t i = 0; i + 1 < order.size(); ++i) std::swap(order[i], order[i + in_.below(uint32_t(order.size()) - i)]);
        order.insert(order.begin(), 0);
        for (uint32_t i : order) {
            if (i != 0) {
                b_.switch_to_block(heads[i]);
                Value f = b_.ins().iadd(b_.use_var(fuel_), b_.ins().iconst(types::I32, 1));
                b_.def_var(fuel_, f);
                b_.ins().brif(b_.ins().icmp(IntCC::Ugt, f, b_.ins().iconst(types::I32, kFuel)), out, bodies[i]);
                b_.switch_to_block(bodies[i]);
                sealable(bodies[i]);
            }
            terminate(blocks[i], heads);
            for (uint32_t t : successors(blocks[i]))
                if (--waiting[t] == 0) sealable(heads[t]);
            maybe_seal();
        }
        b_.switch_to_block(out);
        sealable(out);
        ret(kOutOfFuelSite);
        finish();
    }

    /// Each block a program block branches to, once.
    static std::vector<uint32_t> successors(const CfgBlock& b) {
        std::vector<uint32_t> out;
        auto add = [&](uint32_t t) {
            for (uint32_t x : out)
                if (x == t) return;
            out.push_back(t);
        };
        for (uint32_t t : b.targets) add(t);
        for (auto [v, t] : b.cases) add(t);
        return out;
    }

    /// The first Result that failed, if any.
    const std::optional<FrontendError>& error() const { return error_; }

private:
    void enter() {
        Block entry = b_.create_block();
        b_.append_block_params_for_function_params(entry);
        b_.switch_to_block(entry);
        b_.seal_block(entry);
        for (uint32_t k = 0; k < 2; ++k) {
            Value p = b_.block_params(entry)[k];
            if (types_[k] != types::I64) p = b_.ins().ireduce(types_[k], p);
            b_.def_var(var(k), p);
        }
    }

    void finish() {
        while (!pool_.empty()) seal_one();
        if (in_.flip()) b_.seal_all_blocks();
    }

    void terminate(const CfgBlock& b, const std::vector<Block>& heads) {
        stmts(b.body);
        switch (b.term) {
        case CfgBlock::Return: ret(b.site); return;
        case CfgBlock::Jump: b_.ins().jump(heads[b.targets[0]]); return;
        case CfgBlock::Brif: b_.ins().brif(cond(b.cond), heads[b.targets[0]], heads[b.targets[1]]); return;
        case CfgBlock::Switch: {
            Switch sw;
            for (auto [v, t] : b.cases) sw.set_entry(v, heads[t]);
            check(sw.emit(b_, expr(*b.e), heads[b.targets[0]]));
            return;
        }
        }
    }

    void check(const Result<void>& r) {
        if (!r.ok() && !error_) error_ = r.error();
    }

    Variable var(uint32_t k) {
        if (!declared_[k]) {
            vars_[k] = b_.declare_var(types_[k]);
            declared_[k] = true;
        }
        return vars_[k];
    }

    // A block whose predecessors are all built: seal it now or some time later.
    void sealable(Block block) {
        if (in_.flip()) b_.seal_block(block);
        else pool_.push_back(block);
    }
    void seal_one() {
        const uint32_t i = in_.below(static_cast<uint32_t>(pool_.size()));
        b_.seal_block(pool_[i]);
        pool_[i] = pool_.back();
        pool_.pop_back();
    }
    void maybe_seal() {
        while (!pool_.empty() && in_.below(4) == 0) seal_one();
    }

    /// Continues in a fresh block nothing branches to (code after a jump).
    void dead_block() {
        Block d = b_.create_block();
        b_.switch_to_block(d);
        sealable(d);
    }

    Value read(uint32_t k, Type ty, bool sign) {
        Value x = b_.use_var(var(k));
        const Type from = types_[k];
        if (from.bits() > ty.bits()) return b_.ins().ireduce(ty, x);
        if (from.bits() < ty.bits()) return sign ? b_.ins().sextend(ty, x) : b_.ins().uextend(ty, x);
        return x;
    }

    // Left operand first (C++ leaves the order of arguments open), as the
    // model evaluates: the first trap in that order is the one reported.
    Value expr(const Expr& e) {
        if (e.op == Expr::Var) return read(e.var, e.ty, e.sign);
        if (e.op == Expr::Const) return b_.ins().iconst(e.ty, static_cast<int64_t>(e.k));
        const Value x = expr(*e.a);
        const Value y = expr(*e.b);
        switch (e.op) {
        case Expr::Add: return b_.ins().iadd(x, y);
        case Expr::Sub: return b_.ins().isub(x, y);
        case Expr::Mul: return b_.ins().imul(x, y);
        case Expr::And: return b_.ins().band(x, y);
        case Expr::Or: return b_.ins().bor(x, y);
        case Expr::Xor: return b_.ins().bxor(x, y);
        case Expr::Udiv: return b_.ins().udiv(x, y);
        case Expr::Sdiv: return b_.ins().sdiv(x, y);
        case Expr::Urem: return b_.ins().urem(x, y);
        case Expr::Srem: return b_.ins().srem(x, y);
        default: return Value();
        }
    }

    Value cond(const Cond& c) {
        Value a = expr(*c.a);
        switch (c.kind) {
        case Cond::NonZero: return a;
        case Cond::Ult: return b_.ins().icmp(IntCC::Ult, a, expr(*c.b));
        case Cond::Slt: return b_.ins().icmp(IntCC::Slt, a, expr(*c.b));
        case Cond::Eq: return b_.ins().icmp(IntCC::Eq, a, expr(*c.b));
        }
        return a;
    }

    void ret(uint64_t site) {
        Value h = b_.ins().iconst(types::I64, static_cast<int64_t>(site));
        Value mul = b_.ins().iconst(types::I64, 0x9E3779B1);
        for (uint32_t k = 0; k < kVars; ++k) h = b_.ins().iadd(b_.ins().imul(h, mul), read(k, types::I64, false));
        b_.ins().return_({h});
    }

    void stmts(const Stmts& list) {
        for (const auto& s : list) {
            stmt(*s);
            maybe_seal();
        }
    }

    /// Builds `arm` in `block` and falls through to `merge`.
    void arm(Block block, const Stmts& body, Block merge) {
        b_.switch_to_block(block);
        sealable(block);
        stmts(body);
        if (!b_.is_filled()) b_.ins().jump(merge);
    }

    void stmt(const Stmt& s) {
        switch (s.kind) {
        case Stmt::Assign: b_.def_var(var(s.var), expr(*s.e)); return;
        case Stmt::If: {
            Block then_block = b_.create_block(), else_block = b_.create_block(), merge = b_.create_block();
            b_.ins().brif(cond(s.cond), then_block, else_block);
            if (s.else_first) arm(else_block, s.arms[1], merge);
            arm(then_block, s.arms[0], merge);
            if (!s.else_first) arm(else_block, s.arms[1], merge);
            b_.switch_to_block(merge);
            sealable(merge);
            return;
        }
        case Stmt::Loop: loop(s); return;
        case Stmt::Switch: {
            std::vector<Block> arms;
            for (size_t a = 0; a < s.arms.size(); ++a) arms.push_back(b_.create_block());
            Block merge = b_.create_block();
            Switch sw;
            for (auto [v, a] : s.cases) sw.set_entry(v, arms[a]);
            check(sw.emit(b_, expr(*s.e), arms.back()));
            const bool reverse = in_.flip();
            for (size_t i = 0; i < arms.size(); ++i) {
                const size_t a = reverse ? arms.size() - 1 - i : i;
                arm(arms[a], s.arms[a], merge);
            }
            b_.switch_to_block(merge);
            sealable(merge);
            return;
        }
        case Stmt::Break: check(loops_.break_loop(b_, s.outer)); dead_block(); return;
        case Stmt::Continue: check(loops_.continue_loop(b_, s.outer)); dead_block(); return;
        case Stmt::BreakIf: check(loops_.break_if(b_, cond(s.cond), s.outer)); return;
        case Stmt::ContinueIf: check(loops_.continue_if(b_, cond(s.cond), s.outer)); return;
        case Stmt::Return: ret(s.site); dead_block(); return;
        case Stmt::TrapIf: b_.ins().trapnz(cond(s.cond), TrapCode::user(static_cast<uint8_t>(s.site))); return;
        }
    }

    // counter = 0; loop { header: counter += 1; test counter <= trips } body
    void loop(const Stmt& s) {
        Variable counter = b_.declare_var(types::I32);
        b_.def_var(counter, b_.ins().iconst(types::I32, 0));
        Result<LoopBlocks> l = loops_.begin_loop(b_);
        if (!l.ok()) {
            check(l.error());
            return;
        }
        Value c = b_.ins().iadd(b_.use_var(counter), b_.ins().iconst(types::I32, 1));
        b_.def_var(counter, c);
        Value trips = b_.ins().iconst(types::I32, s.trips);
        if (s.header_test) {
            check(loops_.loop_while(b_, b_.ins().icmp(IntCC::Ule, c, trips)));
        } else {
            check(loops_.enter_body(b_));
            check(loops_.break_if(b_, b_.ins().icmp(IntCC::Ugt, b_.use_var(counter), trips)));
        }
        stmts(s.arms[0]);
        check(loops_.end_loop(b_));
    }

    FunctionBuilder& b_;
    Bytes& in_;
    const Type (&types_)[kVars];
    Variable vars_[kVars];
    bool declared_[kVars] = {};
    LoopScopes loops_;
    Variable fuel_;
    std::vector<Block> pool_;
    std::optional<FrontendError> error_;
};

/// A block parameter whose incoming arguments are all one value (or the
/// parameter itself), named; empty if there is none.
std::string trivial_param(const Function& f) {
    for (Block blk : f.layout.blocks()) {
        auto params = f.dfg.block_params(blk);
        for (uint32_t i = 0; i < params.size(); ++i) {
            Value same;
            bool several = false, any = false;
            for (Block from : f.layout.blocks()) {
                for (Inst inst : f.layout.block_insts(from)) {
                    for (const BlockCall& bc : f.dfg.branch_destinations(inst)) {
                        if (bc.block(f.dfg.value_lists) != blk) continue;
                        any = true;
                        Value v = f.dfg.resolve_aliases(bc.arg(i, f.dfg.value_lists));
                        if (v == params[i] || v == same) continue;
                        if (same.is_valid()) several = true;
                        same = v;
                    }
                }
            }
            if (any && !several) return params[i].to_string() + " in " + blk.to_string();
        }
    }
    return "";
}

[[noreturn]] void fail(const std::string& what, const Function& f) {
    std::fprintf(stderr, "fuzz_builder: %s\n%s\n", what.c_str(), print_function(f).c_str());
    std::abort();
}

std::string describe(const Outcome& o) {
    return o.trap ? "trap " + trapcode_name(TrapCode{o.trap}) : "return " + std::to_string(o.value);
}

bool matches(const InterpOutcome& got, const Outcome& want) {
    if (want.trap) return got.kind == InterpOutcome::Kind::Trap && got.trap.byte == want.trap;
    return got.kind == InterpOutcome::Kind::Return && got.values.size() == 1 &&
           got.values[0].as_unsigned() == want.value;
}

// The generated programs end by construction (loops of at most kMaxTrips
// trips, at most four deep; kFuel visits in the unstructured mode): far
// below this many instructions. A run out of fuel is a runaway loop the
// builder made, and is reported before the JIT would run it forever.
constexpr uint64_t kInterpreterFuel = 2'000'000;

/// With HERON_FUZZ_STATS set, what the runs did, printed at exit: how many
/// calls returned and how many trapped, by code (the trap paths are
/// exercised, not only generated).
struct Stats {
    bool on = std::getenv("HERON_FUZZ_STATS") != nullptr;
    uint64_t functions = 0, returned = 0, trapped[256] = {};
    ~Stats() {
        if (!on) return;
        std::fprintf(stderr, "fuzz_builder stats: %llu functions JIT-compiled, %llu calls returned",
                     static_cast<unsigned long long>(functions), static_cast<unsigned long long>(returned));
        for (unsigned c = 1; c < 256; ++c)
            if (trapped[c]) std::fprintf(stderr, ", %llu trap %s", static_cast<unsigned long long>(trapped[c]),
                                         trapcode_name(TrapCode{static_cast<uint8_t>(c)}).c_str());
        std::fprintf(stderr, "\n");
    }
};
Stats stats;

template <typename Program>
void check_program(Bytes& in, const Type (&var_types)[kVars], const Program& program) {
    Signature sig;
    sig.params = {AbiParam(types::I64), AbiParam(types::I64)};
    sig.returns = {AbiParam(types::I64)};
    auto owned = std::make_unique<Function>(ExternalName::testcase("prog"), sig);
    Function& f = *owned;
    static FunctionBuilderContext ctx;
    {
        FunctionBuilder b(f, ctx);
        Emitter emit(b, in, var_types);
        emit.run(program);
        if (emit.error()) fail("frontend error: " + emit.error()->message, f);
        if (b.error()) fail("frontend error: " + b.error()->message, f);
        if (Result<void> r = b.finalize(); !r.ok()) fail("finalize: " + r.error().message, f);
    }
    VerifierErrors errs;
    if (!verify_function(f, errs)) fail("does not verify: " + format_verifier_errors(errs), f);
    if (std::string t = trivial_param(f); !t.empty()) fail("trivial block parameter " + t, f);

    const uint64_t args[][2] = {{in.u64(), in.u64()}, {0, 0}, {1, ~uint64_t{0}}};
    InterpOutcome interpreted[3];
    Outcome wanted[3];
    static Interpreter interp;
    interp.set_fuel(kInterpreterFuel);
    for (int k = 0; k < 3; ++k) {
        const auto& a = args[k];
        const DataValue dv[2] = {DataValue::i64(static_cast<int64_t>(a[0])), DataValue::i64(static_cast<int64_t>(a[1]))};
        interpreted[k] = interp.call(f, dv);
        const Outcome want = wanted[k] = Model(var_types, a[0], a[1]).run(program);
        if (!matches(interpreted[k], want))
            fail("args " + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ": interpreter " +
                     gen::describe_outcome(interpreted[k]) + ", model " + describe(want),
                 f);
    }

    // The same function on the x86-64 JIT (register-allocation checker on),
    // through the jit/ module API as fuzz_diff uses it: bit for bit the
    // interpreter's outcome, trap codes included.
    gen::Module m;
    m.functions.push_back(std::move(owned));
    gen::JitEngine jit;
    std::string error;
    if (!jit.load(m, error)) fail("JIT: " + error, f);
    stats.functions += stats.on;
    for (int k = 0; k < 3; ++k) {
        const auto& a = args[k];
        const DataValue dv[2] = {DataValue::i64(static_cast<int64_t>(a[0])), DataValue::i64(static_cast<int64_t>(a[1]))};
        InterpOutcome got = jit.call(f, dv);
        std::string why;
        if (!gen::outcomes_match(interpreted[k], got, gen::NanCompare::Exact, why) || !matches(got, wanted[k]))
            fail("args " + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ": interpreter " +
                     gen::describe_outcome(interpreted[k]) + ", JIT " + gen::describe_outcome(got) + ", model " +
                     describe(wanted[k]) + (why.empty() ? "" : " (" + why + ")"),
                 f);
        if (!stats.on) continue;
        if (got.kind == InterpOutcome::Kind::Trap) ++stats.trapped[got.trap.byte];
        else ++stats.returned;
    }
}

}  // namespace

// The first byte picks the mode: structured (loop scopes, switches, nesting)
// for three values in four, else the unstructured CFG.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Bytes in(data, size);
    const bool structured = in.below(4) != 3;
    Type var_types[kVars];
    for (Type& t : var_types) t = kTypes[in.below(4)];
    Generator gen(in, var_types);
    if (structured) check_program(in, var_types, gen.program());
    else check_program(in, var_types, gen.cfg());
    return 0;
}
