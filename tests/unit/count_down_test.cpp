// count-down (codegen/opt/count_down.h): random counted loops keep their
// results under the interpreter (inputs at the type's edges, empty ranges,
// steps above 1, live-out header parameters, breaks), and the machine code of
// a counted loop branches on its counter's own decrement: no compare in the
// loop on x86-64 (`sub` + `jne`), `sub` + `cbnz` on AArch64; a constant
// non-empty range has no entry guard; the back edge's moves sit at the top
// of the loop (block_order.h) so an iteration is one conditional branch.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/context.h"
#include "codegen/interp/interpreter.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/machinst/isa.h"
#include "codegen/opt/count_down.h"
#include "codegen/opt/loop_form.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/pipeline.h"
#include "codegen/verifier/verifier.h"
#include "disasm_test_util.h"

namespace heron {
namespace {

// --- random counted loops ------------------------------------------------------

struct LoopCase {
    std::string text;           // one function %f(a, b, x) -> i64
    unsigned bits = 64;
    bool is_signed = true;
    bool const_init = false, const_bound = false, inclusive = false;
    int64_t init = 0, bound = 0;  // the constants, when constant
};

std::string type_name(unsigned bits) { return "i" + std::to_string(bits); }

int64_t wrap(__int128 v, unsigned bits, bool is_signed) {
    const unsigned __int128 m = (static_cast<unsigned __int128>(1) << bits) - 1;
    unsigned __int128 u = static_cast<unsigned __int128>(v) & m;
    if (is_signed && (u >> (bits - 1)) & 1) return static_cast<int64_t>(static_cast<__int128>(u) - (static_cast<__int128>(1) << bits));
    return static_cast<int64_t>(static_cast<uint64_t>(u));
}

__int128 type_min(unsigned bits, bool is_signed) { return is_signed ? -(static_cast<__int128>(1) << (bits - 1)) : 0; }
__int128 type_max(unsigned bits, bool is_signed) {
    return is_signed ? (static_cast<__int128>(1) << (bits - 1)) - 1 : (static_cast<__int128>(1) << bits) - 1;
}

/// A counted loop `i from a by s while i cond b` (both polarities, either
/// operand order) whose body hashes a carried value; optionally a break
/// when the hash's low bits match x, and the carried value read after the
/// loop straight from the header parameter.
LoopCase random_loop(std::mt19937_64& rng) {
    LoopCase c;
    const unsigned widths[] = {8, 16, 32, 64};
    c.bits = widths[rng() % 4];
    c.is_signed = rng() % 2;
    const bool inclusive = c.inclusive = rng() % 3 == 0;
    const uint64_t steps[] = {1, 1, 1, 2, 3, 4, 5, 7};
    const uint64_t step = steps[rng() % 8];
    // The recognizer needs a constant bound for `<=` and for steps > 1.
    c.const_bound = inclusive || step > 1 || rng() % 3 == 0;
    c.const_init = rng() % 3 == 0;
    const __int128 lo = type_min(c.bits, c.is_signed), hi = type_max(c.bits, c.is_signed);
    if (c.const_bound) {
        // Near an edge or zero, and within what the recognizer accepts.
        const __int128 top = hi - static_cast<__int128>(step) + (inclusive ? 0 : 1);
        const __int128 picks[] = {top, top - 1, lo, lo + 1, 0, 5, top - 40};
        c.bound = static_cast<int64_t>(std::max(lo, std::min(top, picks[rng() % 7])));
    }
    if (c.const_init) {
        const __int128 base = c.const_bound ? c.bound : 0;
        c.init = wrap(base - static_cast<__int128>(rng() % 60) + 10, c.bits, c.is_signed);
    }
    const std::string t = type_name(c.bits);
    std::string cc = c.is_signed ? (inclusive ? "sle" : "slt") : (inclusive ? "ule" : "ult");
    const bool mirrored = rng() % 2, exit_on_true = rng() % 2;
    const bool brk = rng() % 3 == 0, live_out = rng() % 2;
    static const std::map<std::string, std::string> swapped = {{"slt", "sgt"}, {"sle", "sge"}, {"ult", "ugt"}, {"ule", "uge"}};
    static const std::map<std::string, std::string> inverse = {{"slt", "sge"}, {"sle", "sgt"}, {"ult", "uge"}, {"ule", "ugt"},
                                                               {"sgt", "sle"}, {"sge", "slt"}, {"ugt", "ule"}, {"uge", "ult"}};
    if (mirrored) cc = swapped.at(cc);
    if (exit_on_true) cc = inverse.at(cc);
    std::ostringstream o;
    o << "function %f(" << t << ", " << t << ", i64) -> i64 {\n"
      << "block0(v0: " << t << ", v1: " << t << ", v2: i64):\n"
      << "    v3 = iconst.i64 0\n"
      << "    v4 = iconst." << t << " " << step << "\n"
      << "    v5 = iconst.i64 31\n"
      << "    v20 = iconst." << t << " " << c.init << "\n"
      << "    v21 = iconst." << t << " " << c.bound << "\n"
      << "    jump block1(" << (c.const_init ? "v20" : "v0") << ", v3)\n"
      << "block1(v6: " << t << ", v7: i64):\n";
    const std::string b = c.const_bound ? "v21" : "v1";
    o << "    v8 = icmp " << cc << " " << (mirrored ? b + ", v6" : "v6, " + b) << "\n";
    const std::string exit_dest = live_out ? "block3" : "block3(v7)";
    o << "    brif v8, " << (exit_on_true ? exit_dest + ", block2" : "block2, " + exit_dest) << "\n"
      << "block2:\n"
      << "    v9 = imul v7, v5\n"
      << "    v10 = iadd v9, v2\n";
    if (brk) {
        o << "    v11 = band v10, v5\n"
          << "    v12 = icmp eq v11, v3\n"
          << "    brif v12, block4, block5\n"
          << "block5:\n";
    }
    o << "    v13 = iadd v6, v4\n"
      << "    jump block1(v13, v10)\n";
    if (live_out) {
        o << "block3:\n    return v7\n";
    } else {
        o << "block3(v14: i64):\n    return v14\n";
    }
    if (brk) o << "block4:\n    v15 = iconst.i64 1000\n    v16 = iadd v10, v15\n    return v16\n";
    o << "}\n";
    c.text = o.str();
    return c;
}

/// Inputs with small ranges from all over the type, its edges included.
std::vector<DataValue> random_inputs(std::mt19937_64& rng, const LoopCase& c) {
    const Type t = c.bits == 8 ? types::I8 : c.bits == 16 ? types::I16 : c.bits == 32 ? types::I32 : types::I64;
    const __int128 lo = type_min(c.bits, c.is_signed), hi = type_max(c.bits, c.is_signed);
    const __int128 picks[] = {lo, hi, 0, -1, lo + 3, hi - 3, static_cast<__int128>(rng() % 1000) - 500};
    const __int128 a = picks[rng() % 7] + static_cast<__int128>(rng() % 5) - 2;
    const __int128 b = rng() % 4 == 0 ? picks[rng() % 7] : a + static_cast<__int128>(rng() % 400) - 40;
    auto bits_of = [&](__int128 v) { return static_cast<uint64_t>(wrap(v, c.bits, c.is_signed)); };
    return {DataValue(t, bits_of(a)), DataValue(t, bits_of(b)), DataValue::i64(static_cast<int64_t>(rng() % 64))};
}

struct Outcome {
    InterpOutcome::Kind kind;
    std::vector<DataValue> values;
    bool operator==(const Outcome& o) const { return kind == o.kind && values == o.values; }
};

Outcome run(const Function& f, const std::vector<DataValue>& args) {
    Interpreter interp;
    interp.set_fuel(200000);
    interp.add_function(f);
    InterpOutcome r = interp.call(f, args);
    return {r.kind, r.kind == InterpOutcome::Kind::Return ? r.values : std::vector<DataValue>{}};
}

TEST(CountDownTest, RandomCountedLoopsKeepTheirResults) {
    std::mt19937_64 rng(20261130);
    uint32_t rewritten = 0, guarded = 0, compared = 0, ran_out = 0, skipped_empty = 0;
    for (int n = 0; n < 600; ++n) {
        const LoopCase c = random_loop(rng);
        Diagnostics errs;
        auto fs = parse_functions(c.text, errs);
        ASSERT_TRUE(errs.empty() && fs.size() == 1) << c.text << (errs.empty() ? "" : errs[0].format("text"));
        Function& f = *fs[0];
        const Function original = f;
        PassContext ctx;
        ctx.bind(f);
        LoopFormStats stats;
        std::string error;
        ASSERT_TRUE(form_loops(f, ctx, stats, error)) << error;
        const uint32_t k = count_down_loops(f, ctx);
        rewritten += k;
        // Only a constant empty range is left as it is.
        bool empty = false;
        if (c.const_init && c.const_bound) {
            const uint64_t m = c.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << c.bits) - 1;
            const bool lt = c.is_signed ? c.init < c.bound : (static_cast<uint64_t>(c.init) & m) < (static_cast<uint64_t>(c.bound) & m);
            empty = c.inclusive ? !(lt || c.init == c.bound) : !lt;
        }
        EXPECT_EQ(k, empty ? 0u : 1u) << c.text;
        skipped_empty += empty;
        VerifierErrors verrs;
        ASSERT_TRUE(verify_function(f, verrs)) << format_verifier_errors(verrs) << c.text << print_function(f);
        const std::string after = print_function(f);
        if (k > 0) {
            // The loop's compare is gone; the guard's, if any, is the only one left.
            const std::string cmp = c.is_signed ? "icmp s" : "icmp u";
            EXPECT_EQ(after.find(cmp), after.rfind(cmp)) << after;
            guarded += after.find("brif v") < after.find("block1(");
        }
        for (int i = 0; i < 12; ++i) {
            const std::vector<DataValue> args = random_inputs(rng, c);
            const Outcome want = run(original, args);
            if (want.kind == InterpOutcome::Kind::OutOfFuel) {
                ++ran_out;
                continue;
            }
            EXPECT_EQ(run(f, args), want) << c.text << after << "a=" << args[0].bits << " b=" << args[1].bits;
            ++compared;
        }
    }
    // Every generated loop is counted, and its counter only counts.
    EXPECT_EQ(rewritten + skipped_empty, 600u);
    EXPECT_GT(guarded, 200u);
    EXPECT_GT(compared, 6000u);
    std::printf("count-down: %u loops rewritten (%u guarded, %u empty left), %u comparisons, %u inputs skipped "
                "(out of fuel)\n",
                rewritten, guarded, skipped_empty, compared, ran_out);
}

// --- machine code --------------------------------------------------------------

using Line = testing::AsmLine;

std::vector<Line> compile_at_speed(const std::string& isa_name, std::string_view text) {
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty() && fs.size() == 1);
    if (fs.size() != 1) return {};
    CompileOptions opts;
    opts.opt_level = OptLevel::Speed;
    opts.verify_passes = true;
    opts.check_regalloc = true;
    Context ctx(isa_by_name(isa_name), opts);
    CompiledCode code;
    EXPECT_EQ(error_text(ctx.compile(*fs[0], code)), "");
    return testing::disassemble_listing(isa_name, code).lines;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool is_branch(const std::string& isa, const std::string& t) {
    if (isa == "aarch64") {
        for (const char* m : {"b ", "b.", "cbz ", "cbnz ", "tbz ", "tbnz "}) {
            if (starts(t, m)) return true;
        }
        return false;
    }
    return t[0] == 'j';
}

bool is_jump(const std::string& isa, const std::string& t) { return starts(t, isa == "aarch64" ? "b " : "jmp "); }

/// The lines of the loop: from the target of the last backward branch (the
/// one that closes the loop) to that branch. Targets are labels ("block2")
/// or, for an edge block, offsets ("0x13").
std::vector<Line> loop_body(const std::string& isa, const std::vector<Line>& code, std::string& back_branch) {
    for (size_t i = code.size(); i-- > 0;) {
        const std::string& t = code[i].text;
        if (!is_branch(isa, t)) continue;
        const std::string target = t.substr(t.rfind(' ') + 1);
        for (size_t j = 0; j < i; ++j) {
            const bool hit = starts(target, "0x") ? code[j].offset == std::stoull(target, nullptr, 16)
                                                  : code[j].block == target;
            if (hit) {
                back_branch = t;
                return std::vector<Line>(code.begin() + static_cast<long>(j), code.begin() + static_cast<long>(i) + 1);
            }
        }
    }
    return {};
}

// A counted loop whose counter only counts, with a carried value that needs
// a move on the back edge (the product lands in another register).
constexpr const char* kSum = R"(
function %sum(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 0
    v3 = iconst.i64 1
    jump block1(v0, v2)
block1(v4: i64, v5: i64):
    v6 = icmp slt v4, v1
    brif v6, block2, block3
block2:
    v7 = imul v5, v5
    v8 = iadd v7, v1
    v9 = iadd v4, v3
    jump block1(v9, v8)
block3:
    return v5
})";

