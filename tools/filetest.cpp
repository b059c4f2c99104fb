// File-test runner: parse, verify, then apply each `test KIND` of the header
// to every function of the file.
//
//   interpret   run every `; run:` / `; print:` directive on the interpreter
//   run         the same on code compiled for the host by the JIT
//   verifier    each `; error: TEXT` must match a verifier error on its line,
//               and no error may land on an unannotated line
//   cat, print  the function must print, re-parse and print identically
//   the others  filetest_kinds.h (domtree, loops, structure, optimize,
//               compile)
#include "tools/filetest.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/run_command.h"
#include "codegen/machinst/isa.h"
#include "codegen/opt/pipeline.h"
#include "codegen/verifier/verifier.h"
#include "jit/jit_module.h"
#include "tools/filetest_kinds.h"
#include "tools/structure.h"

namespace heron::tools {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string first_word(std::string_view s) {
    s = trim(s);
    size_t end = s.find_first_of(" \t");
    return std::string(s.substr(0, end));
}

std::string join_values(const std::vector<DataValue>& vals) {
    if (vals.size() == 1) return vals[0].to_string();
    std::string out = "[";
    for (size_t i = 0; i < vals.size(); ++i) {
        if (i) out += ", ";
        out += vals[i].to_string();
    }
    return out + "]";
}

std::string describe_call(const RunCommand& cmd) {
    std::string out = "%" + cmd.func_name + "(";
    for (size_t i = 0; i < cmd.args.size(); ++i) {
        if (i) out += ", ";
        out += cmd.args[i].to_string();
    }
    return out + ")";
}

std::string describe_outcome(const InterpOutcome& r) {
    switch (r.kind) {
    case InterpOutcome::Kind::Return: return join_values(r.values);
    case InterpOutcome::Kind::Trap: return "trap " + trapcode_name(r.trap) + " (" + r.message + ")";
    case InterpOutcome::Kind::Error: return "error: " + r.message;
    case InterpOutcome::Kind::OutOfFuel: return "out of fuel: " + r.message;
    }
    return "?";
}

/// One file's run: shared state of the kinds.
class FileRun {
public:
    FileRun(std::string_view path, const FileTestOptions& opts, std::string& out)
        : path_(path), opts_(opts), out_(out) {}

    FileTestStats run(std::string_view text);

private:
    void fail(uint32_t line, const std::string& msg) {
        out_ += path_;
        if (line) out_ += ":" + std::to_string(line);
        out_ += ": " + msg + "\n";
        ++stats_.failed;
    }
    bool verify_all(const TestFile& file);
    /// A file of malformed input: each `; error: TEXT` line must get a parse
    /// diagnostic containing TEXT, and no other line may get one.
    void check_parse_errors(std::string_view text, const Diagnostics& errors);
    void run_verifier_kind(const ParsedFunction& pf);
    void run_cat_kind(const ParsedFunction& pf);
    /// Runs every directive of `pf` on one engine; `label` prefixes
    /// failures ("" for the interpreter, "[jit] " for compiled code).
    void run_directives(const TestFile& file, const ParsedFunction& pf,
                        const std::function<InterpOutcome(const RunCommand&)>& engine, const char* label);
    void check_run(const RunCommand& cmd, const InterpOutcome& r, uint32_t line, const char* label);
    void run_on_jit(const TestFile& file);
    /// The kinds of filetest_kinds.h, in the order of the `test` lines.
    void run_analysis_kinds(const TestFile& file, std::string_view text);

