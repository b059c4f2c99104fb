// The `heron` command.
//
//   heron test FILE|DIR...          file tests (text-format.md)
//   heron cat FILE                  parse and print back in canonical form
//   heron verify FILE               parse and verify; prints errors
//   heron run FILE [--fn NAME] [--time] [--interp] [--opt-level L] [ARGS...]
//                                   call a function (JIT-compiled, or on the
//                                   interpreter) and print its results;
//                                   FILE.hn: a program in the small language
//                                   (tools/lang/, docs/lang.md)
//   heron compile FILE [--target ISA] [--opt-level L] [--disasm] [--vcode]
//                                   compile every function for the host (or
//                                   ISA: x86_64, aarch64) and print sizes,
//                                   machine code, VCode (x86-64)
//   --opt-level none|speed          the IR pipeline before lowering
//                                   (codegen/opt/pipeline.h); default: the
//                                   file's `set opt_level=`, else none
//   --regalloc linear-scan|single-pass
//                                   the register allocator (run, compile,
//                                   test); default linear-scan
//   heron structure FILE [--no-break] [--check]
//                                   structured pseudo-code (docs/structure.md)
//   heron repl [--lang]             interactive session (tools/repl.h)
#include "tools/cli.h"

#include <chrono>
#include <map>
#include <memory>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/interp/interpreter.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/run_command.h"
#include "codegen/context.h"
#include "codegen/machinst/isa.h"
#include "codegen/opt/pipeline.h"
#include "codegen/verifier/verifier.h"
#include "jit/jit_module.h"
#include "jit/object_module.h"
#include "tools/cli_passes.h"
#include "tools/disasm_aarch64.h"
#include "tools/disasm_x64.h"
#include "tools/filetest.h"
#include "tools/lang/lang.h"
#include "tools/repl.h"
#include "tools/structure.h"

