// Host CPU feature detection through asmjit's CpuInfo.
#include "codegen/isa/x64/settings.h"

#include <asmjit/core.h>

namespace heron::x64 {

Settings Settings::host() {
    const asmjit::CpuInfo& cpu = asmjit::CpuInfo::host();
    using F = asmjit::CpuFeatures::X86;
    Settings s;
    s.has_lzcnt = cpu.hasFeature(F::kLZCNT);
    s.has_bmi1 = cpu.hasFeature(F::kBMI);
    s.has_popcnt = cpu.hasFeature(F::kPOPCNT);
    s.has_sse41 = cpu.hasFeature(F::kSSE4_1);
    s.has_fma = cpu.hasFeature(F::kFMA);
    s.has_movbe = cpu.hasFeature(F::kMOVBE);
    s.has_avx = cpu.hasFeature(F::kAVX);
    return s;
}

}  // namespace heron::x64
