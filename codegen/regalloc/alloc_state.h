// The allocator's private state (Context::Impl) and the phases that share it:
//
//   build_liveness   validate the input; use positions, live ranges and fixed
//                    register ranges of every vreg (liveness.cpp)
//   linear_scan      assign each interval a register or a spill slot,
//                    splitting intervals where needed (linear_scan.cpp)
//   resolve          operand allocations, split/edge/fixup moves, spill
//                    stores moved to definitions (resolve.cpp)
//
// The design follows Wimmer and Franz, "Linear Scan Register Allocation on SSA
// Form" (CGO 2010) and Wimmer and Mössenböck, "Optimized Interval Splitting in
// a Linear Scan Register Allocator" (VEE 2005).
//
// Positions. Instruction i owns four positions:
//     4i   Before(i): moves at Before(i) happen here
//     4i+1 early:     Early uses read, Early defs written
//     4i+2 late:      Late defs written, Late uses still read
//     4i+3 After(i):  moves at After(i)
// A live range is a half-open interval of positions. An Early use keeps its
// value live to 4i+2, a Late use to 4i+3; a Late def starts at 4i+2, an Early
// def at 4i+1. So an Early use and a Late def of one instruction do not
// overlap (they may share a register) while anything involving an Early def
// or a Late use does. Intervals are only split at Before points (multiples of
// 4), where the resolver inserts the moves.
//
// Fixed operands do not pin a vreg's interval to the register: the operand
// gets the register, and a copy at Before(i) (uses) or After(i) (defs) moves
// the value between the interval's location and the register. The register is
// reserved for that instruction by a "fixed range" that belongs to the vreg,
// so the vreg's own interval may live in the register (no copy) while no other
// interval may. Clobbers are fixed ranges [4i+2, 4i+3) that belong to nobody.
// A Reuse def starts at 4i+1 and reads its input with a copy at Before(i); when
// the input dies at the instruction the two intervals touch and the copy
// disappears if they get the same register (a hint asks for that).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "codegen/regalloc/moves.h"
#include "codegen/regalloc/regalloc.h"

namespace heron::ra {

inline constexpr uint32_t kNone = ~uint32_t{0};
inline constexpr uint32_t kMaxPos = ~uint32_t{0} - 8;
inline constexpr uint8_t kNoHint = 0xff;
inline constexpr unsigned kNumPRegs = kNumRegClasses * kMaxRegsPerClass;

inline uint32_t pos_before(uint32_t inst) { return inst * 4; }
inline uint32_t pos_early(uint32_t inst) { return inst * 4 + 1; }
inline uint32_t pos_late(uint32_t inst) { return inst * 4 + 2; }
inline uint32_t pos_after(uint32_t inst) { return inst * 4 + 3; }
inline uint32_t floor_before(uint32_t pos) { return pos & ~uint32_t{3}; }

/// A place where an interval is read or written, with what it needs there.
/// (No default member values here or in Range: trivial types, so the kept
/// arrays of them grow by a plain fill, not a constructor call per element.)
struct UsePos {
    uint32_t pos;
    uint32_t live_to;  // the value must stay live up to here (exclusive)
    uint8_t must_reg;  // needs a register at `pos`
    uint8_t hint;      // preferred register (hw) of a Fixed operand, or kNoHint
    uint8_t kind;      // kUseOp, kUseDef or kUseEdge
};
inline constexpr uint8_t kUseOp = 0;    // an operand reads the value
inline constexpr uint8_t kUseDef = 1;   // the definition (operand or block parameter)
inline constexpr uint8_t kUseEdge = 2;  // a branch passes the value to a successor

struct Range {
    uint32_t from, to;
};
static_assert(std::is_trivial_v<UsePos> && std::is_trivial_v<Range>);

/// A register reserved for [from, to) for `owner` (a vreg index; kNone for
/// clobbers).
struct FixedRange {
    uint32_t from = 0, to = 0;
    uint32_t owner = kNone;
};

/// A piece of a vreg's lifetime with one location. Its ranges are the vreg's
/// ranges [range_begin, range_end) clipped to [start, end); its use positions
/// are uses[use_begin, use_end).
struct Interval {
    uint32_t vreg = kNone;
    RegClass cls = RegClass::Int;
    bool hinted = false;  // some use of the vreg names a register (UsePos::hint); split pieces keep it
    uint32_t start = 0, end = 0;
    uint32_t range_begin = 0, range_end = 0;
    uint32_t use_begin = 0, use_end = 0;
    uint32_t cursor = 0;  // first range that may still contain the scan position
    uint32_t prev = kNone, next = kNone;  // neighbouring pieces of the same vreg
    Allocation loc;
};

/// The machine environment of an allocator's last call, already checked
/// (check_machine_env) and with the allocator's tables built from it: a call
/// with the same environment (the usual case) skips both.
struct CheckedEnv {
    bool valid = false;
    std::vector<PReg> regs[kNumRegClasses];
    PReg scratch[kNumRegClasses];

