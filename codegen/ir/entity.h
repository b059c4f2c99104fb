// Typed entity references and the tables that hold them.
//
// Every IR object (value, instruction, block, stack slot, ...) is named by a
// 32-bit index wrapped in its own type, never by a pointer. `PrimaryMap` owns
// the data of one kind and hands out keys; `SecondaryMap` is a dense side
// table keyed by the same entity with a default for keys never written;
// `PackedOption` uses the all-ones index as "none" so tables stay 4 bytes a
// slot; `EntityList` + `ListPool` store short variable-length lists (operands,
// block arguments) in one shared vector instead of one heap block each.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace heron {

#define HERON_ASSERT(cond) assert(cond)

/// Base of all entity references: a dense 32-bit index.
template <typename Tag>
class EntityRef {
public:
    static constexpr uint32_t kReserved = std::numeric_limits<uint32_t>::max();

    constexpr EntityRef() : index_(kReserved) {}
    constexpr explicit EntityRef(uint32_t index) : index_(index) {}

    constexpr uint32_t index() const { return index_; }
    constexpr bool is_valid() const { return index_ != kReserved; }
    static constexpr EntityRef reserved() { return EntityRef(); }

    friend constexpr bool operator==(EntityRef a, EntityRef b) { return a.index_ == b.index_; }
    friend constexpr bool operator!=(EntityRef a, EntityRef b) { return a.index_ != b.index_; }
    friend constexpr bool operator<(EntityRef a, EntityRef b) { return a.index_ < b.index_; }

    /// The text form, e.g. "v3" or "block7".
    std::string to_string() const { return std::string(Tag::kPrefix) + std::to_string(index_); }

private:
    uint32_t index_;
};

#define HERON_ENTITY(Name, prefix)                        \
    struct Name##Tag {                                    \
        static constexpr const char* kPrefix = prefix;    \
    };                                                    \
    using Name = EntityRef<Name##Tag>

HERON_ENTITY(Value, "v");
HERON_ENTITY(Inst, "inst");
HERON_ENTITY(Block, "block");
HERON_ENTITY(StackSlot, "ss");
HERON_ENTITY(FuncRef, "fn");
HERON_ENTITY(SigRef, "sig");
HERON_ENTITY(JumpTable, "jt");

#undef HERON_ENTITY

/// An optional entity stored in the entity's own 32 bits.
template <typename K>
class PackedOption {
public:
    constexpr PackedOption() = default;
    constexpr PackedOption(K k) : key_(k) {}  // NOLINT: implicit by design
    constexpr PackedOption(std::nullopt_t) {}  // NOLINT

    constexpr bool has_value() const { return key_.is_valid(); }
    constexpr explicit operator bool() const { return has_value(); }
    constexpr K value() const { return key_; }
    constexpr K operator*() const { return key_; }
    constexpr const K* operator->() const { return &key_; }
    constexpr K value_or(K other) const { return has_value() ? key_ : other; }
    std::optional<K> expand() const { return has_value() ? std::optional<K>(key_) : std::nullopt; }
    /// For call sites that keep a std::optional. Accessors read in loops
    /// return PackedOption itself: GCC 12 builds a std::optional<K> in
    /// memory with two stores (the key, then the engaged byte) and reads it
    /// back as one 8-byte load, which the store buffer cannot forward, a
    /// stall of some ten cycles per call (perf annotate of the optimizer's
    /// block walks, Zen 1).
    operator std::optional<K>() const { return expand(); }  // NOLINT: implicit by design

    friend constexpr bool operator==(PackedOption a, PackedOption b) { return a.key_ == b.key_; }
    friend constexpr bool operator!=(PackedOption a, PackedOption b) { return a.key_ != b.key_; }

private:
    K key_{};
};

/// Owns the data of one entity kind; `push` returns the new key.
template <typename K, typename V>
class PrimaryMap {
public:
    K push(V v) {
        elems_.push_back(std::move(v));
        return K(static_cast<uint32_t>(elems_.size() - 1));
    }
    K next_key() const { return K(static_cast<uint32_t>(elems_.size())); }
    bool is_valid(K k) const { return k.index() < elems_.size(); }
    V& operator[](K k) {
        HERON_ASSERT(k.index() < elems_.size() && "entity out of range");
        return elems_[k.index()];
    }
    const V& operator[](K k) const {
        HERON_ASSERT(k.index() < elems_.size() && "entity out of range");
        return elems_[k.index()];
    }
    uint32_t size() const { return static_cast<uint32_t>(elems_.size()); }
    bool empty() const { return elems_.empty(); }
    void clear() { elems_.clear(); }
    void reserve(size_t n) { elems_.reserve(n); }
    /// The entries as an array (size() of them), for loops that check
    /// their indices once.
    const V* data() const { return elems_.data(); }

