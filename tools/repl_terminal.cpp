// `heron repl` on a terminal (libedit: line editing, history in
// ~/.heron_history, tab completion) or on a script from stdin.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include <editline/readline.h>

#include "tools/repl.h"
#include "tools/repl_session.h"

namespace heron::tools {

using namespace repl_impl;

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
