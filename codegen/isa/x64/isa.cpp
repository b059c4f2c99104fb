// The x86-64 TargetIsa: lowering into VCode and emission, with the state
// of both kept between functions so that compiling the next function
// allocates almost nothing. The driver (codegen/context.h) allocates
// registers in between.
#include "codegen/machinst/isa.h"

#include "codegen/isa/x64/emit.h"
#include "codegen/isa/x64/lower.h"

namespace heron {
namespace {

class X64Isa final : public TargetIsa {
public:
    explicit X64Isa(x64::Settings s) : settings_(s) {}

    std::string_view name() const override { return "x86_64"; }

    std::string lower(const Function& func, const KnownAnalyses& known) override {
        // No vcode_.clear(): lowering clears what it does not overwrite
        // (VCodeBase::clear_for_lowering), and the arrays it resizes keep
        // their elements, so that resizing fills nothing.
        lower_ctx_.known_loops = known.loops;
        std::string err = x64::lower_function(func, settings_, vcode_, lower_ctx_);
        lower_ctx_.known_loops = nullptr;
        return err;
    }
    const ra::Function& lowered() const override { return vcode_.ra; }
    const ra::MachineEnv& machine_env() const override { return x64::machine_env(); }
    std::string emit(const Function& func, const ra::Output& alloc, CompiledCode& out) override {
        return x64::emit_function(func, vcode_, alloc, settings_, out, emit_ctx_);
    }
    std::string vcode_text() const override { return vcode_.to_string(); }

private:
    x64::Settings settings_;
    x64::VCode vcode_;
    LowerContext lower_ctx_;
    x64::EmitContext emit_ctx_;
};

}  // namespace

std::unique_ptr<TargetIsa> make_x64_isa(bool baseline) {
    return make_x64_isa(baseline ? x64::Settings::baseline() : x64::Settings::host());
}

std::unique_ptr<TargetIsa> make_x64_isa(const x64::Settings& settings) { return std::make_unique<X64Isa>(settings); }

}  // namespace heron
