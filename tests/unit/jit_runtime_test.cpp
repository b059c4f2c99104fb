// Unit tests for the JIT runtime (jit/) and the x86-64 disassembler: W^X code
// memory, trap sites reported through the signal handler (ud2, division by
// zero, guard-page loads, stack overflow, nesting, threads), faults that are
// not traps staying fatal, host symbol lookup. The machine code is written as
// raw x86-64 bytes, so these tests run only on an x86-64 host.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jit/code_memory.h"
#include "jit/symbols.h"
#include "jit/trap_handler.h"
#include "jit/trap_registry.h"
#include "tools/disasm_x64.h"

#if defined(__x86_64__)

namespace heron {
namespace {

/// The permissions ("rw-", "r-x", ...) of the mapping holding `p`, or "".
std::string page_permissions(const void* p) {
    auto addr = reinterpret_cast<uintptr_t>(p);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream in(line);
        std::string range, perms;
        in >> range >> perms;
        auto dash = range.find('-');
        uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16);
        uintptr_t hi = std::stoull(range.substr(dash + 1), nullptr, 16);
        if (addr >= lo && addr < hi) return perms.substr(0, 3);
    }
    return "";
}

/// A finalized function made of raw bytes, registered with its trap sites
/// for as long as the object lives.
class JitCode {
public:
    JitCode(CodeMemory& memory, std::vector<uint8_t> bytes, std::string name,
            std::vector<TrapSite> sites = {})
        : memory_(memory) {
        auto region = memory.allocate(bytes.size());
        EXPECT_TRUE(region.ok());
        region_ = *region;
        EXPECT_FALSE(memory.copy_code(region_, 0, bytes).has_value());
        EXPECT_FALSE(memory.finalize(region_).has_value());
        auto error = TrapRegistry::global().register_range(region_.code, region_.code_size, name,
                                                           std::move(sites));
        EXPECT_FALSE(error.has_value()) << error->message;
    }
    ~JitCode() {
        TrapRegistry::global().unregister_range(region_.code);
        memory_.release(region_);
    }
    JitCode(const JitCode&) = delete;
    JitCode& operator=(const JitCode&) = delete;

    template <typename Fn>
    Fn as() const { return reinterpret_cast<Fn>(region_.code); }
    const uint8_t* code() const { return region_.code; }

private:
    CodeMemory& memory_;
    CodeRegion region_;
};

using BinaryFn = int (*)(int, int);
using VoidFn = void (*)();
using LoadFn = int (*)(const int*);

// mov eax, edi; add eax, esi; ret
const std::vector<uint8_t> kAddBytes = {0x89, 0xf8, 0x01, 0xf0, 0xc3};
// mov eax, edi; cdq; idiv esi (offset 3); ret
const std::vector<uint8_t> kDivBytes = {0x89, 0xf8, 0x99, 0xf7, 0xfe, 0xc3};
// ud2 (offset 0); ret
const std::vector<uint8_t> kUd2Bytes = {0x0f, 0x0b, 0xc3};
// mov eax, [rdi] (offset 0); ret
const std::vector<uint8_t> kLoadBytes = {0x8b, 0x07, 0xc3};
// call self: recurses until the stack runs out
const std::vector<uint8_t> kRecurseBytes = {0xe8, 0xfb, 0xff, 0xff, 0xff};

TrapSite site(uint32_t offset, TrapCode code, uint32_t inst) {
    return TrapSite{offset, code, Inst(inst)};
}

/// A page that faults on any access, and unmaps itself.
class GuardPage {
public:
    GuardPage() {
        void* p = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(p, MAP_FAILED);
        page_ = static_cast<int*>(p);
    }
    ~GuardPage() { munmap(page_, 4096); }
    const int* address() const { return page_ + 4; }

private:
    int* page_;
};

// --- code memory --------------------------------------------------------------

TEST(JitCodeMemoryTest, WritableBeforeFinalizeExecutableAfter) {
    CodeMemory memory;
    auto region = memory.allocate(kAddBytes.size(), 64);
    ASSERT_TRUE(region.ok()) << region.error().message;
    EXPECT_EQ(page_permissions(region->code), "rw-") << "never executable while writable";
    EXPECT_EQ(page_permissions(region->rodata), "rw-");
    EXPECT_EQ(reinterpret_cast<uintptr_t>(region->rodata) % 4096, 0u);
    EXPECT_EQ(region->code[kAddBytes.size()], 0xcc) << "unused code is filled with int3";

    ASSERT_FALSE(memory.copy_code(*region, 0, kAddBytes).has_value());
    const uint8_t table[4] = {1, 2, 3, 4};
    ASSERT_FALSE(memory.copy_rodata(*region, 60, table).has_value());
    ASSERT_FALSE(memory.finalize(*region).has_value());
    EXPECT_TRUE(memory.is_finalized(*region));
    EXPECT_EQ(page_permissions(region->code), "r-x") << "never writable once executable";
    EXPECT_EQ(page_permissions(region->rodata), "r--");
    EXPECT_EQ(region->rodata[63], 4);

    auto add = reinterpret_cast<BinaryFn>(region->code);
    EXPECT_EQ(add(40, 2), 42);
    EXPECT_EQ(add(-7, 3), -4);
}

TEST(JitCodeMemoryTest, RejectsMisuse) {
    CodeMemory memory;
    EXPECT_FALSE(memory.allocate(0).ok());
    auto region = memory.allocate(8);
    ASSERT_TRUE(region.ok());
    const std::vector<uint8_t> nine(9, 0x90);
    EXPECT_TRUE(memory.copy_code(*region, 0, nine).has_value()) << "past the end";
    EXPECT_TRUE(memory.copy_code(*region, 9, {}).has_value()) << "offset past the end";
    EXPECT_TRUE(memory.copy_rodata(*region, 0, kAddBytes).has_value()) << "no data part";
    ASSERT_FALSE(memory.finalize(*region).has_value());
    EXPECT_TRUE(memory.finalize(*region).has_value()) << "finalized twice";
    EXPECT_TRUE(memory.copy_code(*region, 0, kAddBytes).has_value()) << "write after finalize";
    ASSERT_FALSE(memory.release(*region).has_value());
    EXPECT_TRUE(memory.release(*region).has_value()) << "released twice";
    EXPECT_TRUE(memory.finalize(*region).has_value()) << "finalize after release";
}

