// Interpreter execution (ir-reference.md 2, 12-14, 17): loops with block
// parameters and parallel assignment, br_table, traps and their messages,
// calls (direct, host, indirect through func_addr), tail calls in constant
// space, the depth limit, stack-slot memory with both byte orders and every
// kind of bad access, host buffers, fuel, and the errors unverified IR and
// bad embedder input must produce instead of crashing.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/unit/interp_test_util.h"

namespace heron {
namespace {

using test::make_sig;
using namespace types;
using K = InterpOutcome::Kind;

/// Builds one function block by block.
struct FB {
    std::unique_ptr<Function> f;
    FuncCursor c;
    std::vector<Value> params;

    FB(const std::string& name, const std::vector<Type>& ps, const std::vector<Type>& rets,
       CallConv cc = CallConv::Fast)
        : f(std::make_unique<Function>(ExternalName::testcase(name), make_sig(ps, rets, cc))), c(*f) {
        Block b0 = c.insert_block();
        for (Type t : ps) params.push_back(f->dfg.append_block_param(b0, t));
        c.at_bottom(b0);
    }
    Block block(const std::vector<Type>& ps, std::vector<Value>& out) {
        Block b = c.insert_block();
        out.clear();
        for (Type t : ps) out.push_back(f->dfg.append_block_param(b, t));
        return b;
    }
    Block block() {
        std::vector<Value> unused;
        return block({}, unused);
    }
    FuncCursor& at(Block b) { return c.at_bottom(b); }
    FuncRef import(const std::string& name, const std::vector<Type>& ps, const std::vector<Type>& rets,
                   CallConv cc = CallConv::Fast) {
        SigRef s = f->import_signature(make_sig(ps, rets, cc));
        return f->import_function(ExtFuncData{ExternalName::testcase(name), s, false});
    }
    std::vector<Value> call(FuncRef fn, const std::vector<Value>& args) {
        Inst i = c.ins().call(fn, std::span<const Value>(args));
        auto r = f->dfg.inst_results(i);
        return {r.begin(), r.end()};
    }
    void ret(const std::vector<Value>& vals) { c.ins().return_(std::span<const Value>(vals)); }
};

InterpOutcome run(Interpreter& interp, std::string_view name, std::vector<DataValue> args) {
    return interp.call(name, args);
}
uint64_t ret1(const InterpOutcome& r) {
    EXPECT_EQ(r.kind, K::Return) << r.message;
    return r.kind == K::Return && !r.values.empty() ? r.values[0].bits : 0xdead;
}

// sum(n) = 1 + 2 + ... + n with a loop carrying (acc, i) as block parameters.
std::unique_ptr<Function> make_sum() {
    FB b("sum", {I64}, {I64});
    std::vector<Value> loop, done;
    Block head = b.block({I64, I64}, loop), body = b.block(), exit = b.block({I64}, done);
    Value n = b.params[0];
    b.c.ins().jump(head, {b.c.ins().iconst(I64, 0), b.c.ins().iconst(I64, 1)});
    b.at(head);
    Value over = b.c.ins().icmp(IntCC::Ugt, loop[1], n);
    b.c.ins().brif(over, exit, std::vector<Value>{loop[0]}, body, {});
    b.at(body);
    Value acc = b.c.ins().iadd(loop[0], loop[1]);
    b.c.ins().jump(head, {acc, b.c.ins().iadd_imm(loop[1], 1)});
    b.at(exit);
    b.ret({done[0]});
    return std::move(b.f);
}

TEST(InterpControl, LoopWithBlockParams) {
    auto f = make_sum();
    Interpreter interp;
    interp.add_function(*f);
    EXPECT_EQ(ret1(run(interp, "sum", {DataValue::i64(0)})), 0u);
    EXPECT_EQ(ret1(run(interp, "sum", {DataValue::i64(10)})), 55u);
    EXPECT_EQ(ret1(run(interp, "%sum", {DataValue::i64(100000)})), 5000050000u);
    EXPECT_EQ(interp.executed(), 3 + 100001 * 2 + 100000 * 4 + 1);
}

TEST(InterpControl, ParallelBlockArguments) {
    // block1(a, b, k): k == 0 ? return a, b : jump block1(b, a, k - 1)
    FB b("swap", {I32, I32, I32}, {I32, I32});
    std::vector<Value> p, unused;
    Block loop = b.block({I32, I32, I32}, p), out = b.block();
    b.c.ins().jump(loop, {b.params[0], b.params[1], b.params[2]});
    b.at(loop);
    b.c.ins().brif(p[2], b.block(), {}, out, {});
    Block again = Block(b.f->dfg.num_blocks() - 1);
    b.at(again);
    b.c.ins().jump(loop, {p[1], p[0], b.c.ins().iadd_imm(p[2], -1)});
    b.at(out);
    b.ret({p[0], p[1]});
    Interpreter interp;
    interp.add_function(*b.f);
    auto r = run(interp, "swap", {DataValue::i32(1), DataValue::i32(2), DataValue::i32(3)});
    ASSERT_EQ(r.kind, K::Return) << r.message;
    EXPECT_EQ(r.values[0].bits, 2u);
    EXPECT_EQ(r.values[1].bits, 1u);
    r = run(interp, "swap", {DataValue::i32(1), DataValue::i32(2), DataValue::i32(4)});
    EXPECT_EQ(r.values[0].bits, 1u);
    EXPECT_EQ(r.values[1].bits, 2u);
}

TEST(InterpControl, BrifConditionsAndSameTargetTwice) {
    // brif c, block1(1), block1(2): any nonzero bit of c takes the first edge.
    for (Type t : {I8, I64}) {
        FB b("f", {t}, {I32});
        std::vector<Value> p;
        Block join = b.block({I32}, p);
        b.c.ins().brif(b.params[0], join, std::vector<Value>{b.c.ins().iconst(I32, 1)}, join,
                       std::vector<Value>{b.c.ins().iconst(I32, 2)});
        b.at(join);
        b.ret({p[0]});
        Interpreter interp;
        interp.add_function(*b.f);
        EXPECT_EQ(ret1(run(interp, "f", {DataValue(t, ~0ULL)})), 1u);
        EXPECT_EQ(ret1(run(interp, "f", {DataValue(t, 0x80)})), 1u);
        EXPECT_EQ(ret1(run(interp, "f", {DataValue(t, 0)})), 2u);
    }
}

TEST(InterpControl, BrTable) {
    // br_table v0, block9(100), [block1(10), block2, block1(30)]
    FB b("bt", {I32}, {I32});
    std::vector<Value> p1, p9;
    Block b1 = b.block({I32}, p1), b2 = b.block(), b9 = b.block({I32}, p9);
    auto& dfg = b.f->dfg;
    JumpTableData jt;
    Value k100 = b.c.ins().iconst(I32, 100), k10 = b.c.ins().iconst(I32, 10), k30 = b.c.ins().iconst(I32, 30);
    jt.all = {dfg.block_call(b9, std::vector<Value>{k100}), dfg.block_call(b1, std::vector<Value>{k10}),
              dfg.block_call(b2, {}), dfg.block_call(b1, std::vector<Value>{k30})};
    b.c.ins().br_table(b.params[0], b.f->create_jump_table(std::move(jt)));
    b.at(b1);
    b.ret({p1[0]});
    b.at(b2);
    b.ret({b.c.ins().iconst(I32, 20)});
    b.at(b9);
    b.ret({p9[0]});
    Interpreter interp;
    interp.add_function(*b.f);
    EXPECT_EQ(ret1(run(interp, "bt", {DataValue::i32(0)})), 10u);
    EXPECT_EQ(ret1(run(interp, "bt", {DataValue::i32(1)})), 20u);
    EXPECT_EQ(ret1(run(interp, "bt", {DataValue::i32(2)})), 30u);
    EXPECT_EQ(ret1(run(interp, "bt", {DataValue::i32(3)})), 100u);
    EXPECT_EQ(ret1(run(interp, "bt", {DataValue::i32(-1)})), 100u);  // 4294967295 -> default
}

TEST(InterpControl, TrapsAndMessages) {
    FB b("div", {I32, I32}, {I32});
    Value q = b.c.ins().udiv(b.params[0], b.params[1]);
    b.c.ins().trapnz(b.c.ins().icmp_imm(IntCC::Eq, q, 7), TrapCode::user(7));
    b.c.ins().trapz(q, TrapCode::user(9));
    Block t = b.block();
    b.c.ins().brif(b.c.ins().icmp_imm(IntCC::Eq, q, 5), t, b.block());
    b.at(Block(2));
    b.ret({q});
    b.at(t);
    b.c.ins().trap(TrapCode::user(250));
    Interpreter interp;
    interp.add_function(*b.f);
    auto r = run(interp, "div", {DataValue::i32(1), DataValue::i32(0)});
    ASSERT_EQ(r.kind, K::Trap);
    EXPECT_EQ(r.trap, TrapCode::integer_division_by_zero());
    EXPECT_EQ(r.message.rfind("int_divz in %div at inst0 in block0", 0), 0u) << r.message;
    EXPECT_NE(r.message.find("udiv"), std::string::npos) << r.message;
    EXPECT_EQ(r.function, "%div");
    EXPECT_EQ(r.inst, Inst(0));
    EXPECT_EQ(run(interp, "div", {DataValue::i32(14), DataValue::i32(2)}).trap, TrapCode::user(7));
    EXPECT_EQ(run(interp, "div", {DataValue::i32(1), DataValue::i32(2)}).trap, TrapCode::user(9));
    r = run(interp, "div", {DataValue::i32(10), DataValue::i32(2)});
    EXPECT_EQ(r.trap, TrapCode::user(250));
    EXPECT_EQ(r.message.rfind("user250 in %div at ", 0), 0u) << r.message;
    EXPECT_NE(r.message.find("in block1"), std::string::npos) << r.message;
    EXPECT_EQ(ret1(run(interp, "div", {DataValue::i32(12), DataValue::i32(2)})), 6u);
}

// --- calls ----------------------------------------------------------------------

std::unique_ptr<Function> make_fib() {
    FB b("fib", {I64}, {I64});
    Value n = b.params[0];
    FuncRef self = b.import("fib", {I64}, {I64});
    Block base = b.block(), rec = b.block();
    b.c.ins().brif(b.c.ins().icmp_imm(IntCC::Ult, n, 2), base, rec);
    b.at(base);
    b.ret({n});
    b.at(rec);
    Value x = b.call(self, {b.c.ins().iadd_imm(n, -1)})[0];
    Value y = b.call(self, {b.c.ins().iadd_imm(n, -2)})[0];
    b.ret({b.c.ins().iadd(x, y)});
    return std::move(b.f);
}

TEST(InterpCalls, RecursiveFib) {
    auto fib = make_fib();
    Interpreter interp;
    interp.add_function(*fib);
    EXPECT_EQ(ret1(run(interp, "fib", {DataValue::i64(0)})), 0u);
    EXPECT_EQ(ret1(run(interp, "fib", {DataValue::i64(1)})), 1u);
    EXPECT_EQ(ret1(run(interp, "fib", {DataValue::i64(20)})), 6765u);
    // Unregistered: call(func) makes its own name resolve to it.
    auto other = make_fib();
    Interpreter fresh;
    DataValue arg = DataValue::i64(15);
    EXPECT_EQ(ret1(fresh.call(*other, std::span(&arg, 1))), 610u);
    EXPECT_EQ(fresh.call("fib", std::span(&arg, 1)).kind, K::Error) << "the transient name must not linger";
}

TEST(InterpCalls, MultipleResultsAndHostFunctions) {
    // %pair(a, b) = (a + b, a - b); %main(a, b) = pair(a, b) then host %mul.
    FB pair("pair", {I32, I32}, {I32, I32});
    pair.ret({pair.c.ins().iadd(pair.params[0], pair.params[1]), pair.c.ins().isub(pair.params[0], pair.params[1])});
    FB m("main", {I32, I32}, {I32});
    FuncRef fp = m.import("pair", {I32, I32}, {I32, I32});
    FuncRef fh = m.import("mul", {I32, I32}, {I32});
    auto r2 = m.call(fp, {m.params[0], m.params[1]});
    m.ret({m.call(fh, {r2[0], r2[1]})[0]});
    Interpreter interp;
    interp.add_function(*pair.f);
    interp.add_function(*m.f);
    int host_calls = 0;
    interp.add_host_function("mul", make_sig({I32, I32}, {I32}), [&](std::span<const DataValue> a) {
        ++host_calls;
        return std::vector<DataValue>{DataValue::i32(a[0].as_signed() * a[1].as_signed())};
    });
    EXPECT_EQ(ret1(run(interp, "main", {DataValue::i32(7), DataValue::i32(3)})), 40u);
    EXPECT_EQ(host_calls, 1);
    // Host functions are callable directly too.
    EXPECT_EQ(ret1(run(interp, "mul", {DataValue::i32(-2), DataValue::i32(3)})), uint64_t(uint32_t(-6)));
}

TEST(InterpCalls, HostFunctionMisbehaviourIsAnError) {
    FB m("main", {}, {I32});
    FuncRef fh = m.import("h", {}, {I32});
    m.ret({m.call(fh, {})[0]});
    Interpreter interp;
    interp.add_function(*m.f);
    interp.add_host_function("%h", make_sig({}, {I32}), [](std::span<const DataValue>) {
        return std::vector<DataValue>{DataValue::i64(1)};  // wrong type
    });
    auto r = run(interp, "main", {});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("host function %h returned"), std::string::npos) << r.message;
    interp.add_host_function("h", make_sig({}, {I32}), [](std::span<const DataValue>) -> std::vector<DataValue> {
        throw std::runtime_error("boom");
    });
    r = run(interp, "main", {});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("boom"), std::string::npos) << r.message;
    // A host function calling back into the interpreter gets an error, not a crash.
    InterpOutcome inner;
    interp.add_host_function("h", make_sig({}, {I32}), [&](std::span<const DataValue>) {
        inner = interp.call("main", {});
        return std::vector<DataValue>{DataValue::i32(5)};
    });
    EXPECT_EQ(ret1(run(interp, "main", {})), 5u);
    EXPECT_EQ(inner.kind, K::Error);
}

