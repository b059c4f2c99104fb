// The process-wide table of JIT code ranges and their trap sites.
//
// Every finalized function registers its code range [start, end) together
// with the instructions inside it that may trap on purpose: a `ud2` that a
// `trap`/`trapz` branches to, a `div` that faults on a zero divisor, a load
// or store whose fault means an out-of-bounds access. Each site records the
// offset of the instruction's first byte (where the CPU reports the fault),
// its TrapCode, and the IR instruction it came from, so that a fault becomes
// "int_divz in %f at inst12" instead of a dead process (ir-reference.md 17).
//
// The signal handler reads this table, so reads take no lock and allocate
// nothing: readers see an immutable snapshot through one atomic pointer;
// writers (serialized by a mutex) build a new snapshot and swap it in. What
// a snapshot no longer shows (the previous snapshot, a replaced leaf, an
// unregistered range) is retired and freed once the count of readers in
// flight has been seen at zero after its retirement — no reader can still
// hold it then.
//
// The table is two levels deep so that one update costs far less than the
// whole table: ranges sit, sorted by start, in leaves of at most
// kLeafCapacity entries, and a snapshot is the sorted list of its leaves.
// An update copies only the leaves it changes and the list of leaves (one
// pointer per leaf), and a batch of updates (`update`, used by
// JITModule::finalize_definitions for all its functions) publishes once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/entity.h"
#include "codegen/ir/instructions.h"
#include "jit/jit_error.h"

namespace heron {

/// One instruction that may trap, relative to its function's code start.
struct TrapSite {
    uint32_t offset = 0;     // first byte of the trapping instruction
    TrapCode code;
    PackedOption<Inst> inst;  // the IR instruction, if known
};

/// A trap as reported to the embedder.
struct TrapInfo {
    TrapCode code;
    std::string function;     // IR name without '%'
    std::optional<Inst> inst;  // none for stk_ovf outside a registered site
    uintptr_t pc = 0;         // address of the trapping instruction
    uint32_t offset = 0;      // pc - start of the function's code
    int signal = 0;           // the signal that reported it

    /// "int_divz in %f at inst3" (or "stk_ovf in %f"): stable across runs.
    std::string to_string() const;
};

/// What a signal handler can learn without allocating.
struct RawTrapInfo {
    static constexpr size_t kMaxFunctionName = 256;  // including the NUL

    uintptr_t pc = 0;
    uintptr_t range_start = 0;
    uint8_t code = 0;  // TrapCode byte; 0: pc is JIT code but not a trap site
    uint32_t inst = Inst::kReserved;
    char function[kMaxFunctionName] = {};  // NUL-terminated, possibly truncated

    TrapInfo to_trap_info(int signal) const;
};

class TrapRegistry {
public:
    constexpr TrapRegistry() = default;
    ~TrapRegistry();
    TrapRegistry(const TrapRegistry&) = delete;
    TrapRegistry& operator=(const TrapRegistry&) = delete;

    /// The registry the trap handler consults. Never destroyed, so JIT code
    /// may still trap while the process exits.
    static TrapRegistry& global();

    /// Registers the code of `function` at [start, start + size) and its
    /// trap sites (any order; offsets < size, each offset at most once).
    /// Ranges must not overlap.
    std::optional<JitError> register_range(const void* start, size_t size,
                                           std::string_view function,
                                           std::vector<TrapSite> sites);
    /// Registers a range like register_range and, in the same update,
    /// removes the range that starts at `old_start` (a redefined
    /// function's previous code): readers see either the old range or the
    /// new one, and the table is published once. `old_start` null (or
    /// not registered) removes nothing. On error nothing changes.
    std::optional<JitError> replace_range(const void* old_start, const void* start, size_t size,
                                          std::string_view function, std::span<const TrapSite> sites);
    /// Removes the range that starts at `start`; false if there is none.
    /// Call it before the code's memory is released.
    bool unregister_range(const void* start);

    /// One change of a batch: removes the range starting at `old_start`
    /// (null or not registered: nothing), then registers `start`/`size`
    /// (null `start`: nothing) with `function`'s name and trap sites.
    struct Update {
        const void* old_start = nullptr;
        const void* start = nullptr;
        size_t size = 0;
        std::string_view function;
        std::span<const TrapSite> sites;
    };
    /// Applies a batch in one published change: readers see the table from
    /// before or after all of it. Every removal comes before every
    /// insertion, so a new range may reuse the place of a removed one. New
    /// ranges must be valid as for register_range and overlap neither each
    /// other nor a range that stays. On error nothing changes.
    std::optional<JitError> update(std::span<const Update> updates);

    /// The trap site at `pc`, if any. Locks and allocates: not for handlers.
    std::optional<TrapInfo> lookup(uintptr_t pc) const;
    /// The function whose code contains `pc`. Locks and allocates.
    std::optional<std::string> function_at(uintptr_t pc) const;