// allocate_code: one call places a copy of the code (what allocate plus
// copy_code make), the alignment tail filled with int3, also where a
// released region's longer code was.
TEST(JitCodeMemoryTest, AllocateCodeCopiesTheBytesAndFillsTheTail) {
    // Protect: the code is written in place, readable before the seal.
    CodeMemory memory(CodeMemory::Backing::Protect);
    EXPECT_FALSE(memory.allocate_code({}).ok()) << "empty code";
    std::vector<uint8_t> longer(30, 0x90);
    std::copy(kAddBytes.begin(), kAddBytes.end(), longer.end() - static_cast<ptrdiff_t>(kAddBytes.size()));
    auto first = memory.allocate_code(longer);
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->code_size, longer.size());
    EXPECT_TRUE(std::equal(longer.begin(), longer.end(), first->code));
    EXPECT_EQ(first->code[30], 0xcc);
    EXPECT_EQ(first->code[31], 0xcc);
    ASSERT_FALSE(memory.release(*first).has_value());
    auto r = memory.allocate_code(kAddBytes);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(page_permissions(r->code), "rw-");
    EXPECT_FALSE(memory.is_finalized(*r));
    for (size_t k = kAddBytes.size(); k < CodeMemory::kCodeAlign; ++k) EXPECT_EQ(r->code[k], 0xcc) << k;
    ASSERT_FALSE(memory.finalize_all().has_value());
    EXPECT_EQ(page_permissions(r->code), "r-x");
    EXPECT_EQ(reinterpret_cast<BinaryFn>(r->code)(40, 2), 42);
    EXPECT_EQ(memory.num_regions(), 1u);
}

TEST(JitCodeMemoryTest, ReleaseOneRegionAndReuse) {
    CodeMemory memory;
    JitCode keep(memory, kAddBytes, "keep");
    auto first = memory.allocate(kAddBytes.size());
    ASSERT_TRUE(first.ok());
    ASSERT_FALSE(memory.copy_code(*first, 0, kAddBytes).has_value());
    ASSERT_FALSE(memory.finalize(*first).has_value());
    EXPECT_EQ(reinterpret_cast<BinaryFn>(first->code)(1, 2), 3);
    EXPECT_EQ(memory.num_regions(), 2u);

    ASSERT_FALSE(memory.release(*first).has_value());
    EXPECT_EQ(memory.num_regions(), 1u);
    EXPECT_TRUE(memory.release(*first).has_value()) << "released twice";
    EXPECT_EQ(keep.as<BinaryFn>()(5, 6), 11) << "the other region is untouched";

    // Redefine: new code (mov eax, edi; sub eax, esi; ret) in a new region.
    const std::vector<uint8_t> sub = {0x89, 0xf8, 0x29, 0xf0, 0xc3};
    auto second = memory.allocate(sub.size());
    ASSERT_TRUE(second.ok());
    ASSERT_FALSE(memory.copy_code(*second, 0, sub).has_value());
    ASSERT_FALSE(memory.finalize(*second).has_value());
    EXPECT_EQ(reinterpret_cast<BinaryFn>(second->code)(10, 4), 6);
    EXPECT_EQ(keep.as<BinaryFn>()(5, 6), 11);
}

// Regions share pooled pages: a batch is sealed with one mprotect, a sealed
// page is never written again while it holds live code, and a redefinition
// loop reuses freed pages instead of mapping new ones.
TEST(JitCodeMemoryTest, PooledRegionsShareSealedPages) {
    CodeMemory memory(CodeMemory::Backing::Protect);
    ASSERT_EQ(memory.backing(), CodeMemory::Backing::Protect);
    std::vector<CodeRegion> batch;
    for (int k = 0; k < 20; ++k) {
        auto r = memory.allocate(kAddBytes.size());
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(reinterpret_cast<uintptr_t>(r->code) % CodeMemory::kCodeAlign, 0u);
        EXPECT_EQ(page_permissions(r->code), "rw-");
        ASSERT_FALSE(memory.copy_code(*r, 0, kAddBytes).has_value());
        batch.push_back(*r);
    }
    EXPECT_EQ(batch[1].code - batch[0].code, 16) << "carved one after the other";
    const uint64_t before = memory.num_syscalls();
    ASSERT_FALSE(memory.finalize_all().has_value());
    EXPECT_EQ(memory.num_syscalls() - before, 1u) << "one mprotect seals the batch";
    for (const CodeRegion& r : batch) {
        EXPECT_TRUE(memory.is_finalized(r));
        EXPECT_EQ(page_permissions(r.code), "r-x");
        EXPECT_EQ(reinterpret_cast<BinaryFn>(r.code)(20, 22), 42);
        EXPECT_EQ(r.code[kAddBytes.size()], 0xcc) << "padding is int3";
    }
    EXPECT_TRUE(memory.copy_code(batch[0], 0, kAddBytes).has_value()) << "sealed";
    EXPECT_FALSE(memory.finalize_all().has_value()) << "nothing to seal is fine";

    // The next allocation starts on a fresh writable page, not in the sealed
    // page that still runs the batch.
    auto next = memory.allocate(kAddBytes.size());
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(page_permissions(next->code), "rw-");
    EXPECT_EQ(page_permissions(batch[19].code), "r-x");
    EXPECT_NE(reinterpret_cast<uintptr_t>(next->code) / 4096, reinterpret_cast<uintptr_t>(batch[19].code) / 4096);
    ASSERT_FALSE(memory.release(*next).has_value());

    // Redefinition loop: keep one live version, release the previous one.
    for (const CodeRegion& r : batch) ASSERT_FALSE(memory.release(r).has_value());
    EXPECT_EQ(memory.num_regions(), 0u);
    const size_t mapped = memory.mapped_bytes();
    std::optional<CodeRegion> live;
    for (int k = 0; k < 3000; ++k) {
        auto r = memory.allocate(kAddBytes.size());
        ASSERT_TRUE(r.ok());
        ASSERT_FALSE(memory.copy_code(*r, 0, kAddBytes).has_value());
        ASSERT_FALSE(memory.finalize(*r).has_value());
        ASSERT_EQ(reinterpret_cast<BinaryFn>(r->code)(k, 1), k + 1);
        if (live) {
            ASSERT_EQ(reinterpret_cast<BinaryFn>(live->code)(k, 2), k + 2) << "the old version still runs";
            ASSERT_FALSE(memory.release(*live).has_value());
        }
        live = *r;
    }
    EXPECT_EQ(memory.mapped_bytes(), mapped) << "3000 pages of redefinitions fit in the first chunk";
    EXPECT_EQ(memory.num_regions(), 1u);
}

