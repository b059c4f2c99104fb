// FunctionBuilder: what an embedder uses to write a function. Variables go
// in (declare_var / def_var / use_var), SSA comes out: the SSABuilder
// (frontend/ssa.h, Braun et al. CC 2013) turns them into values and block
// parameters as the blocks are built and sealed.
//
//   FunctionBuilderContext ctx;            // reusable, clear() keeps memory
//   Function f(ExternalName::testcase("f"), sig);
//   FunctionBuilder b(f, ctx);
//   Block entry = b.create_block();
//   b.append_block_params_for_function_params(entry);
//   b.switch_to_block(entry);
//   b.seal_block(entry);                  // no predecessors will come
//   Variable x = b.declare_var(types::I32);
//   b.def_var(x, b.block_params(entry)[0]);
//   b.ins().return_({b.use_var(x)});
//   Result<void> r = b.finalize();        // first misuse, if any
//
// Contract: a block is sealed once every branch to it has been built; each
// block ends with exactly one terminator; `finalize` needs every block that
// was switched to or branched to sealed and terminated. Misuse never aborts:
// the `try_` forms return the error; the plain forms record the first error
// (it is "sticky": `error()` shows it and `finalize()` returns it) and carry
// on with a harmless stand-in (an orphan instruction, a placeholder value).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "codegen/ir/builder.h"
#include "codegen/ir/function.h"
#include "frontend/error.h"
#include "frontend/ssa.h"
#include "frontend/variable.h"

namespace heron {

class FunctionBuilder;

/// The state a FunctionBuilder keeps between functions. Reuse one context
/// for many functions: its tables keep their memory.
class FunctionBuilderContext {
public:
    FunctionBuilderContext();
    void clear();

private:
    friend class FunctionBuilder;
    enum class BlockStatus : uint8_t { Empty, Partial, Filled };

    SSABuilder ssa_;
    DenseTable<Block, BlockStatus> status_;
    DenseTable<Variable, Type> var_types_;
    uint32_t num_vars_ = 0;
    DenseTable<JumpTable, uint8_t> jt_used_;
    DenseTable<Block, uint32_t> dest_mark_;
    uint32_t dest_gen_ = 0;
};

/// `builder.ins()`: every opcode of opcodes.def as a method (InstBuilder).
/// Instructions are appended to the current block; branches declare their
/// destinations' predecessors; a terminator fills the block.
class FuncInstBuilder : public InstBuilder<FuncInstBuilder> {
public:
    explicit FuncInstBuilder(FunctionBuilder& b) : builder_(b) {}

    DataFlowGraph& builder_dfg();
    Inst build(const InstructionData& data, Type ctrl);

private:
    FunctionBuilder& builder_;
};

class FunctionBuilder {
public:
    /// Starts building `func` (which should be empty but for its name and
    /// signature). Clears `ctx`.
    FunctionBuilder(Function& func, FunctionBuilderContext& ctx);
    FunctionBuilder(const FunctionBuilder&) = delete;
    FunctionBuilder& operator=(const FunctionBuilder&) = delete;

    Function& func;

    // --- blocks -----------------------------------------------------------
    Block create_block();
    /// Marks `block` as rarely executed (a layout hint, `blockN cold:`).
    void set_cold_block(Block block);
    /// Makes `block` the current one (placed in the layout the first time).
    /// Switching to a block that already ends is an error.
    void switch_to_block(Block block);
    Result<void> try_switch_to_block(Block block);
    std::optional<Block> current_block() const { return current_; }

    /// Adds a parameter the embedder will pass arguments for. Only while
    /// `block` has no instructions and no parameters made by the SSA builder.
    Value append_block_param(Block block, Type ty);
    Result<Value> try_append_block_param(Block block, Type ty);
    /// One parameter per signature parameter, for the entry block.
    void append_block_params_for_function_params(Block block);
    std::span<const Value> block_params(Block block) const { return func.dfg.block_params(block); }