namespace heron::tools {
namespace {

constexpr const char* kUsage =
    "usage: heron COMMAND ...\n"
    "  test FILE|DIR... [--opt-level=L] [--regalloc=A]\n"
    "                                   run file tests; prints failures and 'N passed, N failed'\n"
    "  cat FILE                         parse and print functions in canonical form\n"
    "  verify FILE                      parse and verify every function\n"
    "  run FILE [--fn NAME] [--time] [--interp] [--opt-level none|speed] [ARGS...]\n"
    "                                   call a function (default: %main, or the first one)\n"
    "                                   with ARGS typed by its signature; print its results.\n"
    "                                   JIT-compiled unless --interp. FILE.hn: a program in\n"
    "                                   the small language (docs/lang.md), default fn main;\n"
    "                                   --locals-in-slots keeps its variables in stack slots\n"
    "  --regalloc linear-scan|single-pass (run, compile) the register allocator; single-pass\n"
    "                                   compiles faster, its code is slower (default linear-scan)\n"
    "  compile FILE [--target ISA] [--opt-level none|speed] [--disasm] [--vcode] [--check] [-o OUT.o]\n"
    "                                   compile for the host or ISA (x86_64, aarch64); print\n"
    "                                   code size, machine code. --opt-level: the IR passes\n"
    "                                   before lowering (default: the file's set opt_level,\n"
    "                                   else none). --check: the allocation checker and the\n"
    "                                   verifier after every pass (as in tests). -o: write an\n"
    "                                   ELF object with every function (docs/object-files.md)\n"
    "  structure FILE [--no-break] [--check]\n"
    "                                   print each function as structured pseudo-code\n"
    "                                   (docs/structure.md); --check lowers it back to IR and\n"
    "                                   compares with the original on the run directives\n"
    "  opt FILE --passes=a,b [--dump-after=NAME|all] [--no-verify]\n"
    "                                   run passes (listed by 'heron opt'); print the IR\n"
    "  loops FILE                       print the loop tree: blocks, latches, exits, counted ranges\n"
    "  repl [--lang]                    interactive session: define CLIF functions (or, with\n"
    "                                   --lang or :lang, functions of the small language), call\n"
    "                                   them, look at IR and machine code (:help inside)\n";

bool read_file(const std::string& path, std::string& text) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    return true;
}

/// Parses a file, printing diagnostics as FILE:LINE:COL: message.
bool load(const std::string& path, ParseOutcome& out) {
    std::string text;
    if (!read_file(path, text)) {
        std::cerr << path << ": cannot read\n";
        return false;
    }
    out = parse_test_file(text);
    for (const Diagnostic& d : out.errors) std::cerr << d.format(path) << "\n";
    return out.ok();
}

/// `NAME V` / `NAME=V` at args[i] (advancing i past a separate value).
/// Returns false when args[i] is not the flag; true with `value` set, or
/// with `error` set when the value is missing (`choices` lists the valid
/// ones for the message).
bool valued_flag(const std::vector<std::string>& args, size_t& i, std::string_view name, std::string_view choices,
                 std::string& value, std::string& error) {
    const std::string& a = args[i];
    if (a == name) {
        if (i + 1 >= args.size()) {
            error = std::string(name) + " needs a value (" + std::string(choices) + ")";
            return true;
        }
        value = args[++i];
        return true;
    }
    if (a.size() > name.size() && a.compare(0, name.size(), name) == 0 && a[name.size()] == '=') {
        value = a.substr(name.size() + 1);
        return true;
    }
    return false;
}

/// `--opt-level L` / `--opt-level=L` at args[i], as valued_flag; an
/// unknown level sets `error`.
bool opt_level_flag(const std::vector<std::string>& args, size_t& i, std::optional<OptLevel>& level,
                    std::string& error) {
    std::string value;
    if (!valued_flag(args, i, "--opt-level", "none, speed", value, error)) return false;
    if (!error.empty()) return true;
    level = parse_opt_level(value);
    if (!level) error = "unknown opt level '" + value + "' (none, speed)";
    return true;
}

/// `--regalloc A` / `--regalloc=A` at args[i], as opt_level_flag.
bool regalloc_flag(const std::vector<std::string>& args, size_t& i, RegallocAlgorithm& algo, std::string& error) {
    std::string value;
    if (!valued_flag(args, i, "--regalloc", "linear-scan, single-pass", value, error)) return false;
    if (!error.empty()) return true;
    if (auto parsed = parse_regalloc(value))
        algo = *parsed;
    else
        error = "unknown register allocator '" + value + "' (linear-scan, single-pass)";
    return true;
}

/// The level a command uses: the flag, else the file's `set opt_level=`,
/// else none.
std::optional<OptLevel> file_opt_level(const std::string& path, const TestFile& file, std::optional<OptLevel> flag) {
    if (flag) return flag;
    for (const auto& [name, value] : file.settings) {
        if (name != "opt_level") continue;
        auto level = parse_opt_level(value);
        if (!level) std::cerr << path << ": unknown opt_level '" << value << "' (none, speed)\n";
        return level;
    }
    return OptLevel::None;
}

bool verify_file(const std::string& path, const TestFile& file) {
    bool ok = true;
    for (const ParsedFunction& pf : file.functions) {
        VerifierErrors errs;
        if (verify_function(*pf.func, errs)) continue;
        ok = false;
        for (const VerifierError& e : errs) {
            uint32_t line = pf.srcmap.function.line;
            if (e.inst && pf.srcmap.inst_line[*e.inst]) line = pf.srcmap.inst_line[*e.inst];
            else if (e.block && pf.srcmap.block_line[*e.block]) line = pf.srcmap.block_line[*e.block];
            std::cerr << path << ":" << line << ": " << (e.context.empty() ? "" : e.context + ": ") << e.message
                      << "\n";
        }
    }
    return ok;
}

int cmd_cat(const std::vector<std::string>& args) {
    if (args.size() != 1) {
        std::cerr << kUsage;
        return 2;
    }
    ParseOutcome parsed;
    bool ok = load(args[0], parsed);
    bool first = true;
    for (const ParsedFunction& pf : parsed.file.functions) {
        if (!first) std::cout << "\n";
        first = false;
        std::cout << print_function(*pf.func);
    }
    return ok ? 0 : 1;
}

int cmd_verify(const std::vector<std::string>& args) {
    if (args.size() != 1) {
        std::cerr << kUsage;
        return 2;
    }
    ParseOutcome parsed;
    if (!load(args[0], parsed)) return 1;
    if (!verify_file(args[0], parsed.file)) return 1;
    std::cout << args[0] << ": " << parsed.file.functions.size() << " function(s) verified\n";
    return 0;
}

int cmd_run(const std::vector<std::string>& args) {
    std::string path, fn;
    bool show_time = false, interp_only = false, locals_in_slots = false;
    std::optional<OptLevel> opt_flag;
    std::string flag_error;
    std::vector<std::string> values;
    RegallocAlgorithm regalloc = RegallocAlgorithm::LinearScan;
    for (size_t i = 0; i < args.size(); ++i) {
        if (opt_level_flag(args, i, opt_flag, flag_error) || regalloc_flag(args, i, regalloc, flag_error)) {
            if (!flag_error.empty()) {
                std::cerr << "heron run: " << flag_error << "\n";
                return 2;
            }
        } else if (args[i] == "--fn" && i + 1 < args.size()) {
            fn = args[++i];
        } else if (args[i] == "--time") {
            show_time = true;
        } else if (args[i] == "--interp") {
            interp_only = true;
        } else if (args[i] == "--locals-in-slots") {
            locals_in_slots = true;
        } else if (path.empty()) {
            path = args[i];
        } else {
            values.push_back(args[i]);
        }
    }
    if (path.empty()) {
        std::cerr << kUsage;
        return 2;
    }
    if (!fn.empty() && fn[0] == '%') fn = fn.substr(1);
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".hn") == 0) {
        if (interp_only) {
            std::cerr << path << ": --interp runs CLIF files only\n";
            return 2;
        }
        lang::CodegenOptions codegen;
        codegen.locals_in_slots = locals_in_slots;
        return lang::run_file(path, fn, show_time, values, opt_flag.value_or(OptLevel::None), codegen);
    }
    if (locals_in_slots) {
        std::cerr << path << ": --locals-in-slots applies to .hn programs only\n";
        return 2;
    }
    ParseOutcome parsed;
    if (!load(path, parsed) || !verify_file(path, parsed.file)) return 1;
    const std::optional<OptLevel> opt_level = file_opt_level(path, parsed.file, opt_flag);
    if (!opt_level) return 1;
    const Function* target = nullptr;
    for (const ParsedFunction& pf : parsed.file.functions) {
        const ExternalName& n = pf.func->name;
        bool named = n.kind == ExternalName::Kind::TestCase;
        if (!fn.empty() ? (named && n.name == fn) : (named && n.name == "main")) target = pf.func.get();
    }
    if (!target && fn.empty() && !parsed.file.functions.empty()) target = parsed.file.functions[0].func.get();
    if (!target) {
        std::cerr << path << ": no function " << (fn.empty() ? "to run" : "%" + fn) << "\n";
        return 1;
    }
    const Signature& sig = target->signature;
    if (values.size() != sig.params.size()) {
        std::cerr << path << ": " << target->name.to_string() << " takes " << sig.params.size() << " argument(s), "
                  << values.size() << " given\n";
        return 1;
    }
    std::vector<DataValue> argv;
    for (size_t i = 0; i < values.size(); ++i) {
        std::string err;
        auto v = parse_data_value(values[i], sig.params[i].type, err);
        if (!v) {
            std::cerr << "argument " << i + 1 << ": " << err << "\n";
            return 1;
        }
        argv.push_back(*v);
    }
    InterpOutcome r;
    double compile_us = 0, run_us = 0;
    uint64_t executed = 0;
    const char* engine = interp_only ? "interpreter" : "jit";
    if (interp_only) {
        Interpreter interp;
        for (const ParsedFunction& pf : parsed.file.functions) interp.add_function(*pf.func);
        auto t0 = std::chrono::steady_clock::now();
        r = interp.call(*target, argv);
        run_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        executed = interp.executed();
    } else {
        JITBuilder builder;
        builder.opt_level(*opt_level);
        builder.regalloc(regalloc);
        JITModule jit(std::move(builder));
        auto t0 = std::chrono::steady_clock::now();
        std::optional<FuncId> target_id;
        for (const ParsedFunction& pf : parsed.file.functions) {
            const ExternalName& n = pf.func->name;
            std::string key = n.kind == ExternalName::Kind::User ? n.to_string() : n.name;
            auto id = jit.declare_function(key, Linkage::Export, pf.func->signature);
            if (!id) {
                std::cerr << path << ": " << id.error().message << "\n";
                return 1;
            }
            if (auto e = jit.define_function(id.value(), *pf.func)) {
                std::cerr << path << ": " << e->message << "\n";
                return 1;
            }
            if (pf.func.get() == target) target_id = id.value();
        }
        if (auto e = jit.finalize_definitions()) {
            std::cerr << path << ": " << e->message << "\n";
            return 1;
        }
        auto t1 = std::chrono::steady_clock::now();
        compile_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        r = to_interp_outcome(jit.call(*target_id, argv));
        run_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t1).count();
    }
    std::string result;
    int status = 0;
    switch (r.kind) {
    case InterpOutcome::Kind::Return:
        for (size_t i = 0; i < r.values.size(); ++i) result += (i ? ", " : "") + r.values[i].to_string();
        if (r.values.empty()) result = "(no results)";
        break;
    case InterpOutcome::Kind::Trap:
        result = "trap " + trapcode_name(r.trap) + ": " + r.message;
        status = 1;
        break;
    case InterpOutcome::Kind::Error:
        result = "error: " + r.message;
        status = 1;
        break;
    case InterpOutcome::Kind::OutOfFuel:
        result = "out of fuel: " + r.message;
        status = 1;
        break;
    }
    std::cout << target->name.to_string() << " = " << result;
    if (show_time) {
        char buf[160];
        if (interp_only) {
            std::snprintf(buf, sizeof buf, "   [%s: run %.1f us, %llu IR insts executed]", engine, run_us,
                          static_cast<unsigned long long>(executed));
        } else {
            std::snprintf(buf, sizeof buf, "   [%s, opt_level %s: compile %.1f us, run %.1f us]", engine,
                          std::string(opt_level_name(*opt_level)).c_str(), compile_us, run_us);
        }
        std::cout << buf;
    }
    std::cout << "\n";
    return status;
}

