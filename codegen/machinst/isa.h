// TargetIsa: the one virtual interface of the backend, chosen once per
// compile. An ISA turns a verified function into CompiledCode.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "codegen/ir/function.h"
#include "codegen/machinst/compiled_code.h"
#include "codegen/regalloc/regalloc.h"

namespace heron {

/// How hard a compile works on the code (CLIF `set opt_level=...`).
/// `None` lowers the function as written; `Speed` first runs the IR
/// pipeline of codegen/opt/pipeline.h on a copy (codegen/context.h).
enum class OptLevel : uint8_t { None, Speed };

/// The register allocator a compile uses (codegen/regalloc/regalloc.h):
/// LinearScan (better code) or SinglePass (faster compiles; values used
/// across blocks go through memory at block boundaries).
using RegallocAlgorithm = ra::Algorithm;
/// "linear-scan" / "single-pass"; nullopt for anything else.
inline std::optional<RegallocAlgorithm> parse_regalloc(std::string_view name) {
    if (name == "linear-scan") return RegallocAlgorithm::LinearScan;
    if (name == "single-pass") return RegallocAlgorithm::SinglePass;
    return std::nullopt;
}
inline std::string_view regalloc_name(RegallocAlgorithm a) {
    return a == RegallocAlgorithm::SinglePass ? "single-pass" : "linear-scan";
}

struct CompileOptions {
    OptLevel opt_level = OptLevel::None;
    /// The register allocator, at every opt_level.
    RegallocAlgorithm regalloc = RegallocAlgorithm::LinearScan;
    /// Run the register allocation checker on every function (tests,
    /// fuzzing); off by default in release embedders.
    bool check_regalloc = false;
    /// With opt_level Speed: run the verifier after every IR pass that
    /// changed the function (tests, fuzzing).
    bool verify_passes = false;
};

/// Whether the register allocator checks the block structure the lowering
/// built (ra::Context::trust_block_structure off): in builds with
/// assertions (the tests) and whenever the allocation checker runs (the
/// fuzzers); a release embedder's compiles skip it.
inline bool check_lowered_blocks(const CompileOptions& opts) {
#ifdef NDEBUG
    return opts.check_regalloc;
#else
    (void)opts;
    return true;
#endif
}

class LoopAnalysis;

/// Analyses of the function being lowered that the driver has and knows to
/// be current, so that the backend need not compute them again: the
/// optimizer's loops (Optimizer::loops), which the block order lays loops
/// out from. Each must be exactly what a fresh computation would give.
struct KnownAnalyses {
    const LoopAnalysis* loops = nullptr;
};

/// One instruction set as the compile driver (codegen/context.h) sees it:
/// lowering into VCode kept inside the ISA object (its memory reused by
/// the next function), the register environment the allocator works in,
/// and emission of the allocated VCode. The driver runs the stages in
/// order; an ISA holds the state of one compile at a time.
class TargetIsa {
public:
    virtual ~TargetIsa() = default;
    virtual std::string_view name() const = 0;
    /// Lowers `func` (verified). Returns an empty string on success, else
    /// what this backend cannot compile.
    virtual std::string lower(const Function& func, const KnownAnalyses& known) = 0;
    /// The last lowering as the register allocator sees it.
    virtual const ra::Function& lowered() const = 0;
    /// The registers the allocator may use, and the conventions they obey.
    virtual const ra::MachineEnv& machine_env() const = 0;
    /// Emits the last lowering of `func` with `alloc` into `out` (replacing
    /// what it held). Returns an empty string on success.
    virtual std::string emit(const Function& func, const ra::Output& alloc, CompiledCode& out) = 0;
    /// The last lowering as text, one machine instruction a line.
    virtual std::string vcode_text() const = 0;
};

/// The ISA of the host (x86-64 or AArch64); null if the host is not supported.
std::unique_ptr<TargetIsa> host_isa();
/// The name isa_by_name gives the host's ISA ("x86_64", "aarch64").
std::string_view host_isa_name();
/// An ISA by name ("x86_64", "x86_64-baseline", "aarch64"); null if unknown.
/// Any ISA can be produced on any host; only the host's can run.
std::unique_ptr<TargetIsa> isa_by_name(std::string_view name);

namespace x64 {
struct Settings;
}

/// The factories behind isa_by_name (codegen/isa/*/isa.cpp). `baseline`
/// switches off every optional x86-64 CPU feature; the Settings form takes
/// the features as given (machine-code file tests pin them, so that the
/// code does not depend on the host CPU).
std::unique_ptr<TargetIsa> make_x64_isa(bool baseline);
std::unique_ptr<TargetIsa> make_x64_isa(const x64::Settings& settings);
std::unique_ptr<TargetIsa> make_aarch64_isa();

}  // namespace heron
