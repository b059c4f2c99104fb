// A writer of ELF64 little-endian relocatable objects (ET_REL): sections of
// bytes, symbols, RELA relocations, and the tables that tie them together
// (.symtab, .strtab, .shstrtab, one .rela.X per section that has
// relocations). It knows nothing of Heron's IR; jit/object_module.h decides
// what goes where.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heron::elf {

/// A section of the object. Indices returned by Writer::add_section are
/// ELF section indices (1 = the first added section).
struct Section {
    std::string name;
    uint32_t type = 1;    // SHT_PROGBITS
    uint64_t flags = 0;   // SHF_*
    uint64_t align = 1;
    std::vector<uint8_t> bytes;
};

struct Symbol {
    std::string name;
    bool local = false;
    uint8_t type = 0;      // STT_*
    uint32_t section = 0;  // 0: undefined
    uint64_t value = 0;
    uint64_t size = 0;
};

class Writer {
public:
    /// `machine`: EM_X86_64 or EM_AARCH64.
    explicit Writer(uint16_t machine) : machine_(machine) {}

    uint32_t add_section(Section s);
    Section& section(uint32_t index) { return sections_[index - 1]; }
    /// A symbol; returns a handle for add_rela (not the final symbol index:
    /// finish puts the local symbols first, as ELF requires).
    uint32_t add_symbol(Symbol s);
    /// The STT_SECTION symbol of a section (made on first use).
    uint32_t section_symbol(uint32_t section);
    void add_rela(uint32_t section, uint64_t offset, uint32_t symbol, uint32_t type, int64_t addend);

    /// The object's bytes.
    std::vector<uint8_t> finish() const;

private:
    struct Rela {
        uint32_t section;
        uint64_t offset;
        uint32_t symbol;
        uint32_t type;
        int64_t addend;
    };
    uint16_t machine_;
    std::vector<Section> sections_;
    std::vector<Symbol> symbols_;
    std::vector<uint32_t> section_symbols_;  // per section, handle + 1 (0: none yet)
    std::vector<Rela> relas_;
};

}  // namespace heron::elf
