// The compile driver: the one way a function becomes machine code. The JIT
// module, every `heron` command and every fuzzer compile through it. In
// order (Context::compile, context.cpp):
//
//   verify     codegen/verifier     the IR is well formed; at opt_level speed
//                                   the CFG and dominator tree it builds are
//                                   the optimizer's first analyses
//   optimize   codegen/opt          the pipeline of the level asked
//                                   (pipeline.h), on a copy of the function,
//                                   skipped when no pass would change it
//   lower      TargetIsa::lower     IR -> VCode over virtual registers, in
//                                   the ISA object's reused buffers
//   allocate   codegen/regalloc     registers and spill slots; with
//                                   check_regalloc the allocation checker
//                                   then proves the result
//   emit       TargetIsa::emit      bytes, relocations, trap sites
//
// A Context keeps the memory of every stage between functions (verifier
// tables, the optimizer's analyses and copy, VCode, allocator state), so
// compiling the next function allocates almost nothing. One Context serves
// one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "codegen/ir/function.h"
#include "codegen/machinst/compiled_code.h"
#include "codegen/machinst/isa.h"
#include "codegen/opt/pipeline.h"
#include "codegen/regalloc/regalloc.h"
#include "codegen/verifier/verifier.h"

namespace heron {

/// The stage a compile failed in.
enum class CompileStage : uint8_t { Verify, Optimize, Lower, Allocate, Check, Emit };

struct CompileError {
    CompileStage stage = CompileStage::Verify;
    /// What went wrong. For Verify, every verifier error formatted
    /// (Context::verifier_errors() has them one by one); for Optimize, the
    /// pass that failed; for the backend stages, what the ISA cannot do or
    /// the internal check that failed.
    std::string message;
};

/// What a caller knows about the function beyond its IR.
struct CompileRequest {
    /// Calls to the function's own IR name reach this very function, so the
    /// optimizer may treat them as self-calls (tail-accumulate). False when
    /// the caller links the code under another name (a JIT module declares
    /// functions by its own names).
    bool own_name_is_self = true;
};

class Context {
public:
    /// A driver for `isa` with fixed options. `isa` must not be null.
    explicit Context(std::shared_ptr<TargetIsa> isa, const CompileOptions& options = {});
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    /// Compiles `func` into `out` (whatever `out` held is replaced). On an
    /// error `out` holds nothing usable and the Context stays ready for the
    /// next function.
    std::optional<CompileError> compile(const Function& func, CompiledCode& out, const CompileRequest& request = {});

    /// The function the last compile lowered: the optimized copy, or the
    /// caller's function when nothing was optimized. Valid until the next
    /// compile or until the caller's function changes.
    const Function& compiled_function() const { return *compiled_; }
    /// The verifier's errors of the last compile (empty unless it failed in
    /// Verify).
    const VerifierErrors& verifier_errors() const { return verifier_errors_; }
    /// The last lowering as text (`heron compile --vcode`).
    std::string vcode_text() const { return isa_->vcode_text(); }

    TargetIsa& isa() { return *isa_; }
    const TargetIsa& isa() const { return *isa_; }
    const CompileOptions& options() const { return options_; }

private:
    std::optional<CompileError> fail(CompileStage stage, std::string message);

    std::shared_ptr<TargetIsa> isa_;
    CompileOptions options_;
    VerifierContext verifier_;
    VerifierErrors verifier_errors_;
    std::optional<Optimizer> optimizer_;
    Function scratch_;  // the copy the optimizer edits
    const Function* compiled_ = &scratch_;
    ra::Output alloc_;
    ra::Context ractx_;
};

/// The message of a compile's outcome, "" for success (tests, tools).
inline std::string error_text(const std::optional<CompileError>& error) { return error ? error->message : ""; }

}  // namespace heron
