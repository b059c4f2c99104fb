// The memory each pass keeps in its PassContext from one function to the
// next: work lists and tables that, once they have grown, let the next
// function allocate nothing there. One member per pass, of a type named
// here, so a pass cannot ask for another's buffers by mistake (the context
// holds them by value: no allocation, no cast). A pass added later adds its
// own struct and member.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/analysis/counted_loops.h"
#include "codegen/analysis/loops.h"
#include "codegen/ir/function.h"
#include "codegen/opt/memory_classes.h"

namespace heron {

/// loop-form (loop_form.cpp): the edges of one split, the forwarded
/// arguments, the branches to redirect, the new blocks with their loops.
struct LoopFormScratch {
    std::vector<BlockCall*> dests;
    std::vector<Value> args, fwd;
    std::vector<uint8_t> differs;
    std::vector<Inst> branches;
    std::vector<std::pair<Block, PackedOption<Loop>>> added;
    std::vector<Block> blocks;
    // dedicate_exits: the source loops of one exit block, the last source
    // block of each, each exiting branch with its group, one group's
    // branches.
    std::vector<Loop> exit_loops;
    std::vector<Block> exit_last;
    std::vector<std::pair<uint32_t, Inst>> exit_sources;
    std::vector<Inst> exit_branches;
};

/// count-down (count_down.cpp): the candidate loops and the use tables;
/// users[k] for k below the number of slots in use this time (the rest keep
/// their memory for later).
struct CountDownScratch {
    std::vector<const CountedLoop*> todo;
    std::vector<uint32_t> uses, slot;
    std::vector<std::vector<Inst>> users;
    // One rewrite's argument lists: header parameters live after the loop,
    // the exit's arguments, the preheader's and the latch's arguments to
    // the header, and the exit's arguments with the header's replaced.
    std::vector<Value> live_out, exit_args, entry, back, substituted;
};

/// licm (licm.cpp): loops bucketed by depth, a block's instructions, the
/// memory classes each loop writes (a bit each) and the classes.
struct LicmScratch {
    std::vector<uint32_t> depth_begin, by_depth, next;
    std::vector<Inst> insts;
    std::vector<uint64_t> written;
    MemoryClasses classes;
};

/// forward-blocks (forward_blocks.cpp): the forwarders and the edits.
struct ForwardScratch {
    std::vector<Inst> jump_of;
    std::vector<Value> args, mapped;
    std::vector<uint8_t> passed, referenced;
    std::vector<Block> dead;
    std::vector<uint32_t> target;
};

/// tail-accumulate (tail_accumulate.cpp): use counts, the self-calls, the
/// returns, a terminator's returned values and a jump's arguments; for the
/// rotation, edges into each block, the clone map and the values the body
/// block receives.
struct TailAccumulateScratch {
    struct Site {
        Inst call;
        std::optional<Inst> op;  // the accumulating instruction, if any
        bool ok = false;         // a site (return_call: from the start)
    };
    std::vector<uint32_t> uses, preds;
    std::vector<Site> sites;
    std::vector<Inst> returns;
    std::vector<Value> vals, args, head_args, map, to_body, body_vals, xargs;
};

/// split-entry (split_entry.cpp): by value, the parameter that replaces
/// an entry value (invalid: none; all invalid between calls); the region
/// dominated by a successor; the entry values it reads.
struct SplitEntryScratch {
    std::vector<Value> split;
    std::vector<Block> region;
    std::vector<Value> read;
};

/// gvn (gvn.cpp): by value, what it was numbered as (invalid: itself),
/// whether it is a constant and its bits; the hash table of pure
/// instructions (index + 1, 0: empty); the dominator-tree walk's stack.
struct GvnScratch {
    std::vector<Value> repl;
    std::vector<uint8_t> is_const;
    std::vector<uint64_t> bits;
    std::vector<uint32_t> table;
    std::vector<Block> stack;
};

/// dce and simplify-cfg (dce.cpp): use counts by value, the work list,
/// parameter positions to drop, the replacement of merged blocks'
/// parameters, the predecessor counts and the reachable marks by block.
struct DceScratch {
    std::vector<uint32_t> uses;
    std::vector<Value> work;
    std::vector<uint32_t> drop;
    std::vector<Value> repl;
    std::vector<uint32_t> preds;
    std::vector<uint8_t> reached;
    std::vector<Block> stack;
};

/// mem2reg (mem2reg.cpp): the slot and offset each address value points
/// at (slot + 1; 0: none), which slots may go, the accesses found and the
/// instruction each one is (index + 1), the cells' types, liveness marks by
/// block, the parameters wanted and added (by block: a range), the renaming
/// walk's current values, undo log and stack, the trivial parameters' work
/// list and users, and the address instructions to remove.
struct Mem2RegScratch {
    struct Address {
        uint32_t slot = 0;
        int64_t offset = 0;
    };
    struct Access {
        Inst inst;
        uint32_t slot;
        int64_t offset;
        uint32_t order;  // in the walk
        uint32_t var;    // the cell, or ~0u when the slot stays
        Type type;       // the loaded or stored value's
        uint8_t bytes;
        bool store;
        bool big;
    };
    struct Param {
        uint32_t var;
        Value value;
        Block block;
    };
    std::vector<Address> address;
    std::vector<uint8_t> slot_ok;
    std::vector<Access> accesses;
    std::vector<uint32_t> access_of;
    std::vector<Type> var_type;
    std::vector<uint32_t> var_first;  // its first access
    std::vector<uint32_t> live, defs;
    std::vector<Block> work;
    std::vector<std::pair<Block, uint32_t>> wanted;
    std::vector<std::pair<uint32_t, uint32_t>> block_params;
    std::vector<Param> params;
    std::vector<uint32_t> param_of;
    std::vector<Value> current;
    std::vector<std::pair<uint32_t, Value>> undo;
    std::vector<std::pair<Block, uint32_t>> walk;
    std::vector<uint32_t> trivial;
    std::vector<uint8_t> removed;
    std::vector<std::vector<uint32_t>> users;
    std::vector<Inst> address_insts;
    std::vector<uint32_t> slot_map;
    std::vector<uint8_t> table_used;
};

/// load-elim (load_elim.cpp): the memory classes, the known values of the block
/// being walked, the saved states of the blocks waiting in the walk (each a
/// range of `pool`), and the walk's stack.
struct LoadElimScratch {
    static constexpr size_t kMaxKnown = 32;
    struct Known {
        Value addr;
        int32_t offset;
        Type type;
        Opcode opcode;
        uint8_t bytes;
        MemFlags flags;
        uint32_t cls;  // memory class: a slot that does not escape (index + 1), 0 the rest
        Value value;
    };
    struct Frame {
        Block block;
        uint32_t begin, count;
    };
    MemoryClasses classes;
    std::vector<Known> known, pool;
    std::vector<Frame> stack;
};

/// dead-stores (dead_stores.cpp): the memory classes, which private slots
/// some load reads, the later stores of the block being walked backwards,
/// and the private slots it loads later.
struct DeadStoreScratch {
    static constexpr size_t kMaxPending = 32;
    struct Pending {
        Value addr;
        int64_t lo, hi;  // bytes [lo, hi) from addr
        uint32_t cls;
    };
    MemoryClasses classes;
    std::vector<uint8_t> loaded;
    std::vector<Pending> pending;
    std::vector<uint32_t> read_later;
};

struct PassScratch {
    LoopFormScratch loop_form;
    CountDownScratch count_down;
    LicmScratch licm;
    ForwardScratch forward_blocks;
    TailAccumulateScratch tail_accumulate;
    SplitEntryScratch split_entry;
    GvnScratch gvn;
    DceScratch dce;
    Mem2RegScratch mem2reg;
    LoadElimScratch load_elim;
    DeadStoreScratch dead_stores;
};

}  // namespace heron
