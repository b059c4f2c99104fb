// `test compile`: machine-code file tests (docs/filetests.md).
//
//   test compile [disasm|vcode] [precise]
//   target x86_64 has_avx has_bmi1
//   target aarch64
//
// Every function is compiled through the compile driver (codegen/context.h)
// with the allocation checker and the verifier after each pass, for every
// `target` line, at the file's `set opt_level=`. The output is the
// disassembly (default: offsets from the start of the function, bytes,
// text, block labels, so it is the same on every host) or the VCode
// (`vcode`: the allocator's input, as `heron compile --vcode` prints it).
// Without `precise`, the `; check:` / `; nextln:` / `; not:` lines of each
// function are matched against it (the matcher of `test optimize`). With
// `precise`, the run of `;` lines right after the function's closing brace
// must be the output, line for line; HERON_TEST_BLESS=1 rewrites that run.
//
// x86-64 code depends on the CPU features the backend may use; here they
// are exactly the flags on the target line (none: baseline SSE2), never the
// host's, so a listing is the same wherever it is checked.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "codegen/context.h"
#include "codegen/isa/x64/settings.h"
#include "codegen/machinst/isa.h"
#include "tools/disasm_aarch64.h"
#include "tools/disasm_x64.h"
#include "tools/filetest_kinds.h"

namespace heron::tools {
namespace {

std::string_view trim_right(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    size_t pos = 0;
    while (pos < s.size()) {
        size_t start = s.find_first_not_of(" \t\r", pos);
        if (start == std::string_view::npos) break;
        size_t end = s.find_first_of(" \t\r", start);
        if (end == std::string_view::npos) end = s.size();
        out.push_back(s.substr(start, end - start));
        pos = end;
    }
    return out;
}

/// The lines of `text`, without their '\n'; line N of the file is [N - 1].
std::vector<std::string_view> file_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            if (pos < text.size()) lines.push_back(text.substr(pos));
            break;
        }
        lines.push_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    return lines;
}

std::vector<std::string> output_lines(const std::string& text) {
    std::vector<std::string> out;
    for (std::string_view l : file_lines(text)) out.emplace_back(trim_right(l));
    return out;
}

struct Target {
    uint32_t line = 0;
    std::string name;  // "x86_64 has_avx" as written, for messages
    std::shared_ptr<TargetIsa> isa;
};

/// The ISA of one `target` line; "" on success, else what is wrong.
std::string make_target(std::string_view spec, Target& t) {
    const std::vector<std::string_view> w = words(spec);
    if (w.empty()) return "empty target line";
    t.name = std::string(trim(spec));
    if (w[0] == "aarch64" || w[0] == "arm64") {
        if (w.size() > 1) return "aarch64 takes no flags, got '" + std::string(w[1]) + "'";
        t.isa = make_aarch64_isa();
        return "";
    }
    if (w[0] != "x86_64" && w[0] != "x64") return "unknown target '" + std::string(w[0]) + "' (x86_64, aarch64)";
    x64::Settings s = x64::Settings::baseline();
    static const std::pair<const char*, bool x64::Settings::*> kFlags[] = {
        {"has_lzcnt", &x64::Settings::has_lzcnt},   {"has_bmi1", &x64::Settings::has_bmi1},
        {"has_popcnt", &x64::Settings::has_popcnt}, {"has_sse41", &x64::Settings::has_sse41},
        {"has_fma", &x64::Settings::has_fma},       {"has_movbe", &x64::Settings::has_movbe},
        {"has_avx", &x64::Settings::has_avx},
    };
    for (size_t k = 1; k < w.size(); ++k) {
        auto it = std::find_if(std::begin(kFlags), std::end(kFlags), [&](const auto& f) { return w[k] == f.first; });
        if (it == std::end(kFlags)) {
            std::string known;
            for (const auto& f : kFlags) known += std::string(known.empty() ? "" : ", ") + f.first;
            return "unknown x86_64 flag '" + std::string(w[k]) + "' (" + known + ")";
        }
        s.*(it->second) = true;
    }
    t.isa = make_x64_isa(s);
    return "";
}

