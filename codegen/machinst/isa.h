// TargetIsa: the one virtual interface of the backend, chosen once per
// compile. An ISA turns a verified function into CompiledCode.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "codegen/ir/function.h"
#include "codegen/machinst/compiled_code.h"

namespace heron {

struct CompileOptions {
    /// Run the register allocation checker on every function (tests,
    /// fuzzing); off by default in release embedders.
    bool check_regalloc = false;
};

class TargetIsa {
public:
    virtual ~TargetIsa() = default;
    virtual std::string_view name() const = 0;
    /// Compiles `func` (verified) into `out`. Returns an empty string on
    /// success, else what went wrong (an unsupported feature, an internal
    /// check that failed).
    virtual std::string compile(const Function& func, const CompileOptions& opts, CompiledCode& out) = 0;
};

/// The ISA of the host (x86-64 here); null if the host is not supported.
std::unique_ptr<TargetIsa> host_isa();
/// An ISA by name ("x86_64"); null if unknown.
std::unique_ptr<TargetIsa> isa_by_name(std::string_view name);

}  // namespace heron
