// disassemble_aarch64: Capstone's AArch64 decoder; branch operands that hit
// a labelled offset are rewritten to the label's name.
#include "tools/disasm_aarch64.h"

#include <capstone/capstone.h>

#include <cinttypes>
#include <cstdio>

namespace heron::tools {
namespace {

std::string line_prefix(uint64_t offset, const uint8_t* bytes, size_t length) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%04" PRIx64, offset);
    std::string line = "  ";
    line += buf;
    line += ":  ";
    for (size_t i = 0; i < length; ++i) {
        std::snprintf(buf, sizeof buf, "%02x ", bytes[i]);
        line += buf;
    }
    line += "  ";
    return line;
}

/// The branch target of `insn` (an immediate operand of a jump or call).
bool branch_target(const cs_insn& insn, uint64_t& target) {
    if (!insn.detail) return false;
    bool branch = false;
    for (uint8_t g = 0; g < insn.detail->groups_count; ++g) {
        uint8_t grp = insn.detail->groups[g];
        branch |= grp == CS_GRP_JUMP || grp == CS_GRP_CALL || grp == CS_GRP_BRANCH_RELATIVE;
    }
    if (!branch) return false;
    const cs_arm64& a = insn.detail->arm64;
    for (uint8_t k = a.op_count; k-- > 0;) {
        if (a.operands[k].type == ARM64_OP_IMM) {
            target = static_cast<uint64_t>(a.operands[k].imm);
            return true;
        }
    }
    return false;
}

}  // namespace

std::string disassemble_aarch64(const uint8_t* code, size_t size, uint64_t address,
                                const std::map<uint64_t, std::string>& labels) {
    csh handle;
    if (cs_open(CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN, &handle) != CS_ERR_OK) return "(capstone: cannot open AArch64)\n";
    cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
    cs_insn* insn = cs_malloc(handle);

    std::string out;
    auto next_label = labels.begin();
    size_t offset = 0;
    while (offset < size) {
        for (; next_label != labels.end() && next_label->first <= offset; ++next_label) {
            out += next_label->second + ":";
            if (next_label->first < offset) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "  ; at %04" PRIx64 ", inside an instruction", next_label->first);
                out += buf;
            }
            out += '\n';
        }
        size_t len = std::min<size_t>(4, size - offset);
        const uint8_t* p = code + offset;
        size_t left = len;
        uint64_t pc = address + offset;
        if (len < 4 || !cs_disasm_iter(handle, &p, &left, &pc, insn)) {
            uint32_t word = 0;
            for (size_t k = 0; k < len; ++k) word |= uint32_t{code[offset + k]} << (8 * k);
            char buf[32];
            std::snprintf(buf, sizeof buf, len == 4 ? ".word 0x%08x" : ".byte (%u bytes)", len == 4 ? word : unsigned(len));
            out += line_prefix(offset, code + offset, len) + buf + "\n";
            offset += len;
            continue;
        }
        std::string ops = insn->op_str;
        uint64_t target = 0;
        if (branch_target(*insn, target) && target >= address) {
            auto it = labels.find(target - address);
            if (it != labels.end()) {
                size_t hash = ops.rfind('#');
                if (hash != std::string::npos) ops = ops.substr(0, hash) + it->second;
            }
        }
        std::string text = insn->mnemonic;
        if (!ops.empty()) text += " " + ops;
        out += line_prefix(offset, code + offset, 4) + text + "\n";
        offset += 4;
    }
    for (; next_label != labels.end(); ++next_label) out += next_label->second + ":\n";
    cs_free(insn, 1);
    cs_close(&handle);
    return out;
}

}  // namespace heron::tools