    std::string path_;
    const FileTestOptions& opts_;
    std::string& out_;
    FileTestStats stats_;
};

FileTestStats FileRun::run(std::string_view text) {
    ParseOutcome parsed = parse_test_file(text);
    if (!parsed.ok() && text.find("; error:") != std::string_view::npos) {
        check_parse_errors(text, parsed.errors);
        return stats_;
    }
    if (!parsed.ok()) {
        // A malformed file fails as a whole, with every diagnostic.
        for (const Diagnostic& d : parsed.errors) out_ += d.format(path_) + "\n";
        ++stats_.failed;
        return stats_;
    }
    const TestFile& file = parsed.file;
    if (file.tests.empty()) {
        fail(1, "no `test` line: nothing to do");
        return stats_;
    }
    std::set<std::string> kinds;
    for (const std::string& t : file.tests) kinds.insert(first_word(t));

    static std::set<std::string> reported_settings;
    for (const auto& [name, value] : file.settings) {
        if (name == "opt_level") {
            if (!parse_opt_level(value)) {
                fail(1, "unknown opt_level '" + value + "' (none, speed)");
                return stats_;
            }
            continue;
        }
        if (name == "enable_verifier") continue;
        if (reported_settings.insert(name).second) out_ += path_ + ": note: unknown setting '" + name + "' ignored\n";
    }

    bool host_listed = file.targets.empty();
    for (const std::string& t : file.targets) host_listed |= first_word(t) == host_isa_name();

    if (kinds.count("verifier")) {
        for (const ParsedFunction& pf : file.functions) run_verifier_kind(pf);
    } else if (!verify_all(file)) {
        return stats_;
    }
    if (kinds.count("cat") || kinds.count("print")) {
        for (const ParsedFunction& pf : file.functions) run_cat_kind(pf);
    }
    bool interpret = kinds.count("interpret") > 0;
    bool run = kinds.count("run") > 0 && host_listed;
    if (interpret) {
        Interpreter interp;
        interp.set_fuel(opts_.fuel);
        for (const ParsedFunction& pf : file.functions) interp.add_function(*pf.func);
        auto engine = [&](const RunCommand& cmd) { return interp.call(cmd.func_name, cmd.args); };
        for (const ParsedFunction& pf : file.functions) run_directives(file, pf, engine, "");
    }
    if (run) {
        run_on_jit(file);
    } else if (kinds.count("run")) {
        for (const ParsedFunction& pf : file.functions) {
            for (const Comment& c : pf.comments) {
                if (starts_with(trim(c.text), "run:") || starts_with(trim(c.text), "print:")) ++stats_.skipped;
            }
        }
    }
    run_analysis_kinds(file, text);
    for (const std::string& k : kinds) {
        static const std::set<std::string> known = {"verifier", "cat",     "print",     "interpret", "run",
                                                    "domtree",  "loops",   "structure", "optimize",  "compile"};
        if (known.count(k)) continue;
        out_ += path_ + ": note: test kind '" + k + "' is not supported yet (skipped)\n";
        ++stats_.skipped;
    }
    return stats_;
}

void FileRun::run_analysis_kinds(const TestFile& file, std::string_view text) {
    KindReport report{path_, out_, stats_};
    for (const std::string& t : file.tests) {
        const std::string kind = first_word(t);
        if (kind == "compile") {
            const auto blessed = run_compile_kind(text, file, trim(std::string_view(t).substr(kind.size())),
                                                  opts_.bless, report);
            if (!blessed) continue;
            std::ofstream o(path_, std::ios::binary | std::ios::trunc);
            o << *blessed;
            if (!o.flush()) {
                fail(0, "cannot write the blessed listings");
            } else {
                out_ += path_ + ": note: precise listings rewritten (HERON_TEST_BLESS)\n";
            }
            continue;
        }
        for (const ParsedFunction& pf : file.functions) {
            if (kind == "domtree") run_domtree_kind(pf, report);
            if (kind == "loops") run_loops_kind(pf, report);
            if (kind == "structure") run_structure_kind(pf, report);
            if (kind == "optimize") run_optimize_kind(file, pf, trim(std::string_view(t).substr(kind.size())), report);
        }
    }
}

void FileRun::check_parse_errors(std::string_view text, const Diagnostics& errors) {
    std::map<uint32_t, std::vector<std::string>> expected;
    uint32_t line = 1;
    for (size_t pos = 0; pos <= text.size();) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view l = text.substr(pos, end - pos);
        size_t at = l.find("; error:");
        if (at != std::string_view::npos) expected[line].emplace_back(trim(l.substr(at + 8)));
        pos = end + 1;
        ++line;
    }
    std::map<uint32_t, std::vector<std::string>> got;
    for (const Diagnostic& d : errors) got[d.loc.line].push_back(d.message);
    for (const auto& [ln, wants] : expected) {
        for (const std::string& want : wants) {
            auto it = got.find(ln);
            bool found = it != got.end() && std::any_of(it->second.begin(), it->second.end(), [&](const std::string& m) {
                             return m.find(want) != std::string::npos;
                         });
            if (found) {
                ++stats_.passed;
                continue;
            }
            fail(ln, "expected parse error containing '" + want + "', " +
                         (it == got.end() ? std::string("no error on this line") : "got: " + it->second.front()));
        }
    }
    for (const auto& [ln, msgs] : got) {
        if (expected.count(ln)) continue;
        for (const std::string& m : msgs) fail(ln, "unexpected parse error: " + m);
    }
}

