// CodeMemory: pooled chunks carved by a bump pointer in a window of free
// pages; a seal makes the filled pages read+execute (Protect: one mprotect
// per run) or copies them into the chunk's file (File: one pwrite per run).
//
//   chunk:  | sealed ...   | window: filled | free |  ... |
//                          ^win_begin_      ^win_next_  ^win_end_
//
// Regions with read-only data get a mapping of their own, laid out as
//
//   base                         base + code_pages_bytes
//   | code (RW -> RX), filler   | rodata (RW -> R)        |
//
// so the two parts never share a page and each gets its own protection.
#include "jit/code_memory.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace heron {
namespace {

size_t page_size() {
    static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return size;
}

/// log2 of the page size: region bookkeeping divides offsets by it on
/// every allocate and release.
unsigned page_shift() {
    static const unsigned shift = static_cast<unsigned>(__builtin_ctzll(page_size()));
    return shift;
}

size_t round_to_pages(size_t n) {
    size_t p = page_size();
    return (n + p - 1) / p * p;
}

/// A byte that traps when executed, used to fill code past its end.
#if defined(__x86_64__) || defined(__i386__)
constexpr uint8_t kTrapFiller = 0xcc;  // int3
#else
constexpr uint8_t kTrapFiller = 0x00;  // AArch64: 0x00000000 is udf #0
#endif

/// Fully free chunks kept mapped for reuse (beyond this they are unmapped).
constexpr size_t kKeepFreeBytes = 4 * CodeMemory::kChunkBytes;

std::string errno_text(const char* call) {
    return std::string(call) + " failed: " + std::strerror(errno);
}

// Forks seen by this process (in the parent and in the child): a file chunk
// made before the last one is shared with another process.
std::atomic<uint64_t> g_forks{0};
void note_fork() { g_forks.fetch_add(1, std::memory_order_relaxed); }

/// Whether forks are counted (the handlers are registered once).
bool forks_counted() {
    static const bool registered = pthread_atfork(nullptr, note_fork, note_fork) == 0;
    return registered;
}

uint64_t forks() { return g_forks.load(std::memory_order_relaxed); }

/// Writes all of `bytes` at `offset` of file `fd`; false on an error.
bool write_all(int fd, const uint8_t* bytes, size_t n, size_t offset) {
    while (n > 0) {
        const ssize_t done = pwrite(fd, bytes, n, static_cast<off_t>(offset));
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return false;
        bytes += done;
        n -= static_cast<size_t>(done);
        offset += static_cast<size_t>(done);
    }
    return true;
}

}  // namespace

CodeMemory::Backing CodeMemory::default_backing() {
#if defined(__x86_64__)
    // Where memfd is missing or may not be mapped executable, the first
    // chunk falls back to Protect (open_window).
    return forks_counted() ? Backing::File : Backing::Protect;
#else
    // AArch64 needs cache maintenance after a write by another mapping, and
    // qemu-user does not see such a write to retranslate the code: Protect.
    return Backing::Protect;
#endif
}

CodeMemory::CodeMemory(Backing backing) : backing_(backing) {
    if (backing_ == Backing::File && !forks_counted()) backing_ = Backing::Protect;
}

CodeMemory::~CodeMemory() { release_all(); }

CodeMemory::CodeMemory(CodeMemory&& other) noexcept { *this = std::move(other); }

CodeMemory& CodeMemory::operator=(CodeMemory&& other) noexcept {
    if (this == &other) return *this;
    release_all();
    chunks_ = std::exchange(other.chunks_, {});
    slots_ = std::exchange(other.slots_, {});
    free_slots_ = std::exchange(other.free_slots_, {});
    open_ = std::exchange(other.open_, {});
    unsealed_ = std::exchange(other.unsealed_, {});
    win_chunk_ = std::exchange(other.win_chunk_, kNoChunk);
    win_begin_ = std::exchange(other.win_begin_, 0);
    win_next_ = std::exchange(other.win_next_, 0);
    win_end_ = std::exchange(other.win_end_, 0);
    backing_ = other.backing_;
    next_id_ = other.next_id_;
    live_regions_ = std::exchange(other.live_regions_, 0);
    syscalls_ = other.syscalls_;
    return *this;
}