// File backing: the code's pages are read+execute from the start (the bytes
// go to a staging copy and reach them at the seal, one pwrite per batch),
// and reusing freed pages changes no protection: a redefinition loop costs
// one system call per version.
TEST(JitCodeMemoryTest, FileBackedCodeIsNeverWritable) {
    CodeMemory memory(CodeMemory::Backing::File);
    std::vector<CodeRegion> batch;
    for (int k = 0; k < 20; ++k) {
        auto r = memory.allocate_code(kAddBytes);
        ASSERT_TRUE(r.ok()) << r.error().message;
        if (memory.backing() != CodeMemory::Backing::File) GTEST_SKIP() << "no executable memfd here";
        EXPECT_EQ(page_permissions(r->code), "r-x") << "never writable, even before the seal";
        batch.push_back(*r);
    }
    const uint64_t before = memory.num_syscalls();
    ASSERT_FALSE(memory.finalize_all().has_value());
    EXPECT_EQ(memory.num_syscalls() - before, 1u) << "one pwrite seals the batch";
    for (const CodeRegion& r : batch) {
        EXPECT_TRUE(memory.is_finalized(r));
        EXPECT_TRUE(std::equal(kAddBytes.begin(), kAddBytes.end(), r.code));
        EXPECT_EQ(r.code[kAddBytes.size()], 0xcc) << "padding is int3";
        EXPECT_EQ(reinterpret_cast<BinaryFn>(r.code)(20, 22), 42);
    }
    EXPECT_TRUE(memory.copy_code(batch[0], 0, kAddBytes).has_value()) << "sealed";

    // Redefinitions: each new version on a fresh or reused page, the old one
    // still running until it is released; no mprotect, no new chunk.
    for (const CodeRegion& r : batch) ASSERT_FALSE(memory.release(r).has_value());
    const size_t mapped = memory.mapped_bytes();
    const std::vector<uint8_t> sub = {0x89, 0xf8, 0x29, 0xf0, 0xc3};  // mov eax, edi; sub eax, esi; ret
    std::optional<CodeRegion> live;
    const uint64_t loop_start = memory.num_syscalls();
    for (int k = 0; k < 3000; ++k) {
        const bool odd = k % 2 != 0;
        auto r = memory.allocate_code(odd ? sub : kAddBytes);
        ASSERT_TRUE(r.ok());
        ASSERT_FALSE(memory.finalize(*r).has_value());
        ASSERT_EQ(reinterpret_cast<BinaryFn>(r->code)(k, 1), odd ? k - 1 : k + 1) << "version " << k;
        if (live) {
            ASSERT_EQ(reinterpret_cast<BinaryFn>(live->code)(k, 2), odd ? k + 2 : k - 2) << "the old version still runs";
            ASSERT_FALSE(memory.release(*live).has_value());
        }
        live = *r;
    }
    EXPECT_EQ(memory.num_syscalls() - loop_start, 3000u) << "one pwrite per version, reuse included";
    EXPECT_EQ(memory.mapped_bytes(), mapped);
}

// After a fork the two processes would share the file: the child's code on a
// reused page must not show up in the parent's function there (each
// process moves its chunks to a file of its own before writing one).
TEST(JitCodeMemoryTest, FileBackedCodeIsPrivateAfterFork) {
    CodeMemory memory(CodeMemory::Backing::File);
    auto add = memory.allocate_code(kAddBytes);
    ASSERT_TRUE(add.ok());
    if (memory.backing() != CodeMemory::Backing::File) GTEST_SKIP() << "no executable memfd here";
    ASSERT_FALSE(memory.finalize(*add).has_value());
    ASSERT_EQ(reinterpret_cast<BinaryFn>(add->code)(40, 2), 42);
    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        // The child frees `add` and fills the whole chunk, its first page
        // (where `add` was) included, with code that subtracts.
        if (memory.release(*add)) _exit(10);
        std::vector<uint8_t> big(CodeMemory::kChunkBytes - CodeMemory::kCodeAlign, 0xcc);
        const std::vector<uint8_t> sub = {0x89, 0xf8, 0x29, 0xf0, 0xc3};
        std::copy(sub.begin(), sub.end(), big.begin());
        auto r = memory.allocate_code(big);
        if (!r.ok()) _exit(11);
        if (r->code != add->code) _exit(12);  // not the reused page: the test proves nothing
        if (memory.finalize(*r)) _exit(13);
        _exit(reinterpret_cast<BinaryFn>(r->code)(40, 2) == 38 ? 0 : 14);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's code on the reused page";
    EXPECT_EQ(reinterpret_cast<BinaryFn>(add->code)(40, 2), 42) << "the parent's function is its own";
    // The parent writes after the fork too: its chunk moves to a new file.
    auto more = memory.allocate_code(kAddBytes);
    ASSERT_TRUE(more.ok());
    ASSERT_FALSE(memory.finalize(*more).has_value());
    EXPECT_EQ(reinterpret_cast<BinaryFn>(more->code)(1, 2), 3);
    EXPECT_EQ(reinterpret_cast<BinaryFn>(add->code)(40, 2), 42);
}

// A page that held longer code and is reused for shorter code gets the old
// code's bytes past the new code overwritten with filler by the seal (only
// as far as the old code reached: a page reused for code of the same size
// is not filled again).
TEST(JitCodeMemoryTest, ReusedPageIsFilledPastShorterCode) {
    CodeMemory memory;
    const size_t ps = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<uint8_t> long_code(600, 0x90);  // nops: not filler
    auto first = memory.allocate(long_code.size());
    ASSERT_TRUE(first.ok());
    uint8_t* const page = first->code;
    ASSERT_EQ(reinterpret_cast<uintptr_t>(page) % ps, 0u) << "a fresh chunk starts the window";
    ASSERT_FALSE(memory.copy_code(*first, 0, long_code).has_value());
    ASSERT_FALSE(memory.finalize(*first).has_value());
    ASSERT_FALSE(memory.release(*first).has_value());
    // Short versions, one page each, until the window comes back to `page`.
    bool reused = false;
    for (int k = 0; k < 4 * static_cast<int>(CodeMemory::kChunkBytes / ps) && !reused; ++k) {
        auto r = memory.allocate(kAddBytes.size());
        ASSERT_TRUE(r.ok());
        ASSERT_FALSE(memory.copy_code(*r, 0, kAddBytes).has_value());
        ASSERT_FALSE(memory.finalize(*r).has_value());
        if (r->code == page) {
            reused = true;
            EXPECT_EQ(reinterpret_cast<BinaryFn>(r->code)(40, 2), 42);
            for (size_t i = kAddBytes.size(); i < ps; ++i)
                ASSERT_EQ(page[i], 0xcc) << "byte " << i << " of the reused page";
        }
        ASSERT_FALSE(memory.release(*r).has_value());
    }
    EXPECT_TRUE(reused) << "the first page was never reused";
}

// A region released before it is finalized leaves filler behind, and other
// open regions of the batch are sealed as usual.
TEST(JitCodeMemoryTest, ReleaseBeforeFinalize) {
    CodeMemory memory;
    auto a = memory.allocate(kAddBytes.size());
    auto b = memory.allocate(kAddBytes.size());
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_FALSE(memory.copy_code(*a, 0, kAddBytes).has_value());
    ASSERT_FALSE(memory.copy_code(*b, 0, kAddBytes).has_value());
    ASSERT_FALSE(memory.release(*a).has_value());
    ASSERT_FALSE(memory.finalize(*b).has_value());
    EXPECT_EQ(a->code[0], 0xcc) << "dead code is overwritten with int3";
    EXPECT_EQ(reinterpret_cast<BinaryFn>(b->code)(2, 3), 5);
    EXPECT_TRUE(memory.finalize(*a).has_value()) << "released";
}

