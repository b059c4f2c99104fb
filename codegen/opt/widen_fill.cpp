// Widen-fill: see widen_fill.h.
//
// Each counted loop is checked against the shape and rewritten at once:
// a rewrite only retargets the loop's preheader jump and adds blocks, so
// the facts of the other counted loops (their headers, latches, compares)
// stay true while the walk goes on.
#include "codegen/opt/widen_fill.h"

#include <limits>

#include "codegen/ir/cursor.h"
#include "codegen/opt/pass_manager.h"

namespace heron {

namespace {

using types::I64;
using types::I8;

constexpr int64_t kWidth = 16;  // bytes per wide iteration: two 8-byte stores

class WidenFill {
public:
    WidenFill(Function& func, const LoopAnalysis& loops) : func_(func), dfg_(func.dfg), loops_(loops) {}

    uint32_t run(const CountedLoops& counted) {
        uint32_t widened = 0;
        for (const CountedLoop& c : counted.all()) widened += try_widen(c);
        return widened;
    }

private:
    /// The fill loop's parts, once recognized.
    struct Fill {
        Block pre, header;
        Value base, value;
        Inst store;
    };

    Value resolve(Value v) const { return dfg_.value_is_alias(v) ? dfg_.resolve_aliases(v) : v; }

    /// Whether `v` is defined outside `l` (its value is the same on every
    /// iteration).
    bool outside(Loop l, Value v) const {
        const ValueDef d = dfg_.value_def(resolve(v));
        if (d.is_param()) return !loops_.contains(l, d.block());
        const auto b = func_.layout.inst_block(d.inst());
        return b && !loops_.contains(l, *b);
    }

    std::optional<uint64_t> const_bits(Value v) const {
        const ValueDef d = dfg_.value_def(resolve(v));
        if (!d.is_result() || dfg_[d.inst()].opcode != Opcode::Iconst) return std::nullopt;
        return dfg_[d.inst()].imm & dfg_.value_type(v).mask();
    }

    /// The loop's parts when it has the shape widen_fill.h describes.
    std::optional<Fill> recognize(const CountedLoop& c) const {
        if (c.step != 1 || (c.cond != IntCC::Ult && c.cond != IntCC::Slt) || dfg_.value_type(c.iv) != I64)
            return std::nullopt;
        const Loop l = c.loop;
        const Block h = loops_.header(l);
        const auto pre = loops_.preheader(l);
        const auto latches = loops_.latches(l);
        if (!pre || latches.size() != 1 || latches[0] == h || loops_.blocks(l).size() != 2) return std::nullopt;
        if (dfg_.num_block_params(h) != 1 || func_.layout.first_inst(h) != c.compare ||
            func_.layout.next_inst(c.compare) != c.branch)
            return std::nullopt;
        const Block body = latches[0];
        if (dfg_.num_block_params(body) != 0) return std::nullopt;
        const Inst pre_jump = *func_.layout.last_inst(*pre);
        if (dfg_[pre_jump].opcode != Opcode::Jump) return std::nullopt;

        // The body: exactly the address, the store, the increment, the jump.
        Inst insts[4];
        uint32_t n = 0;
        for (Inst i : func_.layout.block_insts(body)) {
            if (n == 4) return std::nullopt;
            insts[n++] = i;
        }
        if (n != 4 || dfg_[insts[3]].opcode != Opcode::Jump) return std::nullopt;
        std::optional<Inst> addr, store, incr;
        for (uint32_t k = 0; k < 3; ++k) {
            const InstructionData& d = dfg_[insts[k]];
            if (d.opcode == Opcode::Store || d.opcode == Opcode::Istore8) {
                store = insts[k];
            } else if (d.opcode == Opcode::Iadd && dfg_.first_result(insts[k]) == resolve(c.next)) {
                incr = insts[k];
            } else if (d.opcode == Opcode::Iadd) {
                addr = insts[k];
            }
        }
        if (!addr || !store || !incr) return std::nullopt;
        const InstructionData& st = dfg_[*store];
        const Value value = st.args[0];
        if (!st.flags.has(MemFlags::Notrap) || resolve(st.args[1]) != dfg_.first_result(*addr)) return std::nullopt;
        if (st.opcode == Opcode::Store && dfg_.value_type(value) != I8) return std::nullopt;
        if (!dfg_.value_type(value).is_int()) return std::nullopt;
        if (st.offset > std::numeric_limits<int32_t>::max() - 8) return std::nullopt;
        if (!outside(l, value) && !const_bits(value)) return std::nullopt;

        // The address: base + i in either order, base invariant.
        const InstructionData& ad = dfg_[*addr];
        const Value x = resolve(ad.args[0]), y = resolve(ad.args[1]);
        Value base;
        if (x == c.iv && y != c.iv) {
            base = y;
        } else if (y == c.iv && x != c.iv) {
            base = x;
        } else {
            return std::nullopt;
        }
        if (!outside(l, base)) return std::nullopt;
        return Fill{*pre, h, base, value, *store};
    }

