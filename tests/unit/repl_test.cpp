// ReplSession without a terminal: tab completion and prompts (the scripted
// transcripts in tests/repl/ cover definitions, calls and errors).
#include <gtest/gtest.h>

#include <algorithm>
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