    /// Declares that every branch to `block` has been built. Sealing twice
    /// is an error; sealing early lets variables be looked up without
    /// parameters.
    void seal_block(Block block);
    Result<void> try_seal_block(Block block);
    /// Seals every block not yet sealed (fine when the function is done,
    /// but sealing each block as early as possible makes less work).
    void seal_all_blocks();

    // --- variables ----------------------------------------------------------
    Variable declare_var(Type ty);
    Result<Variable> try_declare_var(Type ty);
    /// The type `var` was declared with (invalid if it was not).
    Type var_type(Variable var) const;
    /// `value` is the variable's value from here on in the current block.
    void def_var(Variable var, Value value);
    Result<void> try_def_var(Variable var, Value value);
    /// The variable's value at this point of the current block.
    Value use_var(Variable var);
    Result<Value> try_use_var(Variable var);
    /// Every read so far that no definition reached (now zero constants).
    std::span<const UndefinedRead> undefined_reads() const;

    // --- instructions and declarations ---------------------------------------
    FuncInstBuilder ins() { return FuncInstBuilder(*this); }
    StackSlot create_sized_stack_slot(StackSlotData data) { return func.create_stack_slot(data); }
    SigRef import_signature(Signature sig) { return func.import_signature(std::move(sig)); }
    FuncRef import_function(ExtFuncData data) { return func.import_function(std::move(data)); }
    /// A `br_table` target list: [0] is the default, then the entries. A
    /// table belongs to one `br_table` (the SSA builder adds arguments to it).
    JumpTable create_jump_table(JumpTableData data) { return func.create_jump_table(std::move(data)); }
    JumpTable create_jump_table(Block default_block, std::span<const Block> entries);

    // --- state --------------------------------------------------------------
    /// The current block ends with a terminator.
    bool is_filled() const;
    /// The current block has no instructions yet.
    bool is_pristine() const;
    /// The current block is sealed, has no predecessors and is not the entry.
    bool is_unreachable() const;
    /// The first misuse of a non-try method, if any.
    const FrontendError* error() const { return sticky_ ? &*sticky_ : nullptr; }

    /// Checks the contract (every block used is sealed and terminated),
    /// removes the block parameters that turned out redundant and resolves
    /// aliases, so the function holds plain SSA. Returns the first error.
    Result<void> finalize();

    SSABuilder& ssa() { return ctx_.ssa_; }

private:
    friend class FuncInstBuilder;
    using BlockStatus = FunctionBuilderContext::BlockStatus;

    Inst build_inst(const InstructionData& data, Type ctrl);
    void declare_successors(Inst branch, Block from);
    void declare_successor(Block dest, Block from, Inst branch);
    void record(FrontendError err);
    std::optional<FrontendError> check_block(Block block, const char* what) const;
    /// Declared (declare_var never leaves a variable untyped) and not finalized.
    bool var_usable(Variable var) const {
        return !finalized_ && var.is_valid() && var.index() < ctx_.num_vars_;
    }
    FrontendError var_error(Variable var, const char* what) const;
    /// Not finalized and a block of the function (check_block's test).
    bool block_usable(Block block) const { return !finalized_ && block.is_valid() && func.dfg.block_is_valid(block); }
    /// Every condition try_def_var checks holds (the plain form's fast path).
    bool def_var_ok(Variable var, Value value) const {
        return var_usable(var) && value.is_valid() && func.dfg.value_is_valid(value) &&
               ctx_.var_types_[var] == func.dfg.value_type(value) && current_ &&
               std::as_const(ctx_.status_)[*current_] != BlockStatus::Filled;
    }
    bool has_ssa_params(Block block) const;
    Value placeholder(Type ty);

    FunctionBuilderContext& ctx_;
    std::optional<Block> current_;
    std::optional<FrontendError> sticky_;
    bool finalized_ = false;
};

}  // namespace heron
