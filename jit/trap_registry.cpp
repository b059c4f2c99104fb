// TrapRegistry: copy-on-write snapshots read lock-free by the trap handler.
//
// Reader (any thread, possibly inside a signal handler):
//   readers_ += 1;  s = current_;  binary-search s;  copy out;  readers_ -= 1
// Writer (under mutex_):
//   build s' from ranges_;  old = exchange(current_, s');  retire old;
//   if readers_ == 0: free everything retired
// A reader that could see `old` incremented readers_ before loading current_
// and decrements only after its last access, so seeing readers_ == 0 after
// the exchange proves it has finished (all operations are seq_cst).
#include "jit/trap_registry.h"

#include <algorithm>

namespace heron {

static_assert(std::atomic<size_t>::is_always_lock_free, "the handler needs lock-free counters");
static_assert(std::atomic<const void*>::is_always_lock_free, "the handler needs lock-free loads");

namespace {

// Constant-initialized and never destroyed: the handler may run before any
// constructor and after every destructor.
union GlobalRegistry {
    TrapRegistry registry;
    constexpr GlobalRegistry() : registry() {}
    ~GlobalRegistry() {}
};
constinit GlobalRegistry g_global;

/// A spare object if there is one, else a new one.
template <class T>
std::unique_ptr<T> take_spare(std::vector<std::unique_ptr<T>>& spares) {
    if (spares.empty()) return std::make_unique<T>();
    std::unique_ptr<T> t = std::move(spares.back());
    spares.pop_back();
    return t;
}

}  // namespace

std::string TrapInfo::to_string() const {
    std::string text = trapcode_name(code) + " in %" + function;
    if (inst) text += " at " + inst->to_string();
    return text;
}

TrapInfo RawTrapInfo::to_trap_info(int signo) const {
    TrapInfo info;
    info.code = TrapCode{code};
    info.function = function;
    if (inst != Inst::kReserved) info.inst = Inst(inst);
    info.pc = pc;
    info.offset = static_cast<uint32_t>(pc - range_start);
    info.signal = signo;
    return info;
}

TrapRegistry& TrapRegistry::global() { return g_global.registry; }

TrapRegistry::~TrapRegistry() {
    delete current_.load();
    for (Leaf* leaf : leaves_) delete leaf;  // the ranges go with range_blocks_
}

std::optional<JitError> TrapRegistry::register_range(const void* start, size_t size,
                                                     std::string_view function,
                                                     std::vector<TrapSite> sites) {
    if (!start || size == 0)
        return JitError{"trap range of function '" + std::string(function) + "' is empty"};
    const Update u{nullptr, start, size, function, sites};
    return update({&u, 1});
}

std::optional<JitError> TrapRegistry::replace_range(const void* old_start, const void* start, size_t size,
                                                    std::string_view function, std::span<const TrapSite> sites) {
    if (!start || size == 0)
        return JitError{"trap range of function '" + std::string(function) + "' is empty"};
    const Update u{old_start, start, size, function, sites};
    return update({&u, 1});
}

bool TrapRegistry::unregister_range(const void* start) {
    std::lock_guard lock(mutex_);
    const Range* r = remove(reinterpret_cast<uintptr_t>(start));
    if (!r) return false;
    retired_ranges_.push_back(const_cast<Range*>(r));  // every range was made non-const here
    publish();
    return true;
}

std::optional<JitError> TrapRegistry::update(std::span<const Update> updates) {
    std::lock_guard lock(mutex_);
    auto e = stage_locked(updates);
    if (!e) e = merge_locked();
    if (e) {
        free_ranges_.insert(free_ranges_.end(), staged_.begin(), staged_.end());
        staged_.clear();
        return e;
    }
    return std::nullopt;
}

std::optional<JitError> TrapRegistry::stage_locked(std::span<const Update> updates) {
    // Stage each new range with its sites sorted, and check the sites.
    staged_.clear();
    order_.clear();
    removed_.clear();
    // One allocation each for a batch larger than any before, not one per
    // doubling.
    staged_.reserve(updates.size());
    order_.reserve(updates.size());
    removed_.reserve(updates.size());
    for (const Update& u : updates) {
        if (u.old_start) removed_.push_back(reinterpret_cast<uintptr_t>(u.old_start));
        if (!u.start && u.size == 0) continue;
        if (!u.start || u.size == 0)
            return JitError{"trap range of function '" + std::string(u.function) + "' is empty"};
        Range* range = new_range();
        staged_.push_back(range);  // back to the pool if the batch fails
        range->start = reinterpret_cast<uintptr_t>(u.start);
        range->end = range->start + u.size;
        range->function.assign(u.function);
        range->sites.assign(u.sites.begin(), u.sites.end());
        std::vector<TrapSite>& sorted = range->sites;
        auto by_offset = [](const TrapSite& a, const TrapSite& b) { return a.offset < b.offset; };
        if (!std::is_sorted(sorted.begin(), sorted.end(), by_offset))
            std::sort(sorted.begin(), sorted.end(), by_offset);
        for (size_t i = 0; i < sorted.size(); ++i) {
            if (sorted[i].offset >= u.size)
                return JitError{"trap site at offset " + std::to_string(sorted[i].offset) +
                                " lies outside function '" + std::string(u.function) + "'"};
            if (i > 0 && sorted[i].offset == sorted[i - 1].offset)
                return JitError{"two trap sites at offset " + std::to_string(sorted[i].offset) +
                                " in function '" + std::string(u.function) + "'"};
        }
        order_.push_back(static_cast<uint32_t>(staged_.size() - 1));
    }
    // Batches usually come in address order (one code window): then
    // neither list needs a sort.
    if (!std::is_sorted(removed_.begin(), removed_.end())) std::sort(removed_.begin(), removed_.end());
    auto by_start = [&](uint32_t a, uint32_t b) { return staged_[a]->start < staged_[b]->start; };
    if (!std::is_sorted(order_.begin(), order_.end(), by_start)) std::sort(order_.begin(), order_.end(), by_start);
    return std::nullopt;
}

std::optional<JitError> TrapRegistry::merge_locked() {
    // One walk along the leaves: the leaves that no removal and no new
    // range falls into are kept as they are (found by binary search from
    // one touched leaf to the next); the others are merged with their new
    // ranges, without their removed ones, into fresh leaves (the table
    // itself is not touched until the whole batch has been checked). A new
    // range goes to the last leaf whose first start is at or below its own
    // (the first leaf for one below every leaf). A new range is compared
    // with its neighbours in the result: it must overlap neither.
    next_leaves_.clear();
    fresh_.clear();
    gone_.clear();
    replaced_.clear();
    merged_.clear();
    const size_t num_new = order_.size(), num_removed = removed_.size();
    gone_.reserve(num_removed);
    size_t ins = 0, rem = 0;
    const Range* prev = nullptr;
    bool prev_new = false;
    std::optional<JitError> error;
    // Ranges in the table never overlap: only a new one can (it is named).
    auto check = [&](const Range* r, bool is_new) {
        if (prev && prev->end > r->start && !error) error = overlap_error(is_new ? *r : *prev);
    };
    auto emit = [&](const Range* r, bool is_new) {
        check(r, is_new);
        merged_.push_back(r);
        prev = r;
        prev_new = is_new;
    };
    // The merged ranges of one old leaf (or of the empty table) into
    // leaves of at most kLeafCapacity, split evenly.
    auto flush = [&] {
        const size_t n = merged_.size();
        if (n == 0) return;
        const size_t pieces = (n + kLeafCapacity - 1) / kLeafCapacity;
        size_t from = 0;
        for (size_t k = 0; k < pieces; ++k) {
            const size_t to = n * (k + 1) / pieces;
            Leaf* leaf = take_spare(spare_leaves_).release();
            fresh_.push_back(leaf);
            leaf->published = false;
            leaf->count = static_cast<uint32_t>(to - from);
            std::copy(merged_.begin() + static_cast<ptrdiff_t>(from), merged_.begin() + static_cast<ptrdiff_t>(to),
                      leaf->ranges);
            next_leaves_.push_back(leaf);
            from = to;
        }
        merged_.clear();
    };
    const size_t num_leaves = leaves_.size();
    for (size_t i = 0; i < num_leaves || (i == 0 && num_new > 0); ++i) {
        if (num_leaves > 0) {
            // The leaf the next new range or removal falls into (a binary
            // search); the leaves before it are untouched and kept in one
            // piece, only the first of them compared with a new range
            // before it.
            uintptr_t key = rem < num_removed ? removed_[rem] : UINTPTR_MAX;
            if (ins < num_new) key = std::min(key, staged_[order_[ins]]->start);
            size_t t = num_leaves;
            if (ins < num_new || rem < num_removed) {
                auto it = std::upper_bound(leaves_.begin() + static_cast<ptrdiff_t>(i), leaves_.end(), key,
                                           [](uintptr_t v, const Leaf* l) { return v < l->first(); });
                t = std::max(i, static_cast<size_t>(it - leaves_.begin()) - (it == leaves_.begin() ? 0 : 1));
            }
            if (t > i) {
                if (prev_new) check(leaves_[i]->ranges[0], false);
                next_leaves_.insert(next_leaves_.end(), leaves_.begin() + static_cast<ptrdiff_t>(i),
                                    leaves_.begin() + static_cast<ptrdiff_t>(t));
                const Leaf* last = leaves_[t - 1];
                prev = last->ranges[last->count - 1];
                prev_new = false;
                i = t;
                if (i == num_leaves) break;
            }
        }
        Leaf* leaf = i < num_leaves ? leaves_[i] : nullptr;
        const uintptr_t upper = i + 1 < num_leaves ? leaves_[i + 1]->first() : UINTPTR_MAX;
        // With few changes for the leaf's size, its old ranges go over in
        // runs between the batch's keys in it; ranges of the table never
        // overlap each other, so only a run's first range is compared
        // with what comes before it.
        const Range* const* olds = leaf ? leaf->ranges : nullptr;
        const uint32_t count = leaf ? leaf->count : 0;
        uint32_t j = 0;
        auto copy_run = [&](uint32_t k) {
            if (k <= j) return;
            check(olds[j], false);
            if (k == j + 1) merged_.push_back(olds[j]);
            else merged_.insert(merged_.end(), olds + j, olds + k);
            prev = olds[k - 1];
            prev_new = false;
            j = k;
        };
        // The end of the run of old ranges starting below `key`: a few
        // steps along (dense batches), then a binary search (a few changes
        // in a full leaf).
        auto run_end = [&](uintptr_t key) {
            uint32_t k = j;
            for (const uint32_t near = std::min(count, j + 8); k < near; ++k) {
                if (olds[k]->start >= key) return k;
            }
            return static_cast<uint32_t>(
                std::lower_bound(olds + k, olds + count, key, [](const Range* r, uintptr_t v) { return r->start < v; }) -
                olds);
        };
        if ((num_new - ins) + (num_removed - rem) >= count / 4) {
            // Many changes for the leaf's size: one step per range.
            for (;;) {
                const Range* old = j < count ? olds[j] : nullptr;
                const Range* add =
                    ins < num_new && staged_[order_[ins]]->start < upper ? staged_[order_[ins]] : nullptr;
                if (!old && !add) break;
                if (old && (!add || old->start < add->start)) {
                    ++j;
                    while (rem < num_removed && removed_[rem] < old->start) ++rem;
                    if (rem < num_removed && removed_[rem] == old->start) {
                        gone_.push_back(old);
                        continue;
                    }
                    emit(old, false);
                } else {
                    ++ins;
                    emit(add, true);
                }
            }
            while (rem < num_removed && removed_[rem] < upper) ++rem;  // starts of no range
        }
        for (;;) {
            const bool has_add = ins < num_new && staged_[order_[ins]]->start < upper;
            const bool has_rem = rem < num_removed && removed_[rem] < upper;
            if (!has_add && !has_rem) {
                copy_run(count);
                break;
            }
            uintptr_t key = has_rem ? removed_[rem] : UINTPTR_MAX;
            if (has_add) key = std::min(key, staged_[order_[ins]]->start);
            copy_run(run_end(key));
            if (has_rem && removed_[rem] == key) {
                // Removals before insertions: a new range may take the place.
                if (j < count && olds[j]->start == key) gone_.push_back(olds[j++]);
                ++rem;
                continue;
            }
            emit(staged_[order_[ins++]], true);
        }
        flush();
        if (leaf) replaced_.push_back(leaf);
    }
    if (error) {
        for (Leaf* leaf : fresh_) spare_leaves_.emplace_back(leaf);
        replaced_.clear();
        return error;
    }
    // The batch holds: the new ranges belong to the table, the replaced
    // leaves and removed ranges wait until no reader can see them.
    num_ranges_ = num_ranges_ + staged_.size() - gone_.size();
    staged_.clear();
    for (const Range* r : gone_) retired_ranges_.push_back(const_cast<Range*>(r));  // made non-const here
    for (Leaf* leaf : replaced_) retired_leaves_.emplace_back(leaf);
    replaced_.clear();
    leaves_.swap(next_leaves_);
    publish();
    return std::nullopt;
}

JitError TrapRegistry::overlap_error(const Range& named) {
    return JitError{"code of function '" + named.function + "' overlaps a registered range"};
}

TrapRegistry::Pos TrapRegistry::lower_bound(uintptr_t start) const {
    // The last leaf whose first start is <= start (else the first leaf).
    auto it = std::upper_bound(leaves_.begin(), leaves_.end(), start,
                               [](uintptr_t v, const Leaf* l) { return v < l->first(); });
    size_t leaf = it == leaves_.begin() ? 0 : static_cast<size_t>(it - leaves_.begin()) - 1;
    if (leaf == leaves_.size()) return Pos{leaf, 0};
    const Leaf& l = *leaves_[leaf];
    auto pos = std::lower_bound(l.ranges, l.ranges + l.count, start,
                                [](const Range* r, uintptr_t v) { return r->start < v; });
    auto index = static_cast<uint32_t>(pos - l.ranges);
    return index == l.count ? Pos{leaf + 1, 0} : Pos{leaf, index};
}

TrapRegistry::Leaf* TrapRegistry::writable(size_t i) {
    Leaf* leaf = leaves_[i];
    if (!leaf->published) return leaf;
    Leaf* copy = take_spare(spare_leaves_).release();
    copy->count = leaf->count;
    copy->published = false;
    std::copy(leaf->ranges, leaf->ranges + leaf->count, copy->ranges);
    retired_leaves_.emplace_back(leaf);
    leaves_[i] = copy;
    return copy;
}

const TrapRegistry::Range* TrapRegistry::remove(uintptr_t start) {
    Pos p = lower_bound(start);
    if (p.leaf == leaves_.size() || at(p)->start != start) return nullptr;
    const Range* range = at(p);
    Leaf* leaf = writable(p.leaf);
    std::copy(leaf->ranges + p.index + 1, leaf->ranges + leaf->count, leaf->ranges + p.index);
    --leaf->count;
    --num_ranges_;
    if (leaf->count == 0) {
        // Never published (a copy made above at the latest): no reader saw it.
        leaves_.erase(leaves_.begin() + static_cast<ptrdiff_t>(p.leaf));
        spare_leaves_.emplace_back(leaf);
    }
    return range;
}

void TrapRegistry::publish() {
    std::unique_ptr<Snapshot> next = take_spare(spare_snapshots_);
    next->leaves.clear();
    next->leaves.reserve(leaves_.size());
    for (Leaf* leaf : leaves_) {
        if (!leaf->published) leaf->published = true;
        next->leaves.push_back({leaf->first(), leaf});
    }
    // Every snapshot was made here, non-const.
    auto* old = const_cast<Snapshot*>(current_.exchange(next.release()));
    if (old) retired_snapshots_.emplace_back(old);
    collect();
}

void TrapRegistry::collect() {
    if (readers_.load() != 0) return;
    // Enough spares for a replacement and a few more, and for a batch of up
    // to kSpareRanges redefinitions; anything beyond is freed (a range goes
    // back to the pool without its buffers).
    constexpr size_t kSpareSnapshots = 2, kSpareLeaves = 8, kSpareRanges = 64;
    auto keep = [](auto& retired, auto& spares, size_t limit) {
        for (auto& x : retired) {
            if (spares.size() < limit) spares.push_back(std::move(x));
        }
        retired.clear();
    };
    keep(retired_snapshots_, spare_snapshots_, kSpareSnapshots);
    keep(retired_leaves_, spare_leaves_, kSpareLeaves);
    for (Range* r : retired_ranges_) {
        if (free_ranges_.size() >= kSpareRanges) {
            std::string().swap(r->function);
            std::vector<TrapSite>().swap(r->sites);
        }
        free_ranges_.push_back(r);
    }
    retired_ranges_.clear();
}

TrapRegistry::Range* TrapRegistry::new_range() {
    if (free_ranges_.empty()) add_range_block();
    Range* r = free_ranges_.back();
    free_ranges_.pop_back();
    return r;
}

void TrapRegistry::add_range_block() {
    // 8, 16, 32, then kRangesPerBlock ranges: a process that installs a
    // few functions does not construct 64.
    const size_t n = std::min(kRangesPerBlock, size_t{8} << std::min<size_t>(range_blocks_.size(), 3));
    range_blocks_.push_back(std::make_unique<Range[]>(n));
    Range* block = range_blocks_.back().get();
    for (size_t i = n; i-- > 0;) free_ranges_.push_back(&block[i]);
}

bool TrapRegistry::lookup_raw(uintptr_t pc, RawTrapInfo& out) const noexcept {
    readers_.fetch_add(1);
    bool found = false;
    const Snapshot* snap = current_.load();
    if (snap && !snap->leaves.empty()) {
        // The last leaf, then the last range in it, starting at or before pc.
        const Snapshot::Entry* leaves = snap->leaves.data();
        size_t lo = 0, hi = snap->leaves.size();
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (leaves[mid].first <= pc) lo = mid + 1;
            else hi = mid;
        }
        const Range* r = nullptr;
        if (lo > 0) {
            const Leaf* leaf = leaves[lo - 1].leaf;
            size_t a = 0, b = leaf->count;
            while (a < b) {
                size_t mid = a + (b - a) / 2;
                if (leaf->ranges[mid]->start <= pc) a = mid + 1;
                else b = mid;
            }
            r = leaf->ranges[a - 1];  // a >= 1: the leaf's first start is <= pc
        }
        if (r && pc < r->end) {
            found = true;
            out.pc = pc;
            out.range_start = r->start;
            out.code = 0;
            out.inst = Inst::kReserved;
            size_t n = std::min(r->function.size(), RawTrapInfo::kMaxFunctionName - 1);
            for (size_t i = 0; i < n; ++i) out.function[i] = r->function[i];
            out.function[n] = '\0';

            auto offset = static_cast<uint32_t>(pc - r->start);
            const TrapSite* sites = r->sites.data();
            size_t a = 0, b = r->sites.size();
            while (a < b) {
                size_t mid = a + (b - a) / 2;
                if (sites[mid].offset < offset) a = mid + 1;
                else b = mid;
            }
            if (a < r->sites.size() && sites[a].offset == offset) {
                out.code = sites[a].code.byte;
                out.inst = sites[a].inst.value().index();
            }
        }
    }
    readers_.fetch_sub(1);
    return found;
}

