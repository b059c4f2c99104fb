#include "codegen/ir/diagnostic.h"

namespace heron {

std::string Diagnostic::format(std::string_view file) const {
    std::string out(file);
    if (loc.line) {
        out += ":" + std::to_string(loc.line);
        if (loc.col) out += ":" + std::to_string(loc.col);
    }
    if (!out.empty()) out += ": ";
    return out + message;
}

}  // namespace heron
