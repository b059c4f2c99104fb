// FuncCursor: a position in a function's layout that instructions can be
// inserted at (before the current instruction, or appended to a block) and
// removed from. It is an InstBuilder, so `cur.ins().iadd(a, b)` inserts there.
#pragma once

#include <optional>

#include "codegen/ir/builder.h"
#include "codegen/ir/function.h"

namespace heron {

class FuncCursor : public InstBuilder<FuncCursor> {
public:
    explicit FuncCursor(Function& f) : func(f) {}

    /// Inserting from here appends to `b`.
    FuncCursor& at_bottom(Block b) {
        block_ = b;
        inst_.reset();
        return *this;
    }
    /// Positions on the first instruction of `b` (insert before it).
    FuncCursor& at_first_inst(Block b) {
        block_ = b;
        inst_ = func.layout.first_inst(b);
        return *this;
    }
    /// Positions on `i` (insert before it).
    FuncCursor& at_inst(Inst i) {
        block_ = func.layout.inst_block(i);
        inst_ = i;
        return *this;
    }
    FuncCursor& ins() { return *this; }

    std::optional<Inst> current_inst() const { return inst_; }
    std::optional<Block> current_block() const { return block_; }

    /// Moves to the next instruction of the block; nullopt at the end.
    std::optional<Inst> next_inst() {
        inst_ = inst_ ? func.layout.next_inst(*inst_) : (block_ ? func.layout.first_inst(*block_) : std::nullopt);
        return inst_;
    }
    /// Removes the current instruction and moves to the next one.
    std::optional<Inst> remove_inst() {
        HERON_ASSERT(inst_ && "no current instruction");
        Inst i = *inst_;
        inst_ = func.layout.next_inst(i);
        func.layout.remove_inst(i);
        return inst_;
    }
    /// Appends a new block after the last one and positions at its bottom.
    Block insert_block() {
        Block b = func.dfg.make_block();
        func.layout.append_block(b);
        return b;
    }

    // InstBuilder hooks.
    DataFlowGraph& builder_dfg() { return func.dfg; }
    Inst build(const InstructionData& data, Type ctrl) {
        Inst i = func.dfg.make_inst(data);
        func.dfg.make_inst_results(i, ctrl);
        if (inst_) {
            func.layout.insert_inst(i, *inst_);
        } else {
            HERON_ASSERT(block_ && "cursor has no position");
            func.layout.append_inst(i, *block_);
        }
        return i;
    }

    Function& func;

private:
    std::optional<Block> block_;
    std::optional<Inst> inst_;
};

}  // namespace heron