    bool same_as(const MachineEnv& env) const {
        // PReg is two bytes without padding: the lists compare as bytes
        // (one memcmp instead of a loop of PReg comparisons).
        static_assert(sizeof(PReg) == 2 && std::has_unique_object_representations_v<PReg>);
        auto same = [](const std::vector<PReg>& x, const std::vector<PReg>& y) {
            return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(PReg)) == 0);
        };
        return valid && env.scratch[0] == scratch[0] && env.scratch[1] == scratch[1] && same(env.allocatable[0], regs[0]) &&
               same(env.allocatable[1], regs[1]);
    }
    void remember(const MachineEnv& env) {
        for (unsigned c = 0; c < kNumRegClasses; ++c) {
            regs[c] = env.allocatable[c];
            scratch[c] = env.scratch[c];
        }
        valid = true;
    }
};

struct Context::Impl {
    const Function* func = nullptr;
    const MachineEnv* env = nullptr;
    bool trust_block_structure = false;  // Context::trust_block_structure

    // Per instruction / block.
    std::vector<uint32_t> inst_block;
    std::vector<uint8_t> block_depth;  // loop depth clamped for weights and split choice
    // Bit i: instruction i has a Fixed operand or a Reuse def. (Bits, stored
    // a word at a time: a byte store per instruction may alias anything, and
    // GCC then reloads the operand walk's state after each.)
    std::vector<uint64_t> inst_special;
    // Per instruction with a Reuse def (read only for marked instructions):
    // bit k set when operand k (of the first 64) is a use a Reuse def
    // consumes.
    std::vector<uint64_t> inst_reused;

    // Per vreg.
    std::vector<uint32_t> def_pos, def_block;
    std::vector<uint32_t> raw_uses;  // operand uses + branch-argument uses
    std::vector<uint32_t> use_begin;  // CSR into uses
    std::vector<UsePos> uses;
    // Made by build_scan_tables when the scan first needs them or the split
    // table below (a function that never runs short of registers never does):
    std::vector<double> use_weight;   // prefix sums over `uses` (global running sum)
    std::vector<uint32_t> next_must;  // first must_reg use at or after k in the same vreg (or its end)
    bool scan_tables_ready = false;
    std::vector<uint32_t> range_begin;  // CSR into ranges
    std::vector<Range> ranges;
    std::vector<uint32_t> first_interval;
    std::vector<uint32_t> spill_slot;  // per vreg with an interval (kNone until it gets one)
    std::vector<uint32_t> hint_vreg, hint_pos;

    // Live-in vregs (without block parameters) per block, CSR, made from
    // livein_pairs by build_livein_lists only when resolution needs them
    // (the scan split an interval).
    std::vector<uint32_t> livein_begin, livein;

    // Registers.
    std::vector<FixedRange> fixed[kNumPRegs];  // filled only for allocatable registers
    PRegSet fixed_used;  // registers whose `fixed` list is not empty
    PRegSet allocatable;
    std::vector<unsigned> scan_regs[kNumRegClasses];  // allocatable registers per class, in preference order
    CheckedEnv checked_env;  // the environment of the last call

    std::vector<Interval> intervals;

