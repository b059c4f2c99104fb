// Diagnostics carry a place in the source text and a message; every parse,
// verify and run error reaches the user as one (never an abort).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heron {

struct Location {
    uint32_t line = 0;  // 1-based; 0 = unknown
    uint32_t col = 0;   // 1-based; 0 = unknown
};

struct Diagnostic {
    Location loc;
    std::string message;

    /// "file:line:col: message" (parts that are unknown are left out).
    std::string format(std::string_view file) const;
};

using Diagnostics = std::vector<Diagnostic>;

}  // namespace heron
