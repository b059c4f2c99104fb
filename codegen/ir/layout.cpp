// Layout: block and instruction order with sequence numbers.
#include "codegen/ir/layout.h"

namespace heron {

void Layout::clear() {
    blocks_.clear();
    insts_.clear();
    first_block_ = {};
    last_block_ = {};
}

// --- blocks ----------------------------------------------------------------

void Layout::append_block(Block b) {
    HERON_ASSERT(!is_block_inserted(b) && "block inserted twice");
    BlockNode& n = blocks_[b];
    n.inserted = true;
    n.prev = last_block_;
    n.next = {};
    // Appending never needs renumbering: one stride after the last.
    if (last_block_) {
        BlockNode& last = blocks_[*last_block_];
        last.next = b;
        n.seq = last.seq + kStride;
    } else {
        first_block_ = b;
        n.seq = kStride;
    }
    last_block_ = b;
}

void Layout::insert_block(Block b, Block before) {
    HERON_ASSERT(!is_block_inserted(b) && is_block_inserted(before));
    BlockNode& n = blocks_[b];
    n.inserted = true;
    n.next = before;
    n.prev = blocks_[before].prev;
    if (n.prev) {
        blocks_[*n.prev].next = b;
    } else {
        first_block_ = b;
    }
    blocks_[before].prev = b;
    assign_block_seq(b);
}

void Layout::insert_block_after(Block b, Block after) {
    HERON_ASSERT(!is_block_inserted(b) && is_block_inserted(after));
    auto next = blocks_[after].next;
    if (next) {
        insert_block(b, *next);
        return;
    }
    append_block(b);
}

void Layout::remove_block(Block b) {
    BlockNode& n = blocks_[b];
    HERON_ASSERT(n.inserted && !n.first && "only empty inserted blocks can be removed");
    if (n.prev) {
        blocks_[*n.prev].next = n.next;
    } else {
        first_block_ = n.next;
    }
    if (n.next) {
        blocks_[*n.next].prev = n.prev;
    } else {
        last_block_ = n.prev;
    }
    n = BlockNode{};
}

void Layout::assign_block_seq(Block b) {
    BlockNode& n = blocks_[b];
    uint32_t lo = n.prev ? blocks_[*n.prev].seq : 0;
    if (!n.next) {
        n.seq = lo + kStride;
        return;
    }
    uint32_t hi = blocks_[*n.next].seq;
    if (hi - lo >= 2) {
        n.seq = lo + (hi - lo) / 2;
        return;
    }
    // No gap: renumber forward until the sequence is increasing again.
    n.seq = lo + kStride;
    uint32_t last = n.seq;
    for (auto cur = n.next; cur; cur = blocks_[*cur].next) {
        BlockNode& c = blocks_[*cur];
        if (c.seq > last) break;
        c.seq = last + kStride;
        last = c.seq;
    }
}

// --- instructions ------------------------------------------------------------

void Layout::append_inst(Inst i, Block b) {
    HERON_ASSERT(is_block_inserted(b) && "append to a block not in the layout");
    InstNode& n = insts_[i];
    HERON_ASSERT(!n.block && "instruction inserted twice");
    BlockNode& bn = blocks_[b];
    n.block = b;
    n.prev = bn.last;
    n.next = {};
    // Appending never needs renumbering: one stride after the last.
    if (bn.last) {
        InstNode& last = insts_[*bn.last];
        last.next = i;
        n.seq = last.seq + kStride;
    } else {
        bn.first = i;
        n.seq = kStride;
    }
    bn.last = i;
}

void Layout::insert_inst(Inst i, Inst before) {
    InstNode& n = insts_[i];
    HERON_ASSERT(!n.block && "instruction inserted twice");
    Block b = *insts_[before].block;
    n.block = b;
    n.next = before;
    n.prev = insts_[before].prev;
    if (n.prev) {
        insts_[*n.prev].next = i;
    } else {
        blocks_[b].first = i;
    }
    insts_[before].prev = i;
    assign_inst_seq(i);
}

void Layout::insert_inst_after(Inst i, Inst after) {
    auto next = insts_[after].next;
    if (next) {
        insert_inst(i, *next);
        return;
    }
    append_inst(i, *insts_[after].block);
}

void Layout::remove_inst(Inst i) {
    InstNode& n = insts_[i];
    HERON_ASSERT(n.block && "removing an instruction not in the layout");
    BlockNode& bn = blocks_[*n.block];
    if (n.prev) {
        insts_[*n.prev].next = n.next;
    } else {
        bn.first = n.next;
    }
    if (n.next) {
        insts_[*n.next].prev = n.prev;
    } else {
        bn.last = n.prev;
    }
    n = InstNode{};
}

void Layout::assign_inst_seq(Inst i) {
    InstNode& n = insts_[i];
    uint32_t lo = n.prev ? insts_[*n.prev].seq : 0;
    if (!n.next) {
        n.seq = lo + kStride;
        return;
    }
    uint32_t hi = insts_[*n.next].seq;
    if (hi - lo >= 2) {
        n.seq = lo + (hi - lo) / 2;
        return;
    }
    n.seq = lo + kStride;
    uint32_t last = n.seq;
    for (auto cur = n.next; cur; cur = insts_[*cur].next) {
        InstNode& c = insts_[*cur];
        if (c.seq > last) break;
        c.seq = last + kStride;
        last = c.seq;
    }
}

}  // namespace heron