    /// Iterates keys 0..size-1.
    struct KeyIter {
        uint32_t i;
        K operator*() const { return K(i); }
        KeyIter& operator++() { ++i; return *this; }
        bool operator!=(const KeyIter& o) const { return i != o.i; }
    };
    struct Keys {
        uint32_t n;
        KeyIter begin() const { return {0}; }
        KeyIter end() const { return {n}; }
    };
    Keys keys() const { return {size()}; }

    auto begin() { return elems_.begin(); }
    auto end() { return elems_.end(); }
    auto begin() const { return elems_.begin(); }
    auto end() const { return elems_.end(); }

private:
    std::vector<V> elems_;
};

/// Dense side table: reading a key never written gives the default.
template <typename K, typename V>
class SecondaryMap {
public:
    SecondaryMap() = default;
    explicit SecondaryMap(V dflt) : default_(std::move(dflt)) {}

    const V& operator[](K k) const { return k.index() < elems_.size() ? elems_[k.index()] : default_; }
    V& operator[](K k) {
        if (k.index() >= elems_.size()) grow(k.index() + 1);
        return elems_[k.index()];
    }
    const V& get(K k) const { return (*this)[k]; }
    /// For keys the caller knows were written (below size()): no default.
    const V& get_unchecked(K k) const {
        HERON_ASSERT(k.index() < elems_.size() && "entity not in the side table");
        return elems_[k.index()];
    }
    /// The written entries as an array (size() of them).
    const V* data() const { return elems_.data(); }
    void resize(size_t n) { elems_.resize(n, default_); }
    /// Forgets every entry but keeps the memory.
    void clear() { elems_.clear(); }
    size_t size() const { return elems_.size(); }
    const V& default_value() const { return default_; }

private:
    // Out of line, so that operator[] stays small enough to inline.
    [[gnu::noinline]] void grow(size_t n) {
        // The common growth is by one (entities made in order): push_back
        // doubles the capacity itself and copies one default.
        if (n == elems_.size() + 1) {
            elems_.push_back(default_);
            return;
        }
        // Double the capacity, not the size: reserving 2 * size() on every
        // one-element growth would reallocate each time (quadratic).
        if (n > elems_.capacity()) {
            size_t cap = elems_.capacity() * 2;
            elems_.reserve(cap < n ? n : cap);
        }
        elems_.resize(n, default_);
    }
    std::vector<V> elems_;
    V default_{};
};

/// A pool of small lists. A list is a handle (offset into the pool); its
/// length is stored in the slot before its first element. Lists are
/// allocated in size classes of powers of two and recycled on free lists.
///
/// The pool's vector is never shrunk: clear() only rewinds the end of the
/// used part (`used_`), so a pool reused for the next function allocates
/// lists without growing or filling its vector again. Words past a list's
/// length are never read.
template <typename T>
class ListPool {
public:
    ListPool() = default;
    /// A copy takes the words in use only (not the kept tail).
    ListPool(const ListPool& o) : data_(o.data_.begin(), o.data_.begin() + o.used_), used_(o.used_) {
        for (int c = 0; c < kClasses; ++c) free_[c] = o.free_[c];
    }
    ListPool& operator=(const ListPool& o) {
        if (this == &o) return *this;
        if (data_.size() < o.used_) data_.resize(o.used_);
        std::copy(o.data_.begin(), o.data_.begin() + o.used_, data_.begin());
        used_ = o.used_;
        for (int c = 0; c < kClasses; ++c) free_[c] = o.free_[c];
        return *this;
    }
    ListPool(ListPool&&) noexcept = default;
    ListPool& operator=(ListPool&&) noexcept = default;

    void clear() {
        used_ = 0;
        for (auto& f : free_) f.clear();
    }
    /// Words handed out since the last clear (lists, length words, freed lists).
    size_t memory_words() const { return used_; }

private:
    template <typename>
    friend class EntityList;
    static constexpr int kClasses = 30;

    static int size_class(uint32_t len) {
        // capacity = 2^(c+2) - 1 elements plus the length word.
        int c = 0;
        while ((1u << (c + 2)) - 1 < len) ++c;
        return c;
    }
    static uint32_t class_capacity(int c) { return (1u << (c + 2)) - 1; }