bool FileRun::verify_all(const TestFile& file) {
    bool ok = true;
    for (const ParsedFunction& pf : file.functions) {
        VerifierErrors errs;
        if (verify_function(*pf.func, errs)) continue;
        ok = false;
        for (const VerifierError& e : errs) {
            uint32_t line = pf.srcmap.function.line;
            if (e.inst) line = pf.srcmap.inst_line[*e.inst];
            else if (e.block) line = pf.srcmap.block_line[*e.block];
            fail(line ? line : pf.srcmap.function.line,
                 "verifier: " + (e.context.empty() ? "" : e.context + ": ") + e.message);
        }
    }
    return ok;
}

void FileRun::run_verifier_kind(const ParsedFunction& pf) {
    std::map<uint32_t, std::vector<std::string>> expected;
    for (const Comment& c : pf.comments) {
        std::string_view t = trim(c.text);
        if (starts_with(t, "error:")) expected[c.line].emplace_back(trim(t.substr(6)));
    }
    VerifierErrors errs;
    verify_function(*pf.func, errs);
    std::map<uint32_t, std::vector<std::string>> got;
    for (const VerifierError& e : errs) {
        uint32_t line = 0;
        if (e.inst) line = pf.srcmap.inst_line[*e.inst];
        if (!line && e.block) line = pf.srcmap.block_line[*e.block];
        if (!line) line = pf.srcmap.function.line;
        got[line].push_back(e.context.empty() ? e.message : e.context + ": " + e.message);
    }
    for (const auto& [line, texts] : expected) {
        for (const std::string& want : texts) {
            const auto it = got.find(line);
            bool found = it != got.end() && std::any_of(it->second.begin(), it->second.end(), [&](const std::string& m) {
                             return m.find(want) != std::string::npos;
                         });
            if (found) {
                ++stats_.passed;
                continue;
            }
            std::string have = it == got.end() ? "no error on this line" : "got: " + it->second.front();
            fail(line, "expected verifier error containing '" + want + "', " + have);
        }
    }
    for (const auto& [line, msgs] : got) {
        if (expected.count(line)) continue;
        for (const std::string& m : msgs) fail(line, "unexpected verifier error: " + m);
    }
    if (expected.empty() && got.empty()) ++stats_.passed;
}

void FileRun::run_cat_kind(const ParsedFunction& pf) {
    std::string first = print_function(*pf.func);
    Diagnostics errs;
    auto again = parse_functions(first, errs);
    if (!errs.empty() || again.size() != 1) {
        fail(pf.srcmap.function.line, "printed text does not parse back: " +
                                          (errs.empty() ? std::string("wrong function count") : errs[0].format("")));
        return;
    }
    std::string second = print_function(*again[0]);
    if (second != first) {
        fail(pf.srcmap.function.line, "print(parse(print(f))) differs from print(f)");
        return;
    }
    ++stats_.passed;
}

