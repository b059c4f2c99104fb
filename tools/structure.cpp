// `heron structure` and the `test structure` file-test kind: both print the
// region tree of codegen/opt/structurize.h; the kind compares the printed
// statements with the function's annotations, line by line.
#include "tools/structure.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/run_command.h"
#include "codegen/opt/structurize.h"
#include "codegen/verifier/verifier.h"
#include "frontend/structured_lowering.h"

namespace heron::tools {
namespace {

constexpr const char* kStructureUsage = "usage: heron structure FILE [--no-break] [--check]\n";

/// Trims and collapses every run of blanks to one space.
std::string collapse(std::string_view s) {
    std::string out;
    bool blank = false;
    for (char c : s) {
        if (c == ' ' || c == '\t' || c == '\r') {
            blank = true;
            continue;
        }
        if (blank && !out.empty()) out += ' ';
        blank = false;
        out += c;
    }
    return out;
}

/// The source line of an error: the edge's source block, else the function.
uint32_t error_line(const ParsedFunction& pf, const StructureError& e) {
    if (e.from && e.from->index() < pf.func->dfg.num_blocks() && pf.srcmap.block_line[*e.from]) {
        return pf.srcmap.block_line[*e.from];
    }
    return pf.srcmap.function.line;
}

/// The structured form of `pf`, or the error.
std::optional<StructureError> structure_text(const Function& f, bool no_break, std::string& text) {
    Structurizer s;
    RegionTree tree;
    if (auto err = s.run(f, tree)) return err;
    if (no_break) {
        if (auto err = remove_break_continue(tree)) return err;
    }
    text = print_region_tree(f, tree);
    return std::nullopt;
}

/// The statement lines of a printed tree: without the opening and closing
/// lines, blanks collapsed.
std::vector<std::string> statement_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines.push_back(collapse(l));
    if (lines.size() >= 2) lines = std::vector<std::string>(lines.begin() + 1, lines.end() - 1);
    return lines;
}

/// `f` structured (without break and continue if asked) and lowered back
/// into IR, verified; or why not.
std::optional<std::string> lower_structured(const Function& f, bool no_break, Function& out) {
    Structurizer s;
    RegionTree tree;
    if (auto err = s.run(f, tree)) return err->message;
    if (no_break) {
        if (auto err = remove_break_continue(tree)) return err->message;
    }
    FunctionBuilderContext ctx;
    if (auto err = lower_region_tree(f, tree, out, ctx)) return "lowering: " + *err;
    VerifierErrors errs;
    if (!verify_function(out, errs)) return "the lowered function does not verify: " + errs[0].message;
    return std::nullopt;
}

std::string outcome_text(const InterpOutcome& r) {
    switch (r.kind) {
    case InterpOutcome::Kind::Return: {
        std::string s;
        for (const DataValue& v : r.values) s += (s.empty() ? "" : ", ") + v.to_string();
        return "[" + s + "]";
    }
    case InterpOutcome::Kind::Trap: return "trap " + trapcode_name(r.trap);
    case InterpOutcome::Kind::Error: return "error: " + r.message;
    case InterpOutcome::Kind::OutOfFuel: return "out of fuel";
    }
    return "?";
}

bool same_outcome(const InterpOutcome& a, const InterpOutcome& b) {
    return a.kind == b.kind && a.values == b.values && (a.kind != InterpOutcome::Kind::Trap || a.trap == b.trap);
}

/// The `; run:` directives of `pf` that parse.
std::vector<std::pair<uint32_t, RunCommand>> run_directives(const ParsedFunction& pf) {
    std::vector<std::pair<uint32_t, RunCommand>> out;
    for (const Comment& c : pf.comments) {
        std::string t = collapse(c.text);
        if (t.compare(0, 4, "run:") != 0) continue;
        Diagnostic diag;
        if (auto cmd = parse_run_command(t.substr(4), RunCommand::Kind::Run, pf.func->signature, diag)) {
            out.push_back({c.line, std::move(*cmd)});
        }
    }
    return out;
}

/// Runs every `; run:` directive of `pf` on the interpreter twice, on the
/// original and on the structured-and-lowered function (both forms); each
/// directive whose outcomes agree and meet the expectation counts one pass.
void check_round_trip(const ParsedFunction& pf, KindReport& report) {
    const auto directives = run_directives(pf);
    if (directives.empty()) return;
    for (bool no_break : {false, true}) {
        const char* form = no_break ? "no-break" : "structure";
        Function lowered;
        if (auto err = lower_structured(*pf.func, no_break, lowered)) {
            report.fail(directives[0].first, std::string(form) + ": " + *err);
            continue;
        }
        Interpreter original, structured;
        original.set_fuel(200'000'000);
        structured.set_fuel(200'000'000);
        original.add_function(*pf.func);
        structured.add_function(lowered);
        for (const auto& [line, cmd] : directives) {
            const InterpOutcome a = original.call(*pf.func, cmd.args);
            const InterpOutcome b = structured.call(lowered, cmd.args);
            if (!same_outcome(a, b)) {
                report.fail(line, std::string(form) + ": round trip differs: original " + outcome_text(a) +
                                      ", structured " + outcome_text(b));
                continue;
            }
            bool met = false;
            if (cmd.op == RunCommand::Op::Traps) {
                met = b.kind == InterpOutcome::Kind::Trap && b.trap == cmd.trap;
            } else if (b.kind == InterpOutcome::Kind::Return) {
                met = (b.values == cmd.expected) == (cmd.op == RunCommand::Op::Eq);
            }
            if (met) {
                report.pass();
            } else {
                report.fail(line, std::string(form) + ": structured function gives " + outcome_text(b));
            }
        }
    }
}

void check_lines(const ParsedFunction& pf, KindReport& report, const char* key, bool no_break) {
    std::vector<Comment> expected;
    const std::string prefix = std::string(key) + ":";
    for (const Comment& c : pf.comments) {
        std::string t = collapse(c.text);
        if (t.compare(0, prefix.size(), prefix) == 0) expected.push_back({c.line, collapse(t.substr(prefix.size()))});
    }
    if (expected.empty()) return;
    std::string text;
    if (auto err = structure_text(*pf.func, no_break, text)) {
        report.fail(expected[0].line, std::string(key) + ": unexpected error: " + err->message);
        return;
    }
    const std::vector<std::string> got = statement_lines(text);
    for (size_t i = 0; i < expected.size(); ++i) {
        if (i >= got.size()) {
            report.fail(expected[i].line, std::string(key) + ": expected '" + expected[i].text + "', got the end");
            return;
        }
        if (got[i] != expected[i].text) {
            report.fail(expected[i].line,
                        std::string(key) + ": expected '" + expected[i].text + "', got '" + got[i] + "'");
            return;
        }
    }
    if (got.size() > expected.size()) {
        report.fail(expected.back().line, std::string(key) + ": unexpected further line '" + got[expected.size()] + "'");
        return;
    }
    report.pass();
}

}  // namespace

