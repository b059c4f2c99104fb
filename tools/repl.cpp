// `heron repl`: the session: lines, definitions, calls (repl_session.h lists
// the other parts).
//
// The session keeps every accepted definition (its Function and where its
// text came from) and one JITModule holding their code. A batch of
// definitions (one typed function, or every function of a :load-ed file) is
// checked as a whole before anything changes:
//
//   parse -> verify -> imports agree with what is defined -> JIT define +
//   finalize (same signature: the module replaces the code in place, so
//   callers see the new version through their call cells)
//
// A redefinition that changes a signature cannot be patched in place:
// callers compiled against the old one would pass the wrong arguments. It is
// refused while another definition calls the old signature, and otherwise
// the module is rebuilt from the definitions. Any failure while linking also
// rebuilds the module from the definitions accepted before, so a failed
// batch leaves no trace.
#include "tools/repl.h"

#include <chrono>
#include <cstdio>
#include <utility>

#include "codegen/ir/printer.h"
#include "codegen/ir/run_command.h"
#include "codegen/verifier/verifier.h"
#include "tools/lang/host.h"
#include "tools/repl_session.h"

namespace heron::tools {

namespace repl_impl {

std::unique_ptr<JITModule> new_module() {
    JITBuilder builder;
    lang::add_host_symbols(builder);
    return std::make_unique<JITModule>(std::move(builder));
}

}  // namespace repl_impl

using namespace repl_impl;

void ReplSession::Impl::error(const std::string& where, const std::string& msg) {
    ++errors;
    out << (where.empty() ? "" : where + ": ") << "error: " << msg << "\n";
}

bool ReplSession::Impl::feed(std::string_view raw) {
    ++line_no;
    std::string line = strip(raw);
    if (!pending.empty()) {
        if (!line.empty() && line[0] == ':') {
            out << "(definition started at line " << pending_line << " abandoned)\n";
            reset_pending();
            return command(line);
        }
        add_to_definition(raw);
        return true;
    }
    if (line.empty() || line[0] == ';') return true;
    if (line[0] == ':') return command(line);
    if (line[0] == '%') {
        call(line);
        return true;
    }
    if (lang_mode) {
        if (line.rfind("//", 0) == 0) return true;
        pending_line = line_no;
        add_to_definition(raw);
        return true;
    }
    if (line.rfind("function", 0) == 0) {
        pending_line = line_no;
        add_to_definition(raw);
        return true;
    }
    error(here(), "expected a definition (function ...), a call (%name(args)) or a :command; :help lists them");
    return true;
}

void ReplSession::Impl::reset_pending() {
    pending.clear();
    depth = 0;
    seen_brace = false;
}

void ReplSession::Impl::add_to_definition(std::string_view raw) {
    pending.append(raw);
    pending.push_back('\n');
    if (lang_mode) {
        add_lang_line(raw);
        return;
    }
    for (char c : code_part(raw)) {
        if (c == '{') {
            ++depth;
            seen_brace = true;
        } else if (c == '}') {
            --depth;
        }
    }
    if (!seen_brace || depth > 0) return;
    std::string text = std::move(pending);
    uint32_t start = pending_line;
    reset_pending();
    define_text(text, "<input>", start - 1);
}

void ReplSession::Impl::finish() {
    if (pending.empty()) return;
    error("<input>:" + std::to_string(pending_line), "definition not closed at end of input (missing '}')");
    reset_pending();
}

void ReplSession::Impl::define_text(const std::string& text, const std::string& origin, uint32_t line_offset) {
    ParseOutcome parsed = parse_test_file(text);
    for (const Diagnostic& d : parsed.errors) {
        std::string loc = origin;
        if (d.loc.line) loc += ":" + std::to_string(d.loc.line + line_offset);
        if (d.loc.line && d.loc.col) loc += ":" + std::to_string(d.loc.col);
        error(loc, d.message);
    }
    std::vector<Def> batch;
    for (ParsedFunction& pf : parsed.file.functions) {
        Def d;
        d.func = std::move(pf.func);
        d.srcmap = std::move(pf.srcmap);
        d.origin = origin;
        d.line_offset = line_offset;
        batch.push_back(std::move(d));
    }
    if (!batch.empty()) define_batch(std::move(batch));
}

std::string ReplSession::Impl::where(const Def& d, std::optional<Inst> inst) const {
    std::string p = d.place_of(inst);
    return p.empty() ? d.origin : d.origin + ":" + p;
}

bool ReplSession::Impl::verify(const Def& d) {
    VerifierErrors errs;
    if (verify_function(*d.func, errs)) return true;
    for (const VerifierError& e : errs) {
        uint32_t l = 0;
        if (e.inst && e.inst->index() < d.srcmap.inst_line.size()) l = d.srcmap.inst_line[*e.inst];
        if (!l && e.block && e.block->index() < d.srcmap.block_line.size()) l = d.srcmap.block_line[*e.block];
        if (!l) l = d.srcmap.function.line;
        std::string loc = d.origin + (l ? ":" + std::to_string(l + d.line_offset) : "");
        error(loc, (e.context.empty() ? "" : e.context + ": ") + e.message);
    }
    return false;
}

const Signature* ReplSession::Impl::signature_after(const std::string& key, const std::vector<Def>& batch) const {
    for (const Def& d : batch) {
        if (d.key() == key) return &d.func->signature;
    }
    auto it = defs.find(key);
    return it == defs.end() ? nullptr : &it->second.func->signature;
}

bool ReplSession::Impl::imports_agree(const Def& d, const std::vector<Def>& batch, bool report) {
    bool ok = true;
    for (const ExtFuncData& ef : d.func->dfg.ext_funcs) {
        const Signature* have = signature_after(key_of(ef.name), batch);
        const Signature& used = d.func->dfg.signatures[ef.signature];
        if (!have || *have == used) continue;
        ok = false;
        if (!report) continue;
        error(where(d), d.func->name.to_string() + " calls " + ef.name.to_string() + " as " +
                            print_signature(used) + " but it is defined as " + print_signature(*have));
    }
    return ok;
}

void ReplSession::Impl::define_batch(std::vector<Def> batch) {
    // Drop what does not verify or disagrees with the definitions.
    std::vector<Def> good;
    for (Def& d : batch) {
        if (d.key().rfind("__", 0) == 0) {
            error(where(d), d.func->name.to_string() + ": names starting with __ are reserved (the REPL and the JIT "
                                                       "name their own functions so)");
            continue;
        }
        if (verify(d)) good.push_back(std::move(d));
    }
    // Calls are checked against the definitions as they will be, so dropping
    // one definition can make another disagree: repeat until none is dropped.
    for (size_t i = 0; i < good.size();) {
        if (imports_agree(good[i], good)) {
            ++i;
            continue;
        }
        good.erase(good.begin() + static_cast<std::ptrdiff_t>(i));
        i = 0;
    }
    if (good.empty()) return;
    // A changed signature: no remaining definition may call the old one.
    bool rebuild = false;
    for (const Def& d : good) {
        auto it = defs.find(d.key());
        if (it == defs.end() || it->second.func->signature == d.func->signature) continue;
        for (const auto& [k, other] : defs) {
            if (signature_after(k, good) != &other.func->signature) continue;  // replaced too
            if (!imports_agree(other, good, false)) {
                error(where(d), "cannot change the signature of " + d.func->name.to_string() + " while " +
                                    other.func->name.to_string() +
                                    " calls it with the old one; define them anew together (one :load, or "
                                    "one language input)");
                return;
            }
        }
        rebuild = true;
    }
    std::vector<std::string> messages;
    if (rebuild) {
        if (!rebuild_with(good, messages)) return;
    } else if (!install(good, messages)) {
        std::vector<std::string> ignored;
        rebuild_with({}, ignored);  // forget the failed batch
        return;
    }
    for (Def& d : good) {
        std::string k = d.key();
        bool again = defs.count(k) != 0;
        if (!again) order.push_back(k);
        defs[k] = std::move(d);
    }
    for (const std::string& m : messages) out << m << "\n";
}

bool ReplSession::Impl::install(const std::vector<Def>& batch, std::vector<std::string>& messages) {
    for (const Def& d : batch) {
        auto id = jit->declare_function(d.key(), Linkage::Export, d.func->signature);
        if (!id) {
            error(where(d), id.error().message);
            return false;
        }
    }
    std::vector<double> times;
    for (const Def& d : batch) {
        FuncId id = *jit->find_function(d.key());
        auto t0 = std::chrono::steady_clock::now();
        if (auto e = jit->define_function(id, *d.func)) {
            error(where(d), e->message);
            return false;
        }
        times.push_back(micros_since(t0));
    }
    auto t0 = std::chrono::steady_clock::now();
    if (auto e = jit->finalize_definitions()) {
        error(where(batch.front()), e->message);
        return false;
    }
    double link_us = micros_since(t0);
    for (size_t i = 0; i < batch.size(); ++i) {
        const Def& d = batch[i];
        FuncId id = *jit->find_function(d.key());
        ids[d.key()] = id;
        std::string m = (defs.count(d.key()) ? "redefined " : "defined ") + d.func->name.to_string() +
                        print_signature(d.func->signature);
        if (show_time) {
            const CompiledCode* code = jit->compiled_code(id);
            m += "   [compile " + format_us(times[i]) + ", " + std::to_string(code ? code->bytes.size() : 0) +
                 " bytes";
            if (i + 1 == batch.size()) m += ", link " + format_us(link_us);
            m += "]";
        }
        messages.push_back(std::move(m));
    }
    return true;
}

bool ReplSession::Impl::rebuild_with(const std::vector<Def>& batch, std::vector<std::string>& messages) {
    auto saved = std::move(jit);
    auto saved_ids = ids;
    jit = std::make_unique<JITModule>();
    ids.clear();
    std::vector<Def> all;
    for (const std::string& k : order) {
        if (signature_after(k, batch) != &defs.at(k).func->signature) continue;
        Def copy;
        copy.func = std::make_unique<Function>(*defs.at(k).func);
        copy.srcmap = defs.at(k).srcmap;
        copy.origin = defs.at(k).origin;
        copy.line_offset = defs.at(k).line_offset;
        all.push_back(std::move(copy));
    }
    std::vector<std::string> ignored;
    bool ok = all.empty() || install(all, ignored);
    if (ok && !batch.empty()) ok = install(batch, messages);
    if (!ok) {
        jit = std::move(saved);
        ids = std::move(saved_ids);
        return false;
    }
    return true;
}

const Def* ReplSession::Impl::find_def(std::string name) const {
    if (!name.empty() && name[0] == '%') name.erase(0, 1);
    auto it = defs.find(name);
    if (it != defs.end()) return &it->second;
    if (last_stmts && last_stmts->key() == name) return &*last_stmts;
    return nullptr;
}

void ReplSession::Impl::call(const std::string& line) {
    size_t paren = line.find('(');
    std::string name = strip(line.substr(1, paren == std::string::npos ? std::string::npos : paren - 1));
    auto known = defs.find(name);
    const Def* d = known == defs.end() ? nullptr : &known->second;
    if (!d) {
        error(here(), "no function %" + name + " is defined");
        return;
    }
    Diagnostic diag;
    auto cmd = parse_run_command(line, RunCommand::Kind::Print, d->func->signature, diag);
    if (!cmd) {
        error(here() + (diag.loc.col ? ":" + std::to_string(diag.loc.col) : ""), diag.message);
        return;
    }
    FuncId id = ids.at(d->key());
    auto t0 = std::chrono::steady_clock::now();
    JitCallOutcome r = jit->call(id, cmd->args);
    double us = micros_since(t0);
    std::string shown = "%" + name + "(";
    for (size_t i = 0; i < cmd->args.size(); ++i) shown += (i ? ", " : "") + cmd->args[i].to_string();
    shown += ")";
    switch (r.kind) {
    case JitCallOutcome::Kind::Return: {
        std::string vals;
        for (size_t i = 0; i < r.values.size(); ++i) vals += (i ? ", " : "") + r.values[i].to_string();
        out << shown << " = " << (r.values.empty() ? "(no results)" : vals);
        if (show_time) out << "   [run " << format_us(us) << "]";
        out << "\n";
        return;
    }
    case JitCallOutcome::Kind::Trap: report_trap(shown, r.trap); return;
    case JitCallOutcome::Kind::Error: error(here(), shown + ": " + r.message); return;
    }
}

void ReplSession::Impl::report_trap(const std::string& shown, const TrapInfo& t) {
    const Def* d = find_def(t.function);
    std::string msg = (shown.empty() ? "" : shown + ": ") + "trap " + trapcode_name(t.code) + " in %" + t.function;
    if (d && d->lang) {
        msg += " at " + where(*d, t.inst);
    } else {
        if (t.inst) {
            msg += " at inst" + std::to_string(t.inst->index());
            if (d && t.inst->index() < d->func->dfg.num_insts()) msg += " (" + print_inst(*d->func, *t.inst) + ")";
        }
        if (d) msg += ", defined at " + where(*d, t.inst);
    }
    ++errors;
    out << msg << "\n";
}

// --- the interface (repl.h) ---------------------------------------------------

ReplSession::ReplSession(std::ostream& out) : impl_(std::make_unique<Impl>(out)) {}
ReplSession::~ReplSession() = default;
bool ReplSession::feed_line(std::string_view line) { return impl_->feed(line); }
void ReplSession::finish() { impl_->finish(); }
const char* ReplSession::prompt() const {
    if (!impl_->pending.empty()) return "  ...> ";
    return impl_->lang_mode ? "lang> " : "heron> ";
}
std::vector<std::string> ReplSession::completions(std::string_view prefix) const {
    return impl_->completions(prefix);
}
uint32_t ReplSession::errors() const { return impl_->errors; }

}  // namespace heron::tools
