// The analysis and pass test kinds of `heron test` (filetest_kinds.h).
// Annotations are compared as whole statements: the analysis prints its own
// statement about a block or loop in the annotation's canonical form, and
// the two must be equal after collapsing runs of blanks. Every fact the
// analysis finds must be annotated, so a test fails both on a wrong fact and
// on a missing or extra one.
#include "tools/filetest_kinds.h"

#include <algorithm>
#include <map>
#include <vector>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"

namespace heron::tools {

void KindReport::fail(uint32_t line, const std::string& msg) {
    out += std::string(path);
    if (line) out += ":" + std::to_string(line);
    out += ": " + msg + "\n";
    ++stats.failed;
}

namespace {

/// Trims and collapses every run of blanks to one space.
std::string normalize(std::string_view s) {
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

struct Annotation {
    uint32_t line;
    std::string text;  // normalized, after the "key:" prefix
};

/// The comments of `pf` that start with `key` (e.g. "loop:"), in order.
std::vector<Annotation> annotations(const ParsedFunction& pf, std::string_view key) {
    std::vector<Annotation> out;
    for (const Comment& c : pf.comments) {
        std::string t = normalize(c.text);
        if (t.compare(0, key.size(), key) == 0) out.push_back({c.line, normalize(t.substr(key.size()))});
    }
    return out;
}

std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

std::string block_list(std::vector<Block> blocks) {
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    std::string out;
    for (Block b : blocks) out += " " + b.to_string();
    return out;
}

template <typename Span>
std::vector<Block> to_vector(Span s) {
    return {s.begin(), s.end()};
}

/// The canonical `; loop:` statement of `l`.
std::string describe_loop(const LoopAnalysis& loops, Loop l) {
    std::string s = loops.header(l).to_string() + " depth " + std::to_string(loops.loop_depth(l)) + " parent ";
    auto p = loops.parent(l);
    s += p ? loops.header(*p).to_string() : "none";
    s += " blocks" + block_list(to_vector(loops.blocks(l)));
    s += " latches" + block_list(to_vector(loops.latches(l)));
    s += " exits" + block_list(to_vector(loops.exit_blocks(l)));
    return s;
}

}  // namespace

void run_domtree_kind(const ParsedFunction& pf, KindReport& report) {
    const Function& f = *pf.func;
    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    // The analysis' statement about every block that has one.
    std::map<std::string, std::string> actual;
    std::vector<std::string> required;
    for (Block b : f.layout.blocks()) {
        const std::string name = b.to_string();
        if (!dt.is_reachable(b)) {
            actual[name] = name + " unreachable";
        } else if (auto idom = dt.idom(b)) {
            actual[name] = name + " idom " + idom->to_string();
            required.push_back(name);
        }
    }
    std::map<std::string, uint32_t> seen;
    for (const Annotation& a : annotations(pf, "domtree:")) {
        const std::string block = first_word(a.text);
        seen[block] = a.line;
        auto it = actual.find(block);
        if (it == actual.end()) {
            report.fail(a.line, "domtree: " + block + " is the entry block or not in the function");
        } else if (it->second != a.text) {
            report.fail(a.line, "domtree: expected '" + a.text + "', got '" + it->second + "'");
        } else {
            report.pass();
        }
    }
    for (const std::string& name : required) {
        if (!seen.count(name)) report.fail(pf.srcmap.function.line, "domtree: missing '; domtree: " + actual[name] + "'");
    }
}

void run_loops_kind(const ParsedFunction& pf, KindReport& report) {
    const Function& f = *pf.func;
    ControlFlowGraph cfg(f);
    DominatorTree dt(f, cfg);
    LoopAnalysis loops;
    const std::optional<LoopError> err = loops.compute(f, cfg, dt);
    const std::vector<Annotation> errors = annotations(pf, "error:");
    for (const Annotation& a : errors) {
        if (err && err->message.find(a.text) != std::string::npos) {
            report.pass();
        } else {
            report.fail(a.line, "loops: expected error containing '" + a.text + "', got " +
                                    (err ? "'" + err->message + "'" : std::string("no error")));
        }
    }
    if (err) {
        if (errors.empty()) report.fail(pf.srcmap.function.line, "loops: unexpected error: " + err->message);
        return;
    }
    std::map<std::string, std::string> actual;  // header -> statement
    for (Loop l : loops.loops()) actual[loops.header(l).to_string()] = describe_loop(loops, l);
    std::map<std::string, uint32_t> seen;
    for (const Annotation& a : annotations(pf, "loop:")) {
        const std::string header = first_word(a.text);
        seen[header] = a.line;
        auto it = actual.find(header);
        if (it == actual.end()) {
            report.fail(a.line, "loops: " + header + " is not a loop header");
        } else if (it->second != a.text) {
            report.fail(a.line, "loops: expected '" + a.text + "', got '" + it->second + "'");
        } else {
            report.pass();
        }
    }
    for (const auto& [header, statement] : actual) {
        if (!seen.count(header)) report.fail(pf.srcmap.function.line, "loops: missing '; loop: " + statement + "'");
    }
    if (actual.empty() && seen.empty() && errors.empty()) report.pass();  // "no loops" is a fact too
}

}  // namespace heron::tools
