// Tests of the `heron test` runner: counting, failure lines, recovery.
#include <gtest/gtest.h>

#include "tools/filetest.h"

namespace heron::tools {
namespace {

FileTestStats run(std::string_view text, std::string& out, uint64_t fuel = 1'000'000) {
    FileTestOptions opts;
    opts.fuel = fuel;
    return run_file_test("t.clif", text, opts, out);
}

constexpr const char* kAddBody = R"(function %add(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = iadd v0, v1
    return v2
}
; run: %add(1, 2) == 3
; run: %add(-1, 1) == 0
; run: %add(1, 1) != 3
)";
const std::string kAdd = std::string("test interpret\n") + kAddBody;

TEST(FileTestRunner, CountsPassingDirectives) {
    std::string out;
    FileTestStats s = run(kAdd, out);
    EXPECT_EQ(s.passed, 3u) << out;
    EXPECT_EQ(s.failed, 0u) << out;
    EXPECT_EQ(out, "");
}

TEST(FileTestRunner, WrongExpectationFailsWithLineAndActualValue) {
    std::string text = kAdd + "; run: %add(2, 2) == 5\n";
    std::string out;
    FileTestStats s = run(text, out);
    EXPECT_EQ(s.passed, 3u);
    EXPECT_EQ(s.failed, 1u);
    EXPECT_NE(out.find("t.clif:10:"), std::string::npos) << out;
    EXPECT_NE(out.find("got 4"), std::string::npos) << out;
}

TEST(FileTestRunner, MalformedFileFailsWithDiagnostics) {
    std::string out;
    FileTestStats s = run("test interpret\nfunction %f() -> i32 {\nblock0:\n    v0 = iconst.i32 zzz\n}\n", out);
    EXPECT_EQ(s.failed, 1u);
    EXPECT_EQ(s.passed, 0u);
    EXPECT_NE(out.find("t.clif:4:"), std::string::npos) << out;
}

TEST(FileTestRunner, TrapsAreReportedNotFatal) {
    std::string text = R"(test interpret
function %div(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = udiv v0, v1
    return v2
}
; run: %div(7, 0) traps int_divz
; run: %div(7, 0) == 1
; run: %div(7, 2) == 3
)";
    std::string out;
    FileTestStats s = run(text, out);
    EXPECT_EQ(s.passed, 2u) << out;
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("t.clif:8:"), std::string::npos) << out;
    EXPECT_NE(out.find("int_divz"), std::string::npos) << out;
}

TEST(FileTestRunner, RunawayLoopEndsOnFuel) {
    std::string text = R"(test interpret
function %spin() -> i32 {
block0:
    jump block1
block1:
    jump block1
}
; run: %spin() == 0
)";
    std::string out;
    FileTestStats s = run(text, out, 10'000);
    EXPECT_EQ(s.failed, 1u);
    EXPECT_NE(out.find("fuel"), std::string::npos) << out;
}

TEST(FileTestRunner, VerifierAnnotationsMustMatch) {
    std::string good = R"(test verifier
function %f(i32) -> i64 {
block0(v0: i32):
    return v0 ; error: return
}
)";
    std::string out;
    FileTestStats s = run(good, out);
    EXPECT_EQ(s.passed, 1u) << out;
    EXPECT_EQ(s.failed, 0u) << out;

    std::string wrong = R"(test verifier
function %f(i32) -> i64 {
block0(v0: i32):
    return v0 ; error: something else entirely
}
)";
    out.clear();
    s = run(wrong, out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("t.clif:4: expected verifier error containing 'something else entirely'"), std::string::npos)
        << out;

    std::string unannotated = R"(test verifier
function %f(i32) -> i64 {
block0(v0: i32):
    return v0
}
)";
    out.clear();
    s = run(unannotated, out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("unexpected verifier error"), std::string::npos) << out;
}

TEST(FileTestRunner, InvalidFunctionFailsRunFile) {
    std::string text = R"(test interpret
function %f(i32) -> i64 {
block0(v0: i32):
    return v0
}
; run: %f(1) == 1
)";
    std::string out;
    FileTestStats s = run(text, out);
    EXPECT_GE(s.failed, 1u);
    EXPECT_EQ(s.passed, 0u);
    EXPECT_NE(out.find("verifier"), std::string::npos) << out;
}

