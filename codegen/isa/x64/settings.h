// x86-64 code generation settings: the CPU features code may use. By
// default they come from the host CPU (settings.cpp asks asmjit's CpuInfo);
// tests switch features off to exercise the fallbacks.
#pragma once

namespace heron::x64 {

struct Settings {
    bool has_lzcnt = false;
    bool has_bmi1 = false;    // tzcnt
    bool has_popcnt = false;
    bool has_sse41 = false;   // roundss/roundsd
    bool has_fma = false;     // vfmadd213ss/sd
    bool has_movbe = false;
    bool has_avx = false;     // VEX three-operand scalar float forms

    /// The features of the CPU this process runs on.
    static Settings host();
    /// Baseline x86-64 (SSE2 only).
    static Settings baseline() { return Settings{}; }
};

}  // namespace heron::x64
