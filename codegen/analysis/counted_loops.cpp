// CountedLoops: one look at each loop's header branch, its compare, the
// header parameter's incoming values and the increment (counted_loops.h).
// Range arithmetic is done in 128 bits so that no bound near the type's
// edges can overflow the host computation.
#include "codegen/analysis/counted_loops.h"

namespace heron {

namespace {

using Wide = __int128;

std::optional<uint64_t> const_bits(const DataFlowGraph& dfg, Value v) {
    v = dfg.resolve_aliases(v);
    const ValueDef def = dfg.value_def(v);
    if (!def.is_result() || dfg[def.inst()].opcode != Opcode::Iconst) return std::nullopt;
    return dfg[def.inst()].imm & dfg.value_type(v).mask();
}

/// The value of B-bit `bits` under the compare's signedness.
Wide read(uint64_t bits, unsigned width, bool is_signed) {
    if (!is_signed) return static_cast<Wide>(bits);
    const uint64_t sign = uint64_t{1} << (width - 1);
    return bits & sign ? static_cast<Wide>(bits) - (static_cast<Wide>(1) << width) : static_cast<Wide>(bits);
}

Wide max_of(unsigned width, bool is_signed) {
    return is_signed ? (static_cast<Wide>(1) << (width - 1)) - 1 : (static_cast<Wide>(1) << width) - 1;
}

Wide min_of(unsigned width, bool is_signed) { return is_signed ? -(static_cast<Wide>(1) << (width - 1)) : 0; }

std::string wide_string(Wide w) {
    if (w == 0) return "0";
    const bool neg = w < 0;
    std::string out;
    for (; w != 0; w /= 10) out.insert(out.begin(), static_cast<char>('0' + (neg ? -(w % 10) : w % 10)));
    return neg ? "-" + out : out;
}

bool is_invariant(const Function& func, const LoopAnalysis& loops, Loop l, Value v) {
    v = func.dfg.resolve_aliases(v);
    const ValueDef def = func.dfg.value_def(v);
    if (def.is_param()) return !loops.contains(l, def.block());
    if (!def.is_result()) return false;
    if (func.dfg[def.inst()].opcode == Opcode::Iconst) return true;
    auto block = func.layout.inst_block(def.inst());
    return block && !loops.contains(l, *block);
}

/// The single value every destination into `header` from `branches` passes
/// as parameter k; none if they differ.
template <typename Edges, typename InstOf>
std::optional<Value> common_arg(const DataFlowGraph& dfg, Block header, uint32_t k, const Edges& edges, InstOf inst_of) {
    std::optional<Value> common;
    for (const auto& e : edges) {
        for (const BlockCall& d : dfg.branch_destinations(inst_of(e))) {
            if (d.block(dfg.value_lists) != header) continue;
            const Value a = dfg.resolve_aliases(d.arg(k, dfg.value_lists));
            if (common && *common != a) return std::nullopt;
            common = a;
        }
    }
    return common;
}

}  // namespace

void CountedLoops::clear() {
    counted_.clear();
    index_.clear();
    valid_ = false;
}

void CountedLoops::compute(const Function& func, const LoopAnalysis& loops) {
    clear();
    index_.assign(loops.num_loops(), kNone);
    for (Loop l : loops.loops()) {
        if (auto c = recognize(func, loops, l)) {
            index_[l.index()] = static_cast<uint32_t>(counted_.size());
            counted_.push_back(*c);
        }
    }
    valid_ = true;
}

std::optional<CountedLoop> CountedLoops::recognize(const Function& func, const LoopAnalysis& loops, Loop l) const {
    const DataFlowGraph& dfg = func.dfg;
    const Block h = loops.header(l);
    const auto term = func.layout.last_inst(h);
    if (!term || dfg[*term].opcode != Opcode::Brif) return std::nullopt;
    const InstructionData& br = dfg[*term];
    const bool then_in = loops.contains(l, br.dests[0].block(dfg.value_lists));
    const bool else_in = loops.contains(l, br.dests[1].block(dfg.value_lists));
    if (then_in == else_in) return std::nullopt;

    const Value c = dfg.resolve_aliases(br.args[0]);
    const ValueDef cdef = dfg.value_def(c);
    if (!cdef.is_result() || dfg[cdef.inst()].opcode != Opcode::Icmp) return std::nullopt;
    const InstructionData& cmp = dfg[cdef.inst()];
    const Value x = dfg.resolve_aliases(cmp.args[0]);
    const Value y = dfg.resolve_aliases(cmp.args[1]);
    auto param_index = [&](Value v) -> std::optional<uint32_t> {
        const ValueDef d = dfg.value_def(v);
        if (d.is_param() && d.block() == h) return d.num;
        return std::nullopt;
    };
    CountedLoop r;
    r.loop = l;
    r.compare = cdef.inst();
    r.branch = *term;
    IntCC cc = cmp.intcc();
    if (auto k = param_index(x); k && is_invariant(func, loops, l, y)) {
        r.iv = x;
        r.iv_index = *k;
        r.bound = y;
    } else if (auto k2 = param_index(y); k2 && is_invariant(func, loops, l, x)) {
        r.iv = y;
        r.iv_index = *k2;
        r.bound = x;
        cc = intcc_swap(cc);
    } else {
        return std::nullopt;
    }
    if (!then_in) cc = intcc_inverse(cc);
    if (cc != IntCC::Slt && cc != IntCC::Sle && cc != IntCC::Ult && cc != IntCC::Ule) return std::nullopt;
    r.cond = cc;

    auto init = common_arg(dfg, h, r.iv_index, loops.entries(l), [](const LoopEdge& e) { return e.inst; });
    auto next = common_arg(dfg, h, r.iv_index, loops.latches(l), [&](Block b) { return *func.layout.last_inst(b); });
    if (!init || !next) return std::nullopt;
    r.init = *init;
    r.next = *next;
    const ValueDef ndef = dfg.value_def(r.next);
    if (!ndef.is_result() || dfg[ndef.inst()].opcode != Opcode::Iadd) return std::nullopt;
    const InstructionData& add = dfg[ndef.inst()];
    const Value p = dfg.resolve_aliases(add.args[0]), q = dfg.resolve_aliases(add.args[1]);
    if (p != r.iv && q != r.iv) return std::nullopt;
    const std::optional<uint64_t> step = const_bits(dfg, p == r.iv ? q : p);
    const unsigned width = dfg.value_type(r.iv).bits();
    const uint64_t s = step.value_or(0);
    if (s == 0 || s >= (uint64_t{1} << (width - 1))) return std::nullopt;
    r.step = s;

    if (r.step == 1 && !r.inclusive()) return r;
    if (auto b = const_bits(dfg, r.bound)) {
        const Wide last = read(*b, width, r.is_signed()) + static_cast<Wide>(r.step) - (r.inclusive() ? 0 : 1);
        if (last <= max_of(width, r.is_signed())) return r;
        return std::nullopt;
    }
    if (r.step == 1) {
        r.no_exit_at_max = true;
        return r;
    }
    return std::nullopt;
}

uint64_t CountedLoops::trip_count(uint64_t a, uint64_t b, unsigned width, uint64_t step, IntCC cond) {
    const bool sgn = cond == IntCC::Slt || cond == IntCC::Sle;
    const bool inclusive = cond == IntCC::Sle || cond == IntCC::Ule;
    const Wide av = read(a, width, sgn);
    const Wide top = read(b, width, sgn) - (inclusive ? 0 : 1);  // below the minimum: empty
    if (av > top) return 0;
    return static_cast<uint64_t>((top - av) / static_cast<Wide>(step) + 1);
}

std::string CountedLoops::describe(const Function& func, Loop l) const {
    const CountedLoop* c = get(l);
    if (!c) return "conditional";
    const DataFlowGraph& dfg = func.dfg;
    const unsigned width = dfg.value_type(c->iv).bits();
    const bool sgn = c->is_signed();
    auto a = const_bits(dfg, c->init);
    auto b = const_bits(dfg, c->bound);
    std::string lo = a ? wide_string(read(*a, width, sgn)) : c->init.to_string();
    std::string hi;
    bool empty = false;
    if (b) {
        const Wide bv = read(*b, width, sgn);
        if (!c->inclusive() && bv == min_of(width, sgn)) {
            empty = true;  // nothing is below the minimum: never b - 1
            hi = wide_string(bv) + "-1";
        } else {
            hi = wide_string(c->inclusive() ? bv : bv - 1);
        }
    } else {
        hi = c->bound.to_string() + (c->inclusive() ? "" : "-1");
    }
    std::string out = "counted " + c->iv.to_string() + " in [" + lo + ", " + hi + "] step " +
                      std::to_string(c->step) + " " + std::string(intcc_name(c->cond));
    if (a && b && !empty) {
        const uint64_t n = trip_count(*a, *b, width, c->step, c->cond);
        if (n == 0) empty = true;
        else out += " (" + wide_string(n) + " iterations)";
    }
    if (empty) out += " (empty)";
    if (c->no_exit_at_max) out += " (no exit when " + c->bound.to_string() + " = MAX)";
    return out;
}

}  // namespace heron
