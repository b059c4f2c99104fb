// `heron repl`: the session (ReplSession) and the terminal around it.
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

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <editline/readline.h>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/run_command.h"
#include "codegen/isa/x64/settings.h"
#include "codegen/opt/structurize.h"
#include "codegen/verifier/verifier.h"
#include "jit/jit_module.h"
#include "tools/disasm_x64.h"
#include "tools/lang/codegen.h"
#include "tools/lang/host.h"
#include "tools/lang/lang.h"
#include "tools/lang/parser.h"

namespace heron::tools {

namespace {

constexpr const char* kHelp =
    "Definitions and calls:\n"
    "  function %name(...) -> ... { ... }   define (multi-line, until the closing brace);\n"
    "                                      defining a name again replaces it\n"
    "  %name(arg, ...)                     call on the JIT; prints the results and the time\n"
    "  :lang / :clif                       switch to the small language (docs/lang.md) and back:\n"
    "                                      `fn f(x: i64) -> i64 { ... }` defines, any other\n"
    "                                      input runs at once (`fib(20)`, `for i in 0..3 { print(i); }`)\n"
    "Commands:\n"
    "  :ir NAME          the function's IR\n"
    "  :asm NAME         its machine code (x86-64 disassembly)\n"
    "  :loops NAME       its natural loops (loop analysis): header, depth, parent, preheader,\n"
    "                    blocks, latches, exits\n"
    "  :structure NAME [--no-break]\n"
    "                    its structured form (region tree, docs/structure.md); --no-break\n"
    "                    also removes break and continue\n"
    "  :time on|off      show compile and run times (default on)\n"
    "  :load FILE        define every function of a CLIF file (FILE.hn: a program in the language)\n"
    "  :save FILE        write every definition (as CLIF) to FILE\n"
    "  :list             the defined functions and their signatures\n"
    "  :target           the ISA code is generated for and its CPU features\n"
    "  :help             this text\n"
    "  :quit             leave (end of input does too)\n"
    "A line starting with ':' inside an open definition abandons it.\n";

const char* const kCommands[] = {":ir",   ":asm",    ":loops", ":structure", ":time", ":load", ":save",
                                 ":list", ":target", ":help",  ":quit",      ":lang", ":clif"};
const char* const kLangWords[] = {"fn",    "let",   "if",  "else",  "while", "for",        "in",   "break",
                                  "continue", "return", "match", "i64", "f64", "print", "print_char", "sqrt"};

std::string key_of(const ExternalName& n) { return n.kind == ExternalName::Kind::User ? n.to_string() : n.name; }

std::string strip(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    size_t e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

/// The part of a CLIF line before its `;` comment.
std::string_view code_part(std::string_view line) {
    size_t c = line.find(';');
    return c == std::string_view::npos ? line : line.substr(0, c);
}

std::string format_us(double us) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f us", us);
    return buf;
}

double micros_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

/// A function as the session keeps it: the IR and where its text came from.
struct Def {
    std::unique_ptr<Function> func;
    SourceMap srcmap;          // lines relative to the text it was parsed from
    SecondaryMap<Inst, uint32_t> inst_col;  // columns, for the language's functions
    std::string origin;        // "<input>" or a file name
    uint32_t line_offset = 0;  // added to srcmap lines to get lines of `origin`

    std::string key() const { return key_of(func->name); }
    /// "LINE" or "LINE:COL" of `inst` (else of the function) in `origin`.
    std::string place_of(std::optional<Inst> inst) const {
        uint32_t l = 0, c = 0;
        if (inst && inst->index() < srcmap.inst_line.size()) l = srcmap.inst_line[*inst];
        if (l != 0 && inst) c = inst_col[*inst];
        if (l == 0) {
            l = srcmap.function.line;
            c = lang ? srcmap.function.col : 0;
        }
        if (l == 0) return "";
        return std::to_string(l + line_offset) + (c ? ":" + std::to_string(c) : "");
    }
    bool lang = false;  // from the language (columns are meaningful)
};

/// A JIT module that can link the language's host functions.
std::unique_ptr<JITModule> new_module() {
    JITBuilder builder;
    lang::add_host_symbols(builder);
    return std::make_unique<JITModule>(std::move(builder));
}

}  // namespace

struct ReplSession::Impl {
    explicit Impl(std::ostream& o) : out(o), jit(new_module()) {}

    std::ostream& out;
    std::unique_ptr<JITModule> jit;
    std::map<std::string, Def> defs;   // by key
    std::vector<std::string> order;    // keys in order of first definition
    std::map<std::string, FuncId> ids;  // by key, in `jit`

