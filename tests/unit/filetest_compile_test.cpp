// `test compile` in the file-test runner (tools/filetest_compile.cpp): a
// wrong expectation fails with a diff naming the function and the line, a
// blessed file is rewritten and then passes, target lines are checked, and
// a folder the runner cannot read is a failure (issue 30).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "tools/filetest.h"

namespace heron::tools {
namespace {

constexpr const char* kAdd = R"(function %add(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
)";

FileTestStats run(std::string_view text, std::string& out) {
    return run_file_test("t.clif", text, FileTestOptions{}, out);
}

TEST(FileTestCompile, ChecksMatchTheDisassemblyForEitherTarget) {
    std::string out;
    FileTestStats s = run(std::string("test compile\ntarget x86_64\n") + kAdd +
                              "; check: block0:\n; nextln: mov rax, rdi\n; nextln: add rax, rsi\n; not: push\n",
                          out);
    EXPECT_EQ(s.failed, 0u) << out;
    EXPECT_EQ(s.passed, 4u) << out;
    s = run(std::string("test compile\ntarget aarch64\n") + kAdd + "; check: add x0, x0, x1\n; nextln: ldp x29, x30\n",
            out);
    EXPECT_EQ(s.failed, 0u) << out;
    EXPECT_EQ(s.passed, 2u) << out;
}

TEST(FileTestCompile, AWrongCheckFailsNamingTheFunctionAndLine) {
    std::string out;
    FileTestStats s = run(std::string("test compile\ntarget x86_64\n") + kAdd + "; check: sub rax, rsi\n", out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("t.clif:8: %add (x86_64 disasm): check: 'sub rax, rsi' not found"), std::string::npos) << out;
}

TEST(FileTestCompile, VcodeIsSelectable) {
    std::string out;
    FileTestStats s = run(std::string("test compile vcode\ntarget x86_64\n") + kAdd +
                              "; check: args -> r0:p7, r1:p6\n; nextln: alu r0, r1 -> r2:reuse0\n",
                          out);
    EXPECT_EQ(s.failed, 0u) << out;
    EXPECT_EQ(s.passed, 2u) << out;
}

TEST(FileTestCompile, TheTargetLineFixesTheCpuFeatures) {
    // clz is lzcnt only when the target line says has_lzcnt, whatever the
    // host has.
    const std::string clz = "function %c(i32) -> i32 {\nblock0(v0: i32):\n    v1 = clz v0\n    return v1\n}\n";
    std::string out;
    EXPECT_EQ(run("test compile\ntarget x86_64 has_lzcnt\n" + clz + "; check: lzcnt ecx, edi\n", out).failed, 0u)
        << out;
    EXPECT_EQ(run("test compile\ntarget x86_64\n" + clz + "; check: bsr\n; not: lzcnt\n", out).failed, 0u) << out;
}

TEST(FileTestCompile, BadTargetLinesAreLocatedErrors) {
    std::string out;
    FileTestStats s = run(std::string("test compile\ntarget x86_64 has_avx9\n") + kAdd, out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("t.clif:2: compile: unknown x86_64 flag 'has_avx9'"), std::string::npos) << out;
    out.clear();
    s = run(std::string("test compile\n") + kAdd, out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("needs a `target` line"), std::string::npos) << out;
    out.clear();
    s = run(std::string("test compile precise\ntarget x86_64\ntarget aarch64\n") + kAdd, out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("t.clif:3: compile: `test compile precise` takes exactly one"), std::string::npos) << out;
    out.clear();
    s = run(std::string("test compile precise\ntest compile precise vcode\ntarget x86_64\n") + kAdd, out);
    EXPECT_EQ(s.failed, 2u) << out;  // once per line
    EXPECT_NE(out.find("more than one `test compile precise` line"), std::string::npos) << out;
}

TEST(FileTestCompile, ExpectedCompileErrorsMatch) {
    std::string params, names;
    for (int k = 0; k < 8200; ++k) {
        params += k ? ", i64" : "i64";
        names += (k ? ", v" : "v") + std::to_string(k) + ": i64";
    }
    const std::string f = "function %f(" + params + ") -> i64 tail {\nblock0(" + names + "):\n    return v0\n}\n";
    std::string out;
    FileTestStats s = run("test compile\ntarget x86_64\n" + f + "; error: 65552 bytes of stack arguments\n", out);
    EXPECT_EQ(s.failed, 0u) << out;
    EXPECT_EQ(s.passed, 1u) << out;
    s = run("test compile\ntarget x86_64\n" + f, out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_NE(out.find("t.clif:3: %f (x86_64 disasm): does not compile: tail-convention function"), std::string::npos)
        << out;
}

constexpr const char* kPreciseWrong = R"(test compile precise
target x86_64

function %add(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
; block0:
;   0000:  48 89 f8              mov rax, rdi
;   0003:  48 29 f0              sub rax, rsi
;   0006:  c3                    ret
;   0007:  cc                    int3

; run: %add(1, 2) == 3
)";

TEST(FileTestCompile, APreciseMismatchPrintsADiff) {
    std::string out;
    FileTestStats s = run(kPreciseWrong, out);
    EXPECT_EQ(s.failed, 1u) << out;
    EXPECT_EQ(s.passed, 0u) << out;
    EXPECT_NE(out.find("t.clif:9: %add (x86_64 disasm): the output differs"), std::string::npos) << out;
    EXPECT_NE(out.find("\n      0000:  48 89 f8              mov rax, rdi\n"), std::string::npos) << out;
    EXPECT_NE(out.find("\n  -   0003:  48 29 f0              sub rax, rsi\n"), std::string::npos) << out;
    EXPECT_NE(out.find("\n  +   0003:  48 01 f0              add rax, rsi\n"), std::string::npos) << out;
    EXPECT_NE(out.find("\n      0006:  c3                    ret\n"), std::string::npos) << out;
}

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// `heron test ARGS` with stdout captured.
int heron_test(const std::vector<std::string>& args, std::string& out) {
    std::stringstream capture;
    std::streambuf* old = std::cout.rdbuf(capture.rdbuf());
    int status = run_test_command(args);
    std::cout.rdbuf(old);
    out = capture.str();
    return status;
}

TEST(FileTestCompile, BlessingRewritesTheListingAndThenItPasses) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("heron-bless-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path file = dir / "add.clif";
    std::ofstream(file, std::ios::binary) << kPreciseWrong;
    std::string out;
    EXPECT_EQ(heron_test({file.string()}, out), 1) << out;
    ::setenv("HERON_TEST_BLESS", "1", 1);
    EXPECT_EQ(heron_test({file.string()}, out), 0) << out;
    ::unsetenv("HERON_TEST_BLESS");
    EXPECT_NE(out.find("precise listings rewritten"), std::string::npos) << out;
    const std::string blessed = read(file);
    // Only the listing changed: the header, the function and the run
    // directive after the blank line stay as they were.
    std::string want = kPreciseWrong;
    want.replace(want.find("48 29 f0              sub"), 25, "48 01 f0              add");
    EXPECT_EQ(blessed, want);
    EXPECT_EQ(heron_test({file.string()}, out), 0) << out;
    EXPECT_NE(out.find("1 passed, 0 failed"), std::string::npos) << out;
    fs::remove_all(dir);
}

TEST(FileTestCompile, BlessingAddsAMissingListing) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("heron-bless-new-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path file = dir / "a64.clif";
    std::ofstream(file, std::ios::binary) << "test compile precise vcode\ntarget aarch64\n" << kAdd;
    FileTestOptions bless;
    bless.bless = true;
    std::string out;
    EXPECT_EQ(run_file_test(file.string(), read(file), bless, out).failed, 0u) << out;
    const std::string blessed = read(file);
    EXPECT_NE(blessed.find("}\n; vblock0 (block0):\n;   0: args"), std::string::npos) << blessed;
    out.clear();
    FileTestStats s = run_file_test(file.string(), blessed, FileTestOptions{}, out);
    EXPECT_EQ(s.failed, 0u) << out;
    EXPECT_EQ(s.passed, 1u) << out;
    fs::remove_all(dir);
}

/// A temp folder with one passing file and a subfolder holding another.
std::filesystem::path folder_with_tests(const std::string& name) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "sub");
    const std::string file = std::string("test interpret\n") + kAdd + "; run: %add(1, 2) == 3\n";
    std::ofstream(dir / "a.clif") << file;
    std::ofstream(dir / "sub" / "b.clif") << file;
    return dir;
}