// Code larger than a chunk gets a chunk of its own; fully free chunks
// beyond a small reserve are unmapped.
TEST(JitCodeMemoryTest, LargeRegionsGetTheirOwnChunk) {
    CodeMemory memory;
    std::vector<uint8_t> big(3 * CodeMemory::kChunkBytes + kAddBytes.size(), 0x90);  // nops, then add
    std::copy(kAddBytes.begin(), kAddBytes.end(), big.end() - static_cast<ptrdiff_t>(kAddBytes.size()));
    std::vector<CodeRegion> regions;
    for (int k = 0; k < 4; ++k) {
        auto r = memory.allocate(big.size());
        ASSERT_TRUE(r.ok());
        ASSERT_FALSE(memory.copy_code(*r, 0, big).has_value());
        ASSERT_FALSE(memory.finalize(*r).has_value());
        EXPECT_EQ(reinterpret_cast<BinaryFn>(r->code)(30, 12), 42) << "runs through the nops";
        regions.push_back(*r);
    }
    EXPECT_GE(memory.mapped_bytes(), 4 * big.size());
    for (const CodeRegion& r : regions) ASSERT_FALSE(memory.release(r).has_value());
    EXPECT_LE(memory.mapped_bytes(), 2 * (big.size() + 4096) + CodeMemory::kChunkBytes)
        << "free chunks beyond the reserve are unmapped";
    EXPECT_EQ(page_permissions(regions[1].code), "") << "a freed chunk beyond the reserve went back to the system";
}

TEST(JitCodeMemoryTest, DestructionUnmapsEverything) {
    const uint8_t* code = nullptr;
    {
        CodeMemory memory;
        auto region = memory.allocate(100, 10);
        ASSERT_TRUE(region.ok());
        code = region->code;
        ASSERT_FALSE(memory.finalize(*region).has_value());
        EXPECT_EQ(page_permissions(code), "r-x");
        CodeMemory moved = std::move(memory);
        EXPECT_EQ(moved.num_regions(), 1u);
        EXPECT_EQ(memory.num_regions(), 0u);  // NOLINT: testing the moved-from state
    }
    EXPECT_EQ(page_permissions(code), "") << "still mapped after the CodeMemory died";
}

// --- trap registry ------------------------------------------------------------

TEST(JitTrapRegistryTest, LooksUpSitesAndRejectsBadRanges) {
    TrapRegistry registry;
    alignas(16) static uint8_t code[64];
    ASSERT_FALSE(registry
                     .register_range(code, 32, "f",
                                     {site(20, TrapCode::integer_division_by_zero(), 4),
                                      site(3, TrapCode::user(7), 1)})
                     .has_value());
    auto hit = registry.lookup(reinterpret_cast<uintptr_t>(code + 3));
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->code, TrapCode::user(7));
    EXPECT_EQ(hit->function, "f");
    EXPECT_EQ(hit->offset, 3u);
    EXPECT_EQ(hit->to_string(), "user7 in %f at inst1");
    hit = registry.lookup(reinterpret_cast<uintptr_t>(code + 20));
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->to_string(), "int_divz in %f at inst4");
    EXPECT_FALSE(registry.lookup(reinterpret_cast<uintptr_t>(code + 4)).has_value());
    EXPECT_EQ(registry.function_at(reinterpret_cast<uintptr_t>(code + 31)), "f");
    EXPECT_FALSE(registry.function_at(reinterpret_cast<uintptr_t>(code + 32)).has_value());

    RawTrapInfo raw;
    EXPECT_TRUE(registry.lookup_raw(reinterpret_cast<uintptr_t>(code + 5), raw));
    EXPECT_EQ(raw.code, 0) << "in the range, not a site";
    EXPECT_STREQ(raw.function, "f");
    EXPECT_FALSE(registry.lookup_raw(reinterpret_cast<uintptr_t>(code + 40), raw));

    EXPECT_TRUE(registry.register_range(code + 16, 32, "g", {}).has_value()) << "overlaps f";
    EXPECT_TRUE(
        registry.register_range(code + 32, 8, "g", {site(8, TrapCode::user(1), 0)}).has_value())
        << "site outside the range";
    EXPECT_TRUE(registry
                    .register_range(code + 32, 8, "g",
                                    {site(2, TrapCode::user(1), 0), site(2, TrapCode::user(2), 1)})
                    .has_value())
        << "two sites at one offset";
    ASSERT_FALSE(registry.register_range(code + 32, 8, "g", {}).has_value()) << "adjacent is fine";
    EXPECT_EQ(registry.num_ranges(), 2u);
    EXPECT_TRUE(registry.unregister_range(code));
    EXPECT_FALSE(registry.unregister_range(code));
    EXPECT_FALSE(registry.lookup(reinterpret_cast<uintptr_t>(code + 3)).has_value());
    EXPECT_EQ(registry.num_ranges(), 1u);
}

// replace_range swaps a redefined function's range for its new one in one
// update; the replaced range does not count as an overlap, any other does,
// and a refused replacement changes nothing.
TEST(JitTrapRegistryTest, ReplaceRangeSwapsInOneUpdate) {
    TrapRegistry registry;
    alignas(16) static uint8_t code[128];
    const std::vector<TrapSite> f_sites = {site(4, TrapCode::user(1), 1)};
    ASSERT_FALSE(registry.replace_range(nullptr, code, 32, "f", f_sites).has_value()) << "null: a plain register";
    ASSERT_FALSE(registry.register_range(code + 64, 32, "g", {}).has_value());
    // The new code of f overlaps its old code: fine.
    const std::vector<TrapSite> f2_sites = {site(6, TrapCode::user(2), 3), site(2, TrapCode::user(3), 2)};
    ASSERT_FALSE(registry.replace_range(code, code + 16, 40, "f", f2_sites).has_value());
    EXPECT_EQ(registry.num_ranges(), 2u);
    EXPECT_FALSE(registry.lookup(reinterpret_cast<uintptr_t>(code + 4)).has_value()) << "old site gone";
    EXPECT_EQ(registry.function_at(reinterpret_cast<uintptr_t>(code + 8)), std::nullopt) << "old range gone";
    auto hit = registry.lookup(reinterpret_cast<uintptr_t>(code + 16 + 6));
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->to_string(), "user2 in %f at inst3");
    hit = registry.lookup(reinterpret_cast<uintptr_t>(code + 16 + 2));
    ASSERT_TRUE(hit.has_value()) << "sites are sorted on the way in";
    EXPECT_EQ(hit->to_string(), "user3 in %f at inst2");
    // Overlapping g (not the replaced range) is refused; f stays as it was.
    EXPECT_TRUE(registry.replace_range(code + 16, code + 48, 32, "f", {}).has_value());
    EXPECT_TRUE(registry.replace_range(code + 16, code + 16, 4, "f", f_sites).has_value()) << "site outside";
    EXPECT_EQ(registry.num_ranges(), 2u);
    EXPECT_EQ(registry.function_at(reinterpret_cast<uintptr_t>(code + 50)), "f");
    ASSERT_TRUE(registry.lookup(reinterpret_cast<uintptr_t>(code + 16 + 6)).has_value());
    // Many replacements (spare entries are reused) keep one range for f.
    for (int k = 0; k < 100; ++k) {
        uint8_t* from = code + 16 * (k % 2 + 1);
        uint8_t* to = code + 16 * ((k + 1) % 2 + 1);
        ASSERT_FALSE(registry.replace_range(from, to, 16, "f" + std::to_string(k), f_sites).has_value()) << k;
        ASSERT_EQ(registry.num_ranges(), 2u);
        hit = registry.lookup(reinterpret_cast<uintptr_t>(to + 4));
        ASSERT_TRUE(hit.has_value());
        ASSERT_EQ(hit->function, "f" + std::to_string(k));
    }
}

