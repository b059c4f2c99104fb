// `heron run FILE.hn`: parse -> compile (codegen.cpp) -> JIT -> call.
#include "tools/lang/lang.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "jit/jit_module.h"
#include "tools/lang/codegen.h"
#include "tools/lang/host.h"
#include "tools/lang/parser.h"

namespace heron::lang {

std::string format_error(const std::string& origin, const Diagnostic& d) {
    std::string loc = origin;
    if (d.loc.line) loc += ":" + std::to_string(d.loc.line);
    if (d.loc.line && d.loc.col) loc += ":" + std::to_string(d.loc.col);
    return loc + ": error: " + d.message;
}

namespace {

std::optional<DataValue> parse_arg(const std::string& text, ValType t) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    if (t == ValType::I64) {
        long long v = std::strtoll(text.c_str(), &end, 10);
        if (errno || *end) return std::nullopt;
        return DataValue::i64(v);
    }
    double d = std::strtod(text.c_str(), &end);
    if (*end) return std::nullopt;
    return DataValue::f64(d);
}

std::string format_value(const DataValue& v) {
    if (v.type == types::F64) {
        double d;
        std::memcpy(&d, &v.bits, 8);
        return format_f64(d);
    }
    return std::to_string(static_cast<int64_t>(v.bits));
}

}  // namespace

int run_file(const std::string& path, const std::string& fn_name, bool show_time, const std::vector<std::string>& args,
             OptLevel opt, const CodegenOptions& codegen) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::cerr << path << ": cannot read\n";
        return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::string src = ss.str();
    auto t0 = std::chrono::steady_clock::now();
    ParseResult parsed = parse_program(src);
    if (parsed.error) {
        std::cerr << format_error(path, *parsed.error) << "\n";
        return 1;
    }
    CodegenResult code = compile(parsed.program, {}, "__lang_expr", codegen);
    if (code.error) {
        std::cerr << format_error(path, *code.error) << "\n";
        return 1;
    }
    std::string name = fn_name.empty() ? "main" : fn_name;
    const FnDecl* target = nullptr;
    for (const FnDecl& f : parsed.program.fns) {
        if (f.name == name) target = &f;
    }
    if (!target) {
        std::cerr << path << ": error: no function '" << name << "' to run\n";
        return 1;
    }
    if (args.size() != target->params.size()) {
        std::cerr << path << ": error: " << name << " takes " << target->params.size() << " argument(s), "
                  << args.size() << " given\n";
        return 1;
    }
    std::vector<DataValue> argv;
    for (size_t i = 0; i < args.size(); ++i) {
        auto v = parse_arg(args[i], target->params[i].type);
        if (!v) {
            std::cerr << "error: argument " << i + 1 << " ('" << args[i] << "') is not an "
                      << val_type_name(target->params[i].type) << "\n";
            return 1;
        }
        argv.push_back(*v);
    }
    JITBuilder jb;
    jb.opt_level(opt);
    add_host_symbols(jb);
    JITModule jit(std::move(jb));
    std::optional<FuncId> target_id;
    for (const CompiledFunction& cf : code.fns) {
        auto id = jit.declare_function(cf.func->name.name, Linkage::Export, cf.func->signature);
        if (!id) {
            std::cerr << path << ": error: " << id.error().message << "\n";
            return 1;
        }
        if (cf.func->name.name == name) target_id = id.value();
    }
    for (const CompiledFunction& cf : code.fns) {
        if (auto e = jit.define_function(*jit.find_function(cf.func->name.name), *cf.func)) {
            std::cerr << path << ": internal error: " << e->message << "\n";
            return 1;
        }
    }
    if (auto e = jit.finalize_definitions()) {
        std::cerr << path << ": error: " << e->message << "\n";
        return 1;
    }
    double compile_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    auto t1 = std::chrono::steady_clock::now();
    JitCallOutcome r = jit.call(*target_id, argv);
    double run_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t1).count();
    std::fflush(stdout);
    std::string shown = name + "(";
    for (size_t i = 0; i < argv.size(); ++i) shown += (i ? ", " : "") + format_value(argv[i]);
    shown += ")";
    if (r.kind == JitCallOutcome::Kind::Trap) {
        std::string where;
        for (const CompiledFunction& cf : code.fns) {
            if (cf.func->name.name != r.trap.function || !r.trap.inst) continue;
            uint32_t line = cf.srcmap.inst_line[*r.trap.inst], col = cf.inst_col[*r.trap.inst];
            if (line) where = " at " + path + ":" + std::to_string(line) + ":" + std::to_string(col);
        }
        std::cout << shown << ": trap " << trapcode_name(r.trap.code) << " in " << r.trap.function << where << "\n";
        return 1;
    }
    if (r.kind == JitCallOutcome::Kind::Error) {
        std::cout << shown << ": error: " << r.message << "\n";
        return 1;
    }
    std::cout << shown << " = " << format_value(r.values.at(0));
    if (show_time) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "   [jit: compile %.1f us, run %.1f us]", compile_us, run_us);
        std::cout << buf;
    }
    std::cout << "\n";
    return 0;
}

}  // namespace heron::lang
