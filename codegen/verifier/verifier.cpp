// The IR verifier. It checks, and reports every violation of, what later
// stages assume (ir-reference.md sections 1-2, 12.3, 14 and each opcode's
// typing): declarations, the entry block, block structure, SSA definedness
// and dominance, operand and result types per the opcode table's Typing
// column, block arguments, returns, calls and tail calls.
//
// It must survive anything the parser (or a buggy pass) can produce:
// dangling value/block/instruction/entity references, values that are
// listed by two owners, placeholders that were never attached, alias
// cycles, malformed layouts. Every reference is checked before it is
// followed, and checks that depend on something already found broken are
// skipped instead of reporting the same fault again.
//
// Order of work: declarations; the dominator tree (Dominance, or the CFG
// and DominatorTree a caller asks for with VerifierAnalyses; none for a
// single block); one pass over the values (aliases resolved there, cycles
// found); then each block in layout order and each of its instructions.
// Uses in unreachable blocks are checked for definedness but not for
// dominance, as in Cranelift.
//
// Speed: most of what the walk meets is checked by quick paths that only
// answer yes (nothing to report; the definitions entered) or no (the full
// checks run and report exactly what they always did): quick_inst and its
// special kinds, quick_return, and the common cases of block parameters,
// the entry block and signatures. detail::set_verifier_quick_paths(false)
// turns them off, for the tests that compare both.
#include "codegen/verifier/verifier.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string_view>
#include <utility>

#include "codegen/analysis/cfg.h"
#include "codegen/analysis/dominator_tree.h"
#include "codegen/ir/prefetch.h"
#include "codegen/ir/printer.h"

namespace heron {

namespace {

std::string str(Type t) { return std::string(t.name()); }

std::string plural(size_t n, std::string_view noun) {
    std::string s = std::to_string(n) + " " + std::string(noun);
    if (n != 1) s += 's';
    return s;
}

std::string abi_types(const std::vector<AbiParam>& params) {
    std::string s = "(";
    for (size_t i = 0; i < params.size(); ++i) {
        if (i) s += ", ";
        s += str(params[i].type);
    }
    return s + ")";
}

bool same_types(const std::vector<AbiParam>& a, const std::vector<AbiParam>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].type != b[i].type) return false;
    }
    return true;
}

/// A set of types, for "expected i16, i32 or i64"-style checks and messages.
class TypeSet {
public:
    constexpr TypeSet(std::initializer_list<Type> types) {
        for (Type t : types) {
            if (t.is_valid()) bits_ |= bit(t);  // bit 0 stays clear: no set holds the invalid type
        }
    }
    constexpr bool contains(Type t) const { return ((bits_ >> (t.code() & 31)) & (t.code() < 32)) != 0; }
    constexpr bool operator==(const TypeSet& o) const { return bits_ == o.bits_; }
    /// "an integer type", "i32 or i64", ...
    std::string describe() const;

private:
    static constexpr uint32_t bit(Type t) { return t.code() < 32 ? uint32_t{1} << t.code() : 0; }
    uint32_t bits_ = 0;
};

constexpr TypeSet kAnyInt{types::I8, types::I16, types::I32, types::I64};
constexpr TypeSet kAnyFloat{types::F32, types::F64};
constexpr TypeSet kAnyScalar{types::I8, types::I16, types::I32, types::I64, types::F32, types::F64};

std::string TypeSet::describe() const {
    if (*this == kAnyInt) return "an integer type";
    if (*this == kAnyFloat) return "a float type";
    if (*this == kAnyScalar) return "an integer or float type";
    std::vector<std::string> names;
    for (unsigned c = Type::I8; c <= Type::F64; ++c) {
        Type t(static_cast<Type::Code>(c));
        if (contains(t)) names.push_back(str(t));
    }
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i) s += i + 1 == names.size() ? " or " : ", ";
        s += names[i];
    }
    return s;
}

/// The typing classes whose rule is "operands 0..n-1 have the type of
/// operand `ref`, which is in `allowed`" (some with a further check of
/// their own, in verify_typing).
struct UniformRule {
    unsigned n = 0, ref = 0;
    TypeSet allowed{};
};
constexpr std::optional<UniformRule> uniform_rule(Typing typing) {
    switch (typing) {
    case Typing::Int1: return UniformRule{1, 0, kAnyInt};
    case Typing::Int2:
    case Typing::IntOverflow:
    case Typing::IntCmp: return UniformRule{2, 0, kAnyInt};
    case Typing::IntCarry: return UniformRule{2, 1, kAnyInt};
    case Typing::IntAddTrap: return UniformRule{2, 0, TypeSet{types::I32, types::I64}};
    case Typing::Bitwise1: return UniformRule{1, 0, kAnyScalar};
    case Typing::Bitwise2: return UniformRule{2, 0, kAnyScalar};
    case Typing::Bitwise3: return UniformRule{3, 1, kAnyScalar};
    case Typing::Bswap: return UniformRule{1, 0, TypeSet{types::I16, types::I32, types::I64}};
    case Typing::FloatCmp: return UniformRule{2, 0, kAnyFloat};
    case Typing::Float1: return UniformRule{1, 0, kAnyFloat};
    case Typing::Float2: return UniformRule{2, 0, kAnyFloat};
    case Typing::Float3: return UniformRule{3, 1, kAnyFloat};
    default: return std::nullopt;
    }
}

/// The types a load's `.T` may have.
TypeSet load_types(Opcode op) {
    switch (op) {
    case Opcode::Uload8:
    case Opcode::Sload8: return TypeSet{types::I16, types::I32, types::I64};
    case Opcode::Uload16:
    case Opcode::Sload16: return TypeSet{types::I32, types::I64};
    case Opcode::Uload32:
    case Opcode::Sload32: return TypeSet{types::I64};
    default: return kAnyScalar;
    }
}

/// The types a store's value operand may have.
TypeSet store_types(Opcode op) {
    switch (op) {
    case Opcode::Istore8: return TypeSet{types::I16, types::I32, types::I64};
    case Opcode::Istore16: return TypeSet{types::I32, types::I64};
    case Opcode::Istore32: return TypeSet{types::I64};
    default: return kAnyScalar;
    }
}

/// How Verifier::quick_inst finishes an opcode's typing check (what
/// verify_typing accepts silently beyond the uniform rule).
enum class QuickTyping : uint8_t {
    Done,       // nothing more (or the uniform rule alone)
    IntConst,   // `.T` an integer type holding the immediate
    F32Const,   // immediate within 32 bits
    IntCarry,   // operand 2 is i8
    TrapCode,   // a trap code (code != 0)
    IntCC,      // code < kNumIntCC
    FloatCC,    // code < kNumFloatCC
    Shift,      // operands 0 and 1 integers
    Condition,  // operand 0 an integer (and a trap code for trapz/trapnz)
    Load,       // `.T` in `memory`, operand 0 a pointer, endianness
    Store,      // operand 0 in `memory`, operand 1 a pointer, not readonly, endianness
    Slow,       // verify_typing
};

/// Where an opcode's controlling type comes from (ctrl_type).
enum class QuickCtrl : uint8_t { Suffix, Arg0, Arg1, Fixed };

/// The most common shapes, which quick_inst checks in a path of their own
/// (the same answers as its general path, in fewer steps).
enum class QuickKind : uint8_t {
    General,
    Binary,      // two operands of one type in `uniform.allowed`, one result of that type
    IntBinary,   // two integer operands (shifts), one result of operand 0's type
    IntConst,    // iconst: one result of the integer type `.T`, the immediate within it
    IntCmp,      // icmp: two operands of one integer type, a condition code, one i8 result
    Load,        // a pointer operand, `.T` in `memory`, one result of type `.T`
    Store,       // a value in `memory` and a pointer, no results
    Jump,        // no operands or results, one destination
    Brif,        // an integer condition, no results, two destinations
};

/// What the walk needs of an opcode, in one table read instead of calls of
/// InstructionData::num_fixed_args and DataFlowGraph::fixed_result_types
/// (out of line) and several opcode_info reads for every instruction.
/// Built from those at startup, for every byte an opcode can hold.
struct OpcodeShape {
    enum Flag : uint8_t { kQuick = 1, kTerminator = 2, kBranch = 4, kCall = 8, kReturn = 16 };
    uint8_t flags = 0;
    uint8_t fixed_args = 0;
    uint8_t fixed_results = 0;  // when the opcode's result count is fixed
    uint8_t dests = 0;          // jump 1, brif 2 (in `dests`); quick_inst checks them as verify_branch
    QuickTyping typing = QuickTyping::Slow;
    QuickCtrl ctrl = QuickCtrl::Fixed;
    QuickKind kind = QuickKind::General;
    Type fixed_ctrl;            // QuickCtrl::Fixed
    UniformRule uniform;        // n == 0: the typing class is not uniform
    TypeSet memory{};           // Load: `.T`; Store: the value operand
    /// Result types by the controlling type's code, for the codes below
    /// kShapeTypeCodes (larger codes ask fixed_result_types itself).
    Type result[8][2];
};
constexpr unsigned kShapeTypeCodes = 8;

QuickTyping quick_typing(const OpcodeInfo& info) {
    switch (info.typing) {
    case Typing::NoTyping:
    case Typing::F64Const: return QuickTyping::Done;
    case Typing::IntConst: return QuickTyping::IntConst;
    case Typing::F32Const: return QuickTyping::F32Const;
    case Typing::IntCarry: return QuickTyping::IntCarry;
    case Typing::IntAddTrap: return QuickTyping::TrapCode;
    case Typing::IntCmp: return QuickTyping::IntCC;
    case Typing::FloatCmp: return QuickTyping::FloatCC;
    case Typing::Shift: return QuickTyping::Shift;
    case Typing::Condition: return QuickTyping::Condition;
    case Typing::Load: return QuickTyping::Load;
    case Typing::Store: return QuickTyping::Store;
    default:  // the uniform rule alone, or verify_typing
        return uniform_rule(info.typing) ? QuickTyping::Done : QuickTyping::Slow;
    }
}

