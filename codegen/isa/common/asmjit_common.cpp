// Emission pieces shared by the x86-64 and AArch64 emitters. See
// asmjit_common.h.
#include "codegen/isa/common/asmjit_common.h"

#include <algorithm>

namespace heron::isa {

namespace {

/// Whether `code` holds a finished function for `arch` with `a` attached:
/// one section, every label link resolved, no relocation, and not too
/// many labels kept.
bool reusable(const asmjit::CodeHolder& code, asmjit::Arch arch, const asmjit::BaseAssembler& a) {
    constexpr uint32_t kMaxKeptLabels = 4096;  // label entries live in the CodeHolder's zone
    return code.isInitialized() && code.arch() == arch && a.code() == &code && code.sectionCount() == 1 &&
           !code.hasUnresolvedLinks() && code.relocEntries().empty() && code.labelCount() < kMaxKeptLabels;
}

}  // namespace

void EmitterBase::attach(asmjit::Arch arch, asmjit::BaseAssembler& a) {
    if (reusable(code_, arch, a)) {
        // Only the code goes: the section's buffer keeps its memory and
        // the labels of earlier functions stay (all bound, unreferenced;
        // new labels get new ids). Avoids asmjit's reset, init and attach.
        code_.textSection()->buffer()._size = 0;
        a._bufferPtr = a._bufferData;
    } else {
        code_.reset();
        code_.init(asmjit::Environment(arch));
        code_.attach(&a);
    }
    code_.setErrorHandler(&errors_);
    asm_ = &a;
    first_label_ = code_.labelCount();
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
    if (code_.sectionCount() == 1 && !code_.hasUnresolvedLinks() && code_.relocEntries().empty()) {
        // Nothing to place, link or relocate: the code is the text buffer.
        const asmjit::CodeBuffer& text = code_.textSection()->buffer();
        out_.bytes.assign(text.data(), text.data() + text.size());
    } else {
        code_.flatten();
        code_.resolveUnresolvedLinks();
        size_t size = code_.codeSize();
        out_.bytes.resize(size);
        code_.relocateToBase(0);
        code_.copyFlattenedData(out_.bytes.data(), size);
        if (!errors_.first.empty()) return failed();
    }
    auto by_offset = [](const CodeTrapSite& a, const CodeTrapSite& b) { return a.offset < b.offset; };
    if (!std::is_sorted(out_.trap_sites.begin(), out_.trap_sites.end(), by_offset)) {
        std::sort(out_.trap_sites.begin(), out_.trap_sites.end(), by_offset);
    }
    return {};
}

}  // namespace heron::isa