TEST(InterpCalls, CallIndirectThroughFuncAddr) {
    // %apply(sel, x) = call_indirect of double or inc or host neg.
    FB dbl("double", {I64}, {I64});
    dbl.ret({dbl.c.ins().iadd(dbl.params[0], dbl.params[0])});
    FB inc("inc", {I64}, {I64});
    inc.ret({inc.c.ins().iadd_imm(inc.params[0], 1)});
    FB ap("apply", {I64, I64}, {I64});
    FuncRef fd = ap.import("double", {I64}, {I64}), fi = ap.import("inc", {I64}, {I64});
    FuncRef fn = ap.import("neg", {I64}, {I64});
    SigRef sig = ap.f->import_signature(make_sig({I64}, {I64}));
    Value a = ap.c.ins().func_addr(I64, fd), b = ap.c.ins().func_addr(I64, fi), h = ap.c.ins().func_addr(I64, fn);
    Value is1 = ap.c.ins().icmp_imm(IntCC::Eq, ap.params[0], 1), is2 = ap.c.ins().icmp_imm(IntCC::Eq, ap.params[0], 2);
    Value callee = ap.c.ins().select(is1, b, ap.c.ins().select(is2, h, a));
    callee = ap.c.ins().select(ap.c.ins().icmp_imm(IntCC::Eq, ap.params[0], 3), ap.params[1], callee);
    Inst ci = ap.c.ins().call_indirect(sig, callee, std::vector<Value>{ap.params[1]});
    ap.ret({ap.f->dfg.first_result(ci)});
    Interpreter interp;
    for (auto* f : {&dbl, &inc, &ap}) interp.add_function(*f->f);
    interp.add_host_function("neg", make_sig({I64}, {I64}), [](std::span<const DataValue> a) {
        return std::vector<DataValue>{DataValue::i64(-a[0].as_signed())};
    });
    EXPECT_EQ(ret1(run(interp, "apply", {DataValue::i64(0), DataValue::i64(21)})), 42u);
    EXPECT_EQ(ret1(run(interp, "apply", {DataValue::i64(1), DataValue::i64(21)})), 22u);
    EXPECT_EQ(ret1(run(interp, "apply", {DataValue::i64(2), DataValue::i64(21)})), uint64_t(-21));
    // Selector 3 calls the argument itself as an address: not a function.
    auto r = run(interp, "apply", {DataValue::i64(3), DataValue::i64(0x1234)});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("call_indirect to 0x1234 is not a function"), std::string::npos) << r.message;
}

