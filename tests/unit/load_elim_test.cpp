// load-elim and dead-stores (codegen/opt/load_elim.h, dead_stores.h)
// against the reference interpreter:
// random sequences of loads and stores of every width over two slots,
// reached through static addresses, dynamic ones (an iadd of a variable
// index) and, for the slot whose address escapes, a pointer loaded back
// from memory (another value for the same address). The function before
// and after each pass must return the same for every index; each pass must
// have removed loads (stores) somewhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/ir/printer.h"
#include "codegen/opt/pass_manager.h"
#include "interp_test_util.h"

namespace heron::test {
namespace {

constexpr Type kTypes[] = {types::I8, types::I16, types::I32, types::I64};

/// One random function of (index, value): ss0 (24 bytes) holds data in
/// bytes 0..15 and the address of ss1 (16 bytes) at 16, so ss1 escapes.
std::unique_ptr<Function> random_function(uint64_t seed) {
    return build_function("f", {types::I64, types::I64}, [seed](FuncCursor& c, const std::vector<Value>& ps) {
        Rng r(seed);
        StackSlotData d0, d1;
        d0.size = 24;
        d0.align = 8;
        d1.size = 16;
        d1.align = 8;
        const StackSlot ss0 = c.func.create_stack_slot(d0), ss1 = c.func.create_stack_slot(d1);
        const MemFlags none;
        const Value zero = c.ins().iconst(types::I64, 0);
        const Value a0 = c.ins().stack_addr(types::I64, ss0);
        const Value b0 = c.ins().stack_addr(types::I64, ss1);
        for (int32_t off : {0, 8}) {
            c.ins().store(none, zero, a0, off);
            c.ins().store(none, zero, b0, off);
        }
        const Value idx = emit(c, Opcode::Urem, types::I64, {ps[0], c.ins().iconst(types::I64, 9)})[0];
        const Value ad = emit(c, Opcode::Iadd, types::I64, {a0, idx})[0];
        // The pointer goes to memory and comes back after a store that
        // makes it unknown: a second value for ss1's address.
        c.ins().store(none, b0, a0, 16);
        c.ins().store(none, ps[1], ad);
        const Value bp = c.ins().load(types::I64, none, a0, 16);
        const Value bd = emit(c, Opcode::Iadd, types::I64, {bp, idx})[0];
        const Value a4 = c.ins().stack_addr(types::I64, ss0, 4);
        struct Place {
            Value addr;
            int32_t max_offset;  // 0 or 4: the access stays inside its slot
        };
        const Place places[] = {{a0, 4}, {a4, 4}, {ad, 0}, {b0, 4}, {bp, 4}, {bd, 0}};
        Value acc = zero;
        for (int k = 0; k < 14; ++k) {
            const Place& p = places[r.next() % 6];
            const int32_t off = p.max_offset && (r.next() & 1) ? 4 : 0;
            const Type t = kTypes[r.next() % 4];
            if (r.next() % 5 < 3) {
                Value v = c.ins().load(t, none, p.addr, off);
                if (t != types::I64) v = emit(c, Opcode::Uextend, types::I64, {v})[0];
                acc = emit(c, Opcode::Iadd, types::I64, {emit(c, Opcode::Imul, types::I64, {acc, c.ins().iconst(types::I64, 31)})[0], v})[0];
            } else {
                Value v = emit(c, Opcode::Iadd, types::I64, {ps[1], c.ins().iconst(types::I64, k)})[0];
                if (t != types::I64) v = emit(c, Opcode::Ireduce, t, {v})[0];
                c.ins().store(none, v, p.addr, off);
            }
        }
        return std::vector<Value>{acc};
    });
}

size_t count(const Function& f, const std::string& what) {
    const std::string text = print_function(f);
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

/// Runs `pipeline` on the random functions; returns how many `what` it
/// removed in all.
size_t check_pipeline(const char* pipeline, const std::string& what) {
    PassManager pm;
    EXPECT_FALSE(pm.add_pipeline(pipeline));
    size_t removed = 0;
    for (uint64_t seed = 1; seed <= 3000; ++seed) {
        std::unique_ptr<Function> orig = random_function(seed), opt = random_function(seed);
        if (auto err = pm.run(*opt)) {
            ADD_FAILURE() << *err;
            return 0;
        }
        removed += count(*orig, what) - count(*opt, what);
        Interpreter a, b;
        a.add_function(*orig);
        b.add_function(*opt);
        for (uint64_t i = 0; i < 9; ++i) {
            const DataValue args[2] = {DataValue(types::I64, i), DataValue(types::I64, 0x0102030405060708ull * (seed | 1))};
            InterpOutcome ra = a.call(*orig, args), rb = b.call(*opt, args);
            EXPECT_EQ(ra.kind, InterpOutcome::Kind::Return) << ra.message << "\n" << print_function(*orig);
            EXPECT_EQ(rb.kind, InterpOutcome::Kind::Return) << rb.message;
            if (ra.kind != InterpOutcome::Kind::Return || rb.kind != InterpOutcome::Kind::Return) return 0;
            if (ra.values.at(0).bits != rb.values.at(0).bits) {
                ADD_FAILURE() << pipeline << ": seed " << seed << " index " << i << "\n"
                              << print_function(*orig) << print_function(*opt);
                return 0;
            }
        }
    }
    return removed;
}

// The sequences repeat places often: each pass must have had work.
TEST(LoadElim, RandomAccessSequencesAgreeWithTheInterpreter) {
    EXPECT_GT(check_pipeline("load-elim", "= load"), 1000u);
}
TEST(DeadStores, RandomAccessSequencesAgreeWithTheInterpreter) {
    EXPECT_GT(check_pipeline("dead-stores", "store "), 1000u);
    EXPECT_GT(check_pipeline("load-elim,dead-stores", "store "), 1000u);
}

}  // namespace
}  // namespace heron::test
