// Emission pieces shared by the x86-64 and AArch64 emitters. See
// asmjit_common.h.
#include "codegen/isa/common/asmjit_common.h"

#include <algorithm>

namespace heron::isa {

void EmitterBase::attach(asmjit::Arch arch, asmjit::BaseAssembler& a) {
    code_.reset();
    code_.init(asmjit::Environment(arch));
    code_.setErrorHandler(&errors_);
    code_.attach(&a);
    asm_ = &a;
}

void EmitterBase::emit_symbol_slots(const std::vector<ExternalName>& symbols, bool align_always) {
    bool any = std::any_of(symbol_slots_.begin(), symbol_slots_.end(), [](const asmjit::Label& l) { return l.isValid(); });
    if (any || align_always) asm_->align(asmjit::AlignMode::kData, 8);
    for (size_t s = 0; s < symbol_slots_.size(); ++s) {
        if (!symbol_slots_[s].isValid()) continue;
        asm_->bind(symbol_slots_[s]);
        out_.relocations.push_back({offset(), symbols[s], 0});
        asm_->embedUInt64(0);
    }
}

std::string EmitterBase::finish(std::string_view isa_name) {
    auto failed = [&] { return std::string(isa_name) + " emission failed: " + errors_.first; };
    if (!errors_.first.empty()) return failed();
    code_.flatten();
    code_.resolveUnresolvedLinks();
    size_t size = code_.codeSize();
    out_.bytes.resize(size);
    code_.relocateToBase(0);
    code_.copyFlattenedData(out_.bytes.data(), size);
    if (!errors_.first.empty()) return failed();
    std::sort(out_.trap_sites.begin(), out_.trap_sites.end(),
              [](const CodeTrapSite& a, const CodeTrapSite& b) { return a.offset < b.offset; });
    return {};
}

}  // namespace heron::isa