void CodeMemory::unmap_chunk(Chunk& c) {
    if (c.base) munmap(c.base, c.size);
    if (c.stage) munmap(c.stage, c.size);
    if (c.fd >= 0) close(c.fd);
    c.base = c.stage = nullptr;
    c.fd = -1;
}

void CodeMemory::release_all() {
    for (Chunk& c : chunks_) unmap_chunk(c);
    for (Slot& s : slots_)
        if (s.id != 0 && s.chunk == kNoChunk) munmap(s.base, s.code_pages_bytes + s.rodata_pages_bytes);
    chunks_.clear();
    slots_.clear();
    free_slots_.clear();
    open_.clear();
    unsealed_.clear();
    win_chunk_ = kNoChunk;
    win_begin_ = win_next_ = win_end_ = 0;
    live_regions_ = 0;
}

uint32_t CodeMemory::new_slot() {
    if (!free_slots_.empty()) {
        uint32_t s = free_slots_.back();
        free_slots_.pop_back();
        return s;
    }
    slots_.emplace_back();
    return static_cast<uint32_t>(slots_.size() - 1);
}

JitResult<CodeRegion> CodeMemory::allocate(size_t code_size, size_t rodata_size) {
    if (code_size == 0) return JitError{"code region of size 0"};
    if (code_size > (size_t{1} << 40) || rodata_size > (size_t{1} << 40))
        return JitError{"code region size overflows"};
    if (rodata_size > 0) return allocate_own_mapping(code_size, rodata_size);
    return allocate_pooled(code_size, nullptr);
}

JitResult<CodeRegion> CodeMemory::allocate_code(std::span<const uint8_t> code) {
    if (code.empty()) return JitError{"code region of size 0"};
    if (code.size() > (size_t{1} << 40)) return JitError{"code region size overflows"};
    return allocate_pooled(code.size(), code.data());
}

JitResult<CodeRegion> CodeMemory::allocate_pooled(size_t code_size, const uint8_t* bytes) {
    const size_t aligned = (code_size + kCodeAlign - 1) / kCodeAlign * kCodeAlign;
    if (win_chunk_ == kNoChunk || aligned > win_end_ - win_next_) {
        if (auto e = open_window(aligned)) return *e;
    }
    Chunk& c = chunks_[win_chunk_];
    const size_t offset = win_next_;
    win_next_ += aligned;
    uint8_t* const to = c.write_at(offset);
    if (bytes) {
        std::memcpy(to, bytes, code_size);
        std::memset(to + code_size, kTrapFiller, aligned - code_size);
    } else {
        std::memset(to, kTrapFiller, aligned);
    }
    const unsigned shift = page_shift();
    for (size_t p = offset >> shift; p <= (offset + code_size - 1) >> shift; ++p) ++c.live[p];
    ++c.live_regions;

    Slot s;
    s.chunk = win_chunk_;
    s.base = c.base + offset;
    s.offset = offset;
    s.code_size = code_size;
    const CodeRegion region = add_region(s);
    open_.push_back(region.slot);
    return region;
}

CodeRegion CodeMemory::add_region(const Slot& slot) {
    const uint32_t si = new_slot();
    Slot& s = slots_[si];
    s = slot;
    s.id = next_id_++;
    if (next_id_ == 0) next_id_ = 1;
    ++live_regions_;
    CodeRegion region;
    region.id = s.id;
    region.slot = si;
    region.code = s.base;
    region.code_size = s.code_size;
    if (s.rodata_size > 0) {
        region.rodata = s.base + s.code_pages_bytes;
        region.rodata_size = s.rodata_size;
    }
    return region;
}

JitResult<CodeRegion> CodeMemory::allocate_own_mapping(size_t code_size, size_t rodata_size) {
    Slot m;
    m.code_size = code_size;
    m.rodata_size = rodata_size;
    m.code_pages_bytes = round_to_pages(code_size);
    m.rodata_pages_bytes = round_to_pages(rodata_size);
    const size_t length = m.code_pages_bytes + m.rodata_pages_bytes;
    void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ++syscalls_;
    if (base == MAP_FAILED) return JitError{errno_text("mmap")};
    m.base = static_cast<uint8_t*>(base);
    std::memset(m.base, kTrapFiller, m.code_pages_bytes);
    return add_region(m);
}

