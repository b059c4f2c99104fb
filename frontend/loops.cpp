// Loop scopes: canonical loops (seed 003, LoopForm) emitted directly by the
// frontend. loops.h draws the shape; this file keeps the stack of open
// loops and checks that they are used in order.
#include "frontend/loops.h"

#include <string>

namespace heron {

using Kind = FrontendError::Kind;

namespace {

FrontendError misuse(std::string msg, std::optional<Block> block = std::nullopt) {
    return FrontendError::make(Kind::LoopMisuse, std::move(msg), block);
}

}  // namespace

Result<void> LoopScopes::check_open(const FunctionBuilder& b, const char* what, uint32_t outer) const {
    if (open_.size() <= outer) {
        return misuse(std::string(what) + ": " + std::to_string(outer + 1) + " loop(s) out, but only " +
                          std::to_string(open_.size()) + " open",
                      b.current_block());
    }
    if (!b.current_block()) return FrontendError::make(Kind::NoCurrentBlock, std::string(what) + ": no current block");
    if (b.is_filled()) {
        return FrontendError::make(Kind::InstAfterTerminator,
                                   std::string(what) + ": " + b.current_block()->to_string() +
                                       " already ends with a terminator",
                                   b.current_block());
    }
    return {};
}

Result<LoopBlocks> LoopScopes::begin_loop(FunctionBuilder& b) {
    if (!b.current_block()) return FrontendError::make(Kind::NoCurrentBlock, "begin_loop: no current block");
    if (b.is_filled()) {
        return misuse("begin_loop: " + b.current_block()->to_string() +
                          " already ends with a terminator; switch to the block that enters the loop",
                      b.current_block());
    }
    LoopBlocks l;
    l.preheader = *b.current_block();
    l.header = b.create_block();
    l.body = b.create_block();
    l.latch = b.create_block();
    l.exit = b.create_block();
    b.ins().jump(l.header);
    if (auto r = b.try_switch_to_block(l.header); !r) return r.error();
    open_.push_back(Open{l, false});
    return l;
}

Result<void> LoopScopes::leave_header(FunctionBuilder& b, const char* what) {
    if (auto r = check_open(b, what, 0); !r) return r;
    const Open& l = open_.back();
    if (l.entered) return misuse(std::string(what) + ": the loop's body was already entered", b.current_block());
    if (*b.current_block() != l.blocks.header) {
        return misuse(std::string(what) + ": call it in the loop header " + l.blocks.header.to_string() + ", not " +
                          b.current_block()->to_string(),
                      b.current_block());
    }
    return {};
}

Result<void> LoopScopes::loop_while(FunctionBuilder& b, Value cond) {
    if (auto r = leave_header(b, "loop_while"); !r) return r;
    Open& l = open_.back();
    b.ins().brif(cond, l.blocks.body, l.blocks.exit);
    l.entered = true;
    if (auto r = b.try_seal_block(l.blocks.body); !r) return r;
    return b.try_switch_to_block(l.blocks.body);
}

Result<void> LoopScopes::enter_body(FunctionBuilder& b) {
    if (auto r = leave_header(b, "enter_body"); !r) return r;
    Open& l = open_.back();
    b.ins().jump(l.blocks.body);
    l.entered = true;
    if (auto r = b.try_seal_block(l.blocks.body); !r) return r;
    return b.try_switch_to_block(l.blocks.body);
}

Result<void> LoopScopes::continue_loop(FunctionBuilder& b, uint32_t outer) {
    if (auto r = check_open(b, "continue_loop", outer); !r) return r;
    const Open& l = open_[open_.size() - 1 - outer];
    if (!l.entered) return misuse("continue_loop: the loop's body has not been entered", b.current_block());
    b.ins().jump(l.blocks.latch);
    return {};
}

Result<void> LoopScopes::break_loop(FunctionBuilder& b, uint32_t outer) {
    if (auto r = check_open(b, "break_loop", outer); !r) return r;
    b.ins().jump(open_[open_.size() - 1 - outer].blocks.exit);
    return {};
}

Result<void> LoopScopes::jump_if(FunctionBuilder& b, Value cond, Block target) {
    Block next = b.create_block();
    b.ins().brif(cond, target, next);
    if (auto r = b.try_seal_block(next); !r) return r;
    return b.try_switch_to_block(next);
}

Result<void> LoopScopes::continue_if(FunctionBuilder& b, Value cond, uint32_t outer) {
    if (auto r = check_open(b, "continue_if", outer); !r) return r;
    const Open& l = open_[open_.size() - 1 - outer];
    if (!l.entered) return misuse("continue_if: the loop's body has not been entered", b.current_block());
    return jump_if(b, cond, l.blocks.latch);
}

Result<void> LoopScopes::break_if(FunctionBuilder& b, Value cond, uint32_t outer) {
    if (auto r = check_open(b, "break_if", outer); !r) return r;
    return jump_if(b, cond, open_[open_.size() - 1 - outer].blocks.exit);
}

Result<void> LoopScopes::end_loop(FunctionBuilder& b) {
    if (open_.empty()) return misuse("end_loop: no loop is open", b.current_block());
    const LoopBlocks l = open_.back().blocks;
    if (!open_.back().entered) {
        return misuse("end_loop: the header " + l.header.to_string() +
                          " never branched to the body (call loop_while or enter_body)",
                      l.header);
    }
    if (!b.current_block()) return FrontendError::make(Kind::NoCurrentBlock, "end_loop: no current block");
    if (!b.is_filled()) b.ins().jump(l.latch);
    // Every continue is known now. A body that never reaches the latch
    // leaves it out altogether (the "loop" then never repeats).
    if (b.ssa().num_predecessors(l.latch) > 0) {
        if (auto r = b.try_seal_block(l.latch); !r) return r;
        if (auto r = b.try_switch_to_block(l.latch); !r) return r;
        b.ins().jump(l.header);
    }
    if (auto r = b.try_seal_block(l.header); !r) return r;
    if (auto r = b.try_seal_block(l.exit); !r) return r;
    open_.pop_back();
    return b.try_switch_to_block(l.exit);
}

}  // namespace heron
