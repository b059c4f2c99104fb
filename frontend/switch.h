// Switch: a multiway branch on an integer selector (i8..i64), emitted as
// compare-and-branch chains, a balanced search tree and jump tables, after
// the scheme of Cranelift's cranelift-frontend (walked through in seed 002).
//
// The cases are sorted and grouped into contiguous ranges (a run of
// consecutive case values, each with its own target). Up to three ranges
// become a chain of tests, highest first:
//
//   one case at 0        brif val, next, case          (zero test)
//   one case v           brif (icmp eq val, v), case, next
//   a range from 0       jump table_block              (val >= 0 always)
//   a range from v       brif (icmp uge val, v), table_block, next
//
// and the chain ends at `otherwise`. More ranges become a balanced binary
// search tree, built with an explicit stack: split at len/2, branch on
// `icmp uge val, first_of_right_half`. Every range longer than one case
// gets a `br_table` on `val - first` (in its table block), defaulting to
// `otherwise`.
//
// The br_table index is i32 (ir-reference.md 13): narrower selectors are
// zero-extended after the subtraction (val - first cannot exceed the type's
// range, and a wrapped difference is >= the range length, so it still falls
// to `otherwise`); i32 is used as is; an i64 difference is compared with the
// range length first and only reduced when it is in range, so no value
// above 2^32 can alias a table entry. Tables only ever hold actual cases:
// a sparse case set makes many small ranges, never a large table.
//
// Case values are the selector's bit pattern read unsigned. A negative
// value (as int64_t, e.g. `uint64_t(-1)`) is taken as a signed case and
// wrapped to the selector's width at emit time, so -1 and 255 are the same
// i8 case (given both, emit reports a duplicate).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "frontend/error.h"
#include "frontend/function_builder.h"

namespace heron {

class Switch {
public:
    /// Sends case `value` to `block`. The same value twice is an error.
    Result<void> try_set_entry(uint64_t value, Block block);
    /// As try_set_entry; a duplicate is recorded and returned by emit.
    void set_entry(uint64_t value, Block block);

    /// The cases as given, in the order given.
    const std::vector<std::pair<uint64_t, Block>>& entries() const { return entries_; }

    /// Emits the dispatch in the builder's current block, which it fills.
    /// Blocks it creates are sealed; the case blocks and `otherwise` are
    /// not (they may have other predecessors): seal them once those are
    /// built. Nothing is emitted if an error is returned.
    Result<void> emit(FunctionBuilder& builder, Value selector, Block otherwise);

    /// Forgets the cases, keeping the memory.
    void clear();

private:
    struct Range {
        uint64_t first;  // the smallest case value
        uint32_t begin, end;  // its targets: sorted_[begin, end)
    };
    struct Pending {
        Block block;
        uint32_t lo, hi;  // ranges_[lo, hi)
    };
    struct Table {
        uint32_t range;
        Block block;
    };

    Result<void> prepare(Type ty);
    void emit_chain(FunctionBuilder& b, Value val, Block otherwise, uint32_t lo, uint32_t hi);
    void emit_tree(FunctionBuilder& b, Value val, Block otherwise);
    void emit_table(FunctionBuilder& b, Value val, Block otherwise, const Table& table);

    /// Finds `value` among the entries (open addressing over indices into
    /// entries_, kept between uses); inserts it if absent.
    std::optional<Block> find_or_insert(uint64_t value, Block block);

    std::vector<std::pair<uint64_t, Block>> entries_;
    std::vector<uint32_t> index_;  // entries_ position + 1; 0 = empty
    std::optional<FrontendError> error_;

    // emit's scratch, kept between uses
    std::vector<std::pair<uint64_t, Block>> sorted_;
    std::vector<Range> ranges_;
    std::vector<Pending> stack_;
    std::vector<Table> tables_;
    std::vector<Block> targets_;
};

}  // namespace heron
