// The state of a `heron repl` session, shared by the files that implement
// it (internal to tools/; the interface is tools/repl.h):
//
//   repl.cpp           lines, CLIF definitions (batches, redefinition,
//                      module rebuilds), calls and traps
//   repl_lang.cpp      input in the small language (:lang)
//   repl_commands.cpp  the :commands and tab completion
//   repl_terminal.cpp  libedit (line editing, history) and `heron repl`
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/ir/parser.h"
#include "jit/jit_module.h"
#include "tools/repl.h"

namespace heron::tools {
namespace repl_impl {

inline std::string key_of(const ExternalName& n) { return n.kind == ExternalName::Kind::User ? n.to_string() : n.name; }

inline std::string strip(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    size_t e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

/// The part of a CLIF line before its `;` comment.
inline std::string_view code_part(std::string_view line) {
    size_t c = line.find(';');
    return c == std::string_view::npos ? line : line.substr(0, c);
}

inline std::string format_us(double us) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f us", us);
    return buf;
}

inline double micros_since(std::chrono::steady_clock::time_point t0) {
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
std::unique_ptr<JITModule> new_module();

}  // namespace repl_impl

struct ReplSession::Impl {
    explicit Impl(std::ostream& o) : out(o), jit(repl_impl::new_module()) {}

    std::ostream& out;
    std::unique_ptr<JITModule> jit;
    std::map<std::string, repl_impl::Def> defs;  // by key
    std::vector<std::string> order;              // keys in order of first definition
    std::map<std::string, FuncId> ids;           // by key, in `jit`

    bool lang_mode = false;
    std::optional<repl_impl::Def> last_stmts;  // the function the last language statements ran in
    std::string pending;                       // an open definition (or language input)
    uint32_t pending_line = 0;
    int depth = 0;
    bool seen_brace = false;

    uint32_t line_no = 0;
    bool show_time = true;
    uint32_t errors = 0;

    // --- output ----------------------------------------------------------------
    void error(const std::string& where, const std::string& msg);
    std::string here() const { return "<input>:" + std::to_string(line_no); }

    // --- lines (repl.cpp) ------------------------------------------------------
    bool feed(std::string_view raw);
    void reset_pending();
    void add_to_definition(std::string_view raw);
    void finish();

    // --- the language (repl_lang.cpp) ------------------------------------------
    /// Language input runs when its braces balance.
    void add_lang_line(std::string_view raw);
    std::string lang_error(const std::string& origin, uint32_t line_offset, const Diagnostic& d);
    /// Compiles language input (a file: functions only) and defines its
    /// functions; statements run at once in a function of their own.
    void run_lang(const std::string& text, const std::string& origin, uint32_t line_offset, bool file);
    /// Compiles the statements' function (not kept as a definition: the
    /// next input replaces it) and calls it.
    void run_stmts(repl_impl::Def d, bool has_value);
    void set_lang(bool on);

    // --- definitions (repl.cpp) ------------------------------------------------
    void define_text(const std::string& text, const std::string& origin, uint32_t line_offset);
    std::string where(const repl_impl::Def& d, std::optional<Inst> inst = std::nullopt) const;
    bool verify(const repl_impl::Def& d);
    /// The signature `key` has once `batch` is in (nullptr: not defined).
    const Signature* signature_after(const std::string& key, const std::vector<repl_impl::Def>& batch) const;
    /// Every call of `d` to a defined function uses that function's signature.
    bool imports_agree(const repl_impl::Def& d, const std::vector<repl_impl::Def>& batch, bool report = true);
    void define_batch(std::vector<repl_impl::Def> batch);
    /// Defines `batch` in the current module. Fills `messages` with one
    /// line per definition.
    bool install(const std::vector<repl_impl::Def>& batch, std::vector<std::string>& messages);
    /// A fresh module with every definition, those of `batch` replacing
    /// theirs. On failure the current module stays.
    bool rebuild_with(const std::vector<repl_impl::Def>& batch, std::vector<std::string>& messages);
    const repl_impl::Def* find_def(std::string name) const;

    // --- calls (repl.cpp) ------------------------------------------------------
    void call(const std::string& line);
    void report_trap(const std::string& shown, const TrapInfo& t);

    // --- commands and completion (repl_commands.cpp) ---------------------------
    bool command(const std::string& line);
    const repl_impl::Def* need_def(const std::string& cmd, const std::string& arg);
    void show_ir(const std::string& arg);
    void show_asm(const std::string& arg);
    /// One line per loop, outermost first, in the words of `test loops`
    /// annotations plus the preheader (LoopForm's first requirement).
    void show_loops(const std::string& arg);
    /// The IR after a pipeline of registered passes, run on a copy.
    void show_opt(const std::string& arg);
    void show_structure(std::string arg);
    void set_time(const std::string& arg);
    void load(const std::string& path);
    void save(const std::string& path);
    void list();
    void target();
    std::vector<std::string> completions(std::string_view prefix) const;
};

}  // namespace heron::tools