TEST(FileTestRunner, CatRoundTrips) {
    std::string text = std::string("test cat\n") + kAddBody;
    std::string out;
    FileTestStats s = run(text, out);
    EXPECT_EQ(s.passed, 1u) << out;
    EXPECT_EQ(s.failed, 0u) << out;
}

TEST(FileTestRunner, UnknownKindIsSkippedNotFailed) {
    std::string text = std::string("test legalizer\n") + kAddBody;
    std::string out;
    FileTestStats s = run(text, out);
    EXPECT_EQ(s.failed, 0u) << out;
    EXPECT_EQ(s.skipped, 1u) << out;
}

constexpr const char* kLoopBody = R"(function %count(i32) -> i32 {
block0(v0: i32):
    jump block1(v0)
block1(v1: i32):
    brif v1, block2, block3
block2:
    v2 = iconst.i32 1
    v3 = isub v1, v2
    jump block1(v3)
block3:
    return v1
}
)";

const char* const kLoopLines[] = {"block0:", "v1 := v0", "loop L1 {  ; conditional", "block1:", "if v1 {", "block2:",
                                  "v2 = iconst.i32 1", "v3 = isub v1, v2", "v1 := v3", "continue L1",
                                  "}", "break L1", "}", "block3:", "return v1"};

std::string structure_file(int wrong_line, bool drop_last) {
    std::string text = std::string("test structure\n") + kLoopBody;
    const int n = static_cast<int>(std::size(kLoopLines)) - (drop_last ? 1 : 0);
    for (int i = 0; i < n; ++i) {
        text += std::string("; structure:   ") + (i == wrong_line ? "break L2" : kLoopLines[i]) + "\n";
    }
    return text;
}

TEST(FileTestRunner, StructureKindMatchesEveryLine) {
    std::string out;
    FileTestStats s = run(structure_file(-1, false), out);
    EXPECT_EQ(s.passed, 1u) << out;
    EXPECT_EQ(s.failed, 0u) << out;
}

TEST(FileTestRunner, StructureKindReportsTheFirstWrongLine) {
    std::string out;
    FileTestStats s = run(structure_file(11, false), out);
    EXPECT_EQ(s.failed, 1u) << out;
    // Line 1 is the test line, 2..12 the function, then the annotations.
    EXPECT_NE(out.find("t.clif:25: structure: expected 'break L2', got 'break L1'"), std::string::npos) << out;
}

TEST(FileTestRunner, StructureKindFailsOnMissingLines) {
    std::string out;
    FileTestStats s = run(structure_file(-1, true), out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("unexpected further line 'return v1'"), std::string::npos) << out;
}

TEST(FileTestRunner, StructureKindRunsDirectivesOnBothLoweredForms) {
    std::string out;
    const std::string text = std::string("test structure\n") + kLoopBody;
    FileTestStats s = run(text + "; run: %count(3) == 0\n", out);
    EXPECT_EQ(s.passed, 2u) << out;  // with and without break
    EXPECT_EQ(s.failed, 0u) << out;
    s = run(text + "; run: %count(3) == 1\n", out);
    EXPECT_EQ(s.failed, 2u) << out;
}

TEST(FileTestRunner, StructureKindNeedsAnnotations) {
    std::string out;
    FileTestStats s = run(std::string("test structure\n") + kLoopBody, out);
    EXPECT_EQ(s.failed, 1u) << out;
}

TEST(FileTestRunner, StructureKindChecksIrreducibleErrors) {
    const std::string irreducible = R"(test structure
function %irr(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2
block1:
    jump block2
block2:
    brif v0, block1, block3
block3:
    return v0
}
)";
    std::string out;
    FileTestStats s = run(irreducible + "; error: irreducible control flow: edge block2 -> block1\n", out);
    EXPECT_EQ(s.passed, 1u) << out;
    EXPECT_EQ(s.failed, 0u) << out;
    s = run(irreducible + "; error: edge block1 -> block2\n", out);
    EXPECT_EQ(s.failed, 1u) << out;
}

}  // namespace
}  // namespace heron::tools
