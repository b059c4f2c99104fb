// The ISA registry: names to TargetIsa factories, and the host's ISA.
#include "codegen/machinst/isa.h"

namespace heron {

std::unique_ptr<TargetIsa> host_isa() {
#if defined(__aarch64__)
    return make_aarch64_isa();
#elif defined(__x86_64__)
    return make_x64_isa(false);
#else
    return nullptr;
#endif
}

std::unique_ptr<TargetIsa> isa_by_name(std::string_view name) {
    if (name == "x86_64" || name == "x64") return make_x64_isa(false);
    if (name == "x86_64-baseline") return make_x64_isa(true);
    if (name == "aarch64" || name == "arm64") return make_aarch64_isa();
    return nullptr;
}

std::string_view host_isa_name() {
#if defined(__aarch64__)
    return "aarch64";
#else
    return "x86_64";
#endif
}

}  // namespace heron
