// The small language's front door: `heron run FILE.hn` (parse, compile
// through the FunctionBuilder, JIT, call). The REPL's `:lang` mode uses the
// parts (parser.h, codegen.h, host.h) directly.
#pragma once

#include <string>
#include <vector>

#include "codegen/ir/diagnostic.h"
#include "codegen/machinst/isa.h"
#include "tools/lang/codegen.h"

namespace heron::lang {

/// Compiles the program in `path` and calls `fn` (default `main`) with
/// `args` (decimal i64 / f64 literals); prints its result, and with
/// `show_time` the compile and run times. Errors and traps are printed with
/// FILE:LINE:COL; returns the exit status. `opt`: the JIT's opt_level;
/// `codegen`: how the program is lowered.
int run_file(const std::string& path, const std::string& fn, bool show_time, const std::vector<std::string>& args,
             OptLevel opt = OptLevel::None, const CodegenOptions& codegen = {});

/// "FILE:LINE:COL: error: message".
std::string format_error(const std::string& origin, const Diagnostic& d);

}  // namespace heron::lang