TEST(InterpCalls, CallIndirectWithWrongSignatureIsAnError) {
    FB g("g", {I32}, {I32});
    g.ret({g.params[0]});
    FB m("m", {}, {I64});
    FuncRef fg = m.import("g", {I32}, {I32});
    SigRef wrong = m.f->import_signature(make_sig({I64}, {I64}));
    Value addr = m.c.ins().func_addr(I64, fg);
    Inst ci = m.c.ins().call_indirect(wrong, addr, std::vector<Value>{m.c.ins().iconst(I64, 1)});
    m.ret({m.f->dfg.first_result(ci)});
    Interpreter interp;
    interp.add_function(*g.f);
    interp.add_function(*m.f);
    auto r = run(interp, "m", {});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("is not a function"), std::string::npos) << r.message;
    EXPECT_EQ(r.function, "%m");
}

TEST(InterpCalls, MissingCalleeAndSignatureMismatch) {
    FB m("m", {}, {I32});
    FuncRef fx = m.import("nowhere", {}, {I32});
    m.ret({m.call(fx, {})[0]});
    Interpreter interp;
    interp.add_function(*m.f);
    auto r = run(interp, "m", {});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("missing callee %nowhere"), std::string::npos) << r.message;
    // Now define it, with a different signature than declared.
    FB nw("nowhere", {}, {I64});
    nw.ret({nw.c.ins().iconst(I64, 1)});
    interp.add_function(*nw.f);
    r = run(interp, "m", {});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("signature mismatch"), std::string::npos) << r.message;
    EXPECT_EQ(run(interp, "absent", {}).kind, K::Error);
}