void FileRun::run_on_jit(const TestFile& file) {
    // Every function of the file goes into one JIT module, so calls between
    // them link. A function the backend cannot compile fails its directives.
    OptLevel level = OptLevel::None;
    for (const auto& [name, value] : file.settings) {
        if (name == "opt_level") level = parse_opt_level(value).value_or(OptLevel::None);
    }
    JITBuilder builder;
    builder.check_regalloc(true);
    builder.opt_level(opts_.opt_level.value_or(level));
    builder.regalloc(opts_.regalloc);
    builder.verify_passes(true);
    builder.isa(isa_by_name(opts_.isa.empty() ? host_isa_name() : std::string_view(opts_.isa)));
    JITModule jit(builder);
    std::map<std::string, std::string> compile_errors;
    std::map<std::string, FuncId> ids;
    for (const ParsedFunction& pf : file.functions) {
        const ExternalName& n = pf.func->name;
        std::string key = n.kind == ExternalName::Kind::User ? n.to_string() : n.name;
        auto id = jit.declare_function(key, Linkage::Export, pf.func->signature);
        if (!id) {
            compile_errors[key] = id.error().message;
            continue;
        }
        ids[key] = id.value();
    }
    for (const ParsedFunction& pf : file.functions) {
        const ExternalName& n = pf.func->name;
        std::string key = n.kind == ExternalName::Kind::User ? n.to_string() : n.name;
        auto it = ids.find(key);
        if (it == ids.end()) continue;
        if (auto e = jit.define_function(it->second, *pf.func)) compile_errors[key] = e->message;
    }
    if (auto e = jit.finalize_definitions()) {
        for (auto& [k, v] : ids) compile_errors.emplace(k, "link: " + e->message);
    }
    auto engine = [&](const RunCommand& cmd) {
        InterpOutcome r;
        auto err = compile_errors.find(cmd.func_name);
        if (err != compile_errors.end()) {
            r.kind = InterpOutcome::Kind::Error;
            r.message = err->second;
            return r;
        }
        auto it = ids.find(cmd.func_name);
        if (it == ids.end()) {
            r.kind = InterpOutcome::Kind::Error;
            r.message = "no function %" + cmd.func_name;
            return r;
        }
        return to_interp_outcome(jit.call(it->second, cmd.args));
    };
    for (const ParsedFunction& pf : file.functions) run_directives(file, pf, engine, "[jit] ");
}

void FileRun::run_directives(const TestFile& file, const ParsedFunction& pf,
                             const std::function<InterpOutcome(const RunCommand&)>& engine, const char* label) {
    for (const Comment& c : pf.comments) {
        std::string_view t = trim(c.text);
        RunCommand::Kind kind;
        if (starts_with(t, "run:")) {
            kind = RunCommand::Kind::Run;
            t = t.substr(4);
        } else if (starts_with(t, "print:")) {
            kind = RunCommand::Kind::Print;
            t = t.substr(6);
        } else {
            continue;
        }
        // The called function is named in the directive; it is typed by that
        // function's signature (normally the preceding one).
        std::string name = first_word(t);
        const Function* callee = pf.func.get();
        if (starts_with(name, "%")) {
            std::string fname = name.substr(1, name.find('(') == std::string::npos ? std::string::npos : name.find('(') - 1);
            for (const ParsedFunction& other : file.functions) {
                if (other.func->name.kind == ExternalName::Kind::TestCase && other.func->name.name == fname) {
                    callee = other.func.get();
                }
            }
        }
        Diagnostic err;
        auto cmd = parse_run_command(t, kind, callee->signature, err);
        if (!cmd) {
            fail(c.line, "bad directive: " + err.message);
            continue;
        }
        InterpOutcome r = engine(*cmd);
        if (kind == RunCommand::Kind::Print) {
            out_ += path_ + ":" + std::to_string(c.line) + ": " + label + describe_call(*cmd) + " = " +
                    describe_outcome(r) + "\n";
            ++stats_.passed;
            continue;
        }
        check_run(*cmd, r, c.line, label);
    }
}

void FileRun::check_run(const RunCommand& cmd, const InterpOutcome& r, uint32_t line, const char* label) {
    std::string call = label + describe_call(cmd);
    if (cmd.op == RunCommand::Op::Traps) {
        if (r.kind == InterpOutcome::Kind::Trap && r.trap == cmd.trap) {
            ++stats_.passed;
            return;
        }
        fail(line, call + " expected trap " + trapcode_name(cmd.trap) + ", got " + describe_outcome(r));
        return;
    }
    if (r.kind != InterpOutcome::Kind::Return) {
        fail(line, call + (cmd.op == RunCommand::Op::Eq ? " == " : " != ") + join_values(cmd.expected) +
                       ": got " + describe_outcome(r));
        return;
    }
    bool equal = r.values == cmd.expected;
    if (equal == (cmd.op == RunCommand::Op::Eq)) {
        ++stats_.passed;
        return;
    }
    fail(line, call + (cmd.op == RunCommand::Op::Eq ? " == " : " != ") + join_values(cmd.expected) +
                   ": got " + join_values(r.values));
}

}  // namespace