std::optional<TrapInfo> TrapRegistry::lookup(uintptr_t pc) const {
    std::lock_guard lock(mutex_);
    RawTrapInfo raw;
    if (!lookup_raw(pc, raw) || raw.code == 0) return std::nullopt;
    TrapInfo info = raw.to_trap_info(0);
    info.function = find_range(raw.range_start)->function;  // the raw copy may be truncated
    return info;
}

std::optional<std::string> TrapRegistry::function_at(uintptr_t pc) const {
    std::lock_guard lock(mutex_);
    const Range* r = range_containing(pc);
    if (!r) return std::nullopt;
    return r->function;
}

const TrapRegistry::Range* TrapRegistry::range_containing(uintptr_t pc) const {
    // The last range starting at or before pc: the one before the first
    // starting after it.
    if (pc == UINTPTR_MAX) return nullptr;
    Pos p = lower_bound(pc + 1);
    if (p.leaf == 0 && p.index == 0) return nullptr;
    const Range* r = p.index > 0 ? leaves_[p.leaf]->ranges[p.index - 1]
                                 : leaves_[p.leaf - 1]->ranges[leaves_[p.leaf - 1]->count - 1];
    return pc < r->end ? r : nullptr;
}

const TrapRegistry::Range* TrapRegistry::find_range(uintptr_t start) const {
    Pos p = lower_bound(start);
    return p.leaf < leaves_.size() && at(p)->start == start ? at(p) : nullptr;
}

size_t TrapRegistry::num_ranges() const {
    std::lock_guard lock(mutex_);
    return num_ranges_;
}

}  // namespace heron