    uint32_t try_widen(const CountedLoop& c) {
        const auto fill = recognize(c);
        if (!fill) return 0;
        const InstructionData st = dfg_[fill->store];
        const Inst pre_jump = *func_.layout.last_inst(fill->pre);
        const bool is_signed = c.cond == IntCC::Slt;
        const int64_t min = is_signed ? std::numeric_limits<int64_t>::min() : 0;
        const Value bound = c.bound;

        // Preheader: the wide loop's limit and the replicated byte.
        FuncCursor cur(func_);
        cur.at_inst(pre_jump);
        Value lim;
        if (const auto b = const_bits(bound)) {
            const int64_t sb = static_cast<int64_t>(*b);
            const bool room = is_signed ? sb >= min + (kWidth - 1) : *b >= static_cast<uint64_t>(kWidth - 1);
            lim = cur.ins().iconst(I64, room ? static_cast<int64_t>(*b - (kWidth - 1)) : min);
        } else {
            const Value lowest = cur.ins().iconst(I64, min + (kWidth - 1));
            const Value room = cur.ins().icmp(is_signed ? IntCC::Sge : IntCC::Uge, bound, lowest);
            const Value less = cur.ins().isub(bound, cur.ins().iconst(I64, kWidth - 1));
            const Value floor = cur.ins().iconst(I64, min);
            lim = cur.ins().select(room, less, floor);
        }
        constexpr uint64_t kOnes = 0x0101010101010101ull;
        Value splat;
        if (const auto v = const_bits(fill->value)) {
            splat = cur.ins().iconst(I64, static_cast<int64_t>((*v & 0xff) * kOnes));
        } else {
            Value byte = fill->value;
            if (dfg_.value_type(byte) != I8) byte = cur.ins().ireduce(I8, byte);
            const Value wide = cur.ins().uextend(I64, byte);
            splat = cur.ins().imul(wide, cur.ins().iconst(I64, static_cast<int64_t>(kOnes)));
        }

        // The wide loop and its exit, before the original header.
        const Block w = dfg_.make_block(), wbody = dfg_.make_block(), rest = dfg_.make_block();
        func_.layout.insert_block(w, fill->header);
        func_.layout.insert_block(wbody, fill->header);
        func_.layout.insert_block(rest, fill->header);
        const Value j = dfg_.append_block_param(w, I64);
        cur.at_bottom(w);
        cur.ins().brif(cur.ins().icmp(c.cond, j, lim), wbody, rest);
        cur.at_bottom(wbody);
        MemFlags flags = st.flags;
        flags.bits &= static_cast<uint8_t>(~MemFlags::Aligned);
        const Value q = cur.ins().iadd(fill->base, j);
        cur.ins().store(flags, splat, q, st.offset);
        cur.ins().store(flags, splat, q, st.offset + 8);
        cur.ins().jump(w, {cur.ins().iadd_imm(j, kWidth)});
        cur.at_bottom(rest);
        cur.ins().jump(fill->header, {j});

        // The preheader enters the wide loop with the counter's start.
        InstructionData& pj = dfg_[pre_jump];
        const Value start = pj.dests[0].arg(0, dfg_.value_lists);
        pj.dests[0].clear(dfg_.value_lists);
        pj.dests[0] = dfg_.block_call(w, {&start, 1});
        return 1;
    }

    Function& func_;
    DataFlowGraph& dfg_;
    const LoopAnalysis& loops_;
};

}  // namespace

uint32_t widen_fill_loops(Function& func, PassContext& ctx) {
    const CountedLoops* counted = ctx.counted_loops();
    if (!counted || counted->all().empty()) return 0;
    WidenFill pass(func, *ctx.loops());
    return pass.run(*counted);
}

}  // namespace heron