// Thousands of ranges (so the table has many leaves, which split and
// empty) registered, replaced and removed in random order and in random
// batches: every lookup agrees with a plain map of the same ranges. The
// addresses are never dereferenced.
TEST(JitTrapRegistryTest, ManyRangesAgreeWithAModel) {
    TrapRegistry registry;
    struct Model {
        uintptr_t end;
        std::string function;
        uint32_t site;  // offset of its one trap site
    };
    std::map<uintptr_t, Model> model;
    const uintptr_t base = uintptr_t{1} << 40;
    constexpr uintptr_t kSlots = 6000, kSlot = 64;
    std::mt19937_64 rng(7);
    auto check = [&](uintptr_t pc) {
        auto it = model.upper_bound(pc);
        const Model* m = nullptr;
        uintptr_t start = 0;
        if (it != model.begin() && pc < std::prev(it)->second.end) {
            m = &std::prev(it)->second;
            start = std::prev(it)->first;
        }
        RawTrapInfo raw;
        ASSERT_EQ(registry.lookup_raw(pc, raw), m != nullptr) << std::hex << pc;
        ASSERT_EQ(registry.function_at(pc), m ? std::optional<std::string>(m->function) : std::nullopt);
        if (!m) return;
        ASSERT_STREQ(raw.function, m->function.c_str());
        ASSERT_EQ(raw.range_start, start);
        ASSERT_EQ(raw.code != 0, pc - start == m->site) << std::hex << pc;
    };
    int batches = 0;
    for (int round = 0; round < 3000; ++round) {
        // A batch of 1..40 changes: new ranges in free slots, replacements
        // (which may move into the old range's own place) and removals.
        std::vector<TrapRegistry::Update> batch;
        std::vector<std::string> names;
        std::vector<std::vector<TrapSite>> sites;
        std::map<uintptr_t, Model> next = model;
        std::set<uintptr_t> added;
        const size_t n = 1 + rng() % (round % 10 == 0 ? 40 : 3);
        names.reserve(n);
        sites.reserve(n);
        for (size_t k = 0; k < n; ++k) {
            uintptr_t slot = base + (rng() % kSlots) * kSlot;
            uintptr_t size = 1 + rng() % kSlot;
            uintptr_t old = 0;
            int what = static_cast<int>(rng() % 4);
            if (what == 0 && !next.empty()) {
                // Remove or replace an existing range.
                auto it = next.lower_bound(base + (rng() % kSlots) * kSlot);
                if (it == next.end()) it = next.begin();
                // Removals apply before insertions: not one of this batch's.
                if (added.count(it->first)) continue;
                old = it->first;
                next.erase(it);
                if (rng() % 2) {
                    batch.push_back({reinterpret_cast<const void*>(old), nullptr, 0, {}, {}});
                    continue;
                }
                slot = rng() % 2 ? old : slot;
            }
            auto after = next.lower_bound(slot);
            bool free = (after == next.end() || after->first >= slot + size) &&
                        (after == next.begin() || std::prev(after)->second.end <= slot);
            if (!free) {
                if (old) batch.push_back({reinterpret_cast<const void*>(old), nullptr, 0, {}, {}});
                continue;
            }
            names.push_back("f" + std::to_string(round) + "_" + std::to_string(k));
            uint32_t offset = static_cast<uint32_t>(rng() % size);
            sites.push_back({site(offset, TrapCode::user(1), 0)});
            next[slot] = Model{slot + size, names.back(), offset};
            added.insert(slot);
            batch.push_back({reinterpret_cast<const void*>(old), reinterpret_cast<const void*>(slot), size,
                             names.back(), sites.back()});
        }
        ASSERT_FALSE(registry.update(batch).has_value()) << "round " << round;
        model = std::move(next);
        ++batches;
        ASSERT_EQ(registry.num_ranges(), model.size());
        for (int probe = 0; probe < 8; ++probe) check(base - 1 + rng() % (kSlots * kSlot + 2));
        if (!model.empty()) {
            auto it = model.lower_bound(base + (rng() % kSlots) * kSlot);
            if (it != model.end()) {
                check(it->first);
                check(it->second.end - 1);
                check(it->second.end);
                check(it->first + it->second.site);
            }
        }
    }
    EXPECT_GT(model.size(), 1000u) << "enough ranges for many leaves";
    for (auto& [start, m] : model) check(start + m.site);
}