/// The IR instructions as comments at the start of their machine code.
/// Instructions without code of their own (an iconst folded into an
/// immediate, an icmp into a branch) are listed with the next instruction
/// of their block that has code, which is where they went. A jump that
/// falls through has no bytes: its comment goes before the next label.
std::vector<tools::DisasmComment> ir_comments(const Function& f, const CompiledCode& code) {
    std::vector<tools::DisasmComment> comments;
    std::map<uint64_t, std::string> label_at(code.labels.begin(), code.labels.end());
    std::vector<uint8_t> shown(f.dfg.num_insts(), 0);
    for (const auto& [offset, index] : code.ir_insts) {
        Inst inst(index);
        if (shown[index]) continue;
        // Walk back to the previous instruction shown in this block.
        std::vector<Inst> group{inst};
        for (auto p = f.layout.prev_inst(inst); p && !shown[p->index()]; p = f.layout.prev_inst(*p)) group.push_back(*p);
        auto label = label_at.find(offset);
        tools::DisasmComment c;
        c.offset = offset;
        c.before_labels = label != label_at.end() &&
                          label->second != "block" + std::to_string(f.layout.inst_block(inst)->index());
        for (auto it = group.rbegin(); it != group.rend(); ++it) {
            shown[it->index()] = 1;
            if (!c.text.empty()) c.text += "\n";
            c.text += print_inst(f, *it);
        }
        comments.push_back(std::move(c));
    }
    return comments;
}

