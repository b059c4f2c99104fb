// Finding the address of a host symbol that JIT code calls or reads.
//
// Three sources, asked in this order, first answer wins:
//   1. symbols the embedder defined by name (JITBuilder::symbol),
//   2. lookup callbacks, in the order they were added (for embedders that
//      generate or load their symbols on demand),
//   3. the process' own symbols: dlsym(RTLD_DEFAULT, name) — libc and every
//      loaded shared object, and the executable's own functions if it was
//      linked with -rdynamic. This source can be switched off for a sandbox.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jit/jit_error.h"

namespace heron {

class SymbolResolver {
public:
    /// Returns the symbol's address, or nullptr if it does not know it.
    using LookupFn = std::function<const void*(std::string_view name)>;

    /// Defines (or redefines) a host symbol.
    void define(std::string name, const void* address);
    void add_lookup(LookupFn fn);
    void set_use_process_symbols(bool use) { use_process_symbols_ = use; }

    /// The address of `name`, or nullptr if no source knows it.
    const void* lookup(std::string_view name) const;
    /// As `lookup`, with an error naming the symbol.
    JitResult<const void*> resolve(std::string_view name) const;

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, const void*, Hash, std::equal_to<>> symbols_;
    std::vector<LookupFn> lookups_;
    bool use_process_symbols_ = true;
};

}  // namespace heron