bool CodeMemory::in_unsealed_span(uint32_t chunk, size_t page) const {
    const size_t ps = page_size();
    for (const Span& s : unsealed_)
        if (s.chunk == chunk && page >= s.from / ps && page < (s.to + ps - 1) / ps) return true;
    return false;
}

std::optional<JitError> CodeMemory::open_window(size_t bytes) {
    if (win_chunk_ != kNoChunk && win_next_ > win_begin_) unsealed_.push_back({win_chunk_, win_begin_, win_next_});
    win_chunk_ = kNoChunk;
    win_begin_ = win_next_ = win_end_ = 0;
    const size_t ps = page_size();
    const size_t need = (bytes + ps - 1) / ps;

    // The first run of pages without live regions (and not waiting for a
    // seal) that is long enough; the whole run becomes the window.
    for (uint32_t ci = 0; ci < chunks_.size(); ++ci) {
        Chunk& c = chunks_[ci];
        if (!c.base || c.size < bytes) continue;
        const size_t n = c.live.size();
        for (size_t p = 0; p < n;) {
            if (c.live[p] || in_unsealed_span(ci, p)) {
                ++p;
                continue;
            }
            size_t q = p;
            bool any_sealed = false;
            while (q < n && !c.live[q] && !in_unsealed_span(ci, q)) any_sealed |= c.sealed[q++] != 0;
            if (q - p >= need) {
                // A file chunk's staging pages are always writable.
                if (any_sealed && !c.stage) {
                    ++syscalls_;
                    if (mprotect(c.base + p * ps, (q - p) * ps, PROT_READ | PROT_WRITE) != 0)
                        return JitError{errno_text("mprotect (reuse code pages)")};
                }
                std::fill(c.sealed.begin() + static_cast<ptrdiff_t>(p), c.sealed.begin() + static_cast<ptrdiff_t>(q), 0);
                win_chunk_ = ci;
                win_begin_ = win_next_ = p * ps;
                win_end_ = q * ps;
                return std::nullopt;
            }
            p = q;
        }
    }

    // A new chunk.
    const size_t size = std::max(kChunkBytes, round_to_pages(bytes));
    uint32_t ci = 0;
    while (ci < chunks_.size() && chunks_[ci].base) ++ci;
    if (ci == chunks_.size()) chunks_.emplace_back();
    Chunk& c = chunks_[ci];
    if (backing_ == Backing::File && !map_file_chunk(c, size)) backing_ = Backing::Protect;
    if (!c.base) {
        void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ++syscalls_;
        if (base == MAP_FAILED) return JitError{errno_text("mmap")};
        c.base = static_cast<uint8_t*>(base);
    }
    c.size = size;
    c.live.assign(size / ps, 0);
    c.sealed.assign(size / ps, 0);
    c.dirty.assign(size / ps, static_cast<uint32_t>(ps));
    c.live_regions = 0;
    win_chunk_ = ci;
    win_begin_ = win_next_ = 0;
    win_end_ = size;
    return std::nullopt;
}

