// Self-recursion into a loop (tail recursion modulo an accumulator, as
// gcc's tree-tailcall pass does): a call of the function to itself whose
// results the function returns at once becomes a jump back to the start
// with the call's arguments as the new parameters. When the call's single
// result is instead combined once with another value by an operation that
// is associative and commutative on integers (iadd, imul, band, bor, bxor:
// wrapping arithmetic is exact, so no overflow assumption is made) and that
// combination is returned, the jump also carries an accumulator:
//
//   f(x) = g(x) OP f(x')          acc' = acc OP g(x); x = x'; loop
//   f(x) = b(x)      (any other)  return acc OP b(x)
//
// acc starts at OP's identity (0; 1 for imul; -1 for band), and the
// invariant "the result is acc OP f(x)" holds at the loop header. fib's
// `fib(n-1) + fib(n-2)` keeps the first call and loops on the second: half
// the calls.
//
// A site is a self-call (`call fnN` or `return_call fnN` whose declaration
// names the function itself with its own signature) where
//   - the instructions between the call and its block's terminator are
//     pure and cannot trap (effects.h): the call is the last side effect;
//   - the terminator is a `return`, or a `jump` to a block holding only a
//     `return`, and returns exactly the call's results, used nowhere else
//     (plain site), or
//   - the call has one integer result, read only by one OP instruction
//     (not as both operands) whose result is read only by the terminator,
//     which returns it (accumulator site).
// All accumulator sites must use the same OP (the first one found decides;
// calls with another OP stay calls, which is still right: they compute
// f from scratch). With an accumulator, every other `return` is rewritten,
// so a `return_call` to another function forbids the accumulator sites.
// A function with stack slots is left alone: a recursive call gets fresh
// slots, a loop iteration would overwrite the caller's (whose address the
// callee may hold).
//
// The entry block becomes the loop header: a new entry block passes the
// function's parameters (and the identity) to it. When the old entry is
// pure up to a `brif` into a block X that only it enters and that is pure
// up to a `return`, and into a block S that only it enters, the loop is
// rotated instead: the new entry makes the test itself on the parameters
// and goes to S or to a copy of X (`acc OP v` there is just v), and the
// old entry's values read below S become S's parameters (constants are
// made again at S's top). fib's base case then returns from the entry
// without a frame, as gcc's does (x64 shrink-wrapping, emit.cpp). The CFG
// changes, so every analysis is dropped. Run first at opt_level=speed so
// that the loop passes see the new loop.
//
// A self-call is recognized by name: the IR's `fnN = %f(...)` inside
// `function %f` calls the function being compiled. JITModule links by the
// declared name, so it withholds pass_needs::kSelfCall when the declared
// name and the IR's name differ.
#pragma once

#include <cstdint>

#include "codegen/ir/function.h"

namespace heron {

class PassContext;

/// True when some `fnN` declaration of `func` names `func` itself with its
/// signature (no instruction is read): the pass's pass_needs::kSelfCall.
bool declares_self(const Function& func);

/// Returns how many self-calls became jumps.
uint32_t accumulate_tail_calls(Function& func, PassContext& ctx);

}  // namespace heron
