// A small builder of ra::Function for hand-written allocator tests: blocks in
// emission order, instructions as operand lists, edges with branch arguments.
// Predecessor lists, CSR offsets and clobber order are derived in finish().
#pragma once

#include <cassert>
#include <vector>

#include "codegen/regalloc/regalloc.h"

namespace heron::ra::testing {

class FunctionBuilder {
public:
    VReg int_vreg() { return VReg(num_vregs_++, RegClass::Int); }
    VReg float_vreg() { return VReg(num_vregs_++, RegClass::Float); }

    uint32_t block(uint32_t loop_depth = 0) {
        blocks_.push_back({});
        blocks_.back().depth = loop_depth;
        return static_cast<uint32_t>(blocks_.size() - 1);
    }
    VReg param(uint32_t b, RegClass cls = RegClass::Int) {
        VReg v(num_vregs_++, cls);
        blocks_[b].params.push_back(v);
        return v;
    }
    /// Appends an instruction to block b; returns its index within the block.
    uint32_t inst(uint32_t b, std::vector<Operand> ops, uint8_t flags = 0, PRegSet clobbers = {}) {
        blocks_[b].insts.push_back({std::move(ops), flags, clobbers});
        return static_cast<uint32_t>(blocks_[b].insts.size() - 1);
    }
    void jump(uint32_t b, uint32_t to, std::vector<VReg> args = {}) {
        inst(b, {}, inst_flags::kTerminator);
        blocks_[b].succs.push_back({to, std::move(args)});
    }
    void branch(uint32_t b, VReg cond, uint32_t t1, std::vector<VReg> a1, uint32_t t2, std::vector<VReg> a2) {
        inst(b, {Operand::use(cond)}, inst_flags::kTerminator);
        blocks_[b].succs.push_back({t1, std::move(a1)});
        blocks_[b].succs.push_back({t2, std::move(a2)});
    }
    void ret(uint32_t b, std::vector<Operand> ops) { inst(b, std::move(ops), inst_flags::kTerminator | inst_flags::kReturn); }

    Function finish() const {
        Function f;
        f.num_vregs = num_vregs_;
        std::vector<std::vector<uint32_t>> preds(blocks_.size());
        for (uint32_t b = 0; b < blocks_.size(); ++b)
            for (const Succ& s : blocks_[b].succs) preds[s.block].push_back(b);
        for (uint32_t b = 0; b < blocks_.size(); ++b) {
            const Block& blk = blocks_[b];
            f.block_insts_begin.push_back(static_cast<uint32_t>(f.flags.size()));
            for (const Inst& in : blk.insts) {
                if (!in.clobbers.empty()) f.clobbers.push_back({static_cast<uint32_t>(f.flags.size()), in.clobbers});
                f.operands_begin.push_back(static_cast<uint32_t>(f.operands.size()));
                f.operands.insert(f.operands.end(), in.ops.begin(), in.ops.end());
                f.flags.push_back(in.flags);
            }
            f.succs_begin.push_back(static_cast<uint32_t>(f.succs.size()));
            for (const Succ& s : blk.succs) {
                f.succs.push_back(s.block);
                f.branch_args_begin.push_back(static_cast<uint32_t>(f.branch_args.size()));
                f.branch_args.insert(f.branch_args.end(), s.args.begin(), s.args.end());
            }
            f.preds_begin.push_back(static_cast<uint32_t>(f.preds.size()));
            f.preds.insert(f.preds.end(), preds[b].begin(), preds[b].end());
            f.params_begin.push_back(static_cast<uint32_t>(f.params.size()));
            f.params.insert(f.params.end(), blk.params.begin(), blk.params.end());
            f.loop_depth.push_back(blk.depth);
        }
        f.block_insts_begin.push_back(static_cast<uint32_t>(f.flags.size()));
        f.operands_begin.push_back(static_cast<uint32_t>(f.operands.size()));
        f.succs_begin.push_back(static_cast<uint32_t>(f.succs.size()));
        f.branch_args_begin.push_back(static_cast<uint32_t>(f.branch_args.size()));
        f.preds_begin.push_back(static_cast<uint32_t>(f.preds.size()));
        f.params_begin.push_back(static_cast<uint32_t>(f.params.size()));
        return f;
    }

    /// Index of instruction k of block b in the finished function.
    uint32_t inst_index(uint32_t b, uint32_t k) const {
        uint32_t n = 0;
        for (uint32_t x = 0; x < b; ++x) n += static_cast<uint32_t>(blocks_[x].insts.size());
        return n + k;
    }

private:
    struct Inst {
        std::vector<Operand> ops;
        uint8_t flags;
        PRegSet clobbers;
    };
    struct Succ {
        uint32_t block;
        std::vector<VReg> args;
    };
    struct Block {
        std::vector<VReg> params;
        std::vector<Inst> insts;
        std::vector<Succ> succs;
        uint32_t depth = 0;
    };
    std::vector<Block> blocks_;
    uint32_t num_vregs_ = 0;
};

}  // namespace heron::ra::testing
