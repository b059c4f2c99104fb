// The interpreter's pre-decoded form of a function, built once per Function
// and cached (keyed by Function*) for every later call.
//
// Each instruction becomes one fixed-size `DOp` in a flat array, blocks laid
// out in layout order so that falling through is `++pc`. Operands and
// results are indices into the frame's register file, one uint64_t per IR
// value (the value's own index after alias resolution), so the execution loop
// never touches the DFG. Branch destinations are `Edge`s with the target's
// start pc and the (argument, parameter) register pairs to copy in parallel.
// Variable-length lists (call arguments, results, return values, edge
// arguments) live in one shared `pool` of register indices.
//
// Decoding also does the cheap structural checks that keep unverified IR
// from crashing the interpreter: references in range, blocks that end with a
// terminator, argument counts, and the operand types each opcode's helpers
// rely on. A failure is stored in `error` and reported as Kind::Error when
// the function is called.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/ir/function.h"

namespace heron::interp {

/// One decoded instruction. Field meaning by opcode family:
///   bits       width of the controlling type (8..64; 32/64 also pick f32/f64)
///   dst, dst2  result registers (dst2: the overflow flag)
///   a, b, c    operand registers in operand order, except: store a = address,
///              b = value; brif a = condition, b/c = then/else edge ids;
///              call_indirect a = callee; return b = value count
///   x          jump: edge id; br_table: table id; calls and func_addr: call
///              site id; return: pool offset of the values; loads and stores:
///              the trap code byte (0 = notrap)
///   imm        iconst / f32const / f64const bits; loads and stores: the
///              sign-extended offset; stack_addr: byte offset in the frame
///   aux        icmp / fcmp: the condition code; trap, trapz, trapnz,
///              uadd_overflow_trap: the trap code; loads and stores: the access
///              size in bytes; otherwise the first operand's width
///   aux2       loads and stores: the MemFlags bits
struct DOp {
    Opcode op = Opcode::Nop;
    uint8_t bits = 0;
    uint8_t aux = 0;
    uint8_t aux2 = 0;
    uint32_t dst = 0, dst2 = 0;
    uint32_t a = 0, b = 0, c = 0;
    uint32_t x = 0;
    uint64_t imm = 0;
};
static_assert(sizeof(DOp) == 40);

/// A branch destination: jump to `target` after copying, in parallel,
/// register pool[args + i] into register pool[params + i] for i < count.
struct Edge {
    uint32_t target = 0;  // pc
    uint32_t args = 0, params = 0, count = 0;
    Block block;          // for patching `target` and for messages
};

/// A `call` / `return_call` / `call_indirect` site. The callee of a direct
/// call is resolved by name on first use and cached until the set of
/// registered functions changes (`generation`).
struct CallSite {
    std::string callee_key;        // "%name" or "u1:7"; empty for indirect calls
    const Signature* sig = nullptr;  // the signature the call site uses
    uint32_t args = 0, num_args = 0;     // pool offset / count
    uint32_t results = 0, num_results = 0;
    uint64_t generation = 0;        // 0: not resolved yet
    uint32_t target = 0;            // resolved target id
};

struct SlotLayout {
    uint64_t offset = 0;  // from the frame's (aligned) base
    uint64_t size = 0;
};

struct DecodedFunction {
    const Function* func = nullptr;
    std::string name;                // "%f"
    std::string error;               // non-empty: not runnable, say why
    std::vector<DOp> code;
    std::vector<uint32_t> src_inst;  // code[pc] came from Inst(src_inst[pc])
    std::vector<uint32_t> pool;
    std::vector<Edge> edges;
    std::vector<CallSite> calls;
    std::vector<std::vector<uint32_t>> tables;  // br_table: edge ids, [0] = default
    std::vector<uint32_t> entry_params;         // registers of the entry block's params
    std::vector<Type> param_types, return_types;
    std::vector<SlotLayout> slots;              // indexed by StackSlot
    std::vector<uint32_t> slots_by_offset;      // non-empty slots, ascending offset
    uint64_t frame_bytes = 0;                   // all slots, padded
    uint64_t frame_align = 16;
    uint32_t num_regs = 0;
    uint32_t max_edge_args = 0;
};

/// Builds the decoded form of `func`. Never fails outright: problems go to
/// `error`.
void decode_function(const Function& func, DecodedFunction& out);

}  // namespace heron::interp
