// The machine code of a compiled function as lines for tests that look at
// its shape (loop layout, count-down): disassembled (tools/disasm_*) and cut
// at the block labels.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/machinst/compiled_code.h"
#include "tools/disasm_aarch64.h"
#include "tools/disasm_x64.h"

namespace heron::testing {

/// One disassembled instruction and the IR block label it falls under.
struct AsmLine {
    std::string block;
    uint64_t offset = 0;
    std::string text;  // "jmp block1", "b.lt block2", ...
};

struct AsmListing {
    std::vector<AsmLine> lines;
    std::vector<std::string> block_order;  // labels in code order
};

inline AsmListing disassemble_listing(const std::string& isa_name, const CompiledCode& code) {
    std::map<uint64_t, std::string> labels(code.labels.begin(), code.labels.end());
    const std::string listing = isa_name == "aarch64"
                                    ? tools::disassemble_aarch64(code.bytes.data(), code.bytes.size(), 0, labels)
                                    : tools::disassemble_x64(code.bytes.data(), code.bytes.size(), 0, labels);
    // Lines are "blockN:" or "  OFFS:  BYTES   MNEMONIC OPERANDS" (fields
    // apart by two or more blanks).
    AsmListing out;
    std::istringstream in(listing);
    std::string line, block;
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] != ' ' && line.back() == ':') {
            block = line.substr(0, line.size() - 1);
            out.block_order.push_back(block);
            continue;
        }
        const size_t last_gap = line.rfind("  ");
        const size_t colon = line.find(':');
        if (last_gap == std::string::npos || colon == std::string::npos) continue;
        out.lines.push_back({block, std::stoull(line.substr(0, colon), nullptr, 16), line.substr(last_gap + 2)});
    }
    return out;
}

}  // namespace heron::testing
