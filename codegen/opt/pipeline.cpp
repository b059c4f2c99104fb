// The optimization pipeline: see pipeline.h.
#include "codegen/opt/pipeline.h"

namespace heron {

std::optional<OptLevel> parse_opt_level(std::string_view name) {
    if (name == "none") return OptLevel::None;
    if (name == "speed") return OptLevel::Speed;
    return std::nullopt;
}

std::string_view opt_level_name(OptLevel level) {
    switch (level) {
    case OptLevel::None: return "none";
    case OptLevel::Speed: return "speed";
    }
    return "none";
}

namespace {

PassManagerOptions manager_options(bool verify_each) {
    PassManagerOptions o;
    o.verify_each = verify_each;
    return o;
}

}  // namespace

Optimizer::Optimizer(OptLevel level, bool verify_each) : level_(level), pm_(manager_options(verify_each)) {
    // The names are this file's own: add_pipeline cannot fail on them.
    const auto err = pm_.add_pipeline(opt_pipeline(level));
    HERON_ASSERT(!err && "opt_pipeline names only registered passes");
}

std::optional<std::string> Optimizer::run(Function& func, uint8_t present, bool cfg_and_domtree_current) {
    if (pm_.pipeline().empty()) return std::nullopt;
    auto err = pm_.run(func, present, cfg_and_domtree_current);
    if (!err) return std::nullopt;
    // The loop passes require the loops, so an irreducible CFG stops the
    // first of them before it edits anything; what gvn, dce and
    // simplify-cfg did before it is kept (valid IR): nothing to do here.
    if (!pm_.context().loops()) return std::nullopt;
    return err;
}

}  // namespace heron