// One batch of hundreds of new ranges fills several leaves at once; a new
// range that falls into one leaf but reaches into the next (untouched)
// leaf's first range is refused, and so is one reaching into a range the
// batch itself adds in another leaf. Replacing every range in one batch
// keeps them all findable.
TEST(JitTrapRegistryTest, LargeBatchesSpanLeavesAndOverlapsAcrossLeavesAreRefused) {
    TrapRegistry registry;
    const uintptr_t base = uintptr_t{1} << 41;  // never dereferenced
    constexpr int kRanges = 700;                // several leaves of at most 128
    std::vector<TrapRegistry::Update> batch;
    const std::vector<TrapSite> one = {site(3, TrapCode::user(5), 9)};
    std::vector<std::string> names;
    names.reserve(kRanges);
    for (int k = 0; k < kRanges; ++k) names.push_back("f" + std::to_string(k));
    for (int k = kRanges - 1; k >= 0; --k) {  // any order
        batch.push_back({nullptr, reinterpret_cast<const void*>(base + 64 * k), 32, names[k], one});
    }
    ASSERT_FALSE(registry.update(batch).has_value());
    ASSERT_EQ(registry.num_ranges(), size_t{kRanges});
    auto at = [&](uintptr_t pc) { return registry.function_at(pc); };
    for (int k = 0; k < kRanges; ++k) {
        ASSERT_EQ(at(base + 64 * k + 31), names[k]) << k;
        ASSERT_FALSE(at(base + 64 * k + 32).has_value()) << k;
        auto hit = registry.lookup(base + 64 * k + 3);
        ASSERT_TRUE(hit.has_value()) << k;
        ASSERT_EQ(hit->to_string(), "user5 in %" + names[k] + " at inst9");
    }
    // Every gap before a range: a 40-byte range there reaches into the
    // range after the gap, wherever the leaves split.
    for (int k = 1; k < kRanges; ++k) {
        const TrapRegistry::Update bad{nullptr, reinterpret_cast<const void*>(base + 64 * k - 24), 40, "x", {}};
        auto e = registry.update({&bad, 1});
        ASSERT_TRUE(e.has_value()) << k;
        ASSERT_EQ(e->message, "code of function 'x' overlaps a registered range");
    }
    // Two new ranges far apart in the table, the lower one reaching into
    // the range the batch adds above it (through the gaps of every range
    // in between is impossible, so: a long one over a freed stretch).
    std::vector<TrapRegistry::Update> remove_some;
    for (int k = 300; k < 400; ++k) remove_some.push_back({reinterpret_cast<const void*>(base + 64 * k), nullptr, 0, {}, {}});
    ASSERT_FALSE(registry.update(remove_some).has_value());
    ASSERT_EQ(registry.num_ranges(), size_t{kRanges - 100});
    const std::vector<TrapRegistry::Update> pair = {
        {nullptr, reinterpret_cast<const void*>(base + 64 * 300), 64 * 60, "low", {}},
        {nullptr, reinterpret_cast<const void*>(base + 64 * 350), 16, "high", {}}};
    auto e = registry.update(pair);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->message, "code of function 'high' overlaps a registered range");
    EXPECT_EQ(registry.num_ranges(), size_t{kRanges - 100});
    EXPECT_FALSE(at(base + 64 * 350).has_value());
    // Replace every remaining range by one 8 bytes further on, in one batch.
    std::vector<TrapRegistry::Update> moves;
    for (int k = 0; k < kRanges; ++k) {
        if (k >= 300 && k < 400) continue;
        moves.push_back({reinterpret_cast<const void*>(base + 64 * k),
                         reinterpret_cast<const void*>(base + 64 * k + 8), 32, names[k], one});
    }
    ASSERT_FALSE(registry.update(moves).has_value());
    EXPECT_EQ(registry.num_ranges(), size_t{kRanges - 100});
    for (int k = 0; k < kRanges; ++k) {
        const bool live = k < 300 || k >= 400;
        ASSERT_FALSE(at(base + 64 * k + 4).has_value()) << k;
        ASSERT_EQ(at(base + 64 * k + 8), live ? std::optional<std::string>(names[k]) : std::nullopt) << k;
        ASSERT_EQ(at(base + 64 * k + 39), live ? std::optional<std::string>(names[k]) : std::nullopt) << k;
    }
}

// A batch is one change: any bad entry (a range overlapping another new
// one, or one that stays; a bad site) refuses all of it, and a batch may
// put a new range where it removes an old one.
TEST(JitTrapRegistryTest, BatchesApplyWhollyOrNotAtAll) {
    TrapRegistry registry;
    alignas(16) static uint8_t code[256];
    const std::vector<TrapSite> one = {site(1, TrapCode::user(3), 2)};
    ASSERT_FALSE(registry.register_range(code, 32, "a", {}).has_value());
    ASSERT_FALSE(registry.register_range(code + 64, 32, "b", {}).has_value());
    using U = TrapRegistry::Update;
    auto refused = [&](std::vector<U> batch, const char* why) {
        auto e = registry.update(batch);
        EXPECT_TRUE(e.has_value()) << why;
        EXPECT_EQ(registry.num_ranges(), 2u) << why;
        EXPECT_EQ(registry.function_at(reinterpret_cast<uintptr_t>(code)), "a") << why;
        EXPECT_EQ(registry.function_at(reinterpret_cast<uintptr_t>(code + 64)), "b") << why;
        EXPECT_FALSE(registry.function_at(reinterpret_cast<uintptr_t>(code + 128)).has_value()) << why;
        return e ? e->message : std::string();
    };
    EXPECT_EQ(refused({{nullptr, code + 128, 16, "c", one}, {nullptr, code + 136, 16, "d", {}}}, "new ones overlap"),
              "code of function 'd' overlaps a registered range");
    refused({{nullptr, code + 128, 16, "c", one}, {nullptr, code + 90, 16, "d", {}}}, "d overlaps b, which stays");
    refused({{code + 64, nullptr, 0, {}, {}}, {nullptr, code + 128, 16, "c", one}, {nullptr, code + 16, 32, "d", {}}},
            "d overlaps a; b's removal is refused with it");
    EXPECT_EQ(refused({{nullptr, code + 128, 16, "c", one}, {nullptr, code + 160, 1, "d", one}}, "site outside d"),
              "trap site at offset 1 lies outside function 'd'");

    // a moves over b's place while b is removed, and c arrives: one change.
    ASSERT_FALSE(registry
                     .update(std::vector<U>{{code + 64, nullptr, 0, {}, {}},
                                            {code, code + 48, 48, "a2", one},
                                            {nullptr, code + 128, 16, "c", one}})
                     .has_value());
    EXPECT_EQ(registry.num_ranges(), 2u);
    EXPECT_FALSE(registry.function_at(reinterpret_cast<uintptr_t>(code)).has_value());
    EXPECT_EQ(registry.function_at(reinterpret_cast<uintptr_t>(code + 70)), "a2");
    auto hit = registry.lookup(reinterpret_cast<uintptr_t>(code + 129));
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->to_string(), "user3 in %c at inst2");
    EXPECT_FALSE(registry.update(std::vector<U>{}).has_value()) << "an empty batch is no change";
    EXPECT_EQ(registry.num_ranges(), 2u);
}

// --- traps --------------------------------------------------------------------

TEST(JitTrapTest, Ud2AtSiteReportsUserCodeAndFunction) {
    CodeMemory memory;
    JitCode fn(memory, kUd2Bytes, "ud2_user7", {site(0, TrapCode::user(7), 3)});
    auto result = call_with_traps([&] { fn.as<VoidFn>()(); });
    EXPECT_FALSE(result.returned());
    ASSERT_TRUE(result.trap.has_value());
    EXPECT_EQ(result.trap->code, TrapCode::user(7));
    EXPECT_EQ(result.trap->function, "ud2_user7");
    EXPECT_EQ(result.trap->inst, Inst(3));
    EXPECT_EQ(result.trap->pc, reinterpret_cast<uintptr_t>(fn.code()));
    EXPECT_EQ(result.trap->signal, SIGILL);
    EXPECT_EQ(result.trap->to_string(), "user7 in %ud2_user7 at inst3");
}

TEST(JitTrapTest, DivisionByZeroAtSiteReportsIntDivz) {
    CodeMemory memory;
    JitCode div(memory, kDivBytes, "div", {site(3, TrapCode::integer_division_by_zero(), 2)});
    auto ok = call_with_traps([&] { return div.as<BinaryFn>()(42, 6); });
    ASSERT_TRUE(ok.returned());
    EXPECT_EQ(*ok.value, 7);
    EXPECT_FALSE(ok.trap.has_value());

    auto trapped = call_with_traps([&] { return div.as<BinaryFn>()(42, 0); });
    EXPECT_FALSE(trapped.returned());
    ASSERT_TRUE(trapped.trap.has_value());
    EXPECT_EQ(trapped.trap->to_string(), "int_divz in %div at inst2");
    EXPECT_EQ(trapped.trap->signal, SIGFPE);
    EXPECT_EQ(trapped.trap->offset, 3u);
}

