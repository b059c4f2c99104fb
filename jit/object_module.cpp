// ObjectModule: compiled functions and data laid out as an ELF object. See
// object_module.h and docs/object-files.md.
#include "jit/object_module.h"

#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "codegen/ir/printer.h"
#include "jit/elf_writer.h"

namespace heron {

namespace {

/// The symbol a name links by: `%name` -> "name", a user name -> "u1:7".
std::string link_name(const ExternalName& n) { return n.kind == ExternalName::Kind::User ? n.to_string() : n.name; }

struct Target {
    uint16_t machine;
    uint32_t abs64;     // an 8-byte absolute address
    uint32_t slot_ref;  // the code's PC-relative reference to a slot
    uint8_t filler;     // between functions
};

std::optional<Target> target_of(std::string_view isa) {
    if (isa.starts_with("x86_64")) return Target{EM_X86_64, R_X86_64_64, R_X86_64_PC32, 0xCC};
    if (isa == "aarch64") return Target{EM_AARCH64, R_AARCH64_ABS64, R_AARCH64_LD_PREL_LO19, 0x00};  // udf #0
    return std::nullopt;
}

uint32_t load32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

}  // namespace

struct ObjectModule::Impl {
    std::unique_ptr<Context> compiler;
    struct Func {
        std::string name;
        Linkage linkage;
        Signature sig;
        std::optional<CompiledCode> code;
    };
    struct Data {
        std::string name;
        Linkage linkage;
        bool writable;
        std::optional<DataDescription> desc;
    };
    std::vector<Func> funcs;
    std::vector<Data> data;
    // name -> function index, or data index + kDataBit
    static constexpr uint32_t kDataBit = 1u << 31;
    std::unordered_map<std::string, uint32_t> by_name;
};

ObjectModule::ObjectModule(std::shared_ptr<TargetIsa> isa, const CompileOptions& options)
    : impl_(std::make_unique<Impl>()) {
    impl_->compiler = std::make_unique<Context>(std::move(isa), options);
}

ObjectModule::~ObjectModule() = default;

JitResult<FuncId> ObjectModule::declare_function(std::string_view name, Linkage linkage, const Signature& sig) {
    auto it = impl_->by_name.find(std::string(name));
    if (it != impl_->by_name.end()) {
        if (it->second & Impl::kDataBit) return JitError{"%" + std::string(name) + " is declared as data"};
        const Impl::Func& f = impl_->funcs[it->second];
        if (!(f.sig == sig)) {
            return JitError{"function %" + std::string(name) + " declared again with a different signature: " +
                            print_signature(f.sig) + " vs " + print_signature(sig)};
        }
        return FuncId{it->second};
    }
    const auto id = static_cast<uint32_t>(impl_->funcs.size());
    impl_->funcs.push_back({std::string(name), linkage, sig, std::nullopt});
    impl_->by_name.emplace(std::string(name), id);
    return FuncId{id};
}

std::optional<JitError> ObjectModule::define_function(FuncId id, const Function& func) {
    if (id.index >= impl_->funcs.size()) return JitError{"define_function: unknown function id"};
    Impl::Func& f = impl_->funcs[id.index];
    if (f.linkage == Linkage::Import) return JitError{"function %" + f.name + " is declared Import and cannot be defined"};
    if (f.code) return JitError{"function %" + f.name + " is defined twice"};
    if (!(func.signature == f.sig)) {
        return JitError{"function %" + f.name + " is defined with signature " + print_signature(func.signature) +
                        " but declared with " + print_signature(f.sig)};
    }
    CompileRequest request;
    request.own_name_is_self = link_name(func.name) == f.name;
    CompiledCode code;
    if (auto e = impl_->compiler->compile(func, code, request)) {
        if (e->stage == CompileStage::Verify) return JitError{"function %" + f.name + " does not verify:\n" + e->message};
        return JitError{"cannot compile %" + f.name + ": " + e->message};
    }
    f.code = std::move(code);
    return std::nullopt;
}

JitResult<DataId> ObjectModule::declare_data(std::string_view name, Linkage linkage, bool writable) {
    auto it = impl_->by_name.find(std::string(name));
    if (it != impl_->by_name.end()) {
        if (!(it->second & Impl::kDataBit)) return JitError{"%" + std::string(name) + " is declared as a function"};
        const Impl::Data& d = impl_->data[it->second & ~Impl::kDataBit];
        if (d.writable != writable) return JitError{"data %" + std::string(name) + " declared again with another mutability"};
        return DataId{it->second & ~Impl::kDataBit};
    }
    const auto id = static_cast<uint32_t>(impl_->data.size());
    impl_->data.push_back({std::string(name), linkage, writable, std::nullopt});
    impl_->by_name.emplace(std::string(name), id | Impl::kDataBit);
    return DataId{id};
}

std::optional<JitError> ObjectModule::define_data(DataId id, DataDescription desc) {
    if (id.index >= impl_->data.size()) return JitError{"define_data: unknown data id"};
    Impl::Data& d = impl_->data[id.index];
    if (d.linkage == Linkage::Import) return JitError{"data %" + d.name + " is declared Import and cannot be defined"};
    if (d.desc) return JitError{"data %" + d.name + " is defined twice"};
    if (desc.align == 0 || (desc.align & (desc.align - 1))) {
        return JitError{"data %" + d.name + ": alignment " + std::to_string(desc.align) + " is not a power of two"};
    }
    for (const DataDescription::Pointer& p : desc.pointers) {
        if (uint64_t{p.offset} + 8 > desc.contents.size()) {
            return JitError{"data %" + d.name + ": pointer at offset " + std::to_string(p.offset) +
                            " does not fit in its " + std::to_string(desc.contents.size()) + " bytes"};
        }
    }
    d.desc = std::move(desc);
    return std::nullopt;
}

const CompiledCode* ObjectModule::compiled_code(FuncId id) const {
    if (id.index >= impl_->funcs.size() || !impl_->funcs[id.index].code) return nullptr;
    return &*impl_->funcs[id.index].code;
}

JitResult<std::vector<uint8_t>> ObjectModule::finish() {
    Impl& m = *impl_;
    const std::optional<Target> t = target_of(m.compiler->isa().name());
    if (!t) return JitError{"object files are not supported for " + std::string(m.compiler->isa().name())};
    for (const Impl::Func& f : m.funcs) {
        if (f.linkage != Linkage::Import && !f.code) return JitError{"function %" + f.name + " is declared but not defined"};
    }
    for (const Impl::Data& d : m.data) {
        if (d.linkage != Linkage::Import && !d.desc) return JitError{"data %" + d.name + " is declared but not defined"};
    }

    elf::Writer w(t->machine);
    std::unordered_map<std::string, uint32_t> symbols;  // name -> writer handle
    auto pad = [](std::vector<uint8_t>& bytes, uint64_t align, uint8_t filler) {
        while (bytes.size() % align) bytes.push_back(filler);
    };

    // Code: every function 16-aligned in .text, without its relocation
    // slots (they move to the cells section below).
    const uint32_t text = w.add_section({".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16, {}});
    std::vector<uint64_t> func_at(m.funcs.size(), 0);
    for (size_t k = 0; k < m.funcs.size(); ++k) {
        const Impl::Func& f = m.funcs[k];
        if (!f.code) continue;
        const CompiledCode& c = *f.code;
        size_t end = c.bytes.size();
        for (const Relocation& r : c.relocations) end = std::min<size_t>(end, r.offset);
        std::vector<uint8_t>& bytes = w.section(text).bytes;
        pad(bytes, 16, t->filler);
        func_at[k] = bytes.size();
        bytes.insert(bytes.end(), c.bytes.begin(), c.bytes.begin() + static_cast<std::ptrdiff_t>(end));
        symbols[f.name] = w.add_symbol({f.name, f.linkage == Linkage::Local, STT_FUNC, text, func_at[k], end});
    }

    // Data: read-only without pointers in .rodata, with pointers in
    // .data.rel.ro (the dynamic linker relocates it, then it is read-only),
    // writable in .data.
    uint32_t rodata = 0, relro = 0, wdata = 0;
    auto data_section = [&](const Impl::Data& d) -> uint32_t {
        if (d.writable) return wdata ? wdata : wdata = w.add_section({".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 1, {}});
        if (!d.desc->pointers.empty()) {
            return relro ? relro : relro = w.add_section({".data.rel.ro", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 1, {}});
        }
        return rodata ? rodata : rodata = w.add_section({".rodata", SHT_PROGBITS, SHF_ALLOC, 1, {}});
    };
    std::vector<std::pair<uint32_t, uint64_t>> data_at(m.data.size());  // section, offset
    for (size_t k = 0; k < m.data.size(); ++k) {
        const Impl::Data& d = m.data[k];
        if (!d.desc) continue;
        const uint32_t sec = data_section(d);
        elf::Section& s = w.section(sec);
        pad(s.bytes, d.desc->align, 0);
        s.align = std::max<uint64_t>(s.align, d.desc->align);
        data_at[k] = {sec, s.bytes.size()};
        s.bytes.insert(s.bytes.end(), d.desc->contents.begin(), d.desc->contents.end());
        for (const DataDescription::Pointer& p : d.desc->pointers) std::memset(&s.bytes[data_at[k].second + p.offset], 0, 8);
        symbols[d.name] = w.add_symbol({d.name, d.linkage == Linkage::Local, STT_OBJECT, sec, data_at[k].second,
                                        d.desc->contents.size()});
    }

    auto symbol_for = [&](const std::string& name) {
        auto it = symbols.find(name);
        if (it != symbols.end()) return it->second;
        const uint32_t h = w.add_symbol({name, false, STT_NOTYPE, SHN_UNDEF, 0, 0});
        symbols.emplace(name, h);
        return h;
    };

    // The cells: per target (name and addend), a slot the code loads with a
    // PC-relative reference, holding the address of the cell next to it,
    // which holds the target's address (as in the JIT, compiled_code.h).
    uint32_t cells = 0;
    std::map<std::pair<std::string, int64_t>, uint64_t> cell_pairs;  // -> offset of the slot
    auto pair_of = [&](const std::string& name, int64_t addend) {
        if (!cells) cells = w.add_section({".data.rel.ro.heron_cells", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 8, {}});
        auto [it, inserted] = cell_pairs.emplace(std::make_pair(name, addend), 0);
        if (inserted) {
            std::vector<uint8_t>& bytes = w.section(cells).bytes;
            it->second = bytes.size();
            bytes.resize(bytes.size() + 16, 0);
            w.add_rela(cells, it->second, w.section_symbol(cells), t->abs64, static_cast<int64_t>(it->second + 8));
            w.add_rela(cells, it->second + 8, symbol_for(name), t->abs64, addend);
        }
        return it->second;
    };
    for (size_t k = 0; k < m.funcs.size(); ++k) {
        const Impl::Func& f = m.funcs[k];
        if (!f.code) continue;
        const CompiledCode& c = *f.code;
        for (uint32_t ref : c.slot_refs) {
            if (uint64_t{ref} + 4 > c.bytes.size()) return JitError{"%" + f.name + ": slot reference out of the code"};
            const uint32_t insn = load32(&c.bytes[ref]);
            int64_t slot;
            if (t->machine == EM_X86_64) {
                slot = int64_t{ref} + 4 + static_cast<int32_t>(insn);
            } else {
                const int32_t imm19 = static_cast<int32_t>(insn << 8) >> 13;  // bits 23:5, sign-extended
                slot = int64_t{ref} + int64_t{imm19} * 4;
            }
            auto r = std::find_if(c.relocations.begin(), c.relocations.end(),
                                  [&](const Relocation& x) { return x.offset == slot; });
            if (r == c.relocations.end()) {
                return JitError{"%" + f.name + ": the reference at offset " + std::to_string(ref) + " reaches no slot"};
            }
            const uint64_t at = func_at[k] + ref;
            const uint64_t cell = pair_of(link_name(r->target), r->addend);
            // The linker fills the field; it is left zero.
            const uint32_t cleared = t->machine == EM_X86_64 ? 0 : insn & ~0x00FFFFE0u;
            // (pair_of may add the cells' section: the text is looked up
            // after it, never held across it.)
            std::memcpy(&w.section(text).bytes[at], &cleared, 4);
            const int64_t addend = static_cast<int64_t>(cell) - (t->machine == EM_X86_64 ? 4 : 0);
            w.add_rela(text, at, w.section_symbol(cells), t->slot_ref, addend);
        }
    }
    for (size_t k = 0; k < m.data.size(); ++k) {
        const Impl::Data& d = m.data[k];
        if (!d.desc) continue;
        for (const DataDescription::Pointer& p : d.desc->pointers) {
            w.add_rela(data_at[k].first, data_at[k].second + p.offset, symbol_for(p.target), t->abs64, p.addend);
        }
    }
    // No executable stack needed.
    w.add_section({".note.GNU-stack", SHT_PROGBITS, 0, 1, {}});
    return w.finish();
}

std::optional<JitError> ObjectModule::write(const std::string& path) {
    JitResult<std::vector<uint8_t>> bytes = finish();
    if (!bytes) return bytes.error();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return JitError{"cannot open " + path + " for writing"};
    const bool ok = std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
    if (std::fclose(f) != 0 || !ok) return JitError{"cannot write " + path};
    return std::nullopt;
}

}  // namespace heron
