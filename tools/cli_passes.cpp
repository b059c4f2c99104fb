// `heron opt` and `heron loops`: the pass manager and the loop analyses on
// the command line.
//
//   heron opt FILE --passes=a,b[,c] [--dump-after=NAME|all]... [--no-verify]
//       runs the passes over every function; prints the IR after each pass
//       named by --dump-after, or else the final IR
//   heron loops FILE
//       prints every function's loop tree, one loop a line indented by
//       depth: header, depth, blocks (reverse postorder), latches, exits,
//       and its kind: counted with its range, or conditional
#include "tools/cli_passes.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "codegen/analysis/counted_loops.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/opt/pass_manager.h"
#include "codegen/verifier/verifier.h"

namespace heron::tools {

namespace {

bool load_verified(const std::string& path, ParseOutcome& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::cerr << path << ": cannot read\n";
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    out = parse_test_file(ss.str());
    for (const Diagnostic& d : out.errors) std::cerr << d.format(path) << "\n";
    if (!out.ok()) return false;
    bool ok = true;
    for (const ParsedFunction& pf : out.file.functions) {
        VerifierErrors errs;
        if (verify_function(*pf.func, errs)) continue;
        ok = false;
        std::cerr << path << ":" << pf.srcmap.function.line << ": " << pf.func->name.to_string() << ": "
                  << format_verifier_errors(errs) << "\n";
    }
    return ok;
}

constexpr const char* kOptUsage = "usage: heron opt FILE --passes=a,b [--dump-after=NAME|all]... [--no-verify]\n";

}  // namespace

int cmd_opt(const std::vector<std::string>& args) {
    std::string path, passes;
    PassManagerOptions options;
    for (const std::string& a : args) {
        if (a.rfind("--passes=", 0) == 0) {
            passes += (passes.empty() ? "" : ",") + a.substr(9);
        } else if (a.rfind("--dump-after=", 0) == 0) {
            options.dump_after.push_back(a.substr(13));
        } else if (a == "--no-verify") {
            options.verify_each = false;
        } else if (a == "--verify-each") {
            options.verify_each = true;
        } else if (path.empty() && a.rfind("--", 0) != 0) {
            path = a;
        } else {
            std::cerr << "heron opt: unexpected argument '" << a << "'\n" << kOptUsage;
            return 2;
        }
    }
    if (path.empty()) {
        std::cerr << kOptUsage << "passes:\n";
        for (const Pass& p : registered_passes()) std::cerr << "  " << p.name << ": " << p.summary << "\n";
        return 2;
    }
    const bool dumping = !options.dump_after.empty();
    options.dump = [](std::string_view pass, const Function& f) {
        std::cout << "; after " << pass << "\n" << print_function(f) << "\n";
    };
    PassManager pm(options);
    if (auto err = pm.add_pipeline(passes)) {
        std::cerr << "heron opt: " << *err << "\n";
        return 2;
    }
    for (const std::string& name : options.dump_after) {
        if (name != "all" && !find_pass(name)) {
            std::cerr << "heron opt: --dump-after names unknown pass '" << name << "'\n";
            return 2;
        }
    }
    ParseOutcome parsed;
    if (!load_verified(path, parsed)) return 1;
    int status = 0;
    bool first = true;
    for (const ParsedFunction& pf : parsed.file.functions) {
        Function& f = *pf.func;
        if (auto err = pm.run(f)) {
            std::cerr << path << ":" << pf.srcmap.function.line << ": " << f.name.to_string() << ": " << *err << "\n";
            status = 1;
            continue;
        }
        if (dumping) continue;
        if (!first) std::cout << "\n";
        first = false;
        std::cout << print_function(f);
    }
    return status;
}

int cmd_loops(const std::vector<std::string>& args) {
    if (args.size() != 1) {
        std::cerr << "usage: heron loops FILE\n";
        return 2;
    }
    ParseOutcome parsed;
    if (!load_verified(args[0], parsed)) return 1;
    int status = 0;
    for (const ParsedFunction& pf : parsed.file.functions) {
        const Function& f = *pf.func;
        std::cout << "function " << f.name.to_string() << "\n";
        ControlFlowGraph cfg(f);
        DominatorTree dt(f, cfg);
        LoopAnalysis loops;
        if (auto err = loops.compute(f, cfg, dt)) {
            std::cout << "  error: " << err->message << "\n";
            status = 1;
            continue;
        }
        if (loops.num_loops() == 0) std::cout << "  no loops\n";
        CountedLoops counted;
        counted.compute(f, loops);
        for (Loop l : loops.loops()) {
            std::string line(2 * loops.loop_depth(l), ' ');
            line += "loop " + loops.header(l).to_string() + ": depth " + std::to_string(loops.loop_depth(l)) + ", blocks";
            for (Block b : loops.blocks(l)) line += " " + b.to_string();
            line += ", latches";
            for (Block b : loops.latches(l)) line += " " + b.to_string();
            line += ", exits";
            for (Block b : loops.exit_blocks(l)) line += " " + b.to_string();
            std::cout << line << ": " << counted.describe(f, l) << "\n";
        }
    }
    return status;
}

}  // namespace heron::tools