FileTestStats run_file_test(std::string_view path, std::string_view text, const FileTestOptions& opts,
                            std::string& out) {
    FileRun run(path, opts, out);
    return run.run(text);
}

namespace {

/// Appends the *.clif files under `dir` to `found`. Every entry the walk
/// cannot read (a folder without permission, a dangling or looping link)
/// is an error naming its path: a test folder that is not fully read must
/// not pass as a smaller one. Links to folders are not followed.
void collect_folder(const std::filesystem::path& dir, std::vector<std::string>& found, std::string& errors) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
        errors += dir.string() + ": cannot read the folder: " + ec.message() + "\n";
        return;
    }
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const fs::path path = it->path();
        std::error_code link_ec, target_ec;
        const bool link = fs::is_symlink(fs::symlink_status(path, link_ec));
        const fs::file_status target = fs::status(path, target_ec);
        if (target_ec || !fs::exists(target)) {
            errors += path.string() + (link ? ": dangling link" : ": cannot read") +
                      (target_ec ? ": " + target_ec.message() : std::string()) + "\n";
            continue;
        }
        if (fs::is_directory(target)) {
            if (!link) collect_folder(path, found, errors);
        } else if (fs::is_regular_file(target) && path.extension() == ".clif") {
            found.push_back(path.string());
        }
    }
    if (ec) errors += dir.string() + ": cannot read the folder: " + ec.message() + "\n";
}

}  // namespace

std::vector<std::string> collect_test_files(const std::vector<std::string>& paths, std::string& errors) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const std::string& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<std::string> found;
            collect_folder(p, found, errors);
            std::sort(found.begin(), found.end());
            files.insert(files.end(), found.begin(), found.end());
        } else if (fs::exists(p, ec)) {
            files.push_back(p);
        } else {
            errors += p + ": no such file or directory\n";
        }
    }
    return files;
}

int run_test_command(const std::vector<std::string>& args) {
    FileTestOptions opts;
    const char* bless = std::getenv("HERON_TEST_BLESS");
    opts.bless = bless && *bless && std::string_view(bless) != "0";
    std::vector<std::string> paths;
    for (const std::string& a : args) {
        if (a.rfind("--opt-level=", 0) == 0) {
            opts.opt_level = parse_opt_level(a.substr(12));
            if (!opts.opt_level) {
                std::cout << "heron test: unknown opt level '" << a.substr(12) << "' (none, speed)\n";
                return 2;
            }
            continue;
        }
        if (a.rfind("--regalloc=", 0) == 0) {
            const auto algo = parse_regalloc(a.substr(11));
            if (!algo) {
                std::cout << "heron test: unknown register allocator '" << a.substr(11) << "' (linear-scan, single-pass)\n";
                return 2;
            }
            opts.regalloc = *algo;
            continue;
        }
        paths.push_back(a);
    }
    std::string errors;
    std::vector<std::string> files = collect_test_files(paths, errors);
    FileTestStats total;
    if (!errors.empty()) {
        std::cout << errors;
        total.failed += static_cast<uint64_t>(std::count(errors.begin(), errors.end(), '\n'));
    }
    for (const std::string& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        if (!in) {
            std::cout << f << ": cannot read\n";
            ++total.failed;
            continue;
        }
        std::string text = ss.str();
        std::string out;
        total += run_file_test(f, text, opts, out);
        std::cout << out << std::flush;
    }
    std::cout << total.passed << " passed, " << total.failed << " failed";
    if (total.skipped) std::cout << ", " << total.skipped << " skipped";
    std::cout << "\n";
    return total.failed == 0 ? 0 : 1;
}

}  // namespace heron::tools
