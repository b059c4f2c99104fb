// Names of calling conventions and external names.
#include "codegen/ir/signature.h"

namespace heron {

std::string_view callconv_name(CallConv cc) {
    switch (cc) {
    case CallConv::Fast: return "fast";
    case CallConv::SystemV: return "system_v";
    case CallConv::Tail: return "tail";
    }
    return "fast";
}

std::optional<CallConv> callconv_from_name(std::string_view name) {
    if (name == "fast" || name == "cold") return CallConv::Fast;
    if (name == "system_v") return CallConv::SystemV;
    if (name == "tail") return CallConv::Tail;
    return std::nullopt;
}

std::string ExternalName::to_string() const {
    if (kind == Kind::User) return "u" + std::to_string(ns) + ":" + std::to_string(index);
    return "%" + name;
}

}  // namespace heron
