// disassemble_x64: Zydis decoder + Intel formatter, with a formatter hook
// that prints branch targets at labelled offsets as the label's name.
#include "tools/disasm_x64.h"

#include <Zycore/Format.h>
#include <Zydis/Zydis.h>

#include <cinttypes>
#include <cstdio>

namespace heron::tools {
namespace {

/// Reaches the address hook through the formatter's user_data.
struct LabelContext {
    const std::map<uint64_t, std::string>* labels;
    uint64_t address;  // of offset 0
    ZydisFormatterFunc default_print_address;
};

ZyanStatus print_address_or_label(const ZydisFormatter* formatter, ZydisFormatterBuffer* buffer,
                                  ZydisFormatterContext* context) {
    auto* labels = static_cast<LabelContext*>(context->user_data);
    ZyanU64 target = 0;
    if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(context->instruction, context->operand,
                                              context->runtime_address, &target)) &&
        target >= labels->address) {
        auto it = labels->labels->find(target - labels->address);
        if (it != labels->labels->end()) {
            ZYAN_CHECK(ZydisFormatterBufferAppend(buffer, ZYDIS_TOKEN_SYMBOL));
            ZyanString* string = nullptr;
            ZYAN_CHECK(ZydisFormatterBufferGetString(buffer, &string));
            return ZyanStringAppendFormat(string, "%s", it->second.c_str());
        }
    }
    return labels->default_print_address(formatter, buffer, context);
}

/// "  0010:  48 01 f8              " — offset and bytes, padded for 7 bytes.
std::string line_prefix(uint64_t offset, const uint8_t* bytes, size_t length) {
    constexpr size_t kByteColumns = 7;
    char buf[24];  // 16 hex digits at most
    std::snprintf(buf, sizeof buf, "%04" PRIx64, offset);
    std::string line = "  ";
    line += buf;
    line += ":  ";
    for (size_t i = 0; i < length; ++i) {
        std::snprintf(buf, sizeof buf, "%02x ", bytes[i]);
        line += buf;
    }
    for (size_t i = length; i < kByteColumns; ++i) line += "   ";
    line += ' ';
    return line;
}

}  // namespace

std::string disassemble_x64(const uint8_t* code, size_t size, uint64_t address,
                            const std::map<uint64_t, std::string>& labels,
                            const std::vector<DisasmComment>& comments) {
    ZydisDecoder decoder;
    ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    ZydisFormatter formatter;
    ZydisFormatterInit(&formatter, ZYDIS_FORMATTER_STYLE_INTEL);
    ZydisFormatterSetProperty(&formatter, ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE);
    ZydisFormatterSetProperty(&formatter, ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE,
                              ZYDIS_PADDING_DISABLED);
    // SetHook swaps: it installs ours and hands back the default.
    const void* hook = reinterpret_cast<const void*>(&print_address_or_label);
    ZydisFormatterSetHook(&formatter, ZYDIS_FORMATTER_FUNC_PRINT_ADDRESS_ABS, &hook);
    auto default_hook = reinterpret_cast<ZydisFormatterFunc>(const_cast<void*>(hook));
    LabelContext label_context{&labels, address, default_hook};

    std::string out;
    auto next_label = labels.begin();
    size_t next_comment = 0;
    // Comments up to `offset`; with `before_labels`, only the leading ones
    // that go before the labels there.
    auto print_comments = [&](size_t offset, bool before_labels) {
        for (; next_comment < comments.size() && comments[next_comment].offset <= offset; ++next_comment) {
            const DisasmComment& c = comments[next_comment];
            if (before_labels && !c.before_labels && c.offset == offset) break;
            for (size_t pos = 0; pos < c.text.size();) {
                size_t end = c.text.find('\n', pos);
                if (end == std::string::npos) end = c.text.size();
                out += "    ; " + c.text.substr(pos, end - pos) + "\n";
                pos = end + 1;
            }
        }
    };
    size_t offset = 0;
    while (offset < size) {
        print_comments(offset, true);
        // Labels up to here; one that fell inside the previous instruction
        // says so rather than vanishing.
        for (; next_label != labels.end() && next_label->first <= offset; ++next_label) {
            out += next_label->second + ":";
            if (next_label->first < offset) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "  ; at %04" PRIx64 ", inside an instruction",
                              next_label->first);
                out += buf;
            }
            out += '\n';
        }
        print_comments(offset, false);
        ZydisDecodedInstruction inst;
        ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
        ZyanStatus decoded =
            ZydisDecoderDecodeFull(&decoder, code + offset, size - offset, &inst, operands);
        if (!ZYAN_SUCCESS(decoded)) {
            out += line_prefix(offset, code + offset, 1) + "(bad)\n";
            offset += 1;
            continue;
        }
        char text[256];
        ZyanStatus formatted = ZydisFormatterFormatInstruction(
            &formatter, &inst, operands, inst.operand_count_visible, text, sizeof text,
            address + offset, &label_context);
        if (!ZYAN_SUCCESS(formatted)) std::snprintf(text, sizeof text, "(unformattable)");
        out += line_prefix(offset, code + offset, inst.length) + text + "\n";
        offset += inst.length;
    }
    for (; next_label != labels.end(); ++next_label) out += next_label->second + ":\n";
    return out;
}

}  // namespace heron::tools