/// Where a function's precise listing sits: the lines right after its
/// closing brace that are comments (0-based indices into the file's lines).
struct Expectation {
    size_t first = 0, end = 0;  // [first, end)
    std::vector<std::string> lines;
};

/// The closing brace of the function opening on (1-based) `line`, as a
/// 0-based index; lines.size() if there is none.
size_t closing_brace(const std::vector<std::string_view>& lines, uint32_t line) {
    for (size_t i = line ? line - 1 : 0; i < lines.size(); ++i) {
        if (trim(lines[i]).substr(0, 1) == "}") return i;
    }
    return lines.size();
}

Expectation expectation_after(const std::vector<std::string_view>& lines, size_t brace) {
    Expectation e;
    e.first = e.end = brace + 1;
    for (; e.end < lines.size(); ++e.end) {
        std::string_view l = trim(lines[e.end]);
        if (l.empty() || l.front() != ';') break;
        // Drop ";" and one blank: the listing keeps its own indentation.
        l.remove_prefix(1);
        if (!l.empty() && l.front() == ' ') l.remove_prefix(1);
        e.lines.emplace_back(l);
    }
    return e;
}

/// A line diff of `want` against `got` (longest common subsequence): ' '
/// for a common line, '-' for an expected line that is missing, '+' for an
/// output line that was not expected.
std::string line_diff(const std::vector<std::string>& want, const std::vector<std::string>& got) {
    const size_t n = want.size(), m = got.size();
    if (n * m > 4'000'000) {  // too large to align: show both
        std::string out;
        for (const std::string& l : want) out += "  - " + l + "\n";
        for (const std::string& l : got) out += "  + " + l + "\n";
        return out;
    }
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;) {
        for (size_t j = m; j-- > 0;) {
            at(i, j) = want[i] == got[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
        }
    }
    std::string out;
    size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && want[i] == got[j]) {
            out += "    " + want[i++] + "\n";
            ++j;
        } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
            out += "  + " + got[j++] + "\n";
        } else {
            out += "  - " + want[i++] + "\n";
        }
    }
    return out;
}

std::string disassembly(const TargetIsa& isa, const CompiledCode& code) {
    std::map<uint64_t, std::string> labels(code.labels.begin(), code.labels.end());
    if (isa.name() == "aarch64") return disassemble_aarch64(code.bytes.data(), code.bytes.size(), 0, labels);
    return disassemble_x64(code.bytes.data(), code.bytes.size(), 0, labels);
}

/// The `; error: TEXT` annotations of `pf`: the compile must fail so.
std::vector<Comment> expected_errors(const ParsedFunction& pf) {
    std::vector<Comment> out;
    for (const Comment& c : pf.comments) {
        std::string_view t = trim(c.text);
        if (t.substr(0, 6) == "error:") out.push_back({c.line, std::string(trim(t.substr(6)))});
    }
    return out;
}

}  // namespace

