// The layout: the order of blocks in a function and of instructions in a
// block, as doubly linked lists kept in side tables. Each block and each
// instruction carries a sequence number that grows along its list, so
// "does A come before B" is one comparison. Numbers are spaced out; an
// insertion that finds no gap renumbers forward only until it finds one.
#pragma once

#include <cstdint>

#include "codegen/ir/entity.h"

namespace heron {

class Layout {
public:
    void clear();

    // --- blocks -------------------------------------------------------------
    bool is_block_inserted(Block b) const { return blocks_[b].inserted; }
    void append_block(Block b);
    void insert_block(Block b, Block before);
    void insert_block_after(Block b, Block after);
    /// Unlinks an empty block.
    void remove_block(Block b);
    PackedOption<Block> entry_block() const { return first_block_; }
    PackedOption<Block> last_block() const { return last_block_; }
    PackedOption<Block> next_block(Block b) const { return blocks_[b].next; }
    PackedOption<Block> prev_block(Block b) const { return blocks_[b].prev; }
    bool is_cold(Block b) const { return blocks_[b].cold; }
    void set_cold(Block b, bool cold = true) { blocks_[b].cold = cold; }

    // --- instructions -------------------------------------------------------
    void append_inst(Inst i, Block b);
    void insert_inst(Inst i, Inst before);
    void insert_inst_after(Inst i, Inst after);
    void remove_inst(Inst i);
    PackedOption<Block> inst_block(Inst i) const { return insts_[i].block; }
    PackedOption<Inst> first_inst(Block b) const { return blocks_[b].first; }
    PackedOption<Inst> last_inst(Block b) const { return blocks_[b].last; }
    PackedOption<Inst> next_inst(Inst i) const { return insts_[i].next; }
    PackedOption<Inst> prev_inst(Inst i) const { return insts_[i].prev; }
    bool block_is_empty(Block b) const { return !blocks_[b].first.has_value(); }

    /// True if `a` comes strictly before `b` in program order. Both must be
    /// inserted.
    bool inst_before(Inst a, Inst b) const {
        const InstNode& na = insts_.get_unchecked(a);
        const InstNode& nb = insts_.get_unchecked(b);
        if (na.block == nb.block) return na.seq < nb.seq;
        return blocks_.get_unchecked(*na.block).seq < blocks_.get_unchecked(*nb.block).seq;
    }
    bool block_before(Block a, Block b) const { return blocks_.get_unchecked(a).seq < blocks_.get_unchecked(b).seq; }
    /// Whether `i` is laid out in `b`; for an instruction reached through
    /// the layout's own links (block_insts), whose node was written.
    bool linked_inst_in(Inst i, Block b) const { return insts_.get_unchecked(i).block == b; }

    // --- iteration ----------------------------------------------------------
    template <typename K, typename Next>
    struct Iter {
        const Layout* layout;
        PackedOption<K> cur;
        K operator*() const { return cur.value(); }
        Iter& operator++() {
            cur = Next{}(*layout, cur.value());
            return *this;
        }
        bool operator!=(const Iter& o) const { return cur != o.cur; }
    };
    // The current entity is in the layout, so its node was written: the
    // side tables are read without the default for keys never written.
    struct NextBlock {
        PackedOption<Block> operator()(const Layout& l, Block b) const { return l.blocks_.get_unchecked(b).next; }
    };
    struct NextInst {
        PackedOption<Inst> operator()(const Layout& l, Inst i) const { return l.insts_.get_unchecked(i).next; }
    };
    struct PrevInst {
        PackedOption<Inst> operator()(const Layout& l, Inst i) const { return l.insts_.get_unchecked(i).prev; }
    };
    template <typename It>
    struct Range {
        It b, e;
        It begin() const { return b; }
        It end() const { return e; }
    };
    using BlockIter = Iter<Block, NextBlock>;
    using InstIter = Iter<Inst, NextInst>;
    using InstRevIter = Iter<Inst, PrevInst>;

    /// Blocks in layout order.
    Range<BlockIter> blocks() const { return {{this, first_block_}, {this, {}}}; }
    /// Instructions of `b` in order. Removing the current instruction while
    /// iterating is not allowed; advance first.
    Range<InstIter> block_insts(Block b) const { return {{this, blocks_[b].first}, {this, {}}}; }
    /// Instructions of `b` from the last to the first.
    Range<InstRevIter> block_insts_reversed(Block b) const { return {{this, blocks_[b].last}, {this, {}}}; }
    /// The instructions after `i` in its block, in order, and those before
    /// it, nearest first.
    Range<InstIter> insts_after(Inst i) const { return {{this, insts_.get_unchecked(i).next}, {this, {}}}; }
    Range<InstRevIter> insts_before(Inst i) const { return {{this, insts_.get_unchecked(i).prev}, {this, {}}}; }

private:
    static constexpr uint32_t kStride = 16;

    struct BlockNode {
        PackedOption<Block> prev, next;
        PackedOption<Inst> first, last;
        uint32_t seq = 0;
        bool inserted = false;
        bool cold = false;
    };
    struct InstNode {
        PackedOption<Block> block;
        PackedOption<Inst> prev, next;
        uint32_t seq = 0;
    };

    void assign_inst_seq(Inst i);
    void assign_block_seq(Block b);

    SecondaryMap<Block, BlockNode> blocks_;
    SecondaryMap<Inst, InstNode> insts_;
    PackedOption<Block> first_block_, last_block_;
};

}  // namespace heron
