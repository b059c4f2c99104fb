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
#include "codegen/analysis/counted_loops.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
#include "codegen/interp/interpreter.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/run_command.h"
#include "codegen/opt/pass_manager.h"

namespace heron::tools {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

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

    // Kinds: once a function has `; kind:` lines, every loop needs one.
    const std::vector<Annotation> kinds = annotations(pf, "kind:");
    if (kinds.empty()) return;
    CountedLoops counted;
    counted.compute(f, loops);
    std::map<std::string, std::string> kind_of;
    for (Loop l : loops.loops()) kind_of[loops.header(l).to_string()] = loops.header(l).to_string() + " " + counted.describe(f, l);
    std::map<std::string, uint32_t> kind_seen;
    for (const Annotation& a : kinds) {
        const std::string header = first_word(a.text);
        kind_seen[header] = a.line;
        auto it = kind_of.find(header);
        if (it == kind_of.end()) {
            report.fail(a.line, "loops: " + header + " is not a loop header");
        } else if (it->second != a.text) {
            report.fail(a.line, "loops: expected kind '" + a.text + "', got '" + it->second + "'");
        } else {
            report.pass();
        }
    }
    for (const auto& [header, statement] : kind_of) {
        if (!kind_seen.count(header)) report.fail(pf.srcmap.function.line, "loops: missing '; kind: " + statement + "'");
    }
}

namespace {

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        lines.push_back(normalize(std::string_view(text).substr(pos, end - pos)));
        pos = end + 1;
    }
    return lines;
}

}  // namespace

size_t match_checks(const ParsedFunction& pf, const std::string& printed, std::string_view what,
                    KindReport& report) {
    const std::string prefix(what);
    size_t count = 0;
    const std::vector<std::string> lines = split_lines(printed);
    size_t next = 0;               // first line the next check may match
    std::vector<Annotation> nots;  // pending `not:` lines
    auto settle_nots = [&](size_t until) {
        for (const Annotation& n : nots) {
            bool found = false;
            for (size_t i = next; i < until && !found; ++i) found = lines[i].find(n.text) != std::string::npos;
            if (found) {
                report.fail(n.line, prefix + "not: '" + n.text + "' found in the output");
            } else {
                report.pass();
            }
        }
        nots.clear();
    };
    bool failed_before = false;
    for (const Comment& c : pf.comments) {
        const std::string t = normalize(c.text);
        const bool check = t.rfind("check:", 0) == 0, nextln = t.rfind("nextln:", 0) == 0, nt = t.rfind("not:", 0) == 0;
        if (!check && !nextln && !nt) continue;
        ++count;
        const std::string want = normalize(t.substr(t.find(':') + 1));
        if (nt) {
            nots.push_back({c.line, want});
            continue;
        }
        if (failed_before) {
            report.fail(c.line, prefix + "skipped: an earlier check failed");
            continue;
        }
        size_t at = lines.size();
        if (check) {
            for (size_t i = next; i < lines.size(); ++i) {
                if (lines[i].find(want) != std::string::npos) {
                    at = i;
                    break;
                }
            }
        } else if (next < lines.size() && lines[next].find(want) != std::string::npos) {
            at = next;
        }
        if (at == lines.size()) {
            report.fail(c.line, prefix + (check ? "check" : "nextln") + ": '" + want + "' not found" +
                                    (nextln && next < lines.size() ? " (next line: '" + lines[next] + "')" : "") +
                                    "; output:\n" + printed);
            failed_before = true;
            nots.clear();
            continue;
        }
        settle_nots(at);
        report.pass();
        next = at + 1;
    }
    if (!failed_before) settle_nots(lines.size());
    return count;
}

void run_optimize_kind(const TestFile& file, const ParsedFunction& pf, std::string_view passes,
                       KindReport& report) {
    const uint32_t fline = pf.srcmap.function.line;
    Function func = *pf.func;
    PassManagerOptions options;
    options.verify_each = true;
    PassManager pm(options);
    if (auto err = pm.add_pipeline(passes)) {
        report.fail(fline, "optimize: " + *err);
        return;
    }
    if (pm.pipeline().empty()) {
        report.fail(fline, "optimize: no passes named on the `test optimize` line");
        return;
    }
    std::optional<std::string> err = pm.run(func);
    const std::vector<Annotation> errors = annotations(pf, "error:");
    for (const Annotation& a : errors) {
        if (err && err->find(a.text) != std::string::npos) {
            report.pass();
        } else {
            report.fail(a.line, "optimize: expected error containing '" + a.text + "', got " +
                                    (err ? "'" + *err + "'" : std::string("no error")));
        }
    }
    if (err) {
        if (errors.empty()) report.fail(fline, "optimize: " + *err);
        return;
    }
    match_checks(pf, print_function(func), "", report);

    // Run directives: the optimized function must still compute what they
    // say. The file's other functions stay callable by name.
    Interpreter interp;
    for (const ParsedFunction& other : file.functions) interp.add_function(*other.func);
    for (const Comment& c : pf.comments) {
        const std::string t = normalize(c.text);
        if (t.rfind("run:", 0) != 0) continue;
        const std::string body = t.substr(4);
        Diagnostic derr;
        auto cmd = parse_run_command(body, RunCommand::Kind::Run, func.signature, derr);
        if (!cmd) {
            report.fail(c.line, "bad directive: " + derr.message);
            continue;
        }
        if (pf.func->name.kind != ExternalName::Kind::TestCase || cmd->func_name != pf.func->name.name) continue;
        InterpOutcome r = interp.call(func, cmd->args);
        bool ok;
        if (cmd->op == RunCommand::Op::Traps) {
            ok = r.kind == InterpOutcome::Kind::Trap && r.trap == cmd->trap;
        } else {
            ok = r.kind == InterpOutcome::Kind::Return && (r.values == cmd->expected) == (cmd->op == RunCommand::Op::Eq);
        }
        if (ok) {
            report.pass();
        } else {
            report.fail(c.line, "after the passes: run:" + body + " does not hold (" +
                                    (r.kind == InterpOutcome::Kind::Return ? std::string("returned") : r.message) + ")");
        }
    }
}

}  // namespace heron::tools
