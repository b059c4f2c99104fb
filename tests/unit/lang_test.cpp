// The small language's front end on input nobody wrote on purpose: mutated
// example programs must give an error with a location or functions that
// verify, never a crash; nesting beyond the limit is an error. (Programs
// with expected output are the ctest tests lang.*.)
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "codegen/verifier/verifier.h"
#include "tools/lang/codegen.h"
#include "tools/lang/parser.h"

namespace heron::lang {
namespace {

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Compiles `src`; on success every function must verify. Returns whether
/// it compiled.
bool compiles_to_valid_ir(const std::string& src, bool repl_input) {
    ParseResult p = repl_input ? parse_repl_input(src) : parse_program(src);
    if (p.error) {
        EXPECT_GT(p.error->loc.line, 0u) << p.error->message << "\n" << src;
        EXPECT_FALSE(p.error->message.empty());
        return false;
    }
    CodegenResult c = compile(p.program, {});
    if (c.error) {
        EXPECT_GT(c.error->loc.line, 0u) << c.error->message << "\n" << src;
        return false;
    }
    for (const CompiledFunction& f : c.fns) {
        VerifierErrors errs;
        EXPECT_TRUE(verify_function(*f.func, errs)) << format_verifier_errors(errs) << "\n" << src;
    }
    return true;
}

TEST(LangTest, ExamplesCompileToValidIr) {
    for (const char* name : {"fib.hn", "primes.hn", "interp.hn"}) {
        std::string src = read(std::string(HERON_SOURCE_DIR) + "/examples/" + name);
        ASSERT_FALSE(src.empty()) << name;
        EXPECT_TRUE(compiles_to_valid_ir(src, false)) << name;
    }
}

TEST(LangTest, MutatedProgramsNeverCrash) {
    const char* const pieces[] = {"{", "}", "(", ")", ";", ",", "=>", "..", "=", "+", "-", "*", "/", "%",
                                  "&&", "||", "!", "<", "==", "1", "2.5", "x", "i", "fn", "let", "if",
                                  "else", "while", "for", "in", "break", "continue", "return", "match",
                                  "_", "|", "i64", "f64", "print", " ", "\n", "@", "9999999999999999999999"};
    std::mt19937 rng(7);
    uint32_t compiled = 0, total = 0;
    for (const char* name : {"fib.hn", "primes.hn", "interp.hn"}) {
        const std::string base = read(std::string(HERON_SOURCE_DIR) + "/examples/" + name);
        ASSERT_FALSE(base.empty());
        for (int round = 0; round < 400; ++round) {
            std::string src = base;
            int edits = 1 + static_cast<int>(rng() % 3);
            for (int e = 0; e < edits; ++e) {
                size_t at = rng() % (src.size() + 1);
                switch (rng() % 3) {
                case 0: src.erase(at, 1 + rng() % 8); break;
                case 1: src.insert(at, pieces[rng() % std::size(pieces)]); break;
                default: src.insert(at, std::string(" ") + pieces[rng() % std::size(pieces)] + " "); break;
                }
            }
            ++total;
            if (compiles_to_valid_ir(src, round % 2 == 1)) ++compiled;
        }
    }
    // Some mutations keep the program valid (a deleted comment, an inserted
    // blank); most do not. Both kinds must have been exercised.
    EXPECT_GT(compiled, 0u);
    EXPECT_LT(compiled, total);
}

TEST(LangTest, DeepNestingIsAnErrorNotACrash) {
    const std::string deep[] = {
        "fn main() -> i64 { " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }",
        "fn main() -> i64 { " + std::string(100000, '-') + "1 }",
        "fn main() -> i64 { " + std::string(100000, '{') + std::string(100000, '}') + " 0 }",
    };
    std::string chain = "fn main() -> i64 { 1";
    for (int i = 0; i < 100000; ++i) chain += " + 1";
    chain += " }";
    for (const std::string& src : {deep[0], deep[1], deep[2], chain}) {
        ParseResult p = parse_program(src);
        ASSERT_TRUE(p.error.has_value());
        EXPECT_NE(p.error->message.find("nested too deeply"), std::string::npos) << p.error->message;
        EXPECT_EQ(p.error->loc.line, 1u);
    }
    // Just under the limit compiles.
    const uint32_t n = kMaxNesting - 8;
    std::string ok = "fn main() -> i64 { " + std::string(n, '(') + "1" + std::string(n, ')') + " }";
    EXPECT_TRUE(compiles_to_valid_ir(ok, false));
}

TEST(LangTest, ErrorsNameLineAndColumn) {
    ParseResult p = parse_program("fn main() -> i64 {\n    let x = 1;\n    x + y\n}\n");
    ASSERT_FALSE(p.error);
    CodegenResult c = compile(p.program, {});
    ASSERT_TRUE(c.error.has_value());
    EXPECT_EQ(c.error->loc.line, 3u);
    EXPECT_EQ(c.error->loc.col, 9u);
    EXPECT_EQ(c.error->message, "unknown variable 'y'");
    EXPECT_TRUE(c.fns.empty());
}

TEST(LangTest, EnvironmentFunctionsAreCallable) {
    Environment env;
    env["twice"] = signature_of({ValType::I64}, ValType::I64);
    ParseResult p = parse_repl_input("twice(20) + 2");
    ASSERT_FALSE(p.error);
    CodegenResult c = compile(p.program, env);
    ASSERT_FALSE(c.error) << c.error->message;
    ASSERT_EQ(c.fns.size(), 1u);
    EXPECT_TRUE(c.has_stmts && c.has_value);
    EXPECT_EQ(c.fns[0].func->name.name, "__lang_expr_i64");
    // Without it in the environment the call is an error.
    CodegenResult missing = compile(parse_repl_input("twice(20)").program, {});
    ASSERT_TRUE(missing.error.has_value());
    EXPECT_EQ(missing.error->message, "unknown function 'twice'");
}

}  // namespace
}  // namespace heron::lang