    uint32_t alloc(int c) {
        if (!free_[c].empty()) {
            uint32_t at = free_[c].back();
            free_[c].pop_back();
            return at;
        }
        const uint32_t at = used_;
        used_ += class_capacity(c) + 1;
        if (used_ > data_.size()) [[unlikely]] extend();
        return at;
    }
    void release(uint32_t at, int c) { free_[c].push_back(at); }
    /// Makes room for `used_` words: doubling, from 64.
    void extend() {
        size_t n = data_.size() * 2;
        if (n < 64) n = 64;
        if (n < used_) n = used_;
        data_.resize(n);
    }

    std::vector<T> data_;  // length words are stored as T(length); used_ of them in use
    uint32_t used_ = 0;
    std::vector<uint32_t> free_[kClasses];
};

/// A variable-length list of entities living in a `ListPool`.
/// The empty list takes no pool memory. Copying the handle aliases the list.
template <typename T>
class EntityList {
public:
    using Pool = ListPool<T>;
    EntityList() = default;

    bool empty() const { return head_ == kEmpty; }
    uint32_t size(const Pool& p) const { return empty() ? 0 : p.data_[head_].index(); }
    T get(uint32_t i, const Pool& p) const {
        HERON_ASSERT(i < size(p) && "list index out of range");
        return p.data_[head_ + 1 + i];
    }
    void set(uint32_t i, T v, Pool& p) {
        HERON_ASSERT(i < size(p) && "list index out of range");
        p.data_[head_ + 1 + i] = v;
    }
    const T* raw(const Pool& p) const { return empty() ? nullptr : &p.data_[head_ + 1]; }
    /// The elements as a span (empty for the empty list).
    std::span<const T> as_span(const Pool& p) const {
        if (empty()) return {};
        const T* at = &p.data_[head_];
        return {at + 1, at->index()};
    }
    T* raw_mut(Pool& p) { return empty() ? nullptr : &p.data_[head_ + 1]; }

    void push(T v, Pool& p) {
        uint32_t n = size(p);
        grow_to(n + 1, p);
        p.data_[head_ + 1 + n] = v;
    }
    /// Appends every element of `vals` (which must not live in `p`), growing once.
    void extend(std::span<const T> vals, Pool& p) {
        if (vals.empty()) return;
        const uint32_t n = size(p);
        grow_to(n + static_cast<uint32_t>(vals.size()), p);
        T* at = &p.data_[head_ + 1 + n];
        for (const T& v : vals) *at++ = v;
    }
    /// Removes element i, shifting the rest down.
    void remove(uint32_t i, Pool& p) {
        uint32_t n = size(p);
        HERON_ASSERT(i < n);
        for (uint32_t j = i; j + 1 < n; ++j) p.data_[head_ + 1 + j] = p.data_[head_ + 2 + j];
        p.data_[head_] = T(n - 1);
    }
    void truncate(uint32_t n, Pool& p) {
        if (n < size(p)) p.data_[head_] = T(n);
    }
    void clear(Pool& p) {
        if (empty()) return;
        p.release(head_, Pool::size_class(cap_hint_));
        head_ = kEmpty;
        cap_hint_ = 0;
    }

    template <typename It>
    static EntityList from(It first, It last, Pool& p) {
        EntityList l;
        if constexpr (std::contiguous_iterator<It>) {
            l.extend(std::span<const T>(std::to_address(first), static_cast<size_t>(last - first)), p);
        } else {
            for (; first != last; ++first) l.push(*first, p);
        }
        return l;
    }

    bool operator==(const EntityList& o) const { return head_ == o.head_; }

private:
    static constexpr uint32_t kEmpty = std::numeric_limits<uint32_t>::max();

    void grow_to(uint32_t n, Pool& p) {
        if (empty()) {
            int c = Pool::size_class(n);
            head_ = p.alloc(c);
            cap_hint_ = Pool::class_capacity(c);
            p.data_[head_] = T(n);
            return;
        }
        uint32_t cap = cap_hint_;
        if (n <= cap) {
            p.data_[head_] = T(n);
            return;
        }
        int c = Pool::size_class(n);
        uint32_t at = p.alloc(c);
        uint32_t old = p.data_[head_].index();
        for (uint32_t j = 0; j < old; ++j) p.data_[at + 1 + j] = p.data_[head_ + 1 + j];
        p.release(head_, Pool::size_class(cap));
        head_ = at;
        cap_hint_ = Pool::class_capacity(c);
        p.data_[head_] = T(n);
    }

    uint32_t head_ = kEmpty;
    uint32_t cap_hint_ = 0;  // capacity of the allocated size class
};

}  // namespace heron
