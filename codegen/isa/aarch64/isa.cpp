// The AArch64 TargetIsa: lowering into VCode and emission, with the state
// of both kept between functions so that compiling the next function
// allocates almost nothing. The driver (codegen/context.h) allocates
// registers in between.
#include "codegen/machinst/isa.h"

#include "codegen/isa/aarch64/emit.h"
#include "codegen/isa/aarch64/lower.h"

namespace heron {
namespace {

class Aarch64Isa final : public TargetIsa {
public:
    std::string_view name() const override { return "aarch64"; }

    std::string lower(const Function& func, const KnownAnalyses& known) override {
        vcode_.clear();
        lower_ctx_.known_loops = known.loops;
        std::string err = aarch64::lower_function(func, vcode_, lower_ctx_);
        lower_ctx_.known_loops = nullptr;
        return err;
    }
    const ra::Function& lowered() const override { return vcode_.ra; }
    const ra::MachineEnv& machine_env() const override { return aarch64::machine_env(); }
    std::string emit(const Function& func, const ra::Output& alloc, CompiledCode& out) override {
        return aarch64::emit_function(func, vcode_, alloc, out, emit_ctx_);
    }
    std::string vcode_text() const override { return vcode_.to_string(); }

private:
    aarch64::VCode vcode_;
    LowerContext lower_ctx_;
    aarch64::EmitContext emit_ctx_;
};

}  // namespace

std::unique_ptr<TargetIsa> make_aarch64_isa() { return std::make_unique<Aarch64Isa>(); }

}  // namespace heron