TEST(JitTrapTest, GuardPageLoadAtSiteReportsHeapOob) {
    CodeMemory memory;
    JitCode load(memory, kLoadBytes, "load", {site(0, TrapCode::heap_out_of_bounds(), 0)});
    GuardPage guard;
    int value = 1234;
    auto ok = call_with_traps([&] { return load.as<LoadFn>()(&value); });
    ASSERT_TRUE(ok.returned());
    EXPECT_EQ(*ok.value, 1234);

    auto trapped = call_with_traps([&] { return load.as<LoadFn>()(guard.address()); });
    ASSERT_TRUE(trapped.trap.has_value());
    EXPECT_EQ(trapped.trap->to_string(), "heap_oob in %load at inst0");
    EXPECT_EQ(trapped.trap->signal, SIGSEGV);
}

TEST(JitTrapTest, TrapsRepeatedlyAndLongNamesSurvive) {
    CodeMemory memory;
    std::string long_name(400, 'x');
    JitCode fn(memory, kUd2Bytes, long_name, {site(0, TrapCode::user(250), 0)});
    for (int i = 0; i < 100; ++i) {
        auto result = call_with_traps([&] { fn.as<VoidFn>()(); });
        ASSERT_TRUE(result.trap.has_value());
        EXPECT_EQ(result.trap->code, TrapCode::user(250));
        EXPECT_EQ(result.trap->function, long_name);
    }
}

void overflow_the_stack_and_recover(const JitCode& recurse) {
    for (int round = 0; round < 2; ++round) {
        auto result = call_with_traps([&] { recurse.as<VoidFn>()(); });
        ASSERT_TRUE(result.trap.has_value()) << "round " << round;
        EXPECT_EQ(result.trap->code, TrapCode::stack_overflow());
        EXPECT_EQ(result.trap->function, "recurse");
        EXPECT_FALSE(result.trap->inst.has_value());
        EXPECT_EQ(result.trap->to_string(), "stk_ovf in %recurse");
    }
}

TEST(JitTrapTest, StackOverflowOnMainThreadReportsStkOvf) {
    // Without a stack limit the recursion would eat all memory first.
    rlimit limit{};
    getrlimit(RLIMIT_STACK, &limit);
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > (256u << 20))
        GTEST_SKIP() << "the main thread's stack limit is unlimited or huge";
    CodeMemory memory;
    JitCode recurse(memory, kRecurseBytes, "recurse");
    overflow_the_stack_and_recover(recurse);
    // The thread lives on and runs JIT code again.
    JitCode add(memory, kAddBytes, "add");
    auto result = call_with_traps([&] { return add.as<BinaryFn>()(2, 3); });
    ASSERT_TRUE(result.returned());
    EXPECT_EQ(*result.value, 5);
}

TEST(JitTrapTest, StackOverflowOnOtherThreadReportsStkOvf) {
    CodeMemory memory;
    JitCode recurse(memory, kRecurseBytes, "recurse");
    std::thread worker([&] { overflow_the_stack_and_recover(recurse); });
    worker.join();
}

/// Set by the host function that the outer JIT code calls.
std::optional<TrapInfo> g_inner_trap;
BinaryFn g_inner_div = nullptr;

void host_makes_guarded_call() {
    auto inner = call_with_traps([] { return g_inner_div(1, 0); });
    g_inner_trap = inner.trap;
}

TEST(JitTrapTest, NestedGuardedCallsReportToTheInnermost) {
    CodeMemory memory;
    JitCode div(memory, kDivBytes, "inner", {site(3, TrapCode::integer_division_by_zero(), 9)});
    g_inner_div = div.as<BinaryFn>();
    g_inner_trap.reset();

    // sub rsp, 8; movabs rax, host; call rax; add rsp, 8; ud2 (offset 20); ret
    std::vector<uint8_t> outer = {0x48, 0x83, 0xec, 0x08, 0x48, 0xb8};
    auto host = reinterpret_cast<uint64_t>(&host_makes_guarded_call);
    for (int i = 0; i < 8; ++i) outer.push_back(static_cast<uint8_t>(host >> (8 * i)));
    for (uint8_t b : {0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0x0f, 0x0b, 0xc3}) outer.push_back(b);
    JitCode fn(memory, outer, "outer", {site(20, TrapCode::user(2), 5)});

    auto result = call_with_traps([&] { fn.as<VoidFn>()(); });
    ASSERT_TRUE(g_inner_trap.has_value()) << "the inner call caught its own trap";
    EXPECT_EQ(g_inner_trap->to_string(), "int_divz in %inner at inst9");
    ASSERT_TRUE(result.trap.has_value()) << "the outer call caught the later trap";
    EXPECT_EQ(result.trap->to_string(), "user2 in %outer at inst5");

    // Both recovery points are gone: a normal call still works.
    auto again = call_with_traps([&] { return div.as<BinaryFn>()(9, 3); });
    ASSERT_TRUE(again.returned());
    EXPECT_EQ(*again.value, 3);
}

TEST(JitTrapTest, ThreadsTrappingConcurrentlyGetTheirOwnReports) {
    CodeMemory memory;
    JitCode ud2(memory, kUd2Bytes, "trap_a", {site(0, TrapCode::user(7), 1)});
    JitCode div(memory, kDivBytes, "trap_b", {site(3, TrapCode::integer_division_by_zero(), 2)});
    constexpr int kRounds = 300;
    std::atomic<bool> done{false};
    std::atomic<int> failures{0};

    std::thread a([&] {
        for (int i = 0; i < kRounds; ++i) {
            auto r = call_with_traps([&] { ud2.as<VoidFn>()(); });
            if (!r.trap || r.trap->to_string() != "user7 in %trap_a at inst1") ++failures;
        }
    });
    std::thread b([&] {
        for (int i = 0; i < kRounds; ++i) {
            auto r = call_with_traps([&] { return div.as<BinaryFn>()(i, i % 2); });
            bool good = i % 2 ? r.returned() && *r.value == i
                              : r.trap && r.trap->to_string() == "int_divz in %trap_b at inst2";
            if (!good) ++failures;
        }
    });
    // Meanwhile the registry keeps changing under the handlers' readers.
    std::thread churn([&] {
        static uint8_t fake[256];
        while (!done.load()) {
            for (int i = 0; i < 16; ++i)
                TrapRegistry::global().register_range(fake + i * 16, 16, "churn",
                                                      {site(0, TrapCode::user(1), 0)});
            for (int i = 0; i < 16; ++i) TrapRegistry::global().unregister_range(fake + i * 16);
        }
    });
    a.join();
    b.join();
    done = true;
    churn.join();
    EXPECT_EQ(failures.load(), 0);
}