/// `heron compile FILE -o OUT`: every function of the file, exported under
/// its name, in an ELF object (jit/object_module.h).
int write_object(const std::string& path, const ParseOutcome& parsed, std::unique_ptr<TargetIsa> isa,
                 const CompileOptions& opts, const std::string& output) {
    ObjectModule obj(std::move(isa), opts);
    for (const ParsedFunction& pf : parsed.file.functions) {
        const ExternalName& n = pf.func->name;
        const std::string name = n.kind == ExternalName::Kind::User ? n.to_string() : n.name;
        auto id = obj.declare_function(name, Linkage::Export, pf.func->signature);
        std::optional<JitError> e = id ? obj.define_function(id.value(), *pf.func) : id.error();
        if (e) {
            std::cerr << path << ":" << pf.srcmap.function.line << ": " << e->message << "\n";
            return 1;
        }
    }
    if (auto e = obj.write(output)) {
        std::cerr << "heron compile: " << e->message << "\n";
        return 1;
    }
    return 0;
}

int cmd_compile(const std::vector<std::string>& args) {
    std::string path, target(host_isa_name()), output;
    bool disasm = false, vcode = false, check = false;
    std::optional<OptLevel> opt_flag;
    std::string flag_error;
    RegallocAlgorithm regalloc = RegallocAlgorithm::LinearScan;
    for (size_t k = 0; k < args.size(); ++k) {
        const std::string& a = args[k];
        if (opt_level_flag(args, k, opt_flag, flag_error) || regalloc_flag(args, k, regalloc, flag_error)) {
            if (!flag_error.empty()) {
                std::cerr << "heron compile: " << flag_error << "\n";
                return 2;
            }
        } else if (a == "--disasm") disasm = true;
        else if (a == "--vcode") vcode = true;
        else if (a == "--check") check = true;
        else if (a == "--target" && k + 1 < args.size()) target = args[++k];
        else if (a == "-o" && k + 1 < args.size()) output = args[++k];
        else if (a.starts_with("-")) {
            std::cerr << "heron compile: unknown option '" << a << "'\n" << kUsage;
            return 2;
        } else if (path.empty()) path = a;
        else {
            std::cerr << kUsage;
            return 2;
        }
    }
    if (path.empty()) {
        std::cerr << kUsage;
        return 2;
    }
    ParseOutcome parsed;
    if (!load(path, parsed) || !verify_file(path, parsed.file)) return 1;
    std::unique_ptr<TargetIsa> isa = isa_by_name(target);
    if (!isa) {
        std::cerr << "heron compile: unknown target '" << target << "' (x86_64, x86_64-baseline, aarch64)\n";
        return 2;
    }
    const std::optional<OptLevel> opt_level = file_opt_level(path, parsed.file, opt_flag);
    if (!opt_level) return 1;
    const bool is_x64 = isa->name() == "x86_64";
    // The JIT's compile: --check adds what the tests and fuzzers run (the
    // allocation checker, the verifier after every pass).
    CompileOptions opts;
    opts.opt_level = *opt_level;
    opts.regalloc = regalloc;
    opts.check_regalloc = check;
    opts.verify_passes = check;
    if (!output.empty()) return write_object(path, parsed, std::move(isa), opts, output);
    Context ctx(std::move(isa), opts);
    int status = 0;
    for (const ParsedFunction& pf : parsed.file.functions) {
        CompiledCode code;
        auto t0 = std::chrono::steady_clock::now();
        std::optional<CompileError> err = ctx.compile(*pf.func, code);
        double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        if (err) {
            std::cerr << path << ":" << pf.srcmap.function.line << ": " << pf.func->name.to_string() << ": "
                      << err->message << "\n";
            status = 1;
            continue;
        }
        const Function& f = ctx.compiled_function();
        if (vcode) std::cout << "; vcode of " << f.name.to_string() << "\n" << ctx.vcode_text();
        std::printf("function %s: %zu bytes, frame %u bytes, %u spill slots, %zu trap sites, compiled in %.1f us\n",
                    f.name.to_string().c_str(), code.bytes.size(), code.frame_size, code.spill_slots,
                    code.trap_sites.size(), us);
        if (disasm) {
            std::map<uint64_t, std::string> labels;
            for (const auto& [off, name] : code.labels) labels[off] = name;
            std::cout << (is_x64 ? tools::disassemble_x64(code.bytes.data(), code.bytes.size(), 0, labels,
                                                          ir_comments(f, code))
                                 : tools::disassemble_aarch64(code.bytes.data(), code.bytes.size(), 0, labels));
        }
    }
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << kUsage;
        return 2;
    }
    std::string cmd = argv[1];
    std::vector<std::string> args(argv + 2, argv + argc);
    if (cmd == "test") {
        if (args.empty()) {
            std::cerr << kUsage;
            return 2;
        }
        return run_test_command(args);
    }
    if (cmd == "cat") return cmd_cat(args);
    if (cmd == "verify") return cmd_verify(args);
    if (cmd == "run") return cmd_run(args);
    if (cmd == "compile") return cmd_compile(args);
    if (cmd == "opt") return cmd_opt(args);
    if (cmd == "loops") return cmd_loops(args);
    if (cmd == "repl") return run_repl(args);
    if (cmd == "structure") return cmd_structure(args);
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
        std::cout << kUsage;
        return 0;
    }
    std::cerr << "heron: unknown command '" << cmd << "'\n" << kUsage;
    return 2;
}

}  // namespace heron::tools
