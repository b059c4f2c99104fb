// Host functions the small language calls (print, print_char): plain C++
// functions the JIT module links to by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jit/jit_module.h"
#include "tools/lang/ast.h"

namespace heron::lang {

struct HostFunction {
    const char* name;    // in the language
    const char* symbol;  // the JIT symbol
    std::vector<ValType> params;
    ValType ret;
    const void* address;
};

/// Every host function; `print` appears once per argument type.
const std::vector<HostFunction>& host_functions();
/// Registers the host functions' symbols with a JIT module builder.
JITBuilder& add_host_symbols(JITBuilder& builder);
/// How the language prints an f64: the shortest text that reads back to the
/// same bits, with a ".0" on integral values ("0.1", "3.0", "1e+100", "inf", "nan").
std::string format_f64(double d);

}  // namespace heron::lang
