// `heron structure` and the `test structure` file-test kind: both print the
// region tree of codegen/opt/structurize.h; the kind compares the printed
// statements with the function's annotations, line by line.
#include "tools/structure.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "codegen/opt/structurize.h"
#include "codegen/verifier/verifier.h"

namespace heron::tools {
namespace {

constexpr const char* kStructureUsage = "usage: heron structure FILE [--no-break]\n";

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
        any |= t.compare(0, 10, "structure:") == 0 || t.compare(0, 9, "no-break:") == 0;
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
        report.fail(pf.srcmap.function.line, "structure: no '; structure:', '; no-break:' or '; error:' lines");
        return;
    }
    check_lines(pf, report, "structure", false);
    check_lines(pf, report, "no-break", true);
}

int cmd_structure(const std::vector<std::string>& args) {
    std::string path;
    bool no_break = false;
    for (const std::string& a : args) {
        if (a == "--no-break") {
            no_break = true;
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
        if (!first) std::cout << "\n";
        first = false;
        std::cout << text;
    }
    return status;
}

}  // namespace heron::tools
