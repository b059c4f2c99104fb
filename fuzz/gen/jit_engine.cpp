// JitEngine: see jit_engine.h.
#include "fuzz/gen/jit_engine.h"

namespace heron::gen {

bool JitEngine::load(const Module& m, std::string& error) {
    JITBuilder b;
    b.check_regalloc(true);
    b.opt_level(level_);
    b.regalloc(regalloc_);
    b.verify_passes(true);
    jit_ = std::make_unique<JITModule>(b);
    ids_.clear();
    for (const auto& f : m.functions) {
        auto id = jit_->declare_function(f->name.name, Linkage::Export, f->signature);
        if (!id) {
            error = id.error().message;
            return false;
        }
        if (auto e = jit_->define_function(id.value(), *f)) {
            error = e->message;
            return false;
        }
        ids_[f.get()] = id.value();
    }
    if (auto e = jit_->finalize_definitions()) {
        error = e->message;
        return false;
    }
    return true;
}

InterpOutcome JitEngine::call(const Function& func, std::span<const DataValue> args) {
    InterpOutcome r;
    auto it = ids_.find(&func);
    if (it == ids_.end()) {
        r.kind = InterpOutcome::Kind::Error;
        r.message = "function not loaded";
        return r;
    }
    return to_interp_outcome(jit_->call(it->second, args));
}

}  // namespace heron::gen
