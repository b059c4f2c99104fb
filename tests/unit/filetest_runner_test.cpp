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
    std::string text = std::string("test structure\n") + kAddBody;
    std::string out;
    FileTestStats s = run(text, out);
    EXPECT_EQ(s.failed, 0u) << out;
    EXPECT_EQ(s.skipped, 1u) << out;
}

}  // namespace
}  // namespace heron::tools
