// ELF64 relocatable object writer. See elf_writer.h.
#include "jit/elf_writer.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace heron::elf {

namespace {

/// A string table: offset 0 is the empty string.
struct StringTable {
    std::vector<uint8_t> bytes{0};
    uint32_t add(const std::string& s) {
        if (s.empty()) return 0;
        const uint32_t at = static_cast<uint32_t>(bytes.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
        bytes.push_back(0);
        return at;
    }
};

template <typename T>
void append(std::vector<uint8_t>& out, const T& value) {
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    out.insert(out.end(), p, p + sizeof(T));
}

void pad_to(std::vector<uint8_t>& out, uint64_t align) {
    while (out.size() % align) out.push_back(0);
}

}  // namespace

uint32_t Writer::add_section(Section s) {
    sections_.push_back(std::move(s));
    section_symbols_.push_back(0);
    return static_cast<uint32_t>(sections_.size());
}

uint32_t Writer::add_symbol(Symbol s) {
    symbols_.push_back(std::move(s));
    return static_cast<uint32_t>(symbols_.size() - 1);
}

uint32_t Writer::section_symbol(uint32_t section) {
    uint32_t& handle = section_symbols_[section - 1];
    if (handle == 0) {
        Symbol s;
        s.local = true;
        s.type = STT_SECTION;
        s.section = section;
        handle = add_symbol(std::move(s)) + 1;
    }
    return handle - 1;
}

void Writer::add_rela(uint32_t section, uint64_t offset, uint32_t symbol, uint32_t type, int64_t addend) {
    relas_.push_back({section, offset, symbol, type, addend});
}

std::vector<uint8_t> Writer::finish() const {
    // Symbol indices: the null symbol, the locals, then the globals.
    std::vector<uint32_t> index(symbols_.size());
    uint32_t next = 1;
    for (size_t k = 0; k < symbols_.size(); ++k) {
        if (symbols_[k].local) index[k] = next++;
    }
    const uint32_t first_global = next;
    for (size_t k = 0; k < symbols_.size(); ++k) {
        if (!symbols_[k].local) index[k] = next++;
    }
    StringTable strtab;
    std::vector<uint8_t> symtab(sizeof(Elf64_Sym), 0);
    symtab.resize(sizeof(Elf64_Sym) * next);
    for (size_t k = 0; k < symbols_.size(); ++k) {
        const Symbol& s = symbols_[k];
        Elf64_Sym sym{};
        sym.st_name = strtab.add(s.name);
        sym.st_info = ELF64_ST_INFO(s.local ? STB_LOCAL : STB_GLOBAL, s.type);
        sym.st_other = STV_DEFAULT;
        sym.st_shndx = static_cast<uint16_t>(s.section);
        sym.st_value = s.value;
        sym.st_size = s.size;
        std::memcpy(symtab.data() + sizeof(Elf64_Sym) * index[k], &sym, sizeof sym);
    }

    // The sections: those added, a .rela.X for each with relocations, the
    // symbol and string tables.
    struct Out {
        Elf64_Shdr hdr{};
        const std::vector<uint8_t>* bytes = nullptr;
        std::vector<uint8_t> own;
    };
    std::vector<Out> out(1);  // the null section
    StringTable shstrtab;
    for (const Section& s : sections_) {
        Out o;
        o.hdr.sh_name = shstrtab.add(s.name);
        o.hdr.sh_type = s.type;
        o.hdr.sh_flags = s.flags;
        o.hdr.sh_addralign = s.align;
        o.bytes = &s.bytes;
        out.push_back(std::move(o));
    }
    std::vector<uint32_t> rela_sections;
    for (uint32_t sec = 1; sec <= sections_.size(); ++sec) {
        Out o;
        for (const Rela& r : relas_) {
            if (r.section != sec) continue;
            Elf64_Rela rela{};
            rela.r_offset = r.offset;
            rela.r_info = ELF64_R_INFO(index[r.symbol], r.type);
            rela.r_addend = r.addend;
            append(o.own, rela);
        }
        if (o.own.empty()) continue;
        o.hdr.sh_name = shstrtab.add(".rela" + sections_[sec - 1].name);
        o.hdr.sh_type = SHT_RELA;
        o.hdr.sh_flags = SHF_INFO_LINK;
        o.hdr.sh_info = sec;
        o.hdr.sh_addralign = 8;
        o.hdr.sh_entsize = sizeof(Elf64_Rela);
        rela_sections.push_back(static_cast<uint32_t>(out.size()));
        out.push_back(std::move(o));
    }
    const uint32_t symtab_at = static_cast<uint32_t>(out.size());
    for (uint32_t r : rela_sections) out[r].hdr.sh_link = symtab_at;
    {
        Out o;
        o.hdr.sh_name = shstrtab.add(".symtab");
        o.hdr.sh_type = SHT_SYMTAB;
        o.hdr.sh_link = symtab_at + 1;
        o.hdr.sh_info = first_global;
        o.hdr.sh_addralign = 8;
        o.hdr.sh_entsize = sizeof(Elf64_Sym);
        o.own = std::move(symtab);
        out.push_back(std::move(o));
    }
    {
        Out o;
        o.hdr.sh_name = shstrtab.add(".strtab");
        o.hdr.sh_type = SHT_STRTAB;
        o.hdr.sh_addralign = 1;
        o.own = std::move(strtab.bytes);
        out.push_back(std::move(o));
    }
    const uint32_t shstrtab_at = static_cast<uint32_t>(out.size());
    {
        Out o;
        o.hdr.sh_name = shstrtab.add(".shstrtab");
        o.hdr.sh_type = SHT_STRTAB;
        o.hdr.sh_addralign = 1;
        out.push_back(std::move(o));
        out.back().own = shstrtab.bytes;  // complete: its own name is in it
    }

    std::vector<uint8_t> file(sizeof(Elf64_Ehdr), 0);
    for (size_t k = 1; k < out.size(); ++k) {
        Out& o = out[k];
        const std::vector<uint8_t>& bytes = o.bytes ? *o.bytes : o.own;
        pad_to(file, std::max<uint64_t>(o.hdr.sh_addralign, 1));
        o.hdr.sh_offset = file.size();
        o.hdr.sh_size = bytes.size();
        file.insert(file.end(), bytes.begin(), bytes.end());
    }
    pad_to(file, 8);
    const uint64_t shoff = file.size();
    for (const Out& o : out) append(file, o.hdr);

    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_ident[EI_OSABI] = ELFOSABI_SYSV;
    eh.e_type = ET_REL;
    eh.e_machine = machine_;
    eh.e_version = EV_CURRENT;
    eh.e_shoff = shoff;
    eh.e_ehsize = sizeof(Elf64_Ehdr);
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = static_cast<uint16_t>(out.size());
    eh.e_shstrndx = static_cast<uint16_t>(shstrtab_at);
    std::memcpy(file.data(), &eh, sizeof eh);
    return file;
}

}  // namespace heron::elf
