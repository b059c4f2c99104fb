// `heron repl` in :lang mode: input in the small language (docs/lang.md)
// is compiled with tools/lang/ against the session's definitions; functions
// join the definitions, statements run at once in a function of their own.

#include <chrono>
#include <cstdio>
#include <cstring>

#include "tools/lang/codegen.h"
#include "tools/lang/host.h"
#include "tools/lang/lang.h"
#include "tools/lang/parser.h"
#include "tools/repl_session.h"

namespace heron::tools {

using namespace repl_impl;

void ReplSession::Impl::add_lang_line(std::string_view raw) {
    size_t comment = raw.find("//");
    for (char c : raw.substr(0, comment)) {
        if (c == '{') ++depth;
        else if (c == '}') --depth;
    }
    if (depth > 0) return;
    std::string text = std::move(pending);
    uint32_t start = pending_line;
    reset_pending();
    run_lang(text, "<input>", start - 1, /*file=*/false);
}

std::string ReplSession::Impl::lang_error(const std::string& origin, uint32_t line_offset, const Diagnostic& d) {
    Diagnostic shifted = d;
    if (shifted.loc.line) shifted.loc.line += line_offset;
    ++errors;
    return lang::format_error(origin, shifted);
}

void ReplSession::Impl::run_lang(const std::string& text, const std::string& origin, uint32_t line_offset, bool file) {
    lang::ParseResult parsed = file ? lang::parse_program(text) : lang::parse_repl_input(text);
    if (parsed.error) {
        out << lang_error(origin, line_offset, *parsed.error) << "\n";
        return;
    }
    lang::Environment env;
    for (const auto& [k, d] : defs) env[k] = d.func->signature;
    lang::CodegenResult code = lang::compile(parsed.program, env);
    if (code.error) {
        out << lang_error(origin, line_offset, *code.error) << "\n";
        return;
    }
    std::vector<Def> batch;
    std::optional<Def> stmts;
    for (size_t i = 0; i < code.fns.size(); ++i) {
        Def d;
        d.func = std::move(code.fns[i].func);
        d.srcmap = std::move(code.fns[i].srcmap);
        d.inst_col = std::move(code.fns[i].inst_col);
        d.origin = origin;
        d.line_offset = line_offset;
        d.lang = true;
        if (code.has_stmts && i + 1 == code.fns.size()) stmts = std::move(d);
        else batch.push_back(std::move(d));
    }
    uint32_t errors_before = errors;
    if (!batch.empty()) define_batch(std::move(batch));
    if (!stmts || errors != errors_before) return;
    run_stmts(std::move(*stmts), code.has_value);
}

void ReplSession::Impl::run_stmts(Def d, bool has_value) {
    if (!verify(d)) return;
    std::string key = d.key();
    auto t0 = std::chrono::steady_clock::now();
    auto id = jit->declare_function(key, Linkage::Local, d.func->signature);
    std::optional<JitError> e;
    if (!id) e = id.error();
    if (!e) e = jit->define_function(id.value(), *d.func);
    if (!e) e = jit->finalize_definitions();
    if (e) {
        error(where(d), e->message);
        std::vector<std::string> ignored;
        rebuild_with({}, ignored);
        return;
    }
    double compile_us = micros_since(t0);
    last_stmts = std::move(d);
    auto t1 = std::chrono::steady_clock::now();
    JitCallOutcome r = jit->call(id.value(), {});
    double run_us = micros_since(t1);
    std::fflush(stdout);
    if (r.kind == JitCallOutcome::Kind::Trap) return report_trap("", r.trap);
    if (r.kind == JitCallOutcome::Kind::Error) return error(where(*last_stmts), r.message);
    if (has_value) {
        const DataValue& v = r.values.at(0);
        if (v.type == types::F64) {
            double x;
            std::memcpy(&x, &v.bits, 8);
            out << "= " << lang::format_f64(x);
        } else {
            out << "= " << static_cast<int64_t>(v.bits);
        }
    }
    if (show_time) out << (has_value ? "   " : "") << "[compile " << format_us(compile_us) << ", run " << format_us(run_us) << "]";
    if (has_value || show_time) out << "\n";
}

void ReplSession::Impl::set_lang(bool on) {
    lang_mode = on;
    out << (on ? "language mode: fn definitions, statements and expressions (:clif goes back)\n"
               : "CLIF mode\n");
}

}  // namespace heron::tools