bool CodeMemory::map_file_chunk(Chunk& c, size_t size) {
    const uint64_t forks_now = forks();
    const int fd = memfd_create("heron-code", MFD_CLOEXEC);
    ++syscalls_;
    if (fd < 0) return false;
    void* base = MAP_FAILED;
    void* stage = MAP_FAILED;
    syscalls_ += 3;
    if (ftruncate(fd, static_cast<off_t>(size)) == 0) {
        base = mmap(nullptr, size, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
        if (base != MAP_FAILED) stage = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (stage == MAP_FAILED) {
        if (base != MAP_FAILED) munmap(base, size);
        close(fd);
        return false;
    }
    c.base = static_cast<uint8_t*>(base);
    c.stage = static_cast<uint8_t*>(stage);
    c.fd = fd;
    c.forks = forks_now;
    return true;
}

std::optional<JitError> CodeMemory::unshare(Chunk& c) {
    // The staging copy holds every page the file does (each seal copied its
    // pages from there), and pages not yet sealed are not run.
    const uint64_t forks_now = forks();
    const int fd = memfd_create("heron-code", MFD_CLOEXEC);
    syscalls_ += 4;
    if (fd < 0) return JitError{errno_text("memfd_create (after a fork)")};
    if (ftruncate(fd, static_cast<off_t>(c.size)) != 0 || !write_all(fd, c.stage, c.size, 0)) {
        close(fd);
        return JitError{errno_text("copying code after a fork")};
    }
    // Replaces the shared mapping in place: running code sees the same bytes.
    if (mmap(c.base, c.size, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        close(fd);
        return JitError{errno_text("mmap (after a fork)")};
    }
    close(c.fd);
    c.fd = fd;
    c.forks = forks_now;
    return std::nullopt;
}

std::optional<JitError> CodeMemory::seal(const Span& span) {
    Chunk& c = chunks_[span.chunk];
    const size_t end = round_to_pages(span.to);
    const size_t ps = page_size();
    // The span holds only code and filler; past it, the last page may still
    // hold older code (a reused page) up to its dirty mark.
    for (size_t p = span.from / ps; p < span.to / ps; ++p) c.dirty[p] = static_cast<uint32_t>(ps);
    if (end != span.to) {
        const size_t last = span.to / ps;
        const size_t used = span.to - last * ps;
        if (c.dirty[last] > used) std::memset(c.write_at(span.to), kTrapFiller, c.dirty[last] - used);
        c.dirty[last] = static_cast<uint32_t>(used);
    }
    if (c.stage) {
        // Whole pages (spans start at a page boundary): the staging copy is
        // what the file must hold.
        if (c.forks != forks()) {
            if (auto e = unshare(c)) return e;
        }
        ++syscalls_;
        if (!write_all(c.fd, c.stage + span.from, end - span.from, span.from))
            return JitError{errno_text("pwrite (code)")};
    } else {
        ++syscalls_;
        if (mprotect(c.base + span.from, end - span.from, PROT_READ | PROT_EXEC) != 0)
            return JitError{errno_text("mprotect (code)")};
    }
    std::fill(c.sealed.begin() + static_cast<ptrdiff_t>(span.from / ps), c.sealed.begin() + static_cast<ptrdiff_t>(end / ps), 1);
    // A no-op on x86-64; on AArch64 the new instructions must reach the
    // instruction cache before anyone jumps to them.
    __builtin___clear_cache(reinterpret_cast<char*>(c.base + span.from), reinterpret_cast<char*>(c.base + span.to));
    // The regions in the span are final now.
    for (size_t k = 0; k < open_.size();) {
        Slot& s = slots_[open_[k]];
        if (s.chunk == span.chunk && s.offset >= span.from && s.offset < span.to) {
            s.finalized = true;
            open_[k] = open_.back();
            open_.pop_back();
        } else {
            ++k;
        }
    }
    return std::nullopt;
}

std::optional<JitError> CodeMemory::finalize_all() {
    while (!unsealed_.empty()) {
        if (auto e = seal(unsealed_.back())) return e;
        unsealed_.pop_back();
    }
    if (win_chunk_ != kNoChunk && win_next_ > win_begin_) {
        if (auto e = seal({win_chunk_, win_begin_, win_next_})) return e;
        win_begin_ = win_next_ = round_to_pages(win_next_);
    }
    return std::nullopt;
}

JitError CodeMemory::unknown_region(const char* what) {
    return JitError{std::string(what) + ": unknown or released code region"};
}

std::optional<JitError> CodeMemory::copy_code(const CodeRegion& region, size_t offset,
                                              std::span<const uint8_t> bytes) {
    Slot* m = find(region);
    if (!m) return unknown_region("copy_code");
    if (m->finalized) return JitError{"copy_code: region is finalized (read+execute)"};
    if (offset > m->code_size || bytes.size() > m->code_size - offset)
        return JitError{"copy_code: bytes exceed the code region"};
    if (bytes.empty()) return std::nullopt;
    uint8_t* const to = m->chunk == kNoChunk ? m->base : chunks_[m->chunk].write_at(m->offset);
    std::memcpy(to + offset, bytes.data(), bytes.size());
    return std::nullopt;
}

std::optional<JitError> CodeMemory::copy_rodata(const CodeRegion& region, size_t offset,
                                                std::span<const uint8_t> bytes) {
    Slot* m = find(region);
    if (!m) return unknown_region("copy_rodata");
    if (m->finalized) return JitError{"copy_rodata: region is finalized (read-only)"};
    if (offset > m->rodata_size || bytes.size() > m->rodata_size - offset)
        return JitError{"copy_rodata: bytes exceed the data region"};
    if (!bytes.empty())
        std::memcpy(m->base + m->code_pages_bytes + offset, bytes.data(), bytes.size());
    return std::nullopt;
}

std::optional<JitError> CodeMemory::finalize(const CodeRegion& region) {
    Slot* found = find(region);
    if (!found) return unknown_region("finalize");
    Slot& m = *found;
    if (m.finalized) return JitError{"finalize: region is already finalized"};
    if (m.chunk != kNoChunk) return finalize_all();
    // Data first: if the code's mprotect fails the region stays writable and
    // never executable, so W^X holds on every path.
    ++syscalls_;
    if (m.rodata_pages_bytes &&
        mprotect(m.base + m.code_pages_bytes, m.rodata_pages_bytes, PROT_READ) != 0)
        return JitError{errno_text("mprotect (read-only data)")};
    ++syscalls_;
    if (mprotect(m.base, m.code_pages_bytes, PROT_READ | PROT_EXEC) != 0)
        return JitError{errno_text("mprotect (code)")};
    __builtin___clear_cache(reinterpret_cast<char*>(m.base), reinterpret_cast<char*>(m.base + m.code_size));
    m.finalized = true;
    return std::nullopt;
}

void CodeMemory::maybe_unmap(uint32_t ci) {
    Chunk& c = chunks_[ci];
    if (c.live_regions != 0 || ci == win_chunk_) return;
    for (const Span& s : unsealed_)
        if (s.chunk == ci) return;
    size_t free_bytes = 0;
    for (const Chunk& o : chunks_)
        if (o.base && o.live_regions == 0) free_bytes += o.size;  // includes c
    if (free_bytes <= kKeepFreeBytes) return;
    unmap_chunk(c);
    c.size = 0;
    c.live.clear();
    c.sealed.clear();
}

std::optional<JitError> CodeMemory::release(const CodeRegion& region) {
    Slot* found = find(region);
    if (!found) return unknown_region("release");
    Slot& m = *found;
    const uint32_t si = region.slot;
    if (m.chunk == kNoChunk) {
        if (munmap(m.base, m.code_pages_bytes + m.rodata_pages_bytes) != 0) return JitError{errno_text("munmap")};
    } else {
        Chunk& c = chunks_[m.chunk];
        const unsigned shift = page_shift();
        for (size_t p = m.offset >> shift; p <= (m.offset + m.code_size - 1) >> shift; ++p) --c.live[p];
        --c.live_regions;
        if (!m.finalized) {
            // Still writable: leave filler, not dead code, for the seal.
            std::memset(c.write_at(m.offset), kTrapFiller, m.code_size);
            open_.erase(std::find(open_.begin(), open_.end(), si));
        }
    }
    const uint32_t chunk = m.chunk;
    m = Slot{};
    free_slots_.push_back(si);
    --live_regions_;
    if (chunk != kNoChunk) maybe_unmap(chunk);
    return std::nullopt;
}

bool CodeMemory::is_finalized(const CodeRegion& region) const {
    const Slot* s = find(region);
    return s && s->finalized;
}

size_t CodeMemory::mapped_bytes() const {
    size_t total = 0;
    for (const Chunk& c : chunks_) total += c.size;
    for (const Slot& s : slots_)
        if (s.id != 0 && s.chunk == kNoChunk) total += s.code_pages_bytes + s.rodata_pages_bytes;
    return total;
}

}  // namespace heron