std::array<OpcodeShape, 256> build_opcode_shapes() {
    std::array<OpcodeShape, 256> shapes{};
    for (unsigned op = 0; op < 256; ++op) {
        OpcodeShape& s = shapes[op];
        InstructionData d;
        d.opcode = static_cast<Opcode>(op);
        const OpcodeInfo& info = opcode_info(d.opcode);
        s.fixed_args = static_cast<uint8_t>(d.num_fixed_args());
        if (is_terminator(d.opcode)) s.flags |= OpcodeShape::kTerminator;
        if (is_branch(d.opcode)) s.flags |= OpcodeShape::kBranch;
        if (is_call(d.opcode)) s.flags |= OpcodeShape::kCall;
        if (d.opcode == Opcode::Return) s.flags |= OpcodeShape::kReturn;
        if (info.results == kVarResults) continue;
        for (unsigned c = 0; c < kShapeTypeCodes; ++c) {
            s.fixed_results = static_cast<uint8_t>(
                DataFlowGraph::fixed_result_types(info, Type(static_cast<Type::Code>(c)), s.result[c]));
        }
        if (const auto rule = uniform_rule(info.typing)) s.uniform = *rule;
        if (info.typing == Typing::Load) s.memory = load_types(d.opcode);
        if (info.typing == Typing::Store) s.memory = store_types(d.opcode);
        s.typing = quick_typing(info);
        if (info.format == InstructionFormat::Trap) {  // verify_typing's last check
            s.typing = s.typing == QuickTyping::Done ? QuickTyping::TrapCode : QuickTyping::Slow;
        }
        unsigned ctrl_args = 0;  // operands the controlling type needs
        switch (info.ctrl) {
        case CtrlSource::Result: s.ctrl = QuickCtrl::Suffix; break;
        case CtrlSource::Arg0:
            s.ctrl = QuickCtrl::Arg0;
            ctrl_args = 1;
            break;
        case CtrlSource::Arg1:
            s.ctrl = QuickCtrl::Arg1;
            ctrl_args = 2;
            break;
        case CtrlSource::None:
            s.fixed_ctrl = info.typing == Typing::F32Const   ? types::F32
                           : info.typing == Typing::F64Const ? types::F64
                                                             : Type();
            break;
        }
        unsigned typing_args = std::max(ctrl_args, s.uniform.n);
        if (s.typing == QuickTyping::IntCarry) typing_args = 3;
        if (s.typing == QuickTyping::Shift || s.typing == QuickTyping::Store) typing_args = 2;
        if (s.typing == QuickTyping::Condition || s.typing == QuickTyping::Load) typing_args = 1;
        if (info.format == InstructionFormat::Jump) s.dests = 1;
        if (info.format == InstructionFormat::Brif) s.dests = 2;
        if (op < kNumOpcodes && (!is_branch(d.opcode) || s.dests != 0) && !is_call(d.opcode) &&
            typing_args <= s.fixed_args) {
            s.flags |= OpcodeShape::kQuick;
        }
        // The special paths, where the general one would check exactly
        // what they check.
        if (!(s.flags & OpcodeShape::kQuick)) continue;
        if (s.dests != 0) {  // no results, no typing beyond brif's condition
            if (s.fixed_results != 0) continue;
            if (s.dests == 1 && s.fixed_args == 0 && s.ctrl == QuickCtrl::Fixed && !s.fixed_ctrl.is_valid() &&
                s.typing == QuickTyping::Done && s.uniform.n == 0) {
                s.kind = QuickKind::Jump;
            } else if (s.dests == 2 && s.fixed_args == 1 && s.ctrl == QuickCtrl::Arg0 &&
                       s.typing == QuickTyping::Condition && s.uniform.n == 0 &&
                       info.format != InstructionFormat::CondTrap) {
                s.kind = QuickKind::Brif;
            }
            continue;
        }
        bool result_is_ctrl = s.fixed_results == 1, result_is_i8 = s.fixed_results == 1;
        for (unsigned c = Type::I8; c <= Type::F64; ++c) {
            result_is_ctrl &= s.result[c][0] == Type(static_cast<Type::Code>(c));
            result_is_i8 &= s.result[c][0] == types::I8;
        }
        if (s.ctrl == QuickCtrl::Arg0 && s.fixed_args == 2 && s.typing == QuickTyping::IntCC && s.uniform.n == 2 &&
            s.uniform.ref == 0 && s.uniform.allowed == kAnyInt && result_is_i8) {
            s.kind = QuickKind::IntCmp;
        } else if (s.ctrl == QuickCtrl::Arg0 && s.fixed_args == 2 && s.typing == QuickTyping::Store &&
                   s.uniform.n == 0 && s.fixed_results == 0) {
            s.kind = QuickKind::Store;
        }
        if (!result_is_ctrl) continue;
        if (s.ctrl == QuickCtrl::Arg0 && s.fixed_args == 2 && s.typing == QuickTyping::Done && s.uniform.n == 2 &&
            s.uniform.ref == 0) {
            s.kind = QuickKind::Binary;
        } else if (s.ctrl == QuickCtrl::Arg0 && s.fixed_args == 2 && s.typing == QuickTyping::Shift && s.uniform.n == 0) {
            s.kind = QuickKind::IntBinary;
            s.uniform.allowed = kAnyInt;  // for the path's test only (n stays 0)
        } else if (s.ctrl == QuickCtrl::Suffix && s.fixed_args == 0 && s.typing == QuickTyping::IntConst) {
            s.kind = QuickKind::IntConst;
        } else if (s.ctrl == QuickCtrl::Suffix && s.fixed_args == 1 && s.typing == QuickTyping::Load &&
                   s.uniform.n == 0) {
            s.kind = QuickKind::Load;
        }
    }
    return shapes;
}

// Initialized before main (no guard on each read).
const std::array<OpcodeShape, 256> kOpcodeShapes = build_opcode_shapes();

/// What verify_signature accepts silently: every type supported, extensions
/// on integers only.
bool signature_is_fine(const Signature& sig) {
    bool ok = true;
    for (const AbiParam& p : sig.params) ok &= kAnyScalar.contains(p.type) && (p.ext == ArgExt::None || p.type.is_int());
    for (const AbiParam& p : sig.returns) ok &= kAnyScalar.contains(p.type) && (p.ext == ArgExt::None || p.type.is_int());
    return ok;
}

/// Whether print_inst can print `d` (it indexes name tables by code).
bool printable(const InstructionData& d) {
    if (d.format() == InstructionFormat::IntCompare) return d.code < kNumIntCC;
    if (d.format() == InstructionFormat::FloatCompare) return d.code < kNumFloatCC;
    return true;
}


/// The dominator tree the verifier needs, over the control-flow graph
/// ControlFlowGraph::compute defines (edges from the last instruction of
/// each block in the layout to its destinations that are valid blocks in
/// the layout), computed here without building that graph: a depth-first
/// walk from the entry block, then Cooper, Harvey and Kennedy's iteration
/// over reverse postorder ("A Simple, Fast Dominance Algorithm", 2001), then
/// preorder and postorder numbers of the tree, so that a dominates b when
/// pre(a) <= pre(b) && post(b) <= post(a). The same relation as
/// DominatorTree (a dominator tree is unique); the numbers may differ.
class Dominance {
public:
    void compute(const Function& func);
    bool reachable(Block b) const { return b.index() < order_.size() && order_[b.index()] != 0; }
    /// For reachable blocks only.
    uint32_t preorder(Block b) const { return pre_[b.index()]; }
    uint32_t postorder(Block b) const { return post_[b.index()]; }
    bool dominates(Block a, Block b) const {
        return reachable(a) && reachable(b) && pre_[a.index()] <= pre_[b.index()] &&
               post_[b.index()] <= post_[a.index()];
    }

private:
    /// Calls f(target) for each edge out of `b` (ControlFlowGraph::compute's
    /// test, duplicates included).
    template <typename F>
    static void for_each_successor(const Function& func, Block b, F&& f);

    std::vector<uint32_t> order_;  // by block: 1 + postorder number, 0 when unreachable
    std::vector<uint32_t> pre_, post_;  // by block: the tree's numbers
    std::vector<Block> blocks_;       // by postorder number
    std::vector<uint32_t> idom_;      // by postorder number
    std::vector<uint32_t> begin_;     // rows of preds_ / children_ by postorder number
    std::vector<uint32_t> list_;      // predecessors, then children, by postorder number
    std::vector<uint32_t> slot_;      // the next free place in each row while filling them
    std::vector<std::pair<uint32_t, uint32_t>> edges_;  // (from, to) blocks, then postorder numbers
    /// From this many blocks, compute() gathers the successors first.
    static constexpr uint32_t kGatherFrom = 1024;
    std::vector<std::pair<uint32_t, uint32_t>> row_;    // by block: its successors, succs_[first, second)
    std::vector<uint32_t> succs_;
    std::vector<Block> layout_blocks_;
    std::vector<std::pair<uint32_t, uint32_t>> stack_;
};

template <typename F>
void Dominance::for_each_successor(const Function& func, Block b, F&& f) {
    const DataFlowGraph& dfg = func.dfg;
    const Layout& layout = func.layout;
    const PackedOption<Inst> last = layout.last_inst(b);
    if (!last || !dfg.inst_is_valid(*last)) return;
    const InstructionData& d = dfg[*last];
    std::span<const BlockCall> dests;
    switch (d.format()) {
    case InstructionFormat::Jump: dests = {d.dests.data(), 1}; break;
    case InstructionFormat::Brif: dests = {d.dests.data(), 2}; break;
    case InstructionFormat::BranchTable:
        if (!dfg.jump_tables.is_valid(d.jump_table())) return;
        dests = dfg.jump_tables[d.jump_table()].all;
        break;
    default: return;
    }
    const uint32_t num_blocks = dfg.num_blocks();
    for (const BlockCall& dest : dests) {
        if (!dest.is_valid()) continue;
        const Block to = dest.block(dfg.value_lists);
        if (to.index() >= num_blocks || !layout.is_block_inserted(to)) continue;
        f(to.index());
    }
}