TEST(FileTestFolders, ADanglingLinkIsAFailureNamingIt) {
    namespace fs = std::filesystem;
    const fs::path dir = folder_with_tests("heron-dangling");
    fs::create_symlink(dir / "missing.clif", dir / "sub" / "gone.clif");
    std::string out;
    EXPECT_EQ(heron_test({dir.string()}, out), 1) << out;
    EXPECT_NE(out.find((dir / "sub" / "gone.clif").string() + ": dangling link"), std::string::npos) << out;
    EXPECT_NE(out.find("2 passed, 1 failed"), std::string::npos) << out;  // the rest still ran
    fs::remove_all(dir);
}

TEST(FileTestFolders, ALinkLoopIsAFailureNamingIt) {
    namespace fs = std::filesystem;
    const fs::path dir = folder_with_tests("heron-loop");
    fs::create_symlink(dir / "self", dir / "self");
    std::string out;
    EXPECT_EQ(heron_test({dir.string()}, out), 1) << out;
    EXPECT_NE(out.find((dir / "self").string() + ": dangling link: Too many levels of symbolic links"),
              std::string::npos)
        << out;
    fs::remove_all(dir);
}

TEST(FileTestFolders, AnUnreadableFolderIsAFailureNamingIt) {
    namespace fs = std::filesystem;
    if (::geteuid() == 0) GTEST_SKIP() << "root reads every folder";
    const fs::path dir = folder_with_tests("heron-unreadable");
    fs::permissions(dir / "sub", fs::perms::none);
    std::string out;
    const int status = heron_test({dir.string()}, out);
    fs::permissions(dir / "sub", fs::perms::owner_all);
    EXPECT_EQ(status, 1) << out;
    EXPECT_NE(out.find((dir / "sub").string() + ": cannot read the folder"), std::string::npos) << out;
    EXPECT_NE(out.find("1 passed, 1 failed"), std::string::npos) << out;
    fs::remove_all(dir);
}

TEST(FileTestFolders, LinksToFilesAreFollowedAndLinksToFoldersAreNot) {
    namespace fs = std::filesystem;
    const fs::path dir = folder_with_tests("heron-links");
    fs::create_symlink(dir / "a.clif", dir / "sub" / "c.clif");
    fs::create_directory_symlink(dir, dir / "sub" / "up");  // would loop forever if followed
    std::string out;
    EXPECT_EQ(heron_test({dir.string()}, out), 0) << out;
    EXPECT_NE(out.find("3 passed, 0 failed"), std::string::npos) << out;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace heron::tools
