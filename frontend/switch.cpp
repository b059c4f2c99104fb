// Switch: search chains, a balanced search tree and jump tables over the
// contiguous ranges of a case set (scheme of cranelift-frontend, seed 002).
// switch.h describes the shapes and the br_table index conversion.
#include "frontend/switch.h"

#include <algorithm>
#include <string>

namespace heron {

using Kind = FrontendError::Kind;

std::optional<Block> Switch::find_or_insert(uint64_t value, Block block) {
    if ((entries_.size() + 1) * 2 > index_.size()) {
        // Rebuild at twice the size (at least 64 slots).
        index_.assign(std::max<size_t>(64, index_.size() * 2), 0);
        for (uint32_t i = 0; i < entries_.size(); ++i) {
            size_t mask = index_.size() - 1;
            size_t h = (entries_[i].first * 0x9E3779B97F4A7C15ull) >> 20;
            while (index_[h & mask]) ++h;
            index_[h & mask] = i + 1;
        }
    }
    size_t mask = index_.size() - 1;
    for (size_t h = (value * 0x9E3779B97F4A7C15ull) >> 20;; ++h) {
        uint32_t at = index_[h & mask];
        if (at == 0) {
            entries_.emplace_back(value, block);
            index_[h & mask] = static_cast<uint32_t>(entries_.size());
            return std::nullopt;
        }
        if (entries_[at - 1].first == value) return entries_[at - 1].second;
    }
}

Result<void> Switch::try_set_entry(uint64_t value, Block block) {
    if (auto prior = find_or_insert(value, block)) {
        return FrontendError::make(Kind::DuplicateCase,
                                   "switch: case " + std::to_string(value) + " already goes to " +
                                       prior->to_string() + " (now also " + block.to_string() + ")",
                                   block);
    }
    return {};
}

void Switch::set_entry(uint64_t value, Block block) {
    auto r = try_set_entry(value, block);
    if (!r && !error_) error_ = r.error();
}

void Switch::clear() {
    entries_.clear();
    std::fill(index_.begin(), index_.end(), 0);
    error_.reset();
}

// Wraps every case to the selector's width, sorts, rejects duplicates and
// groups the cases into contiguous ranges.
Result<void> Switch::prepare(Type ty) {
    const unsigned bits = ty.bits();
    const uint64_t mask = ty.mask();
    const int64_t min_signed = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    sorted_.clear();
    for (auto [value, block] : entries_) {
        uint64_t wrapped = value;
        if (value > mask) {
            int64_t s = static_cast<int64_t>(value);
            if (s >= 0 || s < min_signed) {
                return FrontendError::make(Kind::CaseOutOfRange,
                                           "switch: case " + std::to_string(s) + " does not fit the " +
                                               std::string(ty.name()) + " selector",
                                           block);
            }
            wrapped = value & mask;
        }
        sorted_.emplace_back(wrapped, block);
    }
    std::sort(sorted_.begin(), sorted_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    ranges_.clear();
    for (uint32_t i = 0; i < sorted_.size(); ++i) {
        uint64_t v = sorted_[i].first;
        if (i > 0 && v == sorted_[i - 1].first) {
            return FrontendError::make(Kind::DuplicateCase,
                                       "switch: case " + std::to_string(v) + " appears twice once wrapped to " +
                                           std::string(ty.name()) + " (" + sorted_[i - 1].second.to_string() +
                                           " and " + sorted_[i].second.to_string() + ")",
                                       sorted_[i].second);
        }
        if (i > 0 && v == sorted_[i - 1].first + 1) {
            ranges_.back().end = i + 1;
        } else {
            ranges_.push_back(Range{v, i, i + 1});
        }
    }
    return {};
}

Result<void> Switch::emit(FunctionBuilder& b, Value selector, Block otherwise) {
    if (error_) return *error_;
    const DataFlowGraph& dfg = b.func.dfg;
    if (!b.current_block()) {
        return FrontendError::make(Kind::NoCurrentBlock, "switch: emit with no current block");
    }
    if (b.is_filled()) {
        return FrontendError::make(Kind::InstAfterTerminator,
                                   "switch: " + b.current_block()->to_string() + " already ends with a terminator",
                                   *b.current_block());
    }
    if (!otherwise.is_valid() || !dfg.block_is_valid(otherwise)) {
        return FrontendError::make(Kind::InvalidBlock, "switch: otherwise block " + otherwise.to_string() +
                                                           " does not exist");
    }
    for (auto [value, block] : entries_) {
        if (!block.is_valid() || !dfg.block_is_valid(block)) {
            return FrontendError::make(Kind::InvalidBlock, "switch: case " + std::to_string(value) + " goes to " +
                                                               block.to_string() + ", which does not exist");
        }
    }
    Type ty = selector.is_valid() && dfg.value_is_valid(selector) ? dfg.value_type(selector) : Type();
    if (!ty.is_int()) {
        return FrontendError::make(Kind::BadSelectorType,
                                   "switch: the selector " + selector.to_string() + " is " + std::string(ty.name()) +
                                       ", not an integer (i8..i64)",
                                   *b.current_block());
    }
    if (auto r = prepare(ty); !r) return r;

    tables_.clear();
    if (ranges_.empty()) {
        b.ins().jump(otherwise);
    } else if (ranges_.size() <= 3) {
        emit_chain(b, selector, otherwise, 0, static_cast<uint32_t>(ranges_.size()));
    } else {
        emit_tree(b, selector, otherwise);
    }
    for (const Table& t : tables_) emit_table(b, selector, otherwise, t);
    return {};
}

// Tests ranges_[lo, hi) from the highest down; each failed test falls to
// a fresh block, the last one to `otherwise`.
void Switch::emit_chain(FunctionBuilder& b, Value val, Block otherwise, uint32_t lo, uint32_t hi) {
    for (uint32_t k = hi; k-- > lo;) {
        const Range r = ranges_[k];
        const uint32_t len = r.end - r.begin;
        const bool last = k == lo;
        if (len > 1 && r.first == 0) {
            // Every higher range was tested already and val >= 0 always holds.
            Block table = b.create_block();
            b.ins().jump(table);
            b.seal_block(table);
            tables_.push_back(Table{k, table});
            return;
        }
        Block table = len > 1 ? b.create_block() : Block();
        Block next = last ? otherwise : b.create_block();
        if (len == 1 && r.first == 0) {
            b.ins().brif(val, next, sorted_[r.begin].second);
        } else if (len == 1) {
            Value hit = b.ins().icmp_imm(IntCC::Eq, val, static_cast<int64_t>(r.first));
            b.ins().brif(hit, sorted_[r.begin].second, next);
        } else {
            Value above = b.ins().icmp_imm(IntCC::Uge, val, static_cast<int64_t>(r.first));
            b.ins().brif(above, table, next);
            b.seal_block(table);
            tables_.push_back(Table{k, table});
        }
        if (last) return;
        b.seal_block(next);
        b.switch_to_block(next);
    }
}

// A balanced binary search over the ranges, without recursion: each stack
// entry is a block still to fill and the ranges it must tell apart.
void Switch::emit_tree(FunctionBuilder& b, Value val, Block otherwise) {
    stack_.clear();
    stack_.push_back(Pending{*b.current_block(), 0, static_cast<uint32_t>(ranges_.size())});
    while (!stack_.empty()) {
        Pending p = stack_.back();
        stack_.pop_back();
        if (b.current_block() != std::optional<Block>(p.block)) b.switch_to_block(p.block);
        if (p.hi - p.lo <= 3) {
            emit_chain(b, val, otherwise, p.lo, p.hi);
            continue;
        }
        uint32_t mid = p.lo + (p.hi - p.lo) / 2;
        Block left = b.create_block();
        Block right = b.create_block();
        Value go_right = b.ins().icmp_imm(IntCC::Uge, val, static_cast<int64_t>(ranges_[mid].first));
        b.ins().brif(go_right, right, left);
        b.seal_block(left);
        b.seal_block(right);
        stack_.push_back(Pending{left, p.lo, mid});
        stack_.push_back(Pending{right, mid, p.hi});
    }
}

// br_table on val - first; the index must be i32 (see switch.h).
void Switch::emit_table(FunctionBuilder& b, Value val, Block otherwise, const Table& t) {
    const Range r = ranges_[t.range];
    const uint32_t len = r.end - r.begin;
    b.switch_to_block(t.block);
    Type ty = b.func.dfg.value_type(val);
    Value diff = val;
    if (r.first != 0) diff = b.ins().isub(val, b.ins().iconst(ty, static_cast<int64_t>(r.first)));
    Value index = diff;
    if (ty.bits() < 32) {
        index = b.ins().uextend(types::I32, diff);
    } else if (ty.bits() > 32) {
        Block in_range = b.create_block();
        Value outside = b.ins().icmp_imm(IntCC::Uge, diff, static_cast<int64_t>(len));
        b.ins().brif(outside, otherwise, in_range);
        b.seal_block(in_range);
        b.switch_to_block(in_range);
        index = b.ins().ireduce(types::I32, diff);
    }
    targets_.clear();
    for (uint32_t i = r.begin; i < r.end; ++i) targets_.push_back(sorted_[i].second);
    JumpTable jt = b.create_jump_table(otherwise, targets_);
    b.ins().br_table(index, jt);
}

}  // namespace heron
