// SymbolResolver: defined symbols, then callbacks, then dlsym.
#include "jit/symbols.h"

#include <dlfcn.h>

namespace heron {

void SymbolResolver::define(std::string name, const void* address) {
    symbols_.insert_or_assign(std::move(name), address);
}

void SymbolResolver::add_lookup(LookupFn fn) { lookups_.push_back(std::move(fn)); }

const void* SymbolResolver::lookup(std::string_view name) const {
    if (auto it = symbols_.find(name); it != symbols_.end()) return it->second;
    for (const auto& fn : lookups_) {
        if (const void* address = fn(name)) return address;
    }
    if (!use_process_symbols_) return nullptr;
    // dlsym needs a NUL-terminated name.
    std::string cname(name);
    return dlsym(RTLD_DEFAULT, cname.c_str());
}

JitResult<const void*> SymbolResolver::resolve(std::string_view name) const {
    if (const void* address = lookup(name)) return address;
    return JitError{"undefined host symbol '" + std::string(name) + "'"};
}

}  // namespace heron
