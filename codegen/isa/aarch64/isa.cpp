// The AArch64 TargetIsa: lower -> allocate registers (-> check) -> emit.
// The lowering, allocator and emitter state is kept between functions so
// that compiling the next function allocates almost nothing.
#include "codegen/machinst/isa.h"

#include "codegen/isa/aarch64/emit.h"
#include "codegen/isa/aarch64/lower.h"

namespace heron {
namespace {

class Aarch64Isa final : public TargetIsa {
public:
    std::string_view name() const override { return "aarch64"; }

    std::string compile(const Function& func, const CompileOptions& opts, CompiledCode& out,
                        const KnownAnalyses& known) override {
        vcode_.clear();
        lower_ctx_.known_loops = known.loops;
        std::string err = aarch64::lower_function(func, vcode_, lower_ctx_);
        lower_ctx_.known_loops = nullptr;
        if (!err.empty()) return err;
        alloc_.clear();
        ractx_.trust_block_structure = !check_lowered_blocks(opts);
        err = ra::allocate(vcode_.ra, aarch64::machine_env(), alloc_, ractx_, opts.regalloc);
        if (!err.empty()) return "register allocation failed: " + err;
        if (opts.check_regalloc) {
            err = ra::check(vcode_.ra, aarch64::machine_env(), alloc_);
            if (!err.empty()) return "register allocation checker: " + err;
        }
        return aarch64::emit_function(func, vcode_, alloc_, out, emit_ctx_);
    }

private:
    aarch64::VCode vcode_;
    LowerContext lower_ctx_;
    ra::Output alloc_;
    ra::Context ractx_;
    aarch64::EmitContext emit_ctx_;
};

}  // namespace

std::unique_ptr<TargetIsa> make_aarch64_isa() { return std::make_unique<Aarch64Isa>(); }

}  // namespace heron
