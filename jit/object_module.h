// ObjectModule: compiles IR functions and data objects into an ELF64
// relocatable object (x86-64 or AArch64, on any host) for a system linker.
//
//   ObjectModule obj(isa_by_name("x86_64"));
//   FuncId f = obj.declare_function("fib", Linkage::Export, sig).value();
//   obj.define_function(f, func);           // compiled here (codegen/context.h)
//   DataId d = obj.declare_data("table", Linkage::Export, /*writable=*/false).value();
//   obj.define_data(d, desc);               // bytes, alignment, pointers inside
//   obj.write("out.o");
//
// `%name` becomes the global symbol `name` (Linkage::Local: a local
// symbol); names the module refers to but does not define become undefined
// symbols. Layout and relocations: docs/object-files.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/context.h"
#include "jit/jit_module.h"

namespace heron {

/// The contents of a data object.
struct DataDescription {
    std::vector<uint8_t> contents;
    uint32_t align = 1;  // a power of two
    /// An 8-byte pointer at `offset` to `target` (a function or data object,
    /// of this module or not) plus `addend`.
    struct Pointer {
        uint32_t offset = 0;
        std::string target;
        int64_t addend = 0;
    };
    std::vector<Pointer> pointers;
};

class ObjectModule {
public:
    /// Compiles for `isa` (x86_64 or aarch64) with `options`.
    explicit ObjectModule(std::shared_ptr<TargetIsa> isa, const CompileOptions& options = {});
    ~ObjectModule();
    ObjectModule(const ObjectModule&) = delete;
    ObjectModule& operator=(const ObjectModule&) = delete;

    /// Declaring a name again with the same signature (and kind) returns the
    /// same id.
    JitResult<FuncId> declare_function(std::string_view name, Linkage linkage, const Signature& sig);
    std::optional<JitError> define_function(FuncId id, const Function& func);
    JitResult<DataId> declare_data(std::string_view name, Linkage linkage, bool writable);
    std::optional<JitError> define_data(DataId id, DataDescription desc);

    /// The object's bytes. Errors: a Local or Export function or data object
    /// declared but not defined.
    JitResult<std::vector<uint8_t>> finish();
    /// finish, written to `path`.
    std::optional<JitError> write(const std::string& path);

    const CompiledCode* compiled_code(FuncId id) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace heron