void Dominance::compute(const Function& func) {
    const uint32_t nb = func.dfg.num_blocks();
    order_.assign(nb, 0);
    blocks_.clear();
    edges_.clear();
    const PackedOption<Block> entry = func.layout.entry_block();
    if (!entry || entry->index() >= nb) return;
    // In a large function, every block's successors first, in one pass in
    // layout order: the loads of one block do not wait for another's,
    // where the search below, reading terminators as it goes, would take
    // the cache misses one at a time (block, terminator, successor, its
    // terminator, ...), with each terminator prefetched a few blocks ahead.
    // A small function's blocks are in cache: the search reads them.
    const bool gathered = nb >= kGatherFrom;
    if (gathered) {
        row_.assign(nb, {0, 0});  // blocks not in the layout: empty rows
        succs_.clear();
        for_each_block_prefetching_terminators(func, layout_blocks_, [&](Block b) {
            const auto first = static_cast<uint32_t>(succs_.size());
            for_each_successor(func, b, [&](uint32_t to) { succs_.push_back(to); });
            row_[b.index()] = {first, static_cast<uint32_t>(succs_.size())};
        });
    }
    // Depth-first from the entry: a block is visited when popped unvisited;
    // its (block, ~0) entry below its successors gives its postorder number
    // once they are done. order_ is UINT32_MAX while a block is open.
    stack_.clear();
    stack_.push_back({entry->index(), 0});
    while (!stack_.empty()) {
        const uint32_t b = stack_.back().first;
        const bool closing = stack_.back().second != 0;
        stack_.pop_back();
        if (closing) {
            order_[b] = static_cast<uint32_t>(blocks_.size()) + 1;
            blocks_.push_back(Block(b));
            continue;
        }
        if (order_[b] != 0) continue;
        order_[b] = UINT32_MAX;
        stack_.push_back({b, 1});
        auto edge = [&](uint32_t to) {
            edges_.push_back({b, to});
            if (order_[to] == 0) stack_.push_back({to, 0});
        };
        if (gathered) {
            for (uint32_t k = row_[b].first; k < row_[b].second; ++k) edge(succs_[k]);
        } else {
            for_each_successor(func, Block(b), edge);
        }
    }
    const auto n = static_cast<uint32_t>(blocks_.size());  // the entry is n - 1
    // Predecessor rows by postorder number (a counting sort of the edges).
    begin_.assign(n + 1, 0);
    for (auto& e : edges_) {
        e = {order_[e.first] - 1, order_[e.second] - 1};
        ++begin_[e.second + 1];
    }
    for (uint32_t i = 0; i < n; ++i) begin_[i + 1] += begin_[i];
    list_.resize(edges_.size());
    slot_.assign(begin_.begin(), begin_.end() - 1);
    for (const auto& e : edges_) list_[slot_[e.second]++] = e.first;
    // Immediate dominators: reverse postorder until nothing changes. When
    // the first pass meets no predecessor later in that order (no loop),
    // every block's predecessors, and their dominators, were final when it
    // was reached: a second pass would change nothing.
    constexpr uint32_t kNone = UINT32_MAX;
    idom_.assign(n, kNone);
    idom_[n - 1] = n - 1;
    bool retreating = false;  // an edge to a block earlier in reverse postorder
    for (bool changed = true, first = true; changed; first = false) {
        changed = false;
        for (uint32_t w = n - 1; w-- > 0;) {
            uint32_t d = kNone;
            for (uint32_t k = begin_[w]; k < begin_[w + 1]; ++k) {
                uint32_t p = list_[k];
                if (idom_[p] == kNone) {  // not reached yet in this order
                    retreating = true;
                    continue;
                }
                if (d == kNone) {
                    d = p;
                    continue;
                }
                while (p != d) {  // the nearest common ancestor
                    while (p < d) p = idom_[p];
                    while (d < p) d = idom_[d];
                }
            }
            if (idom_[w] != d) {
                idom_[w] = d;
                changed = true;
            }
        }
        if (first && !retreating) break;
    }
    // Children rows, then the tree's preorder and postorder numbers.
    begin_.assign(n + 1, 0);
    for (uint32_t w = 0; w + 1 < n; ++w) ++begin_[idom_[w] + 1];
    for (uint32_t i = 0; i < n; ++i) begin_[i + 1] += begin_[i];
    list_.resize(n);
    slot_.assign(begin_.begin(), begin_.end() - 1);
    for (uint32_t w = 0; w + 1 < n; ++w) list_[slot_[idom_[w]]++] = w;
    if (pre_.size() < nb) {
        pre_.resize(nb);
        post_.resize(nb);
    }
    uint32_t pre = 0, post = 0;
    stack_.clear();
    stack_.push_back({n - 1, begin_[n - 1]});
    pre_[blocks_[n - 1].index()] = pre++;
    while (!stack_.empty()) {
        auto& [d, next] = stack_.back();
        if (next < begin_[d + 1]) {
            const uint32_t c = list_[next++];
            pre_[blocks_[c].index()] = pre++;
            stack_.push_back({c, begin_[c]});
            continue;
        }
        post_[blocks_[d].index()] = post++;
        stack_.pop_back();
    }
}

}  // namespace

/// Everything the verifier sizes per function; its memory outlives a call.
struct VerifierContext::Tables {
    /// By value (not resolved): what a use needs to know, entered when the
    /// walk reaches the value's definition and finds it sound
    /// (verify_block_params, verify_results, quick_inst): the value's type
    /// and its block's numbers (lo, hi) = (dominator-tree preorder,
    /// use_base + 1 + postorder), use_base being this call's (below).
    /// Entries not entered in this call (left from an earlier function, or
    /// zero) have hi <= use_base, which no use accepts: such uses take the
    /// slow path in verify_use, which checks everything itself and reports
    /// the fault, if any. So the table is never cleared. (Types for the
    /// full checks come from type_of, which reads the DFG.)
    ///
    /// A use in a block with numbers (pre, hi) is fine when u.lo <= pre &&
    /// hi <= u.hi: the defining block dominates the using one (or is the
    /// same: a definition earlier in this block, as the walk enters an
    /// instruction's results after its operands). Unreachable blocks, as
    /// users and as definers, get (kUnreachablePre, use_base + 0): uses
    /// there are checked for definedness only.
    struct UseInfo {
        Type type;  // the value's own type (a defined value is no alias)
        uint32_t lo, hi;
    };
    static constexpr uint32_t kUnreachablePre = UINT32_MAX - 1;
    /// Every hi entered so far is at most this; the next call's use_base is
    /// one above it.
    uint32_t last_hi = 0;
    /// The walk's "seen" marks: equal to this call's stamp when seen.
    uint32_t stamp = 0;

    Dominance dominance;
    // Without quick paths (detail::set_verifier_quick_paths): the analyses'
    // graph and tree.
    ControlFlowGraph cfg;
    DominatorTree domtree;
    std::vector<Value> resolved;  // by value: alias target, or reserved for a cycle
    std::vector<UseInfo> uses;
    std::vector<uint8_t> alias_state;
    std::vector<Value> alias_path;
    // Not uint8_t: a store through a character type may alias anything,
    // and the walk's reads would be reloaded after each mark.
    std::vector<uint32_t> block_seen;
    std::vector<uint32_t> inst_seen;
    std::vector<Type> expected;
};

VerifierContext::VerifierContext() : tables_(std::make_unique<Tables>()) {}
VerifierContext::~VerifierContext() = default;
VerifierContext::VerifierContext(VerifierContext&&) noexcept = default;
VerifierContext& VerifierContext::operator=(VerifierContext&&) noexcept = default;

namespace detail {
namespace {
thread_local bool quick_paths = true;
}  // namespace

/// For tests (they declare it): with `false`, verify_function on this
/// thread takes the full checks only (no quick paths; dominance from the
/// analyses' ControlFlowGraph and DominatorTree), which the quick paths
/// must agree with exactly. Default true.
void set_verifier_quick_paths(bool on) { quick_paths = on; }
}  // namespace detail

namespace {

using UseInfo = VerifierContext::Tables::UseInfo;
using Tables = VerifierContext::Tables;

class Verifier {
public:
    /// `out`: build the graph and tree there (VerifierAnalyses).
    Verifier(const Function& func, VerifierErrors& errors, VerifierContext::Tables& t, VerifierAnalyses* out)
        : func_(func),
          dfg_(func.dfg),
          layout_(func.layout),
          errors_(errors),
          dominance_(t.dominance),
          cfg_(out ? *out->cfg : t.cfg),
          domtree_(out ? *out->domtree : t.domtree),
          quick_(detail::quick_paths),
          tree_(out || !quick_),
          resolved_(t.resolved),
          uses_(t.uses),
          alias_state_(t.alias_state),
          alias_path_(t.alias_path),
          block_seen_(t.block_seen),
          inst_seen_(t.inst_seen),
          tables_(t),
          expected_(t.expected) {}

    bool run();
    /// After run(): the layout was the entry block alone (no graph built).
    bool single_block() const { return single_block_; }

private:
    // --- reporting --------------------------------------------------------------
    [[gnu::cold]] void report(std::optional<Inst> inst, std::optional<Block> block, std::string context, std::string message);
    [[gnu::cold]] void inst_error(Inst inst, std::string message);
    [[gnu::cold]] void block_error(Block block, std::string message);
    /// Declarations have no line of their own: no context, the message
    /// names the declaration.
    void decl_error(std::string message) { report({}, {}, {}, std::move(message)); }

    // --- declarations and aliases -------------------------------------------------
    /// `ref`: the signature's declaration; none for the function's own.
    void verify_signature(const Signature& sig, std::optional<SigRef> ref);
    void verify_declarations();
    void resolve_aliases();
    void report_alias_cycle(size_t from);
    void prepare_values();
    void start_marks();

    // --- blocks -------------------------------------------------------------------
    void verify_entry_block();
    void verify_block(Block b);
    void verify_block_params(Block b);
    [[gnu::cold]] void report_block_params(Block b, std::span<const Value> params, uint32_t from);

