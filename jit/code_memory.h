// Executable memory for JIT code, never writable and executable at once (W^X).
//
// Code is carved out of pooled chunks. Regions are allocated one after the
// other (16-byte aligned, the gaps filled with the host's trapping filler)
// from a window of free pages. `finalize` seals the window's filled pages at
// once, so a batch of functions (all those of one
// JITModule::finalize_definitions) costs one system call, not one mapping
// and one mprotect per function. After a seal the window resumes at the next
// page boundary: sealed pages are never written again while they hold a
// live region, so code that another thread runs is never touched.
//
// Two backings (CodeMemory::Backing):
//   - Protect: anonymous chunks whose pages are either writable (free, or
//     holding code being written) or sealed (read+execute); a seal flips the
//     filled pages to RX with one mprotect, and a reused page goes back to RW
//     first. Each flip that takes away a permission flushes the TLB (on a
//     virtual machine, several microseconds; with threads on other CPUs, a
//     shootdown).
//   - File: chunks backed by a memfd and mapped read+execute only. Code is
//     written to a private, never executable staging copy of the chunk, and a
//     seal copies the filled pages into the file with one pwrite: the pages
//     the code runs from are never writable in this process, and neither a
//     seal nor a reuse changes a mapping (no TLB flush). After a fork both
//     processes share the file, so each moves its chunks to files of its own
//     before it next writes one (a pthread_atfork count tells it).
//
// Releasing a region (a function freed or redefined) drops its pages' live
// counts; a page with no live region is reused by a later window. Fully free
// chunks beyond a small reserve are unmapped, and every chunk goes with the
// `CodeMemory`.
//
// A region with read-only data (jump tables, constant pools) keeps the old
// layout in a mapping of its own: code pages (RW -> RX) followed by data
// pages (RW -> R), so that RIP-relative references between them stay short.
//
// Not thread-safe: one owner (a JITModule) allocates, finalizes and releases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "jit/jit_error.h"

namespace heron {

/// One function's memory. `code` is both where the bytes are written before
/// `finalize` and the address they run at afterwards.
struct CodeRegion {
    uint32_t id = 0;            // 0: no region
    uint32_t slot = 0;          // the CodeMemory's record of it
    uint8_t* code = nullptr;
    size_t code_size = 0;       // as requested
    uint8_t* rodata = nullptr;  // page-aligned, after the code; nullptr if none
    size_t rodata_size = 0;
};

class CodeMemory {
public:
    /// Default size of a pooled chunk; larger requests get a chunk of their
    /// own size.
    static constexpr size_t kChunkBytes = size_t{1} << 20;
    /// Code alignment within a chunk.
    static constexpr size_t kCodeAlign = 16;

    /// Where pooled code lives (see the top of this file).
    enum class Backing : uint8_t { Protect, File };
    /// File on x86-64 (whose instruction fetch follows stores made through
    /// any mapping), else Protect. A File memory whose first chunk cannot be
    /// a memfd mapped executable goes on as Protect (see backing()).
    static Backing default_backing();

    explicit CodeMemory(Backing backing = default_backing());
    ~CodeMemory();
    CodeMemory(const CodeMemory&) = delete;
    CodeMemory& operator=(const CodeMemory&) = delete;
    CodeMemory(CodeMemory&& other) noexcept;
    CodeMemory& operator=(CodeMemory&& other) noexcept;

    /// A writable region for `code_size` bytes of code (> 0) followed, if
    /// `rodata_size` > 0, by page-aligned read-only data in a mapping of its
    /// own. The code's alignment padding is filled with the host's trapping
    /// filler (int3 on x86-64, udf #0 on AArch64).
    JitResult<CodeRegion> allocate(size_t code_size, size_t rodata_size = 0);

    /// A pooled region holding a copy of `code` (not empty), as allocate
    /// and copy_code would make it, with one write of each byte.
    JitResult<CodeRegion> allocate_code(std::span<const uint8_t> code);
    /// Copies `bytes` into the code (or data) of a region that is not yet
    /// finalized, at `offset`. Bounds are checked.
    std::optional<JitError> copy_code(const CodeRegion& region, size_t offset,
                                      std::span<const uint8_t> bytes);
    std::optional<JitError> copy_rodata(const CodeRegion& region, size_t offset,
                                        std::span<const uint8_t> bytes);

    /// Makes the region's code read+execute (and its data read-only), and
    /// flushes the instruction cache where the host needs it. Pooled regions
    /// share pages, so this seals every pooled region not yet finalized
    /// (write all regions of a batch before finalizing any). After this the
    /// region can no longer be written; finalizing twice is an error.
    std::optional<JitError> finalize(const CodeRegion& region);
    /// Seals every pooled region not yet finalized (one mprotect per run of
    /// pages). Nothing to seal is not an error.
    std::optional<JitError> finalize_all();

