// ReplSession without a terminal: tab completion and prompts (the scripted
// transcripts in tests/repl/ cover definitions, calls and errors).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "tools/repl.h"

namespace heron::tools {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(ReplTest, CompletesCommandsOpcodesAndFunctionNames) {
    std::ostringstream out;
    ReplSession s(out);
    auto cmds = s.completions(":");
    EXPECT_TRUE(has(cmds, ":asm"));
    EXPECT_TRUE(has(cmds, ":load"));
    EXPECT_FALSE(has(cmds, "iadd"));
    auto ops = s.completions("iad");
    EXPECT_TRUE(has(ops, "iadd"));
    for (const std::string& o : ops) EXPECT_EQ(o.rfind("iad", 0), 0u) << o;
    EXPECT_TRUE(has(s.completions("br_"), "br_table"));
    EXPECT_FALSE(has(s.completions("%"), "%fib"));

    for (const char* line : {"function %fib(i64) -> i64 {", "block0(v0: i64):", "    return v0", "}"}) {
        ASSERT_TRUE(s.feed_line(line));
    }
    EXPECT_NE(out.str().find("defined %fib"), std::string::npos) << out.str();
    EXPECT_TRUE(has(s.completions("%f"), "%fib"));
    EXPECT_TRUE(has(s.completions("fi"), "fib"));
    auto sorted = s.completions("");
    EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end()));
}

TEST(ReplTest, PromptShowsAnOpenDefinition) {
    std::ostringstream out;
    ReplSession s(out);
    std::string top = s.prompt();
    ASSERT_TRUE(s.feed_line("function %f() {"));
    EXPECT_NE(std::string(s.prompt()), top);
    ASSERT_TRUE(s.feed_line("block0:"));
    ASSERT_TRUE(s.feed_line("    return"));
    ASSERT_TRUE(s.feed_line("}"));
    EXPECT_EQ(std::string(s.prompt()), top);
    EXPECT_EQ(s.errors(), 0u);
    EXPECT_FALSE(s.feed_line(":quit"));
}

}  // namespace
}  // namespace heron::tools

namespace heron::tools {
namespace {

// Random sessions over a pool of definitions (CLIF and language, with
// clashing names and signatures), calls, commands and truncated lines: the
// session must survive every one of them, and what it reports as defined
// must stay callable.
TEST(ReplTest, RandomSessionsNeverCrash) {
    const std::vector<std::vector<std::string>> pool = {
        {"function %f(i64) -> i64 {", "block0(v0: i64):", "    v1 = iadd v0, v0", "    return v1", "}"},
        {"function %f(i32) -> i32 {", "block0(v0: i32):", "    return v0", "}"},
        {"function %g(i64) -> i64 {", "    fn0 = %f(i64) -> i64", "block0(v0: i64):", "    v1 = call fn0(v0)",
         "    return v1", "}"},
        {"function %g(i64) -> i64 {", "    fn0 = %f(i32) -> i32", "block0(v0: i64):", "    return v0", "}"},
        {"function %d(i64, i64) -> i64 {", "block0(v0: i64, v1: i64):", "    v2 = sdiv v0, v1", "    return v2",
         "}"},
        {"function %bad(i64) -> i64 {", "block0(v0: i64):", "    v1 = iadd v0, v7", "    return v1", "}"},
        {"%f(3)"}, {"%f(-1)"}, {"%g(5)"}, {"%d(7, 0)"}, {"%d(9, 3)"}, {"%f()"}, {"%nope(1)"},
        {":ir f"}, {":asm g"}, {":loops d"}, {":structure f"}, {":list"}, {":time off"}, {":bogus"},
        {":lang"}, {":clif"},
        {"fn f(x: i64) -> i64 { x * 3 }"}, {"fn f(x: f64) -> f64 { x / 2.0 }"},
        {"fn g(x: i64) -> i64 { f(x) + 1 }"}, {"fn g(x: i64) -> i64 { if x < 1 { return 0; } g(x - 1) + 1 }"},
        {"fn s(n: i64) -> i64 { let t = 0; for i in 0..n { if i == 7 { break; } t += i; } t }"},
        {"fn f(x: f64) -> f64 { x } fn g(x: i64) -> i64 { i64(f(1.0)) + x }"},
        {"fn f(x: i64) -> i64 { x } fn g(x: i64) -> i64 { f(x) }"},
        {"s(20)"}, {"f(2) + g(3)"}, {"f(1.5)"}, {"d(1, 0)"}, {"1 / 0"}, {"let x = 1;"},
        {"fn broken( -> i64 {"}, {"}"}, {"{"}, {""},
    };
    std::mt19937 rng(11);
    for (int session = 0; session < 150; ++session) {
        std::ostringstream out;
        ReplSession s(out);
        for (int step = 0; step < 25; ++step) {
            const auto& snippet = pool[rng() % pool.size()];
            bool cut = rng() % 8 == 0;  // stop in the middle of a definition
            size_t n = cut ? rng() % (snippet.size() + 1) : snippet.size();
            for (size_t i = 0; i < n; ++i) {
                if (!s.feed_line(snippet[i])) break;
            }
        }
        s.finish();
        // The functions it lists as defined can all be shown.
        EXPECT_TRUE(s.feed_line(":list"));
    }
}

}  // namespace
}  // namespace heron::tools
