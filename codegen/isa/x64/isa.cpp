// The x86-64 TargetIsa: lower -> allocate registers (-> check) -> emit.
// The lowering, allocator and emitter state is kept between functions so
// that compiling the next function allocates almost nothing.
#include "codegen/machinst/isa.h"

#include "codegen/isa/x64/emit.h"
#include "codegen/isa/x64/lower.h"

namespace heron {
namespace {

class X64Isa final : public TargetIsa {
public:
    explicit X64Isa(x64::Settings s) : settings_(s) {}

    std::string_view name() const override { return "x86_64"; }

    std::string compile(const Function& func, const CompileOptions& opts, CompiledCode& out,
                        const KnownAnalyses& known) override {
        // No vcode_.clear(): lowering clears what it does not overwrite
        // (VCodeBase::clear_for_lowering), and the arrays it resizes keep
        // their elements, so that resizing fills nothing.
        lower_ctx_.known_loops = known.loops;
        std::string err = x64::lower_function(func, settings_, vcode_, lower_ctx_);
        lower_ctx_.known_loops = nullptr;
        if (!err.empty()) return err;
        alloc_.clear();
        ractx_.trust_block_structure = !check_lowered_blocks(opts);
        err = ra::allocate(vcode_.ra, x64::machine_env(), alloc_, ractx_, opts.regalloc);
        if (!err.empty()) return "register allocation failed: " + err;
        if (opts.check_regalloc) {
            err = ra::check(vcode_.ra, x64::machine_env(), alloc_);
            if (!err.empty()) return "register allocation checker: " + err;
        }
        return x64::emit_function(func, vcode_, alloc_, settings_, out, emit_ctx_);
    }

private:
    x64::Settings settings_;
    x64::VCode vcode_;
    LowerContext lower_ctx_;
    x64::EmitContext emit_ctx_;
    ra::Output alloc_;
    ra::Context ractx_;
};

}  // namespace

std::unique_ptr<TargetIsa> make_x64_isa(bool baseline) {
    return std::make_unique<X64Isa>(baseline ? x64::Settings::baseline() : x64::Settings::host());
}

}  // namespace heron
