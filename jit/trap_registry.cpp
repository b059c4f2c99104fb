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

TrapRegistry::~TrapRegistry() { delete current_.load(); }

std::optional<JitError> TrapRegistry::register_range(const void* start, size_t size,
                                                     std::string_view function,
                                                     std::vector<TrapSite> sites) {
    std::lock_guard lock(mutex_);
    return insert_locked(0, start, size, function, sites);
}

std::optional<JitError> TrapRegistry::replace_range(const void* old_start, const void* start, size_t size,
                                                    std::string_view function, std::span<const TrapSite> sites) {
    std::lock_guard lock(mutex_);
    return insert_locked(reinterpret_cast<uintptr_t>(old_start), start, size, function, sites);
}

std::optional<JitError> TrapRegistry::insert_locked(uintptr_t old_start, const void* start, size_t size,
                                                    std::string_view function, std::span<const TrapSite> sites) {
    if (!start || size == 0)
        return JitError{"trap range of function '" + std::string(function) + "' is empty"};
    std::unique_ptr<Range> range = take_spare(spare_ranges_);
    range->start = reinterpret_cast<uintptr_t>(start);
    range->end = range->start + size;
    range->function.assign(function);
    range->sites.assign(sites.begin(), sites.end());
    std::vector<TrapSite>& sorted = range->sites;
    if (!std::is_sorted(sorted.begin(), sorted.end(),
                        [](const TrapSite& a, const TrapSite& b) { return a.offset < b.offset; })) {
        std::sort(sorted.begin(), sorted.end(),
                  [](const TrapSite& a, const TrapSite& b) { return a.offset < b.offset; });
    }
    auto refuse = [&](std::string message) {
        spare_ranges_.push_back(std::move(range));
        return JitError{std::move(message)};
    };
    for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted[i].offset >= size)
            return refuse("trap site at offset " + std::to_string(sorted[i].offset) + " lies outside function '" +
                          std::string(function) + "'");
        if (i > 0 && sorted[i].offset == sorted[i - 1].offset)
            return refuse("two trap sites at offset " + std::to_string(sorted[i].offset) + " in function '" +
                          std::string(function) + "'");
    }
    // The overlap check sees the table without the replaced range.
    auto pos = std::lower_bound(ranges_.begin(), ranges_.end(), range->start,
                                [](const auto& r, uintptr_t s) { return r->start < s; });
    auto kept = [&](const std::unique_ptr<Range>& r) { return old_start == 0 || r->start != old_start; };
    bool overlaps = pos != ranges_.begin() && (*std::prev(pos))->end > range->start && kept(*std::prev(pos));
    for (auto it = pos; it != ranges_.end() && (*it)->start < range->end; ++it) overlaps |= kept(*it);
    if (overlaps)
        return refuse("code of function '" + std::string(function) + "' overlaps a registered range");
    if (old_start != 0) retire_range(old_start);
    pos = std::lower_bound(ranges_.begin(), ranges_.end(), range->start,
                           [](const auto& r, uintptr_t s) { return r->start < s; });
    ranges_.insert(pos, std::move(range));
    publish();
    return std::nullopt;
}

bool TrapRegistry::unregister_range(const void* start) {
    std::lock_guard lock(mutex_);
    if (!retire_range(reinterpret_cast<uintptr_t>(start))) return false;
    publish();
    return true;
}

bool TrapRegistry::retire_range(uintptr_t start) {
    auto pos = std::lower_bound(ranges_.begin(), ranges_.end(), start,
                                [](const auto& r, uintptr_t v) { return r->start < v; });
    if (pos == ranges_.end() || (*pos)->start != start) return false;
    retired_ranges_.push_back(std::move(*pos));
    ranges_.erase(pos);
    return true;
}

void TrapRegistry::publish() {
    std::unique_ptr<Snapshot> next = take_spare(spare_snapshots_);
    next->ranges.clear();
    next->ranges.reserve(ranges_.size());
    for (const auto& r : ranges_) next->ranges.push_back(r.get());
    // Every snapshot was made here, non-const.
    auto* old = const_cast<Snapshot*>(current_.exchange(next.release()));
    if (old) retired_snapshots_.emplace_back(old);
    collect();
}

void TrapRegistry::collect() {
    if (readers_.load() != 0) return;
    // Enough spares for a replacement (one snapshot, one range) and a few
    // more; anything beyond is freed.
    constexpr size_t kSpareSnapshots = 2, kSpareRanges = 8;
    for (auto& s : retired_snapshots_) {
        if (spare_snapshots_.size() < kSpareSnapshots) spare_snapshots_.push_back(std::move(s));
    }
    for (auto& r : retired_ranges_) {
        if (spare_ranges_.size() < kSpareRanges) spare_ranges_.push_back(std::move(r));
    }
    retired_snapshots_.clear();
    retired_ranges_.clear();
}

bool TrapRegistry::lookup_raw(uintptr_t pc, RawTrapInfo& out) const noexcept {
    readers_.fetch_add(1);
    bool found = false;
    const Snapshot* snap = current_.load();
    if (snap && !snap->ranges.empty()) {
        // The last range starting at or before pc.
        const Range* const* first = snap->ranges.data();
        size_t lo = 0, hi = snap->ranges.size();
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (first[mid]->start <= pc) lo = mid + 1;
            else hi = mid;
        }
        const Range* r = lo > 0 ? first[lo - 1] : nullptr;
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
    auto pos = std::upper_bound(ranges_.begin(), ranges_.end(), pc,
                                [](uintptr_t v, const auto& r) { return v < r->start; });
    if (pos == ranges_.begin() || pc >= (*std::prev(pos))->end) return std::nullopt;
    return (*std::prev(pos))->function;
}

const TrapRegistry::Range* TrapRegistry::find_range(uintptr_t start) const {
    auto pos = std::lower_bound(ranges_.begin(), ranges_.end(), start,
                                [](const auto& r, uintptr_t s) { return r->start < s; });
    return pos != ranges_.end() && (*pos)->start == start ? pos->get() : nullptr;
}

size_t TrapRegistry::num_ranges() const {
    std::lock_guard lock(mutex_);
    return ranges_.size();
}

}  // namespace heron