    bool lang_mode = false;
    std::optional<Def> last_stmts;     // the function the last language statements ran in
    std::string pending;               // an open definition (or language input)
    uint32_t pending_line = 0;
    int depth = 0;
    bool seen_brace = false;

    uint32_t line_no = 0;
    bool show_time = true;
    uint32_t errors = 0;

    // --- output --------------------------------------------------------------
    void error(const std::string& where, const std::string& msg) {
        ++errors;
        out << (where.empty() ? "" : where + ": ") << "error: " << msg << "\n";
    }
    std::string here() const { return "<input>:" + std::to_string(line_no); }

    // --- lines ----------------------------------------------------------------
    bool feed(std::string_view raw) {
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

    void reset_pending() {
        pending.clear();
        depth = 0;
        seen_brace = false;
    }

    void add_to_definition(std::string_view raw) {
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

    /// Language input runs when its braces balance.
    void add_lang_line(std::string_view raw) {
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

    std::string lang_error(const std::string& origin, uint32_t line_offset, const Diagnostic& d) {
        Diagnostic shifted = d;
        if (shifted.loc.line) shifted.loc.line += line_offset;
        ++errors;
        return lang::format_error(origin, shifted);
    }

    /// Compiles language input (a file: functions only) and defines its
    /// functions; statements run at once in a function of their own.
    void run_lang(const std::string& text, const std::string& origin, uint32_t line_offset, bool file) {
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

    /// Compiles the statements' function (not kept as a definition: the
    /// next input replaces it) and calls it.
    void run_stmts(Def d, bool has_value) {
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

    void finish() {
        if (pending.empty()) return;
        error("<input>:" + std::to_string(pending_line), "definition not closed at end of input (missing '}')");
        reset_pending();
    }

    // --- definitions ------------------------------------------------------------
    void define_text(const std::string& text, const std::string& origin, uint32_t line_offset) {
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

    std::string where(const Def& d, std::optional<Inst> inst = std::nullopt) const {
        std::string p = d.place_of(inst);
        return p.empty() ? d.origin : d.origin + ":" + p;
    }

    bool verify(const Def& d) {
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

    /// The signature `key` has once `batch` is in (nullptr: not defined).
    const Signature* signature_after(const std::string& key, const std::vector<Def>& batch) const {
        for (const Def& d : batch) {
            if (d.key() == key) return &d.func->signature;
        }
        auto it = defs.find(key);
        return it == defs.end() ? nullptr : &it->second.func->signature;
    }

    /// Every call of `d` to a defined function uses that function's signature.
    bool imports_agree(const Def& d, const std::vector<Def>& batch, bool report = true) {
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

    void define_batch(std::vector<Def> batch) {
        // Drop what does not verify or disagrees with the definitions.
        std::vector<Def> good;
        for (Def& d : batch) {
            if (verify(d) && imports_agree(d, batch)) good.push_back(std::move(d));
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
                                        other.func->name.to_string() + " calls it; redefine the caller first");
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

    /// Defines `batch` in the current module. Fills `messages` with one
    /// line per definition.
    bool install(const std::vector<Def>& batch, std::vector<std::string>& messages) {
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

    /// A fresh module with every definition, those of `batch` replacing
    /// theirs. On failure the current module stays.
    bool rebuild_with(const std::vector<Def>& batch, std::vector<std::string>& messages) {
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

    const Def* find_def(std::string name) const {
        if (!name.empty() && name[0] == '%') name.erase(0, 1);
        auto it = defs.find(name);
        if (it != defs.end()) return &it->second;
        if (last_stmts && last_stmts->key() == name) return &*last_stmts;
        return nullptr;
    }

    // --- calls -------------------------------------------------------------------
    void call(const std::string& line) {
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

    void report_trap(const std::string& shown, const TrapInfo& t) {
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

    // --- commands ----------------------------------------------------------------
    bool command(const std::string& line) {
        std::istringstream in(line);
        std::string cmd, arg;
        in >> cmd;
        std::getline(in, arg);
        arg = strip(arg);
        if (cmd == ":quit" || cmd == ":q") return false;
        if (cmd == ":help") out << kHelp;
        else if (cmd == ":ir") show_ir(arg);
        else if (cmd == ":asm") show_asm(arg);
        else if (cmd == ":loops") show_loops(arg);
        else if (cmd == ":structure") show_structure(arg);
        else if (cmd == ":time") set_time(arg);
        else if (cmd == ":load") load(arg);
        else if (cmd == ":save") save(arg);
        else if (cmd == ":list") list();
        else if (cmd == ":target") target();
        else if (cmd == ":lang") set_lang(true);
        else if (cmd == ":clif") set_lang(false);
        else error(here(), "unknown command " + cmd + "; :help lists the commands");
        return true;
    }

    const Def* need_def(const std::string& cmd, const std::string& arg) {
        if (arg.empty()) {
            error(here(), cmd + " needs a function name");
            return nullptr;
        }
        const Def* d = find_def(arg);
        if (!d) error(here(), "no function " + (arg[0] == '%' ? arg : "%" + arg) + " is defined");
        return d;
    }

    void show_ir(const std::string& arg) {
        if (const Def* d = need_def(":ir", arg)) out << print_function(*d->func);
    }

    void show_asm(const std::string& arg) {
        const Def* d = need_def(":asm", arg);
        if (!d) return;
        FuncId id = ids.at(d->key());
        const CompiledCode* code = jit->compiled_code(id);
        if (!code) {
            error(here(), d->func->name.to_string() + " has no code");
            return;
        }
        std::map<uint64_t, std::string> labels;
        for (const auto& [off, name] : code->labels) labels[off] = name;
        auto addr = reinterpret_cast<uint64_t>(jit->get_finalized_function(id));
        out << "; " << d->func->name.to_string() << ": " << code->bytes.size() << " bytes, frame "
            << code->frame_size << " bytes\n";
        out << disassemble_x64(code->bytes.data(), code->bytes.size(), addr, labels);
    }

    /// One line per loop, outermost first, in the words of `test loops`
    /// annotations plus the preheader (LoopForm's first requirement).
    void show_loops(const std::string& arg) {
        const Def* d = need_def(":loops", arg);
        if (!d) return;
        const Function& f = *d->func;
        ControlFlowGraph cfg(f);
        DominatorTree dt(f, cfg);
        LoopAnalysis loops;
        if (auto e = loops.compute(f, cfg, dt)) return error(here(), f.name.to_string() + ": " + e->message);
        if (loops.num_loops() == 0) {
            out << f.name.to_string() << ": no loops\n";
            return;
        }
        auto list = [](auto span) {
            std::vector<Block> v(span.begin(), span.end());
            std::sort(v.begin(), v.end());
            std::string s;
            for (Block b : v) s += " " + b.to_string();
            return s.empty() ? std::string(" none") : s;
        };
        for (Loop l : loops.loops()) {
            auto parent = loops.parent(l);
            auto pre = loops.preheader(l);
            out << std::string(2 * (loops.loop_depth(l) - 1), ' ') << "loop " << loops.header(l).to_string()
                << ": depth " << loops.loop_depth(l) << ", parent "
                << (parent ? loops.header(*parent).to_string() : std::string("none")) << ", preheader "
                << (pre ? pre->to_string() : std::string("none")) << ", blocks" << list(loops.blocks(l))
                << ", latches" << list(loops.latches(l)) << ", exits" << list(loops.exit_blocks(l)) << "\n";
        }
    }

    void show_structure(std::string arg) {
        bool no_break = false;
        const std::string flag = "--no-break";
        if (arg.size() >= flag.size() && arg.compare(arg.size() - flag.size(), flag.size(), flag) == 0) {
            no_break = true;
            arg = strip(arg.substr(0, arg.size() - flag.size()));
        }
        const Def* d = need_def(":structure", arg);
        if (!d) return;
        Structurizer s;
        RegionTree tree;
        std::optional<StructureError> err = s.run(*d->func, tree);
        if (!err && no_break) err = remove_break_continue(tree);
        if (err) return error(here(), d->func->name.to_string() + ": " + err->message);
        out << print_region_tree(*d->func, tree);
    }

    void set_lang(bool on) {
        lang_mode = on;
        out << (on ? "language mode: fn definitions, statements and expressions (:clif goes back)\n"
                   : "CLIF mode\n");
    }

    void set_time(const std::string& arg) {
        if (arg == "on") show_time = true;
        else if (arg == "off") show_time = false;
        else return error(here(), ":time takes on or off");
        out << "time " << arg << "\n";
    }

    void load(const std::string& path) {
        if (path.empty()) return error(here(), ":load needs a file name");
        std::ifstream in(path, std::ios::binary);
        if (!in) return error(here(), "cannot read " + path);
        std::stringstream ss;
        ss << in.rdbuf();
        size_t before = defs.size();
        uint32_t errors_before = errors;
        bool is_lang = path.size() > 3 && path.compare(path.size() - 3, 3, ".hn") == 0;
        if (is_lang) run_lang(ss.str(), path, 0, /*file=*/true);
        else define_text(ss.str(), path, 0);
        out << "loaded " << path << ": " << defs.size() - before << " new function(s)"
            << (errors != errors_before ? ", with errors" : "") << "\n";
    }

    void save(const std::string& path) {
        if (path.empty()) return error(here(), ":save needs a file name");
        std::ofstream f(path, std::ios::binary);
        if (!f) return error(here(), "cannot write " + path);
        bool first = true;
        for (const std::string& k : order) {
            if (!first) f << "\n";
            first = false;
            f << print_function(*defs.at(k).func);
        }
        f.close();
        if (!f) return error(here(), "cannot write " + path);
        out << "saved " << order.size() << " function(s) to " << path << "\n";
    }

    void list() {
        for (const std::string& k : order) {
            const Def& d = defs.at(k);
            out << d.func->name.to_string() << print_signature(d.func->signature) << "   (" << where(d) << ")\n";
        }
    }

    void target() {
        x64::Settings s = x64::Settings::host();
        out << jit->isa().name() << " (host); CPU features:";
        const std::pair<bool, const char*> features[] = {{s.has_lzcnt, "lzcnt"}, {s.has_bmi1, "bmi1"},
                                                         {s.has_popcnt, "popcnt"}, {s.has_sse41, "sse4.1"},
                                                         {s.has_fma, "fma"},     {s.has_movbe, "movbe"}};
        bool any = false;
        for (const auto& [on, name] : features) {
            if (!on) continue;
            out << " " << name;
            any = true;
        }
        out << (any ? "" : " baseline (sse2)") << "\n";
    }

    // --- completion ---------------------------------------------------------------
    std::vector<std::string> completions(std::string_view prefix) const {
        std::vector<std::string> all;
        auto add = [&](std::string s) {
            if (s.size() >= prefix.size() && std::string_view(s).substr(0, prefix.size()) == prefix) {
                all.push_back(std::move(s));
            }
        };
        for (const char* c : kCommands) add(c);
        for (unsigned i = 0; i < kNumOpcodes; ++i) add(std::string(opcode_name(static_cast<Opcode>(i))));
        for (const std::string& k : order) {
            add("%" + k);
            add(k);  // after :ir / :asm
        }
        add("function");
        if (lang_mode) {
            for (const char* w : kLangWords) add(w);
        }
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        return all;
    }
};

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

// --- the terminal (libedit) ----------------------------------------------------------
namespace {

// libedit's completion hooks are plain C callbacks without a user pointer;
// this is the session they complete for, set only while run_repl runs.
ReplSession* g_completing = nullptr;

char* completion_generator(const char* text, int state) {
    static std::vector<std::string> matches;
    static size_t next = 0;
    if (state == 0) {
        matches = g_completing ? g_completing->completions(text) : std::vector<std::string>{};
        next = 0;
    }
    if (next >= matches.size()) return nullptr;
    return strdup(matches[next++].c_str());
}

char** complete(const char* text, int, int) {
    rl_attempted_completion_over = 1;
    return rl_completion_matches(text, completion_generator);
}

std::string history_path() {
    const char* home = std::getenv("HOME");
    return home && *home ? std::string(home) + "/.heron_history" : std::string();
}

int run_terminal(ReplSession& session) {
    g_completing = &session;
    static char breaks[] = " \t\n(),=";
    rl_completer_word_break_characters = breaks;
    rl_attempted_completion_function = complete;
    std::string hist = history_path();
    using_history();
    stifle_history(1000);
    if (!hist.empty()) read_history(hist.c_str());
    std::cout << "heron repl: CLIF definitions, %calls, :help for commands\n";
    for (;;) {
        char* raw = readline(session.prompt());
        if (!raw) break;
        std::string line(raw);
        std::free(raw);
        if (!strip(line).empty()) add_history(line.c_str());
        bool go_on = session.feed_line(line);
        std::cout.flush();
        if (!go_on) break;
    }
    session.finish();
    if (!hist.empty()) write_history(hist.c_str());
    g_completing = nullptr;
    return 0;
}

}  // namespace

int run_repl(const std::vector<std::string>& args) {
    bool lang = false;
    for (const std::string& a : args) {
        if (a == "--lang") {
            lang = true;
            continue;
        }
        std::cerr << "heron repl: unknown option " << a << "\n";
        return 2;
    }
    ReplSession session(std::cout);
    if (lang) session.feed_line(":lang");
    if (isatty(STDIN_FILENO)) return run_terminal(session);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (!session.feed_line(line)) break;
    }
    session.finish();
    std::cout.flush();
    return session.errors() ? 1 : 0;
}

}  // namespace heron::tools