    /// Releases one region. The caller must first make sure no thread runs
    /// in it and unregister its trap sites.
    std::optional<JitError> release(const CodeRegion& region);

    bool is_finalized(const CodeRegion& region) const;
    /// The backing of chunks mapped from now on (File falls back to Protect
    /// for good when a file chunk cannot be made).
    Backing backing() const { return backing_; }
    /// Live regions.
    size_t num_regions() const { return live_regions_; }
    /// Bytes mapped: pooled chunks plus the mappings of regions with data.
    size_t mapped_bytes() const;
    /// mmap, mprotect and pwrite calls made so far (for tests and benchmarks).
    uint64_t num_syscalls() const { return syscalls_; }

private:
    static constexpr uint32_t kNoChunk = ~uint32_t{0};

    struct Chunk {
        uint8_t* base = nullptr;  // nullptr: unmapped (the entry is reused)
        size_t size = 0;
        std::vector<uint32_t> live;   // per page: live regions overlapping it
        std::vector<uint8_t> sealed;  // per page: 1 if read+execute
        // Per page: how many bytes from its start may hold something other
        // than filler (a fresh page: all of it; zero bytes do not trap).
        // A seal fills a page's tail only up to there, so a page reused for
        // code of the same size needs no filling.
        std::vector<uint32_t> dirty;
        uint32_t live_regions = 0;
        // File backing: the memfd behind `base` (mapped read+execute), the
        // staging copy every write goes to, and the fork count when the
        // file was made.
        int fd = -1;
        uint8_t* stage = nullptr;
        uint64_t forks = 0;
        /// Where the byte at `offset` is written.
        uint8_t* write_at(size_t offset) const { return (stage ? stage : base) + offset; }
    };
    struct Slot {
        uint32_t id = 0;  // 0: free
        uint32_t chunk = kNoChunk;  // kNoChunk: a mapping of its own
        uint8_t* base = nullptr;
        size_t offset = 0;  // in the chunk
        size_t code_size = 0;
        size_t rodata_size = 0;
        size_t code_pages_bytes = 0;    // own mapping: page-rounded code part
        size_t rodata_pages_bytes = 0;  // own mapping: page-rounded data part
        bool finalized = false;
    };
    /// Filled bytes [from, to) of a chunk that wait for the next seal.
    struct Span {
        uint32_t chunk;
        size_t from, to;
    };

    /// The live slot of `region`, or null (inline: every copy and release
    /// looks its region up).
    const Slot* find(const CodeRegion& region) const {
        if (region.id == 0 || region.slot >= slots_.size()) return nullptr;
        const Slot& s = slots_[region.slot];
        return s.id == region.id && s.base == region.code ? &s : nullptr;
    }
    Slot* find(const CodeRegion& region) { return const_cast<Slot*>(std::as_const(*this).find(region)); }
    /// "<what>: unknown or released code region".
    static JitError unknown_region(const char* what);
    JitResult<CodeRegion> allocate_own_mapping(size_t code_size, size_t rodata_size);
    /// A region in the window; its code is a copy of `bytes` (filler for
    /// the alignment tail), or filler only when `bytes` is null.
    JitResult<CodeRegion> allocate_pooled(size_t code_size, const uint8_t* bytes);
    /// Records `s` (its place and sizes filled in) as a live region with a
    /// new id, and returns the region it describes.
    CodeRegion add_region(const Slot& s);
    std::optional<JitError> open_window(size_t bytes);
    std::optional<JitError> seal(const Span& span);
    /// Maps chunk `c` of `size` bytes as a file chunk; false (nothing left
    /// mapped) when the system cannot.
    bool map_file_chunk(Chunk& c, size_t size);
    /// After a fork: moves file chunk `c` to a file of this process' own,
    /// at the same address, with the same contents.
    std::optional<JitError> unshare(Chunk& c);
    static void unmap_chunk(Chunk& c);
    bool in_unsealed_span(uint32_t chunk, size_t page) const;
    void maybe_unmap(uint32_t chunk);
    uint32_t new_slot();
    void release_all();

    std::vector<Chunk> chunks_;
    std::vector<Slot> slots_;
    std::vector<uint32_t> free_slots_;
    std::vector<uint32_t> open_;      // pooled slots not yet finalized
    std::vector<Span> unsealed_;      // filled parts of earlier windows
    // The window: writable pages [win_begin_, win_end_) of chunk win_chunk_;
    // [win_begin_, win_next_) is filled and not yet sealed.
    uint32_t win_chunk_ = kNoChunk;
    size_t win_begin_ = 0, win_next_ = 0, win_end_ = 0;
    Backing backing_ = Backing::Protect;
    uint32_t next_id_ = 1;
    size_t live_regions_ = 0;
    uint64_t syscalls_ = 0;
};

}  // namespace heron