// count(n, acc) = n == 0 ? acc : return_call count(n - 1, acc + 1), or through
// return_call_indirect when `indirect`.
std::unique_ptr<Function> make_count(bool indirect) {
    FB b("count", {I64, I64}, {I64}, CallConv::Tail);
    FuncRef self = b.import("count", {I64, I64}, {I64}, CallConv::Tail);
    Block done = b.block(), more = b.block();
    b.c.ins().brif(b.params[0], more, done);
    b.at(done);
    b.ret({b.params[1]});
    b.at(more);
    std::vector<Value> args = {b.c.ins().iadd_imm(b.params[0], -1), b.c.ins().iadd_imm(b.params[1], 1)};
    if (indirect) {
        SigRef sig = b.f->import_signature(make_sig({I64, I64}, {I64}, CallConv::Tail));
        b.c.ins().return_call_indirect(sig, b.c.ins().func_addr(I64, self), args);
    } else {
        b.c.ins().return_call(self, args);
    }
    return std::move(b.f);
}

TEST(InterpCalls, TailCallsRunInConstantSpace) {
    for (bool indirect : {false, true}) {
        auto f = make_count(indirect);
        Interpreter interp;
        interp.set_max_depth(2);  // would trap at once if frames accumulated
        interp.add_function(*f);
        EXPECT_EQ(ret1(run(interp, "count", {DataValue::i64(100000), DataValue::i64(0)})), 100000u) << indirect;
    }
}

TEST(InterpCalls, TailCallToHostFunction) {
    FB b("t", {I64}, {I64}, CallConv::Tail);
    FuncRef h = b.import("h", {I64}, {I64}, CallConv::Tail);
    b.c.ins().return_call(h, std::vector<Value>{b.params[0]});
    Interpreter interp;
    interp.add_function(*b.f);
    interp.add_host_function("h", make_sig({I64}, {I64}, CallConv::Tail), [](std::span<const DataValue> a) {
        return std::vector<DataValue>{DataValue::i64(a[0].as_signed() * 3)};
    });
    EXPECT_EQ(ret1(run(interp, "t", {DataValue::i64(5)})), 15u);
}

// down(n) = n == 0 ? 0 : down(n - 1) + 1, not a tail call.
std::unique_ptr<Function> make_down() {
    FB b("down", {I64}, {I64});
    FuncRef self = b.import("down", {I64}, {I64});
    Block zero = b.block(), rec = b.block();
    b.c.ins().brif(b.params[0], rec, zero);
    b.at(zero);
    b.ret({b.params[0]});
    b.at(rec);
    Value r = b.call(self, {b.c.ins().iadd_imm(b.params[0], -1)})[0];
    b.ret({b.c.ins().iadd_imm(r, 1)});
    return std::move(b.f);
}