std::optional<std::string> run_compile_kind(std::string_view text, const TestFile& file, std::string_view mode,
                                            bool bless, KindReport& report) {
    bool precise = false, vcode = false;
    for (std::string_view w : words(mode)) {
        if (w == "precise") precise = true;
        else if (w == "vcode") vcode = true;
        else if (w != "disasm") {
            report.fail(1, "compile: unknown word '" + std::string(w) + "' on the `test compile` line (disasm, vcode, precise)");
            return std::nullopt;
        }
    }
    if (precise) {
        size_t lines_with_precise = 0;
        for (const std::string& t : file.tests) {
            const std::vector<std::string_view> w = words(t);
            lines_with_precise += !w.empty() && w[0] == "compile" && std::count(w.begin(), w.end(), "precise");
        }
        if (lines_with_precise > 1) {
            report.fail(1, "compile: more than one `test compile precise` line (the listings after a function "
                           "are one output)");
            return std::nullopt;
        }
    }
    const std::vector<std::string_view> lines = file_lines(text);
    // The target lines, in order, with their line numbers.
    std::vector<Target> targets;
    for (size_t i = 0; i < lines.size() && targets.size() < file.targets.size(); ++i) {
        const std::vector<std::string_view> w = words(lines[i]);
        if (w.size() < 2 || w[0] != "target") continue;
        Target t;
        t.line = static_cast<uint32_t>(i + 1);
        if (std::string err = make_target(file.targets[targets.size()], t); !err.empty()) {
            report.fail(t.line, "compile: " + err);
            return std::nullopt;
        }
        targets.push_back(std::move(t));
    }
    if (targets.empty()) {
        report.fail(1, "compile: `test compile` needs a `target` line (x86_64 [flags], aarch64)");
        return std::nullopt;
    }
    if (precise && targets.size() != 1) {
        report.fail(targets[1].line, "compile: `test compile precise` takes exactly one `target` line");
        return std::nullopt;
    }
    OptLevel level = OptLevel::None;
    for (const auto& [name, value] : file.settings) {
        if (name == "opt_level") level = parse_opt_level(value).value_or(OptLevel::None);
    }
    CompileOptions options;
    options.opt_level = level;
    options.check_regalloc = true;
    options.verify_passes = true;

    const char* output_name = vcode ? "vcode" : "disasm";
    std::vector<std::pair<Expectation, std::vector<std::string>>> rewrites;
    for (const Target& t : targets) {
        Context ctx(t.isa, options);
        for (const ParsedFunction& pf : file.functions) {
            const uint32_t fline = pf.srcmap.function.line;
            const std::string what = pf.func->name.to_string() + " (" + t.name + " " + output_name + "): ";
            CompiledCode code;
            const std::optional<CompileError> err = ctx.compile(*pf.func, code);
            const std::vector<Comment> errors = expected_errors(pf);
            for (const Comment& e : errors) {
                if (err && err->message.find(e.text) != std::string::npos) {
                    report.pass();
                } else {
                    report.fail(e.line, what + "expected a compile error containing '" + e.text + "', got " +
                                            (err ? "'" + err->message + "'" : std::string("none")));
                }
            }
            if (err) {
                if (errors.empty()) report.fail(fline, what + "does not compile: " + err->message);
                continue;
            }
            if (!errors.empty()) continue;
            const std::string output = vcode ? ctx.vcode_text() : disassembly(*t.isa, code);
            if (!precise) {
                if (match_checks(pf, output, what, report) == 0) report.pass();  // it compiled
                continue;
            }
            const size_t brace = closing_brace(lines, fline);
            if (brace == lines.size()) {
                report.fail(fline, what + "no closing brace for the precise listing to follow");
                continue;
            }
            Expectation want = expectation_after(lines, brace);
            std::vector<std::string> got = output_lines(output);
            if (want.lines == got) {
                report.pass();
                continue;
            }
            if (bless) {
                rewrites.emplace_back(std::move(want), std::move(got));
                report.pass();
                continue;
            }
            report.fail(static_cast<uint32_t>(brace + 2),
                        what + "the output differs from the listing after the function (- expected, + output; "
                               "HERON_TEST_BLESS=1 rewrites it):\n" +
                            line_diff(want.lines, got));
        }
    }
    if (rewrites.empty()) return std::nullopt;
    // Rewrite from the last listing back, so earlier line indices hold.
    std::sort(rewrites.begin(), rewrites.end(),
              [](const auto& a, const auto& b) { return a.first.first > b.first.first; });
    std::vector<std::string> out(lines.begin(), lines.end());
    for (const auto& [want, got] : rewrites) {
        std::vector<std::string> listing;
        for (const std::string& l : got) listing.push_back(l.empty() ? ";" : "; " + l);
        out.erase(out.begin() + static_cast<ptrdiff_t>(want.first), out.begin() + static_cast<ptrdiff_t>(want.end));
        out.insert(out.begin() + static_cast<ptrdiff_t>(want.first), listing.begin(), listing.end());
    }
    std::string result;
    for (const std::string& l : out) result += l + "\n";
    return result;
}

}  // namespace heron::tools
