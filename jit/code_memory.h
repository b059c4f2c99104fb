// Executable memory for JIT code, never writable and executable at once (W^X).
//
// Each function gets its own region: one anonymous mapping whose first pages
// hold the code and whose following pages hold the function's read-only data
// (jump tables, constant pools), so that RIP-relative references between them
// stay short. A region is born read-write; the JIT module copies the code in,
// applies relocations, and calls `finalize`, which turns the code pages into
// read+execute and the data pages into read-only. A region is released on its
// own (a function freed or redefined) and every remaining region goes with
// the `CodeMemory`. One region per mapping costs a page per function but lets
// a region change protection without touching a neighbour that another thread
// may be running.
//
// Not thread-safe: one owner (a JITModule) allocates, finalizes and releases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>

#include "jit/jit_error.h"

namespace heron {

/// One function's memory. `code` is both where the bytes are written before
/// `finalize` and the address they run at afterwards.
struct CodeRegion {
    uint32_t id = 0;            // 0: no region
    uint8_t* code = nullptr;
    size_t code_size = 0;       // as requested; the mapping is rounded to pages
    uint8_t* rodata = nullptr;  // page-aligned, after the code; nullptr if none
    size_t rodata_size = 0;
};

class CodeMemory {
public:
    CodeMemory() = default;
    ~CodeMemory();
    CodeMemory(const CodeMemory&) = delete;
    CodeMemory& operator=(const CodeMemory&) = delete;
    CodeMemory(CodeMemory&& other) noexcept;
    CodeMemory& operator=(CodeMemory&& other) noexcept;

    /// Maps a read-write region for `code_size` bytes of code (> 0) followed
    /// by `rodata_size` bytes of read-only data. Unused code bytes are filled
    /// with the host's trapping filler (int3 on x86-64, udf #0 on AArch64).
    JitResult<CodeRegion> allocate(size_t code_size, size_t rodata_size = 0);

    /// Copies `bytes` into the code (or data) of a region that is not yet
    /// finalized, at `offset`. Bounds are checked.
    std::optional<JitError> copy_code(const CodeRegion& region, size_t offset,
                                      std::span<const uint8_t> bytes);
    std::optional<JitError> copy_rodata(const CodeRegion& region, size_t offset,
                                        std::span<const uint8_t> bytes);

    /// Makes the code read+execute and the data read-only, and flushes the
    /// instruction cache where the host needs it. After this the region can
    /// no longer be written; finalizing twice is an error.
    std::optional<JitError> finalize(const CodeRegion& region);

    /// Unmaps one region. The caller must first make sure no thread runs in
    /// it and unregister its trap sites.
    std::optional<JitError> release(const CodeRegion& region);

    bool is_finalized(const CodeRegion& region) const;
    size_t num_regions() const { return regions_.size(); }
    /// Bytes mapped over all live regions (page-rounded).
    size_t mapped_bytes() const;

private:
    struct Mapping {
        uint8_t* base = nullptr;
        size_t code_pages_bytes = 0;    // page-rounded code part
        size_t rodata_pages_bytes = 0;  // page-rounded data part
        size_t code_size = 0;
        size_t rodata_size = 0;
        bool finalized = false;
    };

    /// The live, matching mapping of `region`, or an error naming `what`.
    JitResult<Mapping*> find(const CodeRegion& region, const char* what);
    void release_all();

    std::unordered_map<uint32_t, Mapping> regions_;
    uint32_t next_id_ = 1;
};

}  // namespace heron