TEST(InterpCalls, DeepRecursionTrapsStackOverflow) {
    auto f = make_down();
    Interpreter interp;
    interp.add_function(*f);
    EXPECT_EQ(ret1(run(interp, "down", {DataValue::i64(50000)})), 50000u);  // within the default depth
    auto r = run(interp, "down", {DataValue::i64(10'000'000)});
    ASSERT_EQ(r.kind, K::Trap) << r.message;
    EXPECT_EQ(r.trap, TrapCode::stack_overflow());
    EXPECT_NE(r.message.find("call depth limit"), std::string::npos) << r.message;
    interp.set_max_depth(100);
    EXPECT_EQ(ret1(run(interp, "down", {DataValue::i64(99)})), 99u);
    EXPECT_EQ(run(interp, "down", {DataValue::i64(100)}).trap, TrapCode::stack_overflow());
    // The memory limit traps the same way.
    interp.set_max_depth(1'000'000);
    interp.set_max_stack_bytes(1 << 16);
    EXPECT_EQ(run(interp, "down", {DataValue::i64(100000)}).trap, TrapCode::stack_overflow());
    // And the interpreter is usable afterwards.
    EXPECT_EQ(ret1(run(interp, "down", {DataValue::i64(10)})), 10u);
}

// The entry function's own frame over the limit: a trap naming it (there is
// no caller frame to name), then the interpreter goes on.
TEST(InterpCalls, EntryFrameOverTheStackLimitTraps) {
    FB b("big", {I64}, {I64});
    StackSlot ss = b.f->create_stack_slot(StackSlotData{1 << 20, 1, {}});
    Value p = b.c.ins().stack_addr(I64, ss);
    b.c.ins().store({}, b.params[0], p, 0);
    b.ret({b.c.ins().load(I64, {}, p, 0)});
    Interpreter interp;
    interp.add_function(*b.f);
    EXPECT_EQ(ret1(run(interp, "big", {DataValue::i64(7)})), 7u);
    interp.set_max_stack_bytes(1 << 16);
    auto r = run(interp, "big", {DataValue::i64(7)});
    ASSERT_EQ(r.kind, K::Trap) << r.message;
    EXPECT_EQ(r.trap, TrapCode::stack_overflow());
    EXPECT_NE(r.message.find("in %big: stack memory limit of 65536 bytes"), std::string::npos) << r.message;
    EXPECT_EQ(r.function, "%big");
    interp.set_max_stack_bytes(1 << 24);
    EXPECT_EQ(ret1(run(interp, "big", {DataValue::i64(8)})), 8u);
}

// --- memory ---------------------------------------------------------------------

MemFlags flags(std::initializer_list<MemFlags::Bit> bits) {
    MemFlags f;
    for (auto b : bits) f.set(b);
    return f;
}