    /// Async-signal-safe: no lock, no allocation, bounded time. True if `pc`
    /// lies in a registered range; then `out` names the function and, if pc
    /// is a trap site, its code and instruction (out.code == 0 otherwise).
    bool lookup_raw(uintptr_t pc, RawTrapInfo& out) const noexcept;

    size_t num_ranges() const;

private:
    /// Ranges per leaf: an update copies up to this many pointers for the
    /// leaf it changes, plus one pointer per leaf of the table.
    static constexpr uint32_t kLeafCapacity = 128;

    struct Range {
        uintptr_t start = 0;
        uintptr_t end = 0;
        std::string function;
        std::vector<TrapSite> sites;  // sorted by offset
    };
    /// Immutable once published: a change copies it first.
    struct Leaf {
        uint32_t count = 0;
        bool published = false;
        const Range* ranges[kLeafCapacity];  // sorted by start
        uintptr_t first() const { return ranges[0]->start; }
    };
    struct Snapshot {
        struct Entry {
            uintptr_t first;  // the leaf's first start
            const Leaf* leaf;
        };
        std::vector<Entry> leaves;  // sorted by first
    };
    /// A position in the writer's table: leaf index and index in the leaf.
    struct Pos {
        size_t leaf = 0;
        uint32_t index = 0;
    };

    /// Stages a batch's new ranges (checking their sites) in `staged_`,
    /// sorted by start in `order_`, and its removals, sorted, in
    /// `removed_`. Requires `mutex_`.
    std::optional<JitError> stage_locked(std::span<const Update> updates);
    /// Merges the staged batch into the table in one walk along the leaves
    /// (a binary search from one touched leaf to the next, the touched
    /// leaves merged, one pointer copied per untouched leaf), checks that no new range
    /// overlaps another or one that stays, and publishes; on error nothing
    /// changes. Requires `mutex_`.
    std::optional<JitError> merge_locked();
    /// merge_locked's error for a new range that overlaps another; out of
    /// line, so that its test stays inline in the merge.
    [[gnu::cold, gnu::noinline]] static JitError overlap_error(const Range& named);
    /// The first range whose start is >= `start` (leaf == leaves_.size():
    /// none).
    Pos lower_bound(uintptr_t start) const;
    const Range* at(Pos p) const { return leaves_[p.leaf]->ranges[p.index]; }
    /// The leaf `i` made writable: a published leaf is replaced by a copy
    /// and retired.
    Leaf* writable(size_t i);
    /// Takes the range starting exactly at `start` out of the table.
    const Range* remove(uintptr_t start);
    /// Publishes the writer's table and retires the previous snapshot.
    /// Requires `mutex_`.
    void publish();
    /// Once no reader is in flight, what was retired can no longer be seen
    /// by anyone: it goes to the spare lists (a few are kept for the next
    /// updates, so that steady redefinition allocates nothing), the rest is
    /// freed (ranges go back to their pool, beyond the spares without
    /// their buffers). Requires `mutex_`.
    void collect();
    /// A range from the pool (allocated in blocks of up to kRangesPerBlock,
    /// so that a batch of new functions costs a few allocations, not one
    /// each).
    /// Requires `mutex_`.
    Range* new_range();
    [[gnu::noinline]] void add_range_block();
    /// The range starting exactly at `start`. Requires `mutex_`.
    const Range* find_range(uintptr_t start) const;
    /// The range containing `pc`. Requires `mutex_`.
    const Range* range_containing(uintptr_t pc) const;

    mutable std::mutex mutex_;
    std::vector<Leaf*> leaves_;  // the writer's table, sorted by first start
    size_t num_ranges_ = 0;
    std::atomic<const Snapshot*> current_{nullptr};
    mutable std::atomic<size_t> readers_{0};
    std::vector<std::unique_ptr<Snapshot>> retired_snapshots_;
    std::vector<std::unique_ptr<Leaf>> retired_leaves_;
    std::vector<Range*> retired_ranges_;
    std::vector<std::unique_ptr<Snapshot>> spare_snapshots_;
    std::vector<std::unique_ptr<Leaf>> spare_leaves_;
    // Every range lives in one of these blocks until the registry goes;
    // the free ones are listed (collect() decides which keep their
    // buffers).
    static constexpr size_t kRangesPerBlock = 64;
    std::vector<std::unique_ptr<Range[]>> range_blocks_;
    std::vector<Range*> free_ranges_;
    // Scratch of update(): the batch's new ranges, and its order by start.
    std::vector<Range*> staged_;
    std::vector<uint32_t> order_;
    std::vector<uintptr_t> removed_;
    // Scratch of merge_locked(): the new list of leaves, the leaves made for
    // it, the ones they replace, the removed ranges, one leaf's merge.
    std::vector<Leaf*> next_leaves_, fresh_, replaced_;
    std::vector<const Range*> gone_, merged_;
};

}  // namespace heron