    // --- instructions ----------------------------------------------------------------
    [[gnu::cold]] void report_terminator(Inst inst, Block b, bool terminator);
    void check_inst(Inst inst, Block b, const InstructionData& d, const OpcodeShape& shape);
    /// What the quick paths read on every instruction of a block, copied
    /// out of the members once per block: their stores to the use table
    /// could alias the members (UseInfo holds uint32_t), so read through
    /// `this` they would be reloaded after every store.
    struct Here {
        UseInfo* uses;
        const ValueData* values;
        uint32_t num_values, pre, post;
    };
    Here here() { return {uses_.data(), values_, num_values_, cur_pre_, cur_post_}; }
    // Inlined into verify_block's loop: one frame for the whole instruction.
    [[gnu::always_inline]] bool quick_inst(Inst inst, const InstructionData& d, const OpcodeShape& shape,
                                           std::span<const Value> results, Here h);
    /// quick_inst's result check for the special kinds: one result, this
    /// instruction's own, typed `type`; entered when it is.
    [[gnu::always_inline]] static bool one_result(Inst inst, std::span<const Value> results, Type type, Here h) {
        if (results.size() != 1) return false;
        const Value v = results[0];
        if (v.index() >= h.num_values) return false;
        const ValueData& vd = h.values[v.index()];
        if (vd.kind != ValueDef::Kind::Result || vd.owner != inst.index() || vd.num != 0 || vd.type != type) {
            return false;
        }
        h.uses[v.index()] = UseInfo{type, h.pre, h.post};
        return true;
    }
    /// The common case of verify_use, inline: the definition is sound and
    /// dominates the use. Anything else goes to verify_use.
    void check_use(Inst inst, Block b, Value v) {
        if (!use_is_fine(v)) verify_use(inst, b, v);
    }
    /// See UseInfo.
    bool use_is_fine(Value v) const {
        if (v.index() >= num_values_) return false;
        const UseInfo& u = uses_[v.index()];
        return u.lo <= cur_pre_ && cur_post_ <= u.hi;
    }
    [[gnu::cold]] void verify_use(Inst inst, Block b, Value v);
    /// A branch destination as check_use and verify_branch accept it
    /// silently: a block in the layout other than the entry, its arguments
    /// defined and dominating, as many as its parameters and of their types.
    bool quick_dest(const BlockCall& dest, Here h) const {
        if (!dest.is_valid()) return false;
        const ValueListPool& pool = dfg_.value_lists;
        const Block target = dest.block(pool);
        if (target.index() >= num_blocks_ || !layout_.is_block_inserted(target) || target == entry_) return false;
        const auto params = dfg_.block_params(target);
        const auto args = dest.args(pool);
        if (args.size() != params.size()) return false;
        for (size_t k = 0; k < args.size(); ++k) {
            const uint32_t v = args[k].index();
            const uint32_t p = params[k].index();
            if (v >= h.num_values || p >= h.num_values) return false;
            const UseInfo& u = h.uses[v];
            if (u.lo > h.pre || h.post > u.hi) return false;
            if (!u.type.is_valid() || u.type != h.values[p].type) return false;
        }
        return true;
    }
    /// What check_inst and verify_return accept silently for `return`: no
    /// results, the values defined and dominating, as many as the
    /// signature returns and of its types.
    bool quick_return(const InstructionData& d, std::span<const Value> results, Here h) const {
        if (!results.empty()) return false;
        const auto vals = list(d.vargs);
        const auto& want = func_.signature.returns;
        if (vals.size() != want.size()) return false;
        for (size_t i = 0; i < vals.size(); ++i) {
            const uint32_t v = vals[i].index();
            if (v >= h.num_values) return false;
            const UseInfo& u = h.uses[v];
            if (u.lo > h.pre || h.post > u.hi || u.type != want[i].type) return false;
        }
        return true;
    }
    /// Marks a sound definition (one the walk has checked) for check_use.
    void define(Value v) { uses_[v.index()] = UseInfo{values_[v.index()].type, cur_pre_, cur_post_}; }
    /// Marks every result of `inst` whose definition names it back.
    [[gnu::cold]] void define_sound_results(Inst inst);
    void verify_results(Inst inst);
    [[gnu::cold]] void report_results(Inst inst);
    void verify_typing(Inst inst);
    void verify_branch(Inst inst);
    void verify_call(Inst inst);
    void verify_tail_call(Inst inst, const Signature& callee, const std::string& name);
    void verify_return(Inst inst);

    // Typing families (one per Typing class or group of classes).
    /// Operands 0..n-1 have the type of operand `ref`, which is in
    /// `allowed`; the common case inline, report_uniform reports.
    void check_uniform(Inst inst, unsigned n, unsigned ref, TypeSet allowed) {
        const InstructionData& d = dfg_[inst];
        const Type t = type_of(d.args[ref]);
        if (allowed.contains(t)) {
            bool same = true;
            for (unsigned i = 0; i < n; ++i) same &= type_of(d.args[i]) == t;
            if (same) return;
        }
        report_uniform(inst, n, ref, allowed);
    }
    [[gnu::cold]] void report_uniform(Inst inst, unsigned n, unsigned ref, TypeSet allowed);
    void check_int_const(Inst inst);
    void check_select(Inst inst);
    void check_conversion(Inst inst, TypeSet result, TypeSet input);
    void check_width_change(Inst inst);
    void check_bitcast(Inst inst);
    void check_load(Inst inst);
    void check_store(Inst inst);
    void check_address(Inst inst);
    void check_br_table(Inst inst);
    void check_endianness(Inst inst);
    void check_trap_code(Inst inst);

    // --- dominance (the dominator tree, or the single block) -------------------------------
    bool reachable(Block b) const {
        if (single_block_) return b == *entry_;
        return tree_ ? domtree_.is_reachable(b) : dominance_.reachable(b);
    }
    uint32_t dom_preorder(Block b) const {
        if (single_block_) return 0;
        return tree_ ? domtree_.dom_preorder(b) : dominance_.preorder(b);
    }
    uint32_t dom_postorder(Block b) const {
        if (single_block_) return 0;
        return tree_ ? domtree_.dom_postorder(b) : dominance_.postorder(b);
    }
    bool dominates(Block a, Block b) const {
        if (single_block_) return a == *entry_ && b == *entry_;
        return tree_ ? domtree_.dominates(a, b) : dominance_.dominates(a, b);
    }

    // --- helpers ----------------------------------------------------------------------
    /// The type of `v` after resolving aliases; invalid when `v` is dangling.
    Type type_of(Value v) const {
        const uint32_t i = v.index();
        if (i >= num_values_) return Type();
        if (!has_aliases_) return values_[i].type;
        const Value r = resolved_[i];
        return r.is_valid() ? values_[r.index()].type : Type();
    }
    /// A value list's elements (inline; DataFlowGraph::inst_variable_args
    /// is out of line).
    std::span<const Value> list(const ValueList& l) const {
        if (l.empty()) return {};
        return {l.raw(dfg_.value_lists), l.size(dfg_.value_lists)};
    }
    Type ctrl_type(Inst inst) const;
    std::string name(Inst inst) const { return std::string(opcode_name(dfg_[inst].opcode)); }
    /// Reports operand `i` of `inst` unless its type is unknown or in `allowed`.
    bool expect_operand(Inst inst, unsigned i, TypeSet allowed) {
        const Type t = type_of(dfg_[inst].args[i]);
        if (!t.is_valid()) return false;
        if (allowed.contains(t)) return true;
        report_operand(inst, i, allowed);
        return false;
    }
    [[gnu::cold]] void report_operand(Inst inst, unsigned i, TypeSet allowed);
    /// Reports operand `i` unless it has the type of operand `ref`.
    void expect_same(Inst inst, unsigned i, unsigned ref);
    /// Reports a `.T` outside `allowed`; false when `.T` is missing or bad.
    bool expect_ctrl(Inst inst, TypeSet allowed) {
        if (allowed.contains(dfg_[inst].type)) return true;
        report_ctrl(inst, allowed);
        return false;
    }
    [[gnu::cold]] void report_ctrl(Inst inst, TypeSet allowed);
    std::string describe_def(const ValueDef& def) const;

    const Function& func_;
    const DataFlowGraph& dfg_;
    const Layout& layout_;
    VerifierErrors& errors_;