TEST(CountDownTest, LoopBranchesOnTheDecrement) {
    for (const char* isa : {"x86_64", "aarch64"}) {
        const std::vector<Line> code = compile_at_speed(isa, kSum);
        std::string back;
        const std::vector<Line> loop = loop_body(isa, code, back);
        ASSERT_GE(loop.size(), 3u) << isa;
        const std::string& before = loop[loop.size() - 2].text;
        for (const Line& l : loop) {
            EXPECT_FALSE(starts(l.text, "cmp") || starts(l.text, "test")) << isa << ": " << l.text << " in the loop";
        }
        uint32_t branches = 0, jumps = 0;
        for (const Line& l : loop) {
            branches += is_branch(isa, l.text);
            jumps += is_jump(isa, l.text);
        }
        if (isa == std::string("x86_64")) {
            EXPECT_TRUE(starts(back, "jne") || starts(back, "jnz")) << back;
            EXPECT_TRUE(starts(before, "sub ") && before.find(", 0x01") != std::string::npos) << before;
        } else {
            EXPECT_TRUE(starts(back, "cbnz ") || starts(back, "b.ne ")) << back;
            EXPECT_TRUE(starts(before, "sub") && before.find("#1") != std::string::npos) << before;
        }
        // The back edge's move sits at the loop's top: one branch per iteration.
        EXPECT_EQ(branches, 1u) << isa;
        EXPECT_EQ(jumps, 0u) << isa;
    }
}

// Constant bounds: the trip count is known non-empty, so the only
// conditional branch in the function is the loop's, and nothing compares.
TEST(CountDownTest, ConstantRangeHasNoGuard) {
    std::string text = kSum;
    text.replace(text.find("jump block1(v0, v2)"), 19, "v10 = iconst.i64 -5\n    jump block1(v10, v2)");
    text.replace(text.find("icmp slt v4, v1"), 15, "icmp slt v4, v3");
    for (const char* isa : {"x86_64", "aarch64"}) {
        const std::vector<Line> code = compile_at_speed(isa, text);
        uint32_t conditional = 0;
        for (const Line& l : code) {
            conditional += is_branch(isa, l.text) && !is_jump(isa, l.text);
            EXPECT_FALSE(starts(l.text, "cmp") || starts(l.text, "test")) << isa << ": " << l.text;
        }
        EXPECT_EQ(conditional, 1u) << isa;
    }
}

}  // namespace
}  // namespace heron