    // Liveness scratch.
    std::vector<uint32_t> li_stamp, lo_stamp, lu_stamp, lu_end, work;
    std::vector<uint64_t> pred_mask;  // per block: its predecessors as bits (functions of at most 64 blocks)
    uint32_t stamp_base = 0;  // li/lo/lu_stamp values of earlier calls are <= stamp_base
    std::vector<std::pair<uint32_t, uint32_t>> livein_pairs;
    std::vector<Range> tmp_ranges;
    std::vector<uint32_t> vreg_class;  // per defined vreg: its RegClass
    // Bit v: a use position of vreg v names a register (UsePos::hint).
    // (Bits in words, like inst_special: a byte store may alias anything.)
    std::vector<uint64_t> vreg_hinted;

    // Split-position choice: sparse table of the shallowest block (latest on
    // ties) over block ranges (made by build_scan_tables).
    std::vector<uint32_t> rmq;
    uint32_t rmq_levels = 0;

    // Linear scan.
    std::vector<uint64_t> initial_order;  // one interval per vreg: start << 32 | id, in that order
    std::vector<std::pair<uint32_t, uint32_t>> unhandled;  // min-heap of (start, interval) of split pieces
    uint32_t active[kNumPRegs] = {};
    std::vector<uint32_t> inactive[kNumPRegs];
    uint32_t fixed_cursor[kNumPRegs] = {};  // 0 wherever `fixed` is empty
    // Registers whose active/inactive state a scan may have left set (all
    // of them before the first scan); the next scan resets only these.
    PRegSet scan_dirty = {{~uint64_t{0}, ~uint64_t{0}}};
    std::vector<std::pair<uint32_t, uint32_t>> free_slots;  // min-heap of (free from, slot)
    uint32_t num_slots = 0;
    uint32_t num_splits = 0;

    // Resolution.
    // Per vreg: the piece (interval) that held the last position looked up,
    // for operands (instruction order) and for edge sources (block order).
    std::vector<uint32_t> op_piece, edge_piece;
    struct KeyedEdit {
        uint64_t key;
        Edit edit;
    };
    std::vector<KeyedEdit> keyed;
    std::vector<Edit> seq;
    ParallelMoves pmoves;
    struct PendingMove {
        uint32_t point_key;  // ProgPoint bits * 4 + phase
        Allocation from, to;
        RegClass cls;
        uint32_t store_of = kNone;  // a vreg stored from its register to its own slot
    };
    std::vector<uint32_t> store_count, store_depth;
    std::vector<uint32_t> remat_inst;  // per defined vreg: its kRemat definition, or kNone
    std::vector<PendingMove> split_moves;
    std::vector<uint64_t> move_order;  // point_key << 32 | index into split_moves
    std::vector<uint64_t> move_order_tmp;  // sort_keyed_indices' scratch
    // Operands of the current instruction that need a copy: uses into
    // their register at Before(i), defs out of theirs at After(i).
    uint32_t fixup_uses[256] = {};
    uint32_t fixup_defs[256] = {};
    uint32_t emergency_slot = kNoSlot;

    // Test hooks: take the general path that a shortcut must match (tests
    // compare the outputs). The scan brings every busy register to each
    // position (no next-event skip); resolution finds pieces with cursors
    // even when nothing was split.
    bool test_full_advance = false;
    bool test_piece_cursors = false;

    uint32_t block_start(uint32_t b) const { return pos_before(func->block_insts_begin[b]); }
    uint32_t block_end(uint32_t b) const { return pos_before(func->block_insts_begin[b + 1]); }
    uint32_t block_of(uint32_t pos) const { return inst_block[pos / 4]; }
};

/// Input checks shared by both allocators (liveness.cpp): the machine
/// environment, and the CFG and CSR arrays of a function.
std::string check_machine_env(const MachineEnv& env);
std::string validate_cfg(const Function& f);

std::string build_liveness(Context::Impl& s);
/// Live-in lists per block (livein_begin, livein) from livein_pairs.
void build_livein_lists(Context::Impl& s);
/// The scan's tables that liveness leaves to be made on first need: spill
/// weights (use_weight), next_must and the split-position table (rmq).
void build_scan_tables(Context::Impl& s);
/// The single-pass allocator (single_pass.cpp) and its state's deleter.
std::string allocate_single_pass(const Function& func, const MachineEnv& env, Output& out, Context& ctx);
void delete_single_pass(Context::SinglePass* sp);
std::string linear_scan(Context::Impl& s);
void resolve(Context::Impl& s, Output& out);

}  // namespace heron::ra
