// CodeMemory: one mmap per region, protections changed with mprotect. The
// region's mapping is laid out as
//
//   base                         base + code_pages_bytes
//   | code (RW -> RX), filler   | rodata (RW -> R)        |
//
// so the two parts never share a page and each gets its own protection.
#include "jit/code_memory.h"

#include <sys/mman.h>
#include <unistd.h>

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

std::string errno_text(const char* call) {
    return std::string(call) + " failed: " + std::strerror(errno);
}

}  // namespace

CodeMemory::~CodeMemory() { release_all(); }

CodeMemory::CodeMemory(CodeMemory&& other) noexcept
    : regions_(std::exchange(other.regions_, {})), next_id_(other.next_id_) {}

CodeMemory& CodeMemory::operator=(CodeMemory&& other) noexcept {
    if (this == &other) return *this;
    release_all();
    regions_ = std::exchange(other.regions_, {});
    next_id_ = other.next_id_;
    return *this;
}

void CodeMemory::release_all() {
    for (auto& [id, m] : regions_) munmap(m.base, m.code_pages_bytes + m.rodata_pages_bytes);
    regions_.clear();
}

JitResult<CodeRegion> CodeMemory::allocate(size_t code_size, size_t rodata_size) {
    if (code_size == 0) return JitError{"code region of size 0"};
    Mapping m;
    m.code_size = code_size;
    m.rodata_size = rodata_size;
    m.code_pages_bytes = round_to_pages(code_size);
    m.rodata_pages_bytes = round_to_pages(rodata_size);
    size_t length = m.code_pages_bytes + m.rodata_pages_bytes;
    if (length < code_size) return JitError{"code region size overflows"};

    void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return JitError{errno_text("mmap")};
    m.base = static_cast<uint8_t*>(base);
    std::memset(m.base, kTrapFiller, m.code_pages_bytes);

    uint32_t id = next_id_++;
    regions_.emplace(id, m);
    CodeRegion region;
    region.id = id;
    region.code = m.base;
    region.code_size = code_size;
    region.rodata = rodata_size ? m.base + m.code_pages_bytes : nullptr;
    region.rodata_size = rodata_size;
    return region;
}

JitResult<CodeMemory::Mapping*> CodeMemory::find(const CodeRegion& region, const char* what) {
    auto it = regions_.find(region.id);
    if (it == regions_.end() || it->second.base != region.code)
        return JitError{std::string(what) + ": unknown or released code region"};
    return &it->second;
}

std::optional<JitError> CodeMemory::copy_code(const CodeRegion& region, size_t offset,
                                              std::span<const uint8_t> bytes) {
    auto m = find(region, "copy_code");
    if (!m) return m.error();
    if ((*m)->finalized) return JitError{"copy_code: region is finalized (read+execute)"};
    if (offset > (*m)->code_size || bytes.size() > (*m)->code_size - offset)
        return JitError{"copy_code: bytes exceed the code region"};
    if (!bytes.empty()) std::memcpy((*m)->base + offset, bytes.data(), bytes.size());
    return std::nullopt;
}

std::optional<JitError> CodeMemory::copy_rodata(const CodeRegion& region, size_t offset,
                                                std::span<const uint8_t> bytes) {
    auto m = find(region, "copy_rodata");
    if (!m) return m.error();
    if ((*m)->finalized) return JitError{"copy_rodata: region is finalized (read-only)"};
    if (offset > (*m)->rodata_size || bytes.size() > (*m)->rodata_size - offset)
        return JitError{"copy_rodata: bytes exceed the data region"};
    if (!bytes.empty())
        std::memcpy((*m)->base + (*m)->code_pages_bytes + offset, bytes.data(), bytes.size());
    return std::nullopt;
}

std::optional<JitError> CodeMemory::finalize(const CodeRegion& region) {
    auto found = find(region, "finalize");
    if (!found) return found.error();
    Mapping& m = **found;
    if (m.finalized) return JitError{"finalize: region is already finalized"};
    // Data first: if the code's mprotect fails the region stays writable and
    // never executable, so W^X holds on every path.
    if (m.rodata_pages_bytes &&
        mprotect(m.base + m.code_pages_bytes, m.rodata_pages_bytes, PROT_READ) != 0)
        return JitError{errno_text("mprotect (read-only data)")};
    if (mprotect(m.base, m.code_pages_bytes, PROT_READ | PROT_EXEC) != 0)
        return JitError{errno_text("mprotect (code)")};
    // A no-op on x86-64; on AArch64 the new instructions must reach the
    // instruction cache before anyone jumps to them.
    __builtin___clear_cache(reinterpret_cast<char*>(m.base),
                            reinterpret_cast<char*>(m.base + m.code_size));
    m.finalized = true;
    return std::nullopt;
}

std::optional<JitError> CodeMemory::release(const CodeRegion& region) {
    auto found = find(region, "release");
    if (!found) return found.error();
    Mapping& m = **found;
    if (munmap(m.base, m.code_pages_bytes + m.rodata_pages_bytes) != 0)
        return JitError{errno_text("munmap")};
    regions_.erase(region.id);
    return std::nullopt;
}

bool CodeMemory::is_finalized(const CodeRegion& region) const {
    auto it = regions_.find(region.id);
    return it != regions_.end() && it->second.base == region.code && it->second.finalized;
}

size_t CodeMemory::mapped_bytes() const {
    size_t total = 0;
    for (const auto& [id, m] : regions_) total += m.code_pages_bytes + m.rodata_pages_bytes;
    return total;
}

}  // namespace heron
