// Frame sizes on both ISAs: a frame over kMaxFrameSize is a compile error
// with its true size (computed without wrapping), one just below it
// compiles to a frame of that size whose prologue probes every page.
#include <gtest/gtest.h>

#include <string>

#include "codegen/context.h"
#include "codegen/ir/parser.h"
#include "codegen/machinst/emit_common.h"
#include "codegen/machinst/isa.h"

namespace heron {
namespace {

struct Compiled {
    std::string error;
    CompiledCode code;
};

Compiled compile(const std::string& isa_name, const std::string& text) {
    Compiled c;
    Diagnostics errs;
    auto fs = parse_functions(text, errs);
    EXPECT_TRUE(errs.empty()) << (errs.empty() ? "" : errs[0].format("text"));
    if (fs.size() != 1) {
        c.error = "expected one function";
        return c;
    }
    CompileOptions opts;
    opts.check_regalloc = true;
    c.error = error_text(Context(isa_by_name(isa_name), opts).compile(*fs[0], c.code));
    return c;
}

/// A function storing to each slot of `sizes` (one explicit_slot each).
std::string with_slots(std::initializer_list<uint64_t> sizes) {
    std::string slots, body;
    int k = 0;
    for (uint64_t s : sizes) {
        slots += "    ss" + std::to_string(k) + " = explicit_slot " + std::to_string(s) + "\n";
        body += "    v" + std::to_string(10 + k) + " = stack_addr.i64 ss" + std::to_string(k) + "\n";
        body += "    store v0, v" + std::to_string(10 + k) + "\n";
        ++k;
    }
    return "function %f(i64) -> i64 {\n" + slots + "block0(v0: i64):\n" + body + "    return v0\n}\n";
}

class FrameLimit : public ::testing::TestWithParam<std::string> {};

TEST_P(FrameLimit, OneSlotOf4GiBIsAnErrorNotAnEmptyFrame) {
    Compiled c = compile(GetParam(), with_slots({4294967295u}));
    // 4294967295 bytes after the 8-aligned start, rounded up to 16.
    EXPECT_NE(c.error.find("frame of 429496"), std::string::npos) << c.error;
    EXPECT_NE(c.error.find("is larger than the limit of " + std::to_string(kMaxFrameSize)), std::string::npos)
        << c.error;
}

TEST_P(FrameLimit, TwoSlotsWhoseSumWrapsAreAnError) {
    Compiled c = compile(GetParam(), with_slots({3000000000u, 3000000000u}));
    EXPECT_NE(c.error.find("frame of 6000000"), std::string::npos) << c.error;
}

TEST_P(FrameLimit, JustOverTheLimitIsAnError) {
    Compiled c = compile(GetParam(), with_slots({kMaxFrameSize + 1}));
    EXPECT_NE(c.error.find("is larger than the limit"), std::string::npos) << c.error;
}

TEST_P(FrameLimit, JustBelowTheLimitIsAFrameOfThatSize) {
    const uint64_t slot = kMaxFrameSize - 4096;
    Compiled c = compile(GetParam(), with_slots({slot}));
    ASSERT_EQ(c.error, "");
    EXPECT_GE(c.code.frame_size, slot);
    EXPECT_LE(c.code.frame_size, kMaxFrameSize);
}

INSTANTIATE_TEST_SUITE_P(Isas, FrameLimit, ::testing::Values("x86_64", "aarch64"));

}  // namespace
}  // namespace heron
