// The JIT as a differential-testing engine: every function of a module goes
// into one JITModule (register-allocation checker on; at OptLevel::Speed the
// IR pipeline runs first, verified after every pass), calls go through the
// module's trampolines and trap handler.
#pragma once

#include <memory>
#include <unordered_map>

#include "fuzz/gen/diff.h"
#include "jit/jit_module.h"

namespace heron::gen {

class JitEngine : public Engine {
public:
    explicit JitEngine(OptLevel level = OptLevel::None, RegallocAlgorithm regalloc = RegallocAlgorithm::LinearScan)
        : level_(level), regalloc_(regalloc) {}
    std::string name() const override {
        return std::string(level_ == OptLevel::None ? "jit" : "jit-opt") +
               (regalloc_ == RegallocAlgorithm::SinglePass ? "-single-pass" : "");
    }
    bool load(const Module& m, std::string& error) override;
    InterpOutcome call(const Function& func, std::span<const DataValue> args) override;

private:
    OptLevel level_;
    RegallocAlgorithm regalloc_;
    std::unique_ptr<JITModule> jit_;
    std::unordered_map<const Function*, FuncId> ids_;
};

}  // namespace heron::gen