void run_structure_kind(const ParsedFunction& pf, KindReport& report) {
    std::vector<Comment> errors;
    bool any = false;
    for (const Comment& c : pf.comments) {
        std::string t = collapse(c.text);
        if (t.compare(0, 6, "error:") == 0) errors.push_back({c.line, collapse(t.substr(6))});
        any |= t.compare(0, 10, "structure:") == 0 || t.compare(0, 9, "no-break:") == 0 ||
               t.compare(0, 4, "run:") == 0;
    }
    if (!errors.empty()) {
        std::string text;
        auto err = structure_text(*pf.func, false, text);
        for (const Comment& e : errors) {
            if (err && err->message.find(e.text) != std::string::npos) {
                report.pass();
            } else {
                report.fail(e.line, "structure: expected error containing '" + e.text + "', got " +
                                        (err ? "'" + err->message + "'" : std::string("no error")));
            }
        }
        return;
    }
    if (!any) {
        report.fail(pf.srcmap.function.line, "structure: no '; structure:', '; no-break:', '; run:' or '; error:' lines");
        return;
    }
    check_lines(pf, report, "structure", false);
    check_lines(pf, report, "no-break", true);
    check_round_trip(pf, report);
}

int cmd_structure(const std::vector<std::string>& args) {
    std::string path;
    bool no_break = false, check = false;
    for (const std::string& a : args) {
        if (a == "--no-break") {
            no_break = true;
        } else if (a == "--check") {
            check = true;
        } else if (path.empty() && !a.empty() && a[0] != '-') {
            path = a;
        } else {
            std::cerr << kStructureUsage;
            return 2;
        }
    }
    if (path.empty()) {
        std::cerr << kStructureUsage;
        return 2;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::cerr << path << ": cannot read\n";
        return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    ParseOutcome parsed = parse_test_file(ss.str());
    for (const Diagnostic& d : parsed.errors) std::cerr << d.format(path) << "\n";
    if (!parsed.ok()) return 1;
    int status = 0;
    bool first = true;
    for (const ParsedFunction& pf : parsed.file.functions) {
        VerifierErrors errs;
        if (!verify_function(*pf.func, errs)) {
            for (const VerifierError& e : errs) {
                std::cerr << path << ":" << pf.srcmap.function.line << ": " << pf.func->name.to_string() << ": "
                          << (e.context.empty() ? "" : e.context + ": ") << e.message << "\n";
            }
            status = 1;
            continue;
        }
        std::string text;
        if (auto err = structure_text(*pf.func, no_break, text)) {
            std::cerr << path << ":" << error_line(pf, *err) << ": " << pf.func->name.to_string() << ": "
                      << err->message << "\n";
            status = 1;
            continue;
        }
        if (check) {
            // Lower the tree back into IR; compare with the original on every
            // `; run:` directive's arguments.
            Function lowered;
            if (auto err = lower_structured(*pf.func, no_break, lowered)) {
                std::cerr << path << ":" << pf.srcmap.function.line << ": " << pf.func->name.to_string() << ": "
                          << *err << "\n";
                status = 1;
                continue;
            }
            uint32_t agreed = 0, total = 0;
            Interpreter original, structured;
            original.add_function(*pf.func);
            structured.add_function(lowered);
            for (const auto& [line, cmd] : run_directives(pf)) {
                ++total;
                const InterpOutcome a = original.call(*pf.func, cmd.args);
                const InterpOutcome b = structured.call(lowered, cmd.args);
                if (same_outcome(a, b)) {
                    ++agreed;
                    continue;
                }
                std::cerr << path << ":" << line << ": " << pf.func->name.to_string() << ": original "
                          << outcome_text(a) << ", structured " << outcome_text(b) << "\n";
                status = 1;
            }
            std::cout << pf.func->name.to_string() << ": lowered back to IR, verified; " << agreed << " of " << total
                      << " run directives agree with the original\n";
            continue;
        }
        if (!first) std::cout << "\n";
        first = false;
        std::cout << text;
    }
    return status;
}

}  // namespace heron::tools