// --- faults that are not traps stay fatal -------------------------------------

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HERON_SANITIZER_HANDLES_SEGV 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HERON_SANITIZER_HANDLES_SEGV 1
#endif
#endif

/// Died of `signo` — or, for SIGSEGV under a sanitizer, whose handler we
/// chained to, reported it and exited non-zero.
std::function<bool(int)> died_of(int signo) {
    return [signo](int status) {
#ifdef HERON_SANITIZER_HANDLES_SEGV
        if (signo == SIGSEGV && WIFEXITED(status) && WEXITSTATUS(status) != 0) return true;
#endif
        return WIFSIGNALED(status) && WTERMSIG(status) == signo;
    };
}

class JitTrapDeathTest : public ::testing::Test {
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(JitTrapDeathTest, FaultAtUnregisteredPcInJitCodeIsNotSwallowed) {
    EXPECT_EXIT(
        {
            CodeMemory memory;
            JitCode load(memory, kLoadBytes, "load_without_site");  // no trap site
            GuardPage guard;
            call_with_traps([&] { return load.as<LoadFn>()(guard.address()); });
        },
        died_of(SIGSEGV), "");
}

TEST_F(JitTrapDeathTest, Ud2AtUnregisteredPcIsNotSwallowed) {
    EXPECT_EXIT(
        {
            CodeMemory memory;
            JitCode fn(memory, kUd2Bytes, "ud2_without_site");
            call_with_traps([&] { fn.as<VoidFn>()(); });
        },
        died_of(SIGILL), "");
}

TEST_F(JitTrapDeathTest, FaultInHostCodeDuringGuardedCallIsNotSwallowed) {
    EXPECT_EXIT(
        {
            GuardPage guard;
            call_with_traps([&] { return *static_cast<const volatile int*>(guard.address()); });
        },
        died_of(SIGSEGV), "");
}

void previous_segv_handler(int) { _exit(42); }

TEST_F(JitTrapDeathTest, FaultThatIsNotATrapReachesThePreviousHandler) {
    EXPECT_EXIT(
        {
            signal(SIGSEGV, previous_segv_handler);
            if (prepare_thread_for_traps()) _exit(1);
            struct sigaction now {};
            sigaction(SIGSEGV, nullptr, &now);
            if (now.sa_handler == previous_segv_handler) _exit(2);  // ours is not in place
            CodeMemory memory;
            JitCode load(memory, kLoadBytes, "load_without_site");
            GuardPage guard;
            call_with_traps([&] { return load.as<LoadFn>()(guard.address()); });
        },
        ::testing::ExitedWithCode(42), "");
}

TEST_F(JitTrapDeathTest, TrapOutsideAGuardedCallIsNotSwallowed) {
    EXPECT_EXIT(
        {
            if (prepare_thread_for_traps()) _exit(1);
            CodeMemory memory;
            JitCode fn(memory, kUd2Bytes, "ud2", {site(0, TrapCode::user(1), 0)});
            fn.as<VoidFn>()();
        },
        died_of(SIGILL), "");
}

// --- host symbols -------------------------------------------------------------

int host_triple(int x) { return 3 * x; }

TEST(JitSymbolsTest, DefinedThenCallbacksThenProcess) {
    SymbolResolver symbols;
    int data = 0;
    symbols.define("triple", reinterpret_cast<const void*>(&host_triple));
    symbols.define("data", &data);
    symbols.add_lookup([](std::string_view name) -> const void* {
        return name == "from_callback" ? reinterpret_cast<const void*>(&host_triple) : nullptr;
    });
    symbols.add_lookup([&](std::string_view name) -> const void* {
        return name == "from_callback" || name == "second" ? &data : nullptr;
    });

    EXPECT_EQ(symbols.lookup("triple"), reinterpret_cast<const void*>(&host_triple));
    EXPECT_EQ(symbols.lookup("data"), &data);
    EXPECT_EQ(symbols.lookup("from_callback"), reinterpret_cast<const void*>(&host_triple))
        << "callbacks are asked in the order they were added";
    EXPECT_EQ(symbols.lookup("second"), &data);
    EXPECT_EQ(symbols.lookup("qsort"), reinterpret_cast<const void*>(&qsort)) << "dlsym";

    auto missing = symbols.resolve("no_such_symbol_anywhere");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message, "undefined host symbol 'no_such_symbol_anywhere'");

    symbols.define("qsort", &data);
    EXPECT_EQ(symbols.lookup("qsort"), &data) << "a defined symbol shadows the process'";
    symbols.set_use_process_symbols(false);
    EXPECT_EQ(symbols.lookup("strlen"), nullptr);
}

TEST(JitSymbolsTest, JitCodeCallsResolvedHostFunction) {
    SymbolResolver symbols;
    auto strlen_address = symbols.resolve("strlen");
    ASSERT_TRUE(strlen_address.ok());
    // movabs rax, strlen; jmp rax
    std::vector<uint8_t> bytes = {0x48, 0xb8};
    auto target = reinterpret_cast<uint64_t>(*strlen_address);
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(target >> (8 * i)));
    bytes.push_back(0xff);
    bytes.push_back(0xe0);
    CodeMemory memory;
    JitCode fn(memory, bytes, "call_strlen");
    EXPECT_EQ(fn.as<size_t (*)(const char*)>()("heron"), 5u);
}

// --- disassembler -------------------------------------------------------------

TEST(DisasmX64Test, PrintsInstructionsBytesAndLabels) {
    // lea eax, [rdi+rsi]; jmp +2; ud2; ret
    const uint8_t code[] = {0x8d, 0x04, 0x37, 0xeb, 0x02, 0x0f, 0x0b, 0xc3};
    std::string text =
        tools::disassemble_x64(code, sizeof code, 0x1000, {{0, "block0"}, {7, "block1"}});
    EXPECT_EQ(text,
              "block0:\n"
              "  0000:  8d 04 37              lea eax, [rdi+rsi*1]\n"
              "  0003:  eb 02                 jmp block1\n"
              "  0005:  0f 0b                 ud2\n"
              "block1:\n"
              "  0007:  c3                    ret\n");
}

TEST(DisasmX64Test, UnlabelledTargetsBadBytesAndStrayLabels) {
    // add rax, rdi; call +0 (to offset 8); (bad); mov rax, imm64
    const uint8_t code[] = {0x48, 0x01, 0xf8, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x06,
                            0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
    std::string text = tools::disassemble_x64(code, sizeof code, 0x400000,
                                              {{4, "inside"}, {sizeof code, "end"}});
    EXPECT_EQ(text,
              "  0000:  48 01 f8              add rax, rdi\n"
              "  0003:  e8 00 00 00 00        call 0x400008\n"
              "inside:  ; at 0004, inside an instruction\n"
              "  0008:  06                    (bad)\n"
              "  0009:  48 b8 88 77 66 55 44 33 22 11  mov rax, 0x1122334455667788\n"
              "end:\n");
}

}  // namespace
}  // namespace heron

#endif  // __x86_64__
