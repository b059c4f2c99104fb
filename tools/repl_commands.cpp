// `heron repl` commands (:ir, :asm, :loops, :structure, :load, :save, ...)
// and tab completion.

#include <algorithm>
#include <fstream>
#include <sstream>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/analysis/loops.h"
#include "codegen/ir/printer.h"
#include "codegen/isa/x64/settings.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/opt/structurize.h"
#include "tools/disasm_aarch64.h"
#include "tools/disasm_x64.h"
#include "tools/repl_session.h"

namespace heron::tools {

using namespace repl_impl;

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
    "  :asm NAME         its machine code (x86-64 or AArch64 disassembly)\n"
    "  :opt NAME [PASSES]\n"
    "                    its IR after the passes (comma-separated; default: every registered\n"
    "                    pass, in order); the definition itself is not changed\n"
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

const char* const kCommands[] = {":ir",   ":asm",    ":opt", ":loops", ":structure", ":time", ":load", ":save",
                                 ":list", ":target", ":help",  ":quit",      ":lang", ":clif"};
const char* const kLangWords[] = {"fn",    "let",   "if",  "else",  "while", "for",        "in",   "break",
                                  "continue", "return", "match", "i64", "f64", "print", "print_char", "sqrt"};

}  // namespace

bool ReplSession::Impl::command(const std::string& line) {
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
    else if (cmd == ":opt") show_opt(arg);
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

const Def* ReplSession::Impl::need_def(const std::string& cmd, const std::string& arg) {
    if (arg.empty()) {
        error(here(), cmd + " needs a function name");
        return nullptr;
    }
    const Def* d = find_def(arg);
    if (!d) error(here(), "no function " + (arg[0] == '%' ? arg : "%" + arg) + " is defined");
    return d;
}

void ReplSession::Impl::show_ir(const std::string& arg) {
    if (const Def* d = need_def(":ir", arg)) out << print_function(*d->func);
}

void ReplSession::Impl::show_asm(const std::string& arg) {
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
    bool a64 = jit->isa().name() == "aarch64";
    out << (a64 ? disassemble_aarch64(code->bytes.data(), code->bytes.size(), addr, labels)
                : disassemble_x64(code->bytes.data(), code->bytes.size(), addr, labels));
}

void ReplSession::Impl::show_loops(const std::string& arg) {
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

void ReplSession::Impl::show_opt(const std::string& arg) {
    std::istringstream in(arg);
    std::string name, passes;
    in >> name >> passes;
    const Def* d = need_def(":opt", name);
    if (!d) return;
    if (passes.empty()) {
        for (const Pass& p : registered_passes()) passes += (passes.empty() ? "" : ",") + std::string(p.name);
    }
    PassManager pm;
    if (auto err = pm.add_pipeline(passes)) return error(here(), *err);
    Function f = *d->func;  // a copy: the definition stays as it is
    if (auto err = pm.run(f)) return error(here(), d->func->name.to_string() + ": " + *err);
    out << "; " << d->func->name.to_string() << " after " << passes << "\n" << print_function(f);
}

void ReplSession::Impl::show_structure(std::string arg) {
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

void ReplSession::Impl::set_time(const std::string& arg) {
    if (arg == "on") show_time = true;
    else if (arg == "off") show_time = false;
    else return error(here(), ":time takes on or off");
    out << "time " << arg << "\n";
}

void ReplSession::Impl::load(const std::string& path) {
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

void ReplSession::Impl::save(const std::string& path) {
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

void ReplSession::Impl::list() {
    for (const std::string& k : order) {
        const Def& d = defs.at(k);
        out << d.func->name.to_string() << print_signature(d.func->signature) << "   (" << where(d) << ")\n";
    }
}

void ReplSession::Impl::target() {
    if (jit->isa().name() == "aarch64") {
        out << "aarch64 (host); base ARMv8-A with FP/SIMD\n";
        return;
    }
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

std::vector<std::string> ReplSession::Impl::completions(std::string_view prefix) const {
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
    for (const Pass& p : registered_passes()) add(std::string(p.name));
    if (lang_mode) {
        for (const char* w : kLangWords) add(w);
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
}

}  // namespace heron::tools