    // The tables live in the VerifierContext (see VerifierContext::Tables).
    Dominance& dominance_;
    ControlFlowGraph& cfg_;
    DominatorTree& domtree_;
    const bool quick_;  // detail::set_verifier_quick_paths
    const bool tree_;   // dominance from cfg_ and domtree_, not dominance_
    std::vector<Value>& resolved_;
    std::vector<UseInfo>& uses_;
    std::vector<uint8_t>& alias_state_;
    std::vector<Value>& alias_path_;
    std::vector<uint32_t>& block_seen_;
    std::vector<uint32_t>& inst_seen_;
    Tables& tables_;
    uint32_t use_base_ = 0;  // see UseInfo
    uint32_t stamp_ = 0;     // see Tables::stamp
    std::vector<Type>& expected_;
    std::optional<Block> entry_;
    // The DFG's instructions and values as arrays (every index is checked
    // against num_insts_ / num_values_ before it is read) and counts.
    const InstructionData* insts_ = nullptr;
    const ValueData* values_ = nullptr;
    uint32_t num_insts_ = 0, num_blocks_ = 0;
    bool single_block_ = false;  // the layout is the entry block alone: no CFG or dominator tree
    uint32_t num_values_ = 0;
    bool has_aliases_ = false;  // resolved_ is filled (prepare_values)
    // The block being verified, as a user and as a definer of values (see
    // UseInfo): its dominator-tree numbers as UseInfo holds them.
    uint32_t cur_pre_ = 0, cur_post_ = 0;
};

// --- reporting -------------------------------------------------------------------------

void Verifier::report(std::optional<Inst> inst, std::optional<Block> block, std::string context,
                      std::string message) {
    errors_.push_back(VerifierError{inst, block, std::move(message), std::move(context)});
}

void Verifier::inst_error(Inst inst, std::string message) {
    PackedOption<Block> block = layout_.inst_block(inst);
    std::string context = inst.to_string();
    if (dfg_.inst_is_valid(inst) && printable(dfg_[inst])) context += " (" + print_inst(func_, inst) + ")";
    if (block) context += " in " + block->to_string();
    report(inst, block, std::move(context), std::move(message));
}

void Verifier::block_error(Block block, std::string message) {
    report({}, block, block.to_string(), std::move(message));
}

// --- the driver ---------------------------------------------------------------------------

bool Verifier::run() {
    const size_t errors_before = errors_.size();
    num_insts_ = dfg_.num_insts();
    insts_ = dfg_.inst_data();
    num_values_ = dfg_.num_values();
    values_ = dfg_.value_data();
    num_blocks_ = dfg_.num_blocks();
    entry_ = layout_.entry_block();
    verify_declarations();
    // One block: it dominates itself and is the only reachable one, no
    // graph to build (most small functions a JIT compiles).
    single_block_ = entry_ && layout_.last_block() == entry_ && dfg_.block_is_valid(*entry_);
    if (!single_block_ && !tree_) {
        dominance_.compute(func_);
    } else if (!single_block_) {
        cfg_.compute(func_);
        domtree_.compute(func_, cfg_);
    }
    prepare_values();
    verify_entry_block();
    start_marks();
    for (Block b : layout_.blocks()) {
        if (!dfg_.block_is_valid(b)) {
            block_error(b, b.to_string() + " is in the layout but does not exist");
            break;  // its layout links cannot be trusted either
        }
        if (block_seen_[b.index()] == stamp_) {
            block_error(b, b.to_string() + " appears twice in the layout");
            break;
        }
        block_seen_[b.index()] = stamp_;
        verify_block(b);
    }
    return errors_.size() == errors_before;
}

// The "seen" tables are never cleared: this call's marks are a stamp no
// earlier call used (the tables are cleared when the stamps run out).
void Verifier::start_marks() {
    if (++tables_.stamp == 0) {
        std::fill(block_seen_.begin(), block_seen_.end(), 0);
        std::fill(inst_seen_.begin(), inst_seen_.end(), 0);
        tables_.stamp = 1;
    }
    stamp_ = tables_.stamp;
    if (block_seen_.size() < num_blocks_) block_seen_.resize(num_blocks_);
    if (inst_seen_.size() < num_insts_) inst_seen_.resize(num_insts_);
}

// --- declarations --------------------------------------------------------------------------

void Verifier::verify_signature(const Signature& sig, std::optional<SigRef> ref) {
    if (quick_ && signature_is_fine(sig)) return;  // the common case: nothing to report
    auto check = [&](const std::vector<AbiParam>& items, const char* kind) {
        for (size_t i = 0; i < items.size(); ++i) {
            const AbiParam& p = items[i];
            // Named only for a message: a valid signature builds no string.
            auto item = [&] {
                return (ref ? ref->to_string() : std::string("function signature")) + " " + kind + " " +
                       std::to_string(i);
            };
            if (!kAnyScalar.contains(p.type)) {
                decl_error(item() + " has unsupported type " + str(p.type));
                continue;
            }
            if (p.ext != ArgExt::None && !p.type.is_int()) {
                const char* ext = p.ext == ArgExt::Uext ? "uext" : "sext";
                decl_error(item() + ": " + ext + " is only allowed on integer types, not " + str(p.type));
            }
        }
    };
    check(sig.params, "parameter");
    check(sig.returns, "return");
}

void Verifier::verify_declarations() {
    verify_signature(func_.signature, std::nullopt);
    for (SigRef s : dfg_.signatures.keys()) verify_signature(dfg_.signatures[s], s);
    for (FuncRef f : dfg_.ext_funcs.keys()) {
        SigRef sig = dfg_.ext_funcs[f].signature;
        // A reserved signature marks a gap in the source's fnN numbering:
        // not a declaration, only an error where something uses it.
        if (sig.is_valid() && !dfg_.signatures.is_valid(sig)) {
            decl_error(f.to_string() + " refers to undeclared signature " + sig.to_string());
        }
    }
    for (StackSlot ss : func_.stack_slots.keys()) {
        const uint32_t align = func_.stack_slots[ss].align;
        if (align == 0 || (align & (align - 1)) != 0) {
            decl_error(ss.to_string() + " alignment " + std::to_string(align) + " is not a power of two");
        } else if (align > 16) {
            decl_error(ss.to_string() + ": stack slot alignment above 16 is not supported yet (align = " +
                                           std::to_string(align) + ")");
        }
    }
}

// Resolves every value's alias chain once (linear overall): resolved_[v] is
// the value at the end of the chain, or reserved when the chain is cyclic or
// dangling. A placeholder (self-alias) resolves to itself.
void Verifier::resolve_aliases() {
    enum : uint8_t { kNew, kOnPath, kDone };
    const uint32_t n = dfg_.num_values();
    resolved_.assign(n, Value());
    alias_state_.assign(n, kNew);
    for (uint32_t i = 0; i < n; ++i) {
        if (alias_state_[i] == kDone) continue;
        alias_path_.clear();
        Value cur(i);
        Value result;
        for (;;) {
            if (alias_state_[cur.index()] == kDone) {
                result = resolved_[cur.index()];
                break;
            }
            if (alias_state_[cur.index()] == kOnPath) {
                for (size_t k = 0; k < alias_path_.size(); ++k) {
                    if (alias_path_[k] == cur) report_alias_cycle(k);
                }
                break;
            }
            const ValueDef def = dfg_.value_def(cur);
            if (def.kind != ValueDef::Kind::Alias || def.owner == cur.index()) {
                result = cur;
                alias_state_[cur.index()] = kDone;
                resolved_[cur.index()] = cur;
                break;
            }
            alias_state_[cur.index()] = kOnPath;
            alias_path_.push_back(cur);
            Value next(def.owner);
            if (!dfg_.value_is_valid(next)) {
                decl_error(cur.to_string() + " is an alias of invalid value " + next.to_string());
                break;
            }
            cur = next;
        }
        for (Value v : alias_path_) {
            resolved_[v.index()] = result;
            alias_state_[v.index()] = kDone;
        }
    }
}

// Before the blocks are walked: the use table cleared (definitions are
// entered as the walk reaches them, UseInfo). Aliases
// (rare: the parser's `vA -> vB` lines, passes that replace a value) are
// resolved only when the function has any, by resolve_aliases, which
// reports cycles and dangling targets; without them resolved_ stays unused
// (resolved(v) is v).
void Verifier::prepare_values() {
    if (uses_.size() < num_values_) uses_.resize(num_values_);  // zeros: not entered
    // This call's numbers lie above every earlier call's (UseInfo); when
    // they would run out, the table is cleared and they start again.
    if (tables_.last_hi >= UINT32_MAX - 2 - num_blocks_) {
        std::memset(static_cast<void*>(uses_.data()), 0, uses_.size() * sizeof(UseInfo));
        tables_.last_hi = 0;
    }
    use_base_ = tables_.last_hi + 1;
    tables_.last_hi = use_base_ + num_blocks_;
    bool aliases = false;
    for (uint32_t i = 0; i < num_values_; ++i) {
        const ValueData& vd = values_[i];
        aliases |= vd.kind == ValueDef::Kind::Alias && vd.owner != i;
    }
    has_aliases_ = aliases;
    if (aliases) resolve_aliases();
}

void Verifier::report_alias_cycle(size_t from) {
    std::string cycle;
    for (size_t k = from; k < alias_path_.size(); ++k) cycle += alias_path_[k].to_string() + " -> ";
    cycle += alias_path_[from].to_string();
    decl_error("alias cycle: " + cycle);
}

// --- blocks ----------------------------------------------------------------------------------

void Verifier::verify_entry_block() {
    if (!entry_) {
        decl_error("function has no entry block");
        return;
    }
    if (!dfg_.block_is_valid(*entry_)) return;  // reported with the layout
    const auto params = dfg_.block_params(*entry_);
    const auto& sig = func_.signature.params;
    if (quick_ && params.size() == sig.size()) {  // the common case: each valid and of its type
        bool ok = true;
        for (size_t i = 0; i < params.size(); ++i) {
            ok &= params[i].index() < num_values_ && values_[params[i].index()].type == sig[i].type;
        }
        if (ok) return;
    }
    if (params.size() != sig.size()) {
        block_error(*entry_, "entry block has " + plural(params.size(), "parameter") + ", signature has " +
                                 std::to_string(sig.size()));
        return;
    }
    for (size_t i = 0; i < params.size(); ++i) {
        if (!dfg_.value_is_valid(params[i])) continue;  // reported with the block
        Type t = dfg_.value_type(params[i]);
        if (t == sig[i].type) continue;
        block_error(*entry_, "entry block parameter " + std::to_string(i) + " (" + params[i].to_string() +
                                 ") has type " + str(t) + ", signature has " + str(sig[i].type));
    }
}

void Verifier::verify_block(Block b) {
    const auto [pre, post] =
        reachable(b) ? std::pair{dom_preorder(b), use_base_ + 1 + dom_postorder(b)}
                     : std::pair{Tables::kUnreachablePre, use_base_};
    cur_pre_ = pre;
    cur_post_ = post;
    verify_block_params(b);
    const PackedOption<Inst> last_inst = layout_.last_inst(b);
    if (!last_inst) {
        block_error(b, b.to_string() + " is empty");
        return;
    }
    const Inst last = *last_inst;
    uint32_t* const seen = inst_seen_.data();
    const uint32_t stamp = stamp_;
    // Members the loop reads, as locals (see Here).
    const Here h = here();
    const InstructionData* const insts = insts_;
    const uint32_t num_insts = num_insts_;
    const bool quick_paths = quick_;
    for (const Inst inst : layout_.block_insts(b)) {
        const uint32_t index = inst.index();
        if (index >= num_insts) {
            block_error(b, inst.to_string() + " is in the layout of " + b.to_string() + " but does not exist");
            return;
        }
        if (seen[index] == stamp) {
            block_error(b, inst.to_string() + " appears twice in the layout");
            return;
        }
        seen[index] = stamp;
        if (!layout_.linked_inst_in(inst, b)) {
            inst_error(inst, inst.to_string() + " is laid out in " + b.to_string() + " but belongs to another block");
            continue;
        }
        const InstructionData& d = insts[index];
        const OpcodeShape& shape = kOpcodeShapes[static_cast<uint8_t>(d.opcode)];
        const bool terminator = (shape.flags & OpcodeShape::kTerminator) != 0;
        if (terminator != (inst == last)) report_terminator(inst, b, terminator);
        const auto results = dfg_.inst_results(inst);
        const bool quick = quick_paths && (d.opcode == Opcode::Return ? quick_return(d, results, h)
                                                                      : (shape.flags & OpcodeShape::kQuick) &&
                                                                            d.vargs.empty() &&
                                                                            quick_inst(inst, d, shape, results, h));
        if (!quick) check_inst(inst, b, d, shape);
        if (shape.flags & (OpcodeShape::kBranch | OpcodeShape::kCall | OpcodeShape::kReturn)) {
            if ((shape.flags & OpcodeShape::kBranch) && !quick) verify_branch(inst);
            if (shape.flags & OpcodeShape::kCall) verify_call(inst);
            if ((shape.flags & OpcodeShape::kReturn) && !quick) verify_return(inst);
        }
    }
}

void Verifier::report_terminator(Inst inst, Block b, bool terminator) {
    if (terminator) {
        inst_error(inst, "terminator " + name(inst) + " is not at the end of " + b.to_string());
    } else {
        inst_error(inst, b.to_string() + " does not end with a terminator");
    }
}

inline void Verifier::verify_block_params(Block b) {
    const auto params = dfg_.block_params(b);
    if (!quick_) return report_block_params(b, params, 0);
    // The common case first: each parameter names this block and its
    // position back and has a supported type (then entered at once).
    // report_block_params does the rest.
    UseInfo* const uses = uses_.data();
    for (uint32_t i = 0; i < params.size(); ++i) {
        const uint32_t v = params[i].index();
        if (v >= num_values_) return report_block_params(b, params, i);
        const ValueData& vd = values_[v];
        if (vd.kind != ValueDef::Kind::Param || vd.owner != b.index() || vd.num != i || !kAnyScalar.contains(vd.type)) {
            return report_block_params(b, params, i);
        }
        uses[v] = UseInfo{vd.type, cur_pre_, cur_post_};
    }
}

// The parameters from `from` on, reporting what is wrong (the earlier ones
// are fine and entered).
void Verifier::report_block_params(Block b, std::span<const Value> params, uint32_t from) {
    for (uint32_t i = from; i < params.size(); ++i) {
        Value v = params[i];
        if (!dfg_.value_is_valid(v)) {
            block_error(b, "parameter " + std::to_string(i) + " of " + b.to_string() + " is invalid value " +
                               v.to_string());
            continue;
        }
        const ValueDef def = dfg_.value_def(v);
        if (!def.is_param() || def.block() != b || def.num != i) {
            block_error(b, "value " + v.to_string() + " defined twice (parameter " + std::to_string(i) + " of " +
                               b.to_string() + " and " + describe_def(def) + ")");
            continue;
        }
        define(v);
        if (!kAnyScalar.contains(dfg_.value_type(v))) {
            block_error(b, "parameter " + std::to_string(i) + " (" + v.to_string() + ") of " + b.to_string() +
                               " has unsupported type " + str(dfg_.value_type(v)));
        }
    }
}

// --- instructions --------------------------------------------------------------------------

// The operand, result and typing checks in full, reporting every fault.
void Verifier::check_inst(Inst inst, Block b, const InstructionData& d, const OpcodeShape& shape) {
    if (!(shape.flags & OpcodeShape::kBranch) && d.vargs.empty()) {
        // DataFlowGraph::for_each_inst_value's walk for an instruction
        // with fixed operands only, without its calls.
        for (unsigned i = 0; i < shape.fixed_args; ++i) check_use(inst, b, d.args[i]);
    } else {
        dfg_.for_each_inst_value(inst, [&](Value v) { check_use(inst, b, v); });
    }
    verify_results(inst);
    verify_typing(inst);
}

// What check_inst accepts without a word, for the common instructions
// (OpcodeShape::kQuick, no variable operands), without side effects until
// it has said yes: then the results are entered as verify_results enters
// them. Anything it does not accept (faults, and the cases it does not
// know) goes through check_inst, which reports exactly what it always did;
// so a "no" here is never wrong, only slower.
inline bool Verifier::quick_inst(Inst inst, const InstructionData& d, const OpcodeShape& shape,
                                 std::span<const Value> results, const Here h) {
    UseInfo* const uses = h.uses;
    const uint32_t nv = h.num_values;
    const uint32_t pre = h.pre, post = h.post;
    // A use of operand i is fine (check_use's test) when it has a UseInfo
    // whose numbers cover this block's.
    auto operand = [&](unsigned i) -> const UseInfo* {
        const uint32_t v = d.args[i].index();
        if (v >= nv) return nullptr;
        const UseInfo& u = uses[v];
        return u.lo <= pre && post <= u.hi ? &u : nullptr;
    };
    // No two-way flags: verify_typing's endianness check.
    auto one_endianness = [&] { return !(d.flags.has(MemFlags::Big) && d.flags.has(MemFlags::Little)); };
    switch (shape.kind) {
    case QuickKind::General: break;
    case QuickKind::IntConst:
        return kAnyInt.contains(d.type) && (d.imm & ~d.type.mask()) == 0 && one_result(inst, results, d.type, h);
    case QuickKind::Binary:
    case QuickKind::IntBinary:
    case QuickKind::IntCmp: {
        const UseInfo* ua = operand(0);
        const UseInfo* uc = operand(1);
        if (!ua || !uc) return false;
        const Type t = ua->type;
        const bool ok = shape.uniform.allowed.contains(t) && (!d.type.is_valid() || d.type == t);
        switch (shape.kind) {
        case QuickKind::Binary: return ok && uc->type == t && one_result(inst, results, t, h);
        case QuickKind::IntBinary: return ok && kAnyInt.contains(uc->type) && one_result(inst, results, t, h);
        default: return ok && uc->type == t && d.code < kNumIntCC && one_result(inst, results, types::I8, h);
        }
    }
    case QuickKind::Load: {
        const UseInfo* ua = operand(0);
        return ua && ua->type == types::POINTER && shape.memory.contains(d.type) && one_endianness() &&
               one_result(inst, results, d.type, h);
    }
    case QuickKind::Store: {
        const UseInfo* ua = operand(0);
        const UseInfo* uc = operand(1);
        return ua && uc && shape.memory.contains(ua->type) && uc->type == types::POINTER &&
               (!d.type.is_valid() || d.type == ua->type) && !d.flags.has(MemFlags::Readonly) && one_endianness() &&
               results.empty();
    }
    case QuickKind::Jump: return results.empty() && quick_dest(d.dests[0], h);
    case QuickKind::Brif: {
        const UseInfo* ua = operand(0);
        return ua && kAnyInt.contains(ua->type) && (!d.type.is_valid() || d.type == ua->type) && results.empty() &&
               quick_dest(d.dests[0], h) && quick_dest(d.dests[1], h);
    }
    }
    // Operands: check_use's test, and their types.
    Type t[3];
    for (unsigned i = 0; i < shape.fixed_args; ++i) {
        const uint32_t v = d.args[i].index();
        if (v >= nv) return false;
        const UseInfo& u = uses[v];
        if (u.lo > pre || post > u.hi) return false;
        t[i] = u.type;
    }
    // Branch destinations: their arguments as operands (check_use), and
    // verify_branch's checks.
    for (unsigned j = 0; j < shape.dests; ++j) {
        if (!quick_dest(d.dests[j], h)) return false;
    }
    // The controlling type (ctrl_type; kQuick: its operand is fixed) and
    // verify_typing's `.T` check.
    Type ctrl;
    switch (shape.ctrl) {
    case QuickCtrl::Suffix: ctrl = d.type; break;
    case QuickCtrl::Arg0: ctrl = t[0]; break;
    case QuickCtrl::Arg1: ctrl = t[1]; break;
    case QuickCtrl::Fixed: ctrl = shape.fixed_ctrl; break;
    }
    if ((shape.ctrl == QuickCtrl::Arg0 || shape.ctrl == QuickCtrl::Arg1) && d.type.is_valid() && ctrl.is_valid() &&
        ctrl != d.type) {
        return false;
    }
    // Results: verify_results' fast path.
    if (ctrl.code() >= kShapeTypeCodes) return false;
    const unsigned nr = shape.fixed_results;
    if (results.size() != nr) return false;
    const Type* fixed = shape.result[ctrl.code()];
    for (unsigned i = 0; i < nr; ++i) {
        const uint32_t v = results[i].index();
        if (v >= nv) return false;
        const ValueData& vd = h.values[v];
        if (vd.kind != ValueDef::Kind::Result || vd.owner != inst.index() || vd.num != i) return false;
        if (fixed[i].is_valid() && vd.type != fixed[i]) return false;
    }
    // Typing: what verify_typing accepts silently.
    const UniformRule& rule = shape.uniform;
    if (rule.n != 0) {
        const Type want = t[rule.ref];
        if (!rule.allowed.contains(want) || t[0] != want) return false;
        if (rule.n > 1 && t[1] != want) return false;
        if (rule.n > 2 && t[2] != want) return false;
    }
    switch (shape.typing) {
    case QuickTyping::Done: break;
    case QuickTyping::IntConst:
        if (!kAnyInt.contains(d.type) || (d.imm & ~d.type.mask()) != 0) return false;
        break;
    case QuickTyping::F32Const:
        if (d.imm > 0xffff'ffffu) return false;
        break;
    case QuickTyping::IntCarry:
        if (t[2] != types::I8) return false;
        break;
    case QuickTyping::TrapCode:
        if (d.code == 0) return false;
        break;
    case QuickTyping::IntCC:
        if (d.code >= kNumIntCC) return false;
        break;
    case QuickTyping::FloatCC:
        if (d.code >= kNumFloatCC) return false;
        break;
    case QuickTyping::Shift:
        if (!kAnyInt.contains(t[0]) || !kAnyInt.contains(t[1])) return false;
        break;
    case QuickTyping::Condition:
        if (!kAnyInt.contains(t[0])) return false;
        if (d.format() == InstructionFormat::CondTrap && d.code == 0) return false;
        break;
    case QuickTyping::Load:
        if (!shape.memory.contains(d.type) || t[0] != types::POINTER) return false;
        if (d.flags.has(MemFlags::Big) && d.flags.has(MemFlags::Little)) return false;
        break;
    case QuickTyping::Store:
        if (!shape.memory.contains(t[0]) || t[1] != types::POINTER) return false;
        if (d.flags.has(MemFlags::Readonly)) return false;
        if (d.flags.has(MemFlags::Big) && d.flags.has(MemFlags::Little)) return false;
        break;
    case QuickTyping::Slow: return false;
    }
    for (unsigned i = 0; i < nr; ++i) {
        const uint32_t v = results[i].index();
        uses[v] = UseInfo{h.values[v].type, pre, post};
    }
    return true;
}

void Verifier::verify_use(Inst inst, Block b, Value v) {
    if (!v.is_valid()) {
        inst_error(inst, name(inst) + " has a missing operand");
        return;
    }
    if (!dfg_.value_is_valid(v)) {
        inst_error(inst, "use of invalid value " + v.to_string());
        return;
    }
    const Value r = has_aliases_ ? resolved_[v.index()] : v;
    if (!r.is_valid()) return;  // an alias cycle, reported once already
    auto shown = [&] { return v == r ? v.to_string() : v.to_string() + " (an alias of " + r.to_string() + ")"; };
    const ValueDef def = dfg_.value_def(r);
    std::optional<Block> def_block;
    switch (def.kind) {
    case ValueDef::Kind::Alias: break;  // a placeholder that was never attached
    case ValueDef::Kind::Result: {
        if (!dfg_.inst_is_valid(def.inst())) break;
        auto results = dfg_.inst_results(def.inst());
        if (def.num >= results.size() || results[def.num] != r) break;
        // A use by its own definition is a dominance error, and like the
        // others not checked in unreachable code (which the SSA builder
        // can leave that way when it removes a trivial parameter there).
        if (def.inst() == inst && reachable(b)) {
            inst_error(inst, shown() + " is used by the instruction that defines it");
            return;
        }
        def_block = layout_.inst_block(def.inst());
        if (!def_block) {
            inst_error(inst,
                       shown() + " is defined by " + def.inst().to_string() + ", which is not in the layout");
            return;
        }
        break;
    }
    case ValueDef::Kind::Param: {
        if (!dfg_.block_is_valid(def.block())) break;
        auto params = dfg_.block_params(def.block());
        if (def.num >= params.size() || params[def.num] != r) break;
        if (!layout_.is_block_inserted(def.block())) {
            inst_error(inst, shown() + " is a parameter of " + def.block().to_string() +
                                 ", which is not in the layout");
            return;
        }
        def_block = def.block();
        break;
    }
    }
    if (!def_block) {
        inst_error(inst, shown() + " is used but never defined");
        return;
    }
    if (!reachable(b)) return;
    // DominatorTree::dominates(def, inst, layout) with both blocks known:
    // `inst` is laid out in `b` (verify_block checked) and is not the
    // defining instruction (checked above).
    const bool same_block = *def_block == b;
    if (def.kind == ValueDef::Kind::Result && same_block) {
        if (layout_.inst_before(def.inst(), inst)) return;
    } else if (same_block || dominates(*def_block, b)) {
        return;
    }
    inst_error(inst, v.to_string() + " used in " + b.to_string() + " is not dominated by its definition in " +
                         def_block->to_string());
}

inline void Verifier::verify_results(Inst inst) {
    auto results = dfg_.inst_results(inst);
    // Fast path: a fixed result count, each result listed by this
    // instruction as its own, of the expected type. The checks below
    // report nothing then; anything else goes through them.
    const OpcodeInfo& info = opcode_info(dfg_[inst].opcode);
    if (info.results != kVarResults) {
        const OpcodeShape& shape = kOpcodeShapes[static_cast<uint8_t>(dfg_[inst].opcode)];
        const Type ctrl = ctrl_type(inst);
        Type computed[2];
        const Type* fixed = shape.result[ctrl.code() & (kShapeTypeCodes - 1)];
        unsigned n = shape.fixed_results;
        if (ctrl.code() >= kShapeTypeCodes) {
            n = DataFlowGraph::fixed_result_types(info, ctrl, computed);
            fixed = computed;
        }
        bool ok = results.size() == n;
        for (unsigned i = 0; ok && i < n; ++i) {
            const Value v = results[i];
            if (v.index() >= num_values_) {  // not a value
                ok = false;
                break;
            }
            const ValueDef def = dfg_.value_def(v);
            ok = def.is_result() && def.inst() == inst && def.num == i &&
                 (!fixed[i].is_valid() || dfg_.value_type(v) == fixed[i]);
            if (ok) define(v);
        }
        if (ok) return;
    }
    report_results(inst);
    define_sound_results(inst);
}

void Verifier::define_sound_results(Inst inst) {
    auto results = dfg_.inst_results(inst);
    for (uint32_t i = 0; i < results.size(); ++i) {
        const Value v = results[i];
        if (!dfg_.value_is_valid(v)) continue;
        const ValueDef def = dfg_.value_def(v);
        if (def.is_result() && def.inst() == inst && def.num == i) define(v);
    }
}

void Verifier::report_results(Inst inst) {
    auto results = dfg_.inst_results(inst);
    const OpcodeInfo& info = opcode_info(dfg_[inst].opcode);
    for (uint32_t i = 0; i < results.size(); ++i) {
        Value v = results[i];
        if (!dfg_.value_is_valid(v)) {
            inst_error(inst, "result " + std::to_string(i) + " is invalid value " + v.to_string());
            return;
        }
        const ValueDef def = dfg_.value_def(v);
        if (!def.is_result() || def.inst() != inst || def.num != i) {
            inst_error(inst, "value " + v.to_string() + " defined twice (result " + std::to_string(i) + " of " +
                                 inst.to_string() + " and " + describe_def(def) + ")");
            return;
        }
    }
    Type fixed[2];
    std::span<const Type> expected;
    if (info.results == kVarResults) {
        auto sig = dfg_.call_signature(inst);
        if (!sig || !dfg_.signatures.is_valid(*sig)) return;  // reported by verify_call
        dfg_.result_types(inst, ctrl_type(inst), expected_);
        expected = expected_;
    } else {
        expected = std::span<const Type>(fixed, DataFlowGraph::fixed_result_types(info, ctrl_type(inst), fixed));
    }
    if (results.size() != expected.size()) {
        inst_error(inst, name(inst) + " has " + plural(results.size(), "result") + ", expected " +
                             std::to_string(expected.size()));
        return;
    }
    for (uint32_t i = 0; i < results.size(); ++i) {
        Type have = dfg_.value_type(results[i]);
        if (!expected[i].is_valid() || have == expected[i]) continue;
        inst_error(inst, "result " + std::to_string(i) + " (" + results[i].to_string() + ") has type " + str(have) +
                             ", expected " + str(expected[i]));
    }
}

// One case per Typing class of opcodes.def; small per-opcode refinements
// live in the family functions.
inline void Verifier::verify_typing(Inst inst) {
    const InstructionData& d = dfg_[inst];
    const OpcodeInfo& info = opcode_info(d.opcode);
    // Where an operand fixes the controlling type, a written `.T` must agree.
    if ((info.ctrl == CtrlSource::Arg0 || info.ctrl == CtrlSource::Arg1) && d.type.is_valid()) {
        Type t = ctrl_type(inst);
        if (t.is_valid() && t != d.type) {
            inst_error(inst, "type suffix ." + str(d.type) + " does not match the controlling type " + str(t));
        }
    }
    if (const auto rule = uniform_rule(info.typing)) check_uniform(inst, rule->n, rule->ref, rule->allowed);
    switch (info.typing) {
    case Typing::NoTyping: break;
    case Typing::IntConst: check_int_const(inst); break;
    case Typing::F32Const:
        if (d.imm > 0xffff'ffffu) inst_error(inst, "f32const immediate has bits set above bit 31");
        break;
    case Typing::F64Const: break;
    case Typing::Int1:
    case Typing::Int2:
    case Typing::IntOverflow:
    case Typing::Bitwise1:
    case Typing::Bitwise2:
    case Typing::Bitwise3:
    case Typing::Bswap:
    case Typing::Float1:
    case Typing::Float2:
    case Typing::Float3: break;  // uniform_rule
    case Typing::IntCarry: expect_operand(inst, 2, TypeSet{types::I8}); break;
    case Typing::IntAddTrap: check_trap_code(inst); break;
    case Typing::Shift:
        expect_operand(inst, 0, kAnyInt);
        expect_operand(inst, 1, kAnyInt);
        break;
    case Typing::IntCmp:
        if (d.code >= kNumIntCC) inst_error(inst, "invalid integer condition code " + std::to_string(d.code));
        break;
    case Typing::FloatCmp:
        if (d.code >= kNumFloatCC) inst_error(inst, "invalid float condition code " + std::to_string(d.code));
        break;
    case Typing::Select: check_select(inst); break;
    case Typing::Bmask: check_conversion(inst, kAnyInt, kAnyInt); break;
    case Typing::Extend:
    case Typing::Reduce: check_width_change(inst); break;
    case Typing::Bitcast: check_bitcast(inst); break;
    case Typing::Fpromote: check_conversion(inst, TypeSet{types::F64}, TypeSet{types::F32}); break;
    case Typing::Fdemote: check_conversion(inst, TypeSet{types::F32}, TypeSet{types::F64}); break;
    case Typing::FloatToInt: check_conversion(inst, kAnyInt, kAnyFloat); break;
    case Typing::IntToFloat: check_conversion(inst, kAnyFloat, kAnyInt); break;
    case Typing::Load: check_load(inst); break;
    case Typing::Store: check_store(inst); break;
    case Typing::Address: check_address(inst); break;
    case Typing::Condition:
        expect_operand(inst, 0, kAnyInt);
        if (d.format() == InstructionFormat::CondTrap) check_trap_code(inst);
        break;
    case Typing::BrTable: check_br_table(inst); break;
    case Typing::Callee: break;  // verify_call
    }
    if (d.format() == InstructionFormat::Trap) check_trap_code(inst);
}

// --- typing families ------------------------------------------------------------------------

void Verifier::report_uniform(Inst inst, unsigned n, unsigned ref, TypeSet allowed) {
    if (!expect_operand(inst, ref, allowed)) return;
    for (unsigned i = 0; i < n; ++i) {
        if (i != ref) expect_same(inst, i, ref);
    }
}

void Verifier::check_int_const(Inst inst) {
    if (!expect_ctrl(inst, kAnyInt)) return;
    const InstructionData& d = dfg_[inst];
    if ((d.imm & ~d.type.mask()) == 0) return;
    inst_error(inst, "iconst." + str(d.type) + " immediate has bits set above bit " + std::to_string(d.type.bits() - 1));
}

// The condition is independent of the arms.
void Verifier::check_select(Inst inst) {
    expect_operand(inst, 0, kAnyInt);
    if (expect_operand(inst, 1, kAnyScalar)) expect_same(inst, 2, 1);
}

void Verifier::check_conversion(Inst inst, TypeSet result, TypeSet input) {
    expect_ctrl(inst, result);
    expect_operand(inst, 0, input);
}

// uextend/sextend need a strictly narrower input, ireduce a strictly wider.
void Verifier::check_width_change(Inst inst) {
    const bool ok_ctrl = expect_ctrl(inst, kAnyInt);
    if (!expect_operand(inst, 0, kAnyInt) || !ok_ctrl) return;
    const InstructionData& d = dfg_[inst];
    const Type in = type_of(d.args[0]);
    if (!in.is_valid()) return;
    const bool extend = opcode_info(d.opcode).typing == Typing::Extend;
    if (extend ? in.bits() < d.type.bits() : in.bits() > d.type.bits()) return;
    inst_error(inst, name(inst) + " operand 0 (" + d.args[0].to_string() + ") has type " + str(in) +
                         ", expected an integer type " + (extend ? "narrower" : "wider") + " than " + str(d.type));
}

void Verifier::check_bitcast(Inst inst) {
    const bool ok_ctrl = expect_ctrl(inst, kAnyScalar);
    const bool ok_in = expect_operand(inst, 0, kAnyScalar);
    const InstructionData& d = dfg_[inst];
    const Type in = type_of(d.args[0]);
    if (ok_ctrl && ok_in && in.is_valid() && in.bits() != d.type.bits()) {
        inst_error(inst, "bitcast operand 0 (" + d.args[0].to_string() + ") has type " + str(in) + ", expected a " +
                             std::to_string(d.type.bits()) + "-bit type like " + str(d.type));
    }
    constexpr unsigned kEndianness = MemFlags::Big | MemFlags::Little;
    if ((d.flags.bits & ~kEndianness) != 0 || d.flags.trap != 0) {
        inst_error(inst, "bitcast accepts only the flags little and big");
    }
    check_endianness(inst);
}

void Verifier::check_load(Inst inst) {
    expect_ctrl(inst, load_types(dfg_[inst].opcode));
    expect_operand(inst, 0, TypeSet{types::POINTER});
    check_endianness(inst);
}

void Verifier::check_store(Inst inst) {
    expect_operand(inst, 0, store_types(dfg_[inst].opcode));
    expect_operand(inst, 1, TypeSet{types::POINTER});
    if (dfg_[inst].flags.has(MemFlags::Readonly)) inst_error(inst, "a store cannot have the readonly flag");
    check_endianness(inst);
}

void Verifier::check_endianness(Inst inst) {
    const MemFlags f = dfg_[inst].flags;
    if (f.has(MemFlags::Big) && f.has(MemFlags::Little)) inst_error(inst, "flags little and big are exclusive");
}

void Verifier::check_address(Inst inst) {
    expect_ctrl(inst, TypeSet{types::POINTER});
    const InstructionData& d = dfg_[inst];
    if (d.opcode == Opcode::FuncAddr) {
        const FuncRef fn = d.func_ref();
        if (!dfg_.ext_funcs.is_valid(fn) || !dfg_.ext_funcs[fn].signature.is_valid()) {
            inst_error(inst, "invalid function reference " + fn.to_string());
        }
        return;
    }
    const StackSlot ss = d.stack_slot();
    if (!func_.stack_slots.is_valid(ss)) {
        inst_error(inst, "invalid stack slot " + ss.to_string());
        return;
    }
    const uint32_t size = func_.stack_slots[ss].size;
    if (size == 0) {
        inst_error(inst, ss.to_string() + " has size 0 and cannot be addressed");
        return;
    }
    if (d.offset < 0 || static_cast<uint32_t>(d.offset) >= size) {
        inst_error(inst, "stack_addr offset " + std::to_string(d.offset) + " is outside " + ss.to_string() +
                             " (size " + std::to_string(size) + ")");
    }
}

void Verifier::check_br_table(Inst inst) {
    expect_operand(inst, 0, TypeSet{types::I32});
    const JumpTable jt = dfg_[inst].jump_table();
    if (!dfg_.jump_tables.is_valid(jt)) {
        inst_error(inst, "invalid jump table " + jt.to_string());
    } else if (dfg_.jump_tables[jt].all.empty()) {
        inst_error(inst, "br_table has no default block");
    }
}

void Verifier::check_trap_code(Inst inst) {
    if (dfg_[inst].code == 0) inst_error(inst, name(inst) + " has no trap code");
}

// --- control flow and calls -------------------------------------------------------------------

void Verifier::verify_branch(Inst inst) {
    const ValueListPool& pool = dfg_.value_lists;
    for (const BlockCall& dest : dfg_.branch_destinations(inst)) {
        if (!dest.is_valid()) {
            inst_error(inst, name(inst) + " has a missing destination");
            continue;
        }
        const Block target = dest.block(pool);
        if (!dfg_.block_is_valid(target)) {
            inst_error(inst, "branch to invalid block " + target.to_string());
            continue;
        }
        if (!layout_.is_block_inserted(target)) {
            inst_error(inst, "branch to " + target.to_string() + ", which is not in the layout");
            continue;
        }
        if (target == entry_) inst_error(inst, "branch to the entry block " + target.to_string());
        auto params = dfg_.block_params(target);
        auto args = dest.args(pool);
        if (args.size() != params.size()) {
            inst_error(inst, target.to_string() + " expects " + plural(params.size(), "argument") + ", got " +
                                 std::to_string(args.size()));
            continue;
        }
        for (size_t i = 0; i < args.size(); ++i) {
            const Type have = type_of(args[i]);
            const Type want = dfg_.value_is_valid(params[i]) ? dfg_.value_type(params[i]) : Type();
            if (!have.is_valid() || !want.is_valid() || have == want) continue;
            inst_error(inst, "argument " + std::to_string(i) + " (" + args[i].to_string() + ") to " +
                                 target.to_string() + " has type " + str(have) + ", expected " + str(want));
        }
    }
}

void Verifier::verify_call(Inst inst) {
    const InstructionData& d = dfg_[inst];
    std::string callee;
    SigRef sig;
    if (d.format() == InstructionFormat::Call) {
        const FuncRef fn = d.func_ref();
        if (!dfg_.ext_funcs.is_valid(fn) || !dfg_.ext_funcs[fn].signature.is_valid()) {
            inst_error(inst, "invalid function reference " + fn.to_string());
            return;
        }
        callee = fn.to_string();
        sig = dfg_.ext_funcs[fn].signature;
        if (!dfg_.signatures.is_valid(sig)) return;  // reported with the declarations
    } else {
        if (d.vargs.empty()) {
            inst_error(inst, name(inst) + " has no callee");
            return;
        }
        const Value fp = d.vargs.get(0, dfg_.value_lists);
        const Type t = type_of(fp);
        if (t.is_valid() && t != types::POINTER) {
            inst_error(inst, name(inst) + " callee (" + fp.to_string() + ") has type " + str(t) + ", expected i64");
        }
        sig = d.sig_ref();
        callee = sig.to_string();
        if (!dfg_.signatures.is_valid(sig)) {
            inst_error(inst, "invalid signature reference " + callee);
            return;
        }
    }
    const Signature& s = dfg_.signatures[sig];
    auto args = dfg_.call_args(inst);
    if (args.size() != s.params.size()) {
        inst_error(inst, name(inst) + " to " + callee + " has " + plural(args.size(), "argument") + ", signature has " +
                             std::to_string(s.params.size()));
    } else {
        for (size_t i = 0; i < args.size(); ++i) {
            const Type have = type_of(args[i]);
            if (!have.is_valid() || have == s.params[i].type) continue;
            inst_error(inst, "argument " + std::to_string(i) + " (" + args[i].to_string() + ") to " + callee +
                                 " has type " + str(have) + ", expected " + str(s.params[i].type));
        }
    }
    if (is_terminator(d.opcode)) verify_tail_call(inst, s, callee);
}

// return_call / return_call_indirect (ir-reference.md 14): both ends use the
// tail convention and the callee returns exactly what the caller returns.
void Verifier::verify_tail_call(Inst inst, const Signature& callee, const std::string& who) {
    const Signature& caller = func_.signature;
    if (caller.call_conv != CallConv::Tail) {
        inst_error(inst, name(inst) + " requires the caller's calling convention to be tail, not " +
                             std::string(callconv_name(caller.call_conv)));
    }
    if (callee.call_conv != CallConv::Tail) {
        inst_error(inst, name(inst) + " requires " + who + " to use the tail calling convention, not " +
                             std::string(callconv_name(callee.call_conv)));
    }
    if (!same_types(callee.returns, caller.returns)) {
        inst_error(inst, name(inst) + ": " + who + " returns " + abi_types(callee.returns) + ", but the caller returns " +
                             abi_types(caller.returns));
    }
}

void Verifier::verify_return(Inst inst) {
    auto vals = dfg_.inst_variable_args(inst);
    const auto& want = func_.signature.returns;
    if (vals.size() != want.size()) {
        inst_error(inst, "return has " + plural(vals.size(), "value") + ", signature has " + std::to_string(want.size()));
        return;
    }
    for (size_t i = 0; i < vals.size(); ++i) {
        const Type have = type_of(vals[i]);
        if (!have.is_valid() || have == want[i].type) continue;
        inst_error(inst, "return value " + std::to_string(i) + " (" + vals[i].to_string() + ") has type " + str(have) +
                             ", expected " + str(want[i].type));
    }
}

// --- helpers ------------------------------------------------------------------------------------


// As DataFlowGraph::ctrl_typevar, but through aliases (the parser leaves an
// alias's own type unset) and with the constants' fixed types.
inline Type Verifier::ctrl_type(Inst inst) const {
    const InstructionData& d = dfg_[inst];
    const OpcodeInfo& info = opcode_info(d.opcode);
    switch (info.ctrl) {
    case CtrlSource::Result: return d.type;
    case CtrlSource::Arg0:
        if (d.format() == InstructionFormat::CallIndirect) {
            return d.vargs.empty() ? Type() : type_of(d.vargs.get(0, dfg_.value_lists));
        }
        return type_of(d.args[0]);
    case CtrlSource::Arg1: return type_of(d.args[1]);
    case CtrlSource::None:
        if (info.typing == Typing::F32Const) return types::F32;
        if (info.typing == Typing::F64Const) return types::F64;
        return Type();
    }
    return Type();
}

void Verifier::report_operand(Inst inst, unsigned i, TypeSet allowed) {
    const Value v = dfg_[inst].args[i];
    inst_error(inst, name(inst) + " operand " + std::to_string(i) + " (" + v.to_string() + ") has type " +
                         str(type_of(v)) + ", expected " + allowed.describe());
}

void Verifier::expect_same(Inst inst, unsigned i, unsigned ref) {
    const InstructionData& d = dfg_[inst];
    const Type want = type_of(d.args[ref]);
    const Type have = type_of(d.args[i]);
    if (!want.is_valid() || !have.is_valid() || have == want) return;
    inst_error(inst, name(inst) + " operand " + std::to_string(i) + " (" + d.args[i].to_string() + ") has type " +
                         str(have) + ", expected " + str(want) + " like operand " + std::to_string(ref));
}

void Verifier::report_ctrl(Inst inst, TypeSet allowed) {
    const Type t = dfg_[inst].type;
    if (!t.is_valid()) {
        inst_error(inst, name(inst) + " requires a type suffix");
        return;
    }
    inst_error(inst, name(inst) + " type ." + str(t) + " is not allowed, expected " + allowed.describe());
}

std::string Verifier::describe_def(const ValueDef& def) const {
    switch (def.kind) {
    case ValueDef::Kind::Result: return "result " + std::to_string(def.num) + " of " + def.inst().to_string();
    case ValueDef::Kind::Param: return "parameter " + std::to_string(def.num) + " of " + def.block().to_string();
    case ValueDef::Kind::Alias: return "an alias of " + Value(def.owner).to_string();
    }
    return "?";
}

}  // namespace

bool verify_function(const Function& func, VerifierErrors& errors, VerifierContext& context, VerifierAnalyses* out) {
    if (!context.tables_) context.tables_ = std::make_unique<VerifierContext::Tables>();  // moved from
    Verifier v(func, errors, *context.tables_, out);
    const bool ok = v.run();
    if (out) out->computed = ok && !v.single_block();
    return ok;
}

bool verify_function(const Function& func, VerifierErrors& errors, VerifierContext& context) {
    return verify_function(func, errors, context, nullptr);
}

bool verify_function(const Function& func, VerifierErrors& errors, VerifierContext& context, VerifierAnalyses& out) {
    HERON_ASSERT(out.cfg && out.domtree && "VerifierAnalyses: set both");
    return verify_function(func, errors, context, &out);
}

bool verify_function(const Function& func, VerifierErrors& errors) {
    VerifierContext context;
    return verify_function(func, errors, context);
}

std::string format_verifier_errors(const VerifierErrors& errors) {
    std::string out;
    for (const VerifierError& e : errors) {
        if (!e.context.empty()) out += e.context + ": ";
        out += e.message;
        out += '\n';
    }
    return out;
}

}  // namespace heron