TEST(InterpMemory, StackSlotRoundTripsBothByteOrders) {
    // ss0 = explicit_slot 16: store v0 little at 0, big at 8; read back every way.
    FB b("mem", {I32}, {I32, I32, I16, I16, I64, I32});
    StackSlot ss = b.f->create_stack_slot(StackSlotData{16, 1, {}});
    Value p = b.c.ins().stack_addr(I64, ss);
    b.c.ins().store(flags({MemFlags::Notrap}), b.params[0], p, 0);
    b.c.ins().store(flags({MemFlags::Big}), b.params[0], p, 8);
    Value le = b.c.ins().load(I32, flags({MemFlags::Little}), p, 0);
    Value be_as_le = b.c.ins().load(I32, {}, p, 8);
    Value lo16 = b.c.ins().load(I16, flags({MemFlags::Big}), p, 0);  // store little 0x..1234, load.i16 big: 0x3412
    Value hi16 = b.c.ins().uload16(I32, flags({MemFlags::Big}), p, 8);
    Value wide = b.c.ins().sload32(I64, {}, p, 8);
    Value byte = b.c.ins().sload8(I32, flags({MemFlags::Big}), b.c.ins().stack_addr(I64, ss, 11));
    b.ret({le, be_as_le, lo16, b.c.ins().ireduce(I16, hi16), wide, byte});
    Interpreter interp;
    interp.add_function(*b.f);
    auto r = run(interp, "mem", {DataValue::i32(0x8765'1234)});
    ASSERT_EQ(r.kind, K::Return) << r.message;
    EXPECT_EQ(r.values[0].bits, 0x8765'1234u);
    EXPECT_EQ(r.values[1].bits, 0x3412'6587u);
    EXPECT_EQ(r.values[2].bits, 0x3412u);
    EXPECT_EQ(r.values[3].bits, 0x8765u);
    EXPECT_EQ(r.values[4].bits, 0x3412'6587u);
    EXPECT_EQ(r.values[5].bits, 0x34u);
}

TEST(InterpMemory, NarrowStoresExtendingLoadsAndFloats) {
    FB b("m", {I64, F64}, {I64, I64, F64, I32, I64});
    StackSlot ss = b.f->create_stack_slot(StackSlotData{32, 8, {}});
    Value p = b.c.ins().stack_addr(I64, ss);
    b.c.ins().store(MemFlags::trusted(), b.c.ins().iconst(I64, -1), p, 0);
    b.c.ins().istore8({}, b.params[0], p, 0);
    b.c.ins().istore16({}, b.params[0], p, 2);
    b.c.ins().istore32({}, b.params[0], p, 4);
    b.c.ins().store(flags({MemFlags::Big}), b.params[1], p, 8);
    Value all = b.c.ins().load(I64, {}, p, 0);
    Value s16 = b.c.ins().sload16(I64, {}, p, 2);
    Value f = b.c.ins().load(F64, flags({MemFlags::Big}), p, 8);
    Value u8 = b.c.ins().uload8(I32, {}, p, 1);
    Value fresh = b.c.ins().load(I64, {}, p, 16);  // never written: zeros
    b.ret({all, s16, f, u8, fresh});
    Interpreter interp;
    interp.add_function(*b.f);
    DataValue nan = DataValue::f64_bits(0x7ff0'0000'0000'0001);  // sNaN survives load/store
    auto r = run(interp, "m", {DataValue::i64(0x1122'3344'5566'8899), nan});
    ASSERT_EQ(r.kind, K::Return) << r.message;
    EXPECT_EQ(r.values[0].bits, 0x5566'8899'8899'ff99u);
    EXPECT_EQ(r.values[1].bits, 0xffff'ffff'ffff'8899u);
    EXPECT_EQ(r.values[2].bits, 0x7ff0'0000'0000'0001u);
    EXPECT_EQ(r.values[3].bits, 0xffu);
    EXPECT_EQ(r.values[4].bits, 0u);
}

/// %probe(off) loads 8 bytes at ss0 + 3 + off, with the given flags; ss0 has 11 bytes.
std::unique_ptr<Function> make_probe(MemFlags fl, Type t = I64) {
    FB b("probe", {I64}, {t});
    StackSlot ss = b.f->create_stack_slot(StackSlotData{11, 1, {}});
    b.f->create_stack_slot(StackSlotData{8, 1, {}});  // a neighbour the access must not reach into
    Value p = b.c.ins().iadd(b.c.ins().stack_addr(I64, ss, 3), b.params[0]);
    b.ret({b.c.ins().load(t, fl, p)});
    return std::move(b.f);
}

TEST(InterpMemory, OutOfBoundsAccesses) {
    auto f = make_probe({});
    Interpreter interp;
    interp.add_function(*f);
    EXPECT_EQ(ret1(run(interp, "probe", {DataValue::i64(0)})), 0u);   // ss0+3, 8 bytes: fits exactly
    EXPECT_EQ(ret1(run(interp, "probe", {DataValue::i64(-3)})), 0u);  // ss0+0
    EXPECT_EQ(ret1(run(interp, "probe", {DataValue::i64(13)})), 0u);  // ss1+0: another live slot
    for (int64_t off : std::vector<int64_t>{1, -4, -60000, 5, 8, 12, 60000, 1 << 20, -(int64_t(1) << 40)}) {
        auto r = run(interp, "probe", {DataValue::i64(off)});
        ASSERT_EQ(r.kind, K::Trap) << off << ": " << r.message;
        EXPECT_EQ(r.trap, TrapCode::heap_out_of_bounds()) << off;
        EXPECT_NE(r.message.find("outside every live stack slot"), std::string::npos) << r.message;
    }
    MemFlags user5;
    user5.set_trap_code(TrapCode::user(5));
    auto g = make_probe(user5);
    Interpreter i2;
    i2.add_function(*g);
    EXPECT_EQ(run(i2, "probe", {DataValue::i64(1)}).trap, TrapCode::user(5));
    auto h = make_probe(flags({MemFlags::Notrap}));
    Interpreter i3;
    i3.add_function(*h);
    auto r = run(i3, "probe", {DataValue::i64(1)});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_EQ(r.message.rfind("UB: notrap", 0), 0u) << r.message;
}

TEST(InterpMemory, WildAddressesTrap) {
    FB b("wild", {I64}, {I32});
    b.ret({b.c.ins().load(I32, {}, b.params[0], 0)});
    Interpreter interp;
    interp.add_function(*b.f);
    for (uint64_t a : {0ULL, 8ULL, ~0ULL, 0x5000'0000'0000'0000ULL, 0x6000'0000'0000'0000ULL}) {
        EXPECT_EQ(run(interp, "wild", {DataValue::i64(int64_t(a))}).trap, TrapCode::heap_out_of_bounds()) << a;
    }
}

TEST(InterpMemory, MisalignedAlignedAccessIsUB) {
    auto f = make_probe(flags({MemFlags::Aligned}), I16);
    Interpreter interp;
    interp.add_function(*f);
    // ss0 starts 8-aligned, so ss0+3 is odd.
    auto r = run(interp, "probe", {DataValue::i64(0)});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("misaligned"), std::string::npos) << r.message;
    EXPECT_EQ(ret1(run(interp, "probe", {DataValue::i64(1)})), 0u);
}

TEST(InterpMemory, DeadFrameAccessIsUB) {
    // %leak() returns the address of its slot; %use() loads through it.
    FB leak("leak", {}, {I64});
    StackSlot ss = leak.f->create_stack_slot(StackSlotData{8, 8, {}});
    leak.ret({leak.c.ins().stack_addr(I64, ss)});
    FB use("use", {}, {I64});
    FuncRef fl = use.import("leak", {}, {I64});
    use.ret({use.c.ins().load(I64, {}, use.call(fl, {})[0])});
    Interpreter interp;
    interp.add_function(*leak.f);
    interp.add_function(*use.f);
    auto r = run(interp, "use", {});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("activation that has returned"), std::string::npos) << r.message;
}

TEST(InterpMemory, SlotsAreFreshPerActivationAndCallersStayIntact) {
    // %rec(n) = load(ss0) * 1000 + before + (n > 0 ? rec(n - 1) : 0), where
    // ss0 is stored n after `before` was loaded from it. Fresh slots read 0 and
    // callees must not clobber them, so rec(n) = 1000 * n(n+1)/2.
    FB b("rec", {I64}, {I64});
    StackSlot ss = b.f->create_stack_slot(StackSlotData{8, 8, {}});
    FuncRef self = b.import("rec", {I64}, {I64});
    Value p = b.c.ins().stack_addr(I64, ss);
    Value before = b.c.ins().load(I64, {}, p);
    b.c.ins().store({}, b.params[0], p);
    std::vector<Value> j;
    Block rec = b.block(), join = b.block({I64}, j);
    b.c.ins().brif(b.params[0], rec, {}, join, std::vector<Value>{before});
    b.at(rec);
    Value inner = b.call(self, {b.c.ins().iadd_imm(b.params[0], -1)})[0];
    b.c.ins().jump(join, {b.c.ins().iadd(inner, before)});
    b.at(join);
    Value mine = b.c.ins().load(I64, {}, p);
    b.ret({b.c.ins().iadd(b.c.ins().imul(mine, b.c.ins().iconst(I64, 1000)), j[0])});
    Interpreter interp;
    interp.add_function(*b.f);
    // Every activation reads 0 before storing; the outer one still sees its own n.
    EXPECT_EQ(ret1(run(interp, "rec", {DataValue::i64(5)})), 15000u);
    EXPECT_EQ(ret1(run(interp, "rec", {DataValue::i64(0)})), 0u);
}

TEST(InterpMemory, HostBuffers) {
    alignas(8) uint8_t buf[16] = {1, 2, 3, 4, 5, 6, 7, 8};
    FB b("h", {I64}, {I64});
    Value v = b.c.ins().load(I64, {}, b.params[0], 0);
    b.c.ins().store({}, b.c.ins().bswap(v), b.params[0], 8);
    b.ret({v});
    Interpreter interp;
    interp.add_function(*b.f);
    DataValue addr = DataValue::i64(int64_t(reinterpret_cast<uintptr_t>(buf)));
    EXPECT_EQ(run(interp, "h", {addr}).trap, TrapCode::heap_out_of_bounds()) << "not registered yet";
    interp.add_host_memory(buf, sizeof buf);
    EXPECT_EQ(ret1(run(interp, "h", {addr})), 0x0807'0605'0403'0201u);
    EXPECT_EQ(buf[8], 8);
    EXPECT_EQ(buf[15], 1);
    uint8_t out[2];
    EXPECT_TRUE(interp.read_memory(addr.bits + 14, out, 2));
    EXPECT_EQ(out[1], 1);
    EXPECT_FALSE(interp.read_memory(addr.bits + 15, out, 2));
    DataValue past = DataValue::i64(addr.as_signed() + 4);  // 8 bytes at +4 fit, but +12 does not
    EXPECT_EQ(run(interp, "h", {past}).trap, TrapCode::heap_out_of_bounds());
    interp.clear_host_memory();
    EXPECT_EQ(run(interp, "h", {addr}).trap, TrapCode::heap_out_of_bounds());
}

TEST(InterpMemory, HostFunctionReadsStackSlotThroughInterpreter) {
    FB b("m", {}, {I64});
    StackSlot ss = b.f->create_stack_slot(StackSlotData{8, 8, {}});
    FuncRef peek = b.import("peek", {I64}, {I64});
    Value p = b.c.ins().stack_addr(I64, ss);
    b.c.ins().store({}, b.c.ins().iconst(I64, 0x1234), p);
    b.ret({b.call(peek, {p})[0]});
    Interpreter interp;
    interp.add_function(*b.f);
    interp.add_host_function("peek", make_sig({I64}, {I64}), [&](std::span<const DataValue> a) {
        uint64_t v = 0;
        EXPECT_TRUE(interp.read_memory(a[0].bits, &v, 8));
        return std::vector<DataValue>{DataValue::i64(int64_t(v))};
    });
    EXPECT_EQ(ret1(run(interp, "m", {})), 0x1234u);
}

// --- fuel and bad input ------------------------------------------------------------

TEST(InterpLimits, FuelStopsAnInfiniteLoop) {
    FB b("spin", {}, {});
    Block loop = b.block();
    b.c.ins().jump(loop);
    b.at(loop);
    b.c.ins().nop();
    b.c.ins().jump(loop);
    Interpreter interp;
    interp.add_function(*b.f);
    interp.set_fuel(1000);
    auto r = run(interp, "spin", {});
    ASSERT_EQ(r.kind, K::OutOfFuel);
    EXPECT_NE(r.message.find("%spin"), std::string::npos) << r.message;
    EXPECT_EQ(interp.executed(), 1000u);
    // Exactly enough fuel is enough.
    auto sum = make_sum();
    interp.add_function(*sum);
    DataValue n = DataValue::i64(3);
    interp.set_fuel(0);
    ASSERT_EQ(ret1(interp.call("sum", std::span(&n, 1))), 6u);
    uint64_t need = interp.executed();
    interp.set_fuel(need);
    EXPECT_EQ(ret1(interp.call("sum", std::span(&n, 1))), 6u);
    interp.set_fuel(need - 1);
    EXPECT_EQ(interp.call("sum", std::span(&n, 1)).kind, K::OutOfFuel);
}

TEST(InterpLimits, BadArgumentsAreErrors) {
    auto f = make_sum();
    Interpreter interp;
    interp.add_function(*f);
    auto r = run(interp, "sum", {});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("takes 1 arguments, 0 given"), std::string::npos) << r.message;
    r = run(interp, "sum", {DataValue::i32(1)});
    EXPECT_EQ(r.kind, K::Error);
    EXPECT_NE(r.message.find("is i32, expected i64"), std::string::npos) << r.message;
}

TEST(InterpLimits, UnverifiedIRIsReportedNotCrashed) {
    {  // a block without a terminator
        FB b("noterm", {I32}, {I32});
        b.c.ins().iadd(b.params[0], b.params[0]);
        Interpreter interp;
        interp.add_function(*b.f);
        auto r = run(interp, "noterm", {DataValue::i32(1)});
        EXPECT_EQ(r.kind, K::Error);
        EXPECT_NE(r.message.find("terminator"), std::string::npos) << r.message;
    }
    {  // a branch with the wrong number of arguments
        FB b("args", {I32}, {I32});
        std::vector<Value> p;
        Block t = b.block({I32, I32}, p);
        b.c.ins().jump(t, {b.params[0]});
        b.at(t);
        b.ret({p[0]});
        Interpreter interp;
        interp.add_function(*b.f);
        EXPECT_EQ(run(interp, "args", {DataValue::i32(1)}).kind, K::Error);
    }
    {  // return with the wrong count, an int op on floats, an fadd on ints
        FB b("types", {F32}, {I32});
        b.ret({});
        Interpreter interp;
        interp.add_function(*b.f);
        EXPECT_EQ(run(interp, "types", {DataValue::f32_bits(0)}).kind, K::Error);
        FB c("iaddf", {F32}, {F32});
        c.ret({test::emit(c.c, Opcode::Iadd, F32, {c.params[0], c.params[0]})[0]});
        interp.add_function(*c.f);
        EXPECT_EQ(run(interp, "iaddf", {DataValue::f32_bits(0)}).kind, K::Error);
        FB d("ishlf", {F32}, {F32});
        d.ret({test::emit(d.c, Opcode::Ishl, F32, {d.params[0], d.params[0]})[0]});
        interp.add_function(*d.f);
        EXPECT_EQ(run(interp, "ishlf", {DataValue::f32_bits(1)}).kind, K::Error);
    }
    {  // a call with the wrong number of arguments, a function without blocks
        FB b("call", {}, {I32});
        FuncRef fx = b.import("x", {I32}, {I32});
        InstructionData d;
        d.opcode = Opcode::Call;
        d.entity = fx.index();
        b.c.build(d, Type());
        b.ret({b.c.ins().iconst(I32, 0)});
        Interpreter interp;
        interp.add_function(*b.f);
        EXPECT_EQ(run(interp, "call", {}).kind, K::Error);
        Function empty(ExternalName::testcase("empty"), make_sig({}, {}));
        interp.add_function(empty);
        EXPECT_EQ(run(interp, "empty", {}).kind, K::Error);
    }
}

TEST(InterpLimits, ReRegisteringAndInvalidating) {
    FB one("k", {}, {I32});
    one.ret({one.c.ins().iconst(I32, 1)});
    FB two("k", {}, {I32});
    two.ret({two.c.ins().iconst(I32, 2)});
    FB caller("c", {}, {I32});
    FuncRef fk = caller.import("k", {}, {I32});
    caller.ret({caller.call(fk, {})[0]});
    Interpreter interp;
    interp.add_function(*one.f);
    interp.add_function(*caller.f);
    EXPECT_EQ(ret1(run(interp, "c", {})), 1u);
    interp.add_function(*two.f);  // replaces %k; cached call sites re-resolve
    EXPECT_EQ(ret1(run(interp, "c", {})), 2u);
    // Change %k's constant in place, then invalidate.
    Inst first = *two.f->layout.first_inst(*two.f->layout.entry_block());
    two.f->dfg[first].imm = 3;
    EXPECT_EQ(ret1(run(interp, "c", {})), 2u) << "still the cached decode";
    interp.invalidate(*two.f);
    EXPECT_EQ(ret1(run(interp, "c", {})), 3u);
}

TEST(InterpLimits, RegistryChangesDuringARunAreSafe) {
    // %outer() = h(); k() — where the host function %h replaces %k and drops
    // %outer's own decoded form while %outer is running.
    FB k1("k", {}, {I32});
    k1.ret({k1.c.ins().iconst(I32, 1)});
    FB k2("k", {}, {I32});
    k2.ret({k2.c.ins().iconst(I32, 2)});
    FB outer("outer", {}, {I32});
    FuncRef fh = outer.import("h", {}, {}), fk = outer.import("k", {}, {I32});
    outer.call(fh, {});
    outer.ret({outer.call(fk, {})[0]});
    Interpreter interp;
    interp.add_function(*k1.f);
    interp.add_function(*outer.f);
    interp.add_host_function("h", make_sig({}, {}), [&](std::span<const DataValue>) {
        interp.add_function(*k2.f);
        interp.invalidate(*outer.f);
        for (int i = 0; i < 100; ++i) interp.add_host_function("filler" + std::to_string(i), make_sig({}, {}), nullptr);
        return std::vector<DataValue>{};
    });
    EXPECT_EQ(ret1(run(interp, "outer", {})), 2u);
    EXPECT_EQ(ret1(run(interp, "outer", {})), 2u);
}

}  // namespace
}  // namespace heron
