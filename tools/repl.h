// `heron repl`: define functions in CLIF (or in the small language of
// tools/lang/ after `:lang`), call them on the JIT, look at their IR and
// machine code.
//
//   heron> function %sq(i64) -> i64 {       a definition runs until its
//     ...> block0(v0: i64):                   closing brace; defining a
//     ...>     v1 = imul v0, v0               name again replaces it (the
//     ...>     return v1                      JIT frees the old code)
//     ...> }
//   defined %sq(i64) -> i64
//   heron> %sq(7)
//   %sq(7) = 49   [run 2.1 us]
//
// The session logic (ReplSession) only sees lines and writes to a stream, so
// scripted sessions (`heron repl < session.txt`) behave exactly like typed
// ones; line editing, history (~/.heron_history) and tab completion come from
// libedit when stdin is a terminal. An error (parse, verifier, compile, a
// trap while running) is printed with its location and the session goes on
// with everything defined before it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace heron::tools {

class ReplSession {
public:
    /// Everything the session prints (results and errors) goes to `out`.
    explicit ReplSession(std::ostream& out);
    ~ReplSession();
    ReplSession(const ReplSession&) = delete;
    ReplSession& operator=(const ReplSession&) = delete;

    /// Handles one line of input. Returns false once `:quit` was given.
    bool feed_line(std::string_view line);
    /// End of input: reports a definition left open.
    void finish();

    /// "heron> ", "lang> ", or "  ...> " inside a multi-line definition.
    const char* prompt() const;
    /// Commands, opcodes, keywords and defined function names starting with
    /// `prefix`, sorted.
    std::vector<std::string> completions(std::string_view prefix) const;

    /// Number of errors reported so far (for the exit status of scripts).
    uint32_t errors() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// `heron repl [--lang]`: runs a session on stdin.
int run_repl(const std::vector<std::string>& args);

}  // namespace heron::tools
