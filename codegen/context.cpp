// The compile driver (context.h): verify -> optimize -> lower -> allocate
// (-> check) -> emit.
#include "codegen/context.h"

namespace heron {

Context::Context(std::shared_ptr<TargetIsa> isa, const CompileOptions& options)
    : isa_(std::move(isa)), options_(options) {
    HERON_ASSERT(isa_ && "Context needs an ISA");
    if (options_.opt_level != OptLevel::None) optimizer_.emplace(options_.opt_level, options_.verify_passes);
}

Context::~Context() = default;

std::optional<CompileError> Context::fail(CompileStage stage, std::string message) {
    return CompileError{stage, std::move(message)};
}

std::optional<CompileError> Context::compile(const Function& func, CompiledCode& out, const CompileRequest& request) {
    compiled_ = &func;

    // Verify. With an optimizer, the verifier builds the CFG and dominator
    // tree in the optimizer's pass context: its first pass would compute
    // the same on the copy.
    verifier_errors_.clear();
    VerifierAnalyses built;
    bool valid;
    if (optimizer_) {
        built = {&optimizer_->cfg_storage(), &optimizer_->domtree_storage()};
        valid = verify_function(func, verifier_errors_, verifier_, built);
    } else {
        valid = verify_function(func, verifier_errors_, verifier_);
    }
    if (!valid) return fail(CompileStage::Verify, format_verifier_errors(verifier_errors_));

    // Optimize a copy, unless no pass would find anything to do. The loops
    // the pipeline leaves current go to the block order.
    KnownAnalyses known;
    if (optimizer_) {
        uint8_t needs = scan_pass_needs(func);
        if (!request.own_name_is_self) needs &= ~pass_needs::kSelfCall;
        if (optimizer_->may_change(needs)) {
            scratch_ = func;
            if (auto e = optimizer_->run(scratch_, needs, built.computed)) return fail(CompileStage::Optimize, *e);
            compiled_ = &scratch_;
            known.loops = optimizer_->loops();
        }
    }

    // Lower, allocate, check, emit.
    if (std::string e = isa_->lower(*compiled_, known); !e.empty()) return fail(CompileStage::Lower, std::move(e));
    alloc_.clear();
    ractx_.trust_block_structure = !check_lowered_blocks(options_);
    if (std::string e = ra::allocate(isa_->lowered(), isa_->machine_env(), alloc_, ractx_, options_.regalloc);
        !e.empty())
        return fail(CompileStage::Allocate, "register allocation failed: " + e);
    if (options_.check_regalloc) {
        if (std::string e = ra::check(isa_->lowered(), isa_->machine_env(), alloc_); !e.empty())
            return fail(CompileStage::Check, "register allocation checker: " + e);
    }
    if (std::string e = isa_->emit(*compiled_, alloc_, out); !e.empty()) return fail(CompileStage::Emit, std::move(e));
    return std::nullopt;
}

}  // namespace heron
