// FunctionBuilder: blocks, variables and instructions for embedders, on top
// of the SSABuilder (Braun et al., CC 2013). Every contract check lives here;
// the SSA builder assumes a well-behaved caller.
#include "frontend/function_builder.h"

#include <string>
#include <utility>

namespace heron {

using Kind = FrontendError::Kind;

namespace {

std::string type_text(Type t) { return std::string(t.name()); }

}  // namespace

// --- context ------------------------------------------------------------------

FunctionBuilderContext::FunctionBuilderContext() : status_(BlockStatus::Empty) {}

void FunctionBuilderContext::clear() {
    ssa_.clear();
    status_.clear();
    var_types_.clear();
    num_vars_ = 0;
    jt_used_.clear();
    dest_mark_.clear();
    dest_gen_ = 0;
}

// --- instruction builder --------------------------------------------------------

DataFlowGraph& FuncInstBuilder::builder_dfg() { return builder_.func.dfg; }

Inst FuncInstBuilder::build(const InstructionData& data, Type ctrl) { return builder_.build_inst(data, ctrl); }

// --- builder ----------------------------------------------------------------------

FunctionBuilder::FunctionBuilder(Function& f, FunctionBuilderContext& ctx) : func(f), ctx_(ctx) { ctx_.clear(); }

void FunctionBuilder::record(FrontendError err) {
    if (!sticky_) sticky_ = std::move(err);
}

std::optional<FrontendError> FunctionBuilder::check_block(Block block, const char* what) const {
    if (finalized_) {
        return FrontendError::make(Kind::AlreadyFinalized, std::string(what) + ": the builder was finalized");
    }
    if (block_usable(block)) return std::nullopt;
    return FrontendError::make(Kind::InvalidBlock, std::string(what) + "(" + block.to_string() +
                                                       "): the function has no such block");
}

FrontendError FunctionBuilder::var_error(Variable var, const char* what) const {
    if (finalized_) {
        return FrontendError::make(Kind::AlreadyFinalized, std::string(what) + ": the builder was finalized");
    }
    std::string msg = std::string(what) + "(" + var.to_string() + "): " + var.to_string() + " was never declared";
    if (current_) msg += " (in " + current_->to_string() + ")";
    return FrontendError::make(Kind::UndeclaredVariable, std::move(msg), current_, var);
}

Value FunctionBuilder::placeholder(Type ty) { return func.dfg.make_value_placeholder(ty.is_valid() ? ty : types::I64); }

bool FunctionBuilder::has_ssa_params(Block block) const {
    for (Value p : func.dfg.block_params(block)) {
        if (ctx_.ssa_.is_ssa_param(p)) return true;
    }
    return false;
}

// --- blocks -----------------------------------------------------------------------

Block FunctionBuilder::create_block() { return func.dfg.make_block(); }

void FunctionBuilder::set_cold_block(Block block) {
    if (auto e = check_block(block, "set_cold_block")) return record(std::move(*e));
    func.layout.set_cold(block, true);
}

Result<void> FunctionBuilder::try_switch_to_block(Block block) {
    if (auto e = check_block(block, "switch_to_block")) return std::move(*e);
    if (std::as_const(ctx_.status_)[block] == BlockStatus::Filled) {
        return FrontendError::make(Kind::SwitchToFilledBlock,
                                   "switch_to_block(" + block.to_string() + "): " + block.to_string() +
                                       " already ends with a terminator",
                                   block);
    }
    if (!func.layout.is_block_inserted(block)) func.layout.append_block(block);
    current_ = block;
    return {};
}

void FunctionBuilder::switch_to_block(Block block) {
    if (block_usable(block) && std::as_const(ctx_.status_)[block] != BlockStatus::Filled) [[likely]] {
        if (!func.layout.is_block_inserted(block)) func.layout.append_block(block);
        current_ = block;
        return;
    }
    if (auto r = try_switch_to_block(block); !r) record(r.error());
}

Result<Value> FunctionBuilder::try_append_block_param(Block block, Type ty) {
    if (auto e = check_block(block, "append_block_param")) return std::move(*e);
    if (!ty.is_valid()) {
        return FrontendError::make(Kind::InvalidType,
                                   "append_block_param(" + block.to_string() + "): the parameter needs a type", block);
    }
    if (std::as_const(ctx_.status_)[block] != BlockStatus::Empty || !func.layout.block_is_empty(block)) {
        return FrontendError::make(Kind::BlockNotPristine,
                                   "append_block_param(" + block.to_string() + "): " + block.to_string() +
                                       " already has instructions",
                                   block);
    }
    if (has_ssa_params(block)) {
        return FrontendError::make(Kind::BlockNotPristine,
                                   "append_block_param(" + block.to_string() + "): " + block.to_string() +
                                       " already has parameters made for variables; add its own parameters "
                                       "before using variables in it",
                                   block);
    }
    return func.dfg.append_block_param(block, ty);
}

Value FunctionBuilder::append_block_param(Block block, Type ty) {
    auto r = try_append_block_param(block, ty);
    if (r) return *r;
    record(r.error());
    return placeholder(ty);
}

void FunctionBuilder::append_block_params_for_function_params(Block block) {
    for (const AbiParam& p : func.signature.params) append_block_param(block, p.type);
}

Result<void> FunctionBuilder::try_seal_block(Block block) {
    if (auto e = check_block(block, "seal_block")) return std::move(*e);
    if (ctx_.ssa_.is_sealed(block)) {
        return FrontendError::make(Kind::SealedTwice,
                                   "seal_block(" + block.to_string() + "): " + block.to_string() +
                                       " is already sealed",
                                   block);
    }
    ctx_.ssa_.seal_block(block, func);
    return {};
}

void FunctionBuilder::seal_block(Block block) {
    if (block_usable(block) && !ctx_.ssa_.is_sealed(block)) [[likely]] {
        ctx_.ssa_.seal_block(block, func);
        return;
    }
    if (auto r = try_seal_block(block); !r) record(r.error());
}

void FunctionBuilder::seal_all_blocks() {
    if (finalized_) return record(FrontendError::make(Kind::AlreadyFinalized, "seal_all_blocks: the builder was finalized"));
    ctx_.ssa_.seal_all_blocks(func);
}

JumpTable FunctionBuilder::create_jump_table(Block default_block, std::span<const Block> entries) {
    JumpTableData data;
    data.all.reserve(entries.size() + 1);
    data.all.push_back(func.dfg.block_call(default_block, {}));
    for (Block b : entries) data.all.push_back(func.dfg.block_call(b, {}));
    return func.create_jump_table(std::move(data));
}

// --- variables ----------------------------------------------------------------------

Result<Variable> FunctionBuilder::try_declare_var(Type ty) {
    if (finalized_) return FrontendError::make(Kind::AlreadyFinalized, "declare_var: the builder was finalized");
    if (!ty.is_valid()) {
        return FrontendError::make(Kind::InvalidType, "declare_var: a variable needs a type (i8..i64, f32, f64)");
    }
    Variable var(ctx_.num_vars_++);
    ctx_.var_types_[var] = ty;
    return var;
}

Variable FunctionBuilder::declare_var(Type ty) {
    auto r = try_declare_var(ty);
    if (r) return *r;
    record(r.error());
    return Variable();
}

Type FunctionBuilder::var_type(Variable var) const {
    if (!var.is_valid() || var.index() >= ctx_.num_vars_) return Type();
    return ctx_.var_types_[var];
}

Result<void> FunctionBuilder::try_def_var(Variable var, Value value) {
    if (def_var_ok(var, value)) [[likely]] {
        ctx_.ssa_.def_var(var, value, *current_);
        return {};
    }
    if (!var_usable(var)) return var_error(var, "def_var");
    auto where = [&] { return current_ ? " (in " + current_->to_string() + ")" : std::string(); };
    if (!value.is_valid() || !func.dfg.value_is_valid(value)) [[unlikely]] {
        return FrontendError::make(Kind::InvalidValue,
                                   "def_var(" + var.to_string() + ", " + value.to_string() +
                                       "): the function has no such value" + where(),
                                   current_, var);
    }
    Type want = ctx_.var_types_[var];
    Type got = func.dfg.value_type(value);
    if (want != got) [[unlikely]] {
        return FrontendError::make(Kind::WrongVariableType,
                                   "def_var(" + var.to_string() + ", " + value.to_string() + "): " +
                                       value.to_string() + " is " + type_text(got) + " but " + var.to_string() +
                                       " was declared " + type_text(want) + where(),
                                   current_, var);
    }
    if (!current_) [[unlikely]] {
        return FrontendError::make(Kind::NoCurrentBlock,
                                   "def_var(" + var.to_string() + "): no current block (switch_to_block first)",
                                   std::nullopt, var);
    }
    if (std::as_const(ctx_.status_)[*current_] == BlockStatus::Filled) [[unlikely]] {
        return FrontendError::make(Kind::InstAfterTerminator,
                                   "def_var(" + var.to_string() + ") in " + current_->to_string() +
                                       " after its terminator",
                                   current_, var);
    }
    ctx_.ssa_.def_var(var, value, *current_);
    return {};
}

void FunctionBuilder::def_var(Variable var, Value value) {
    if (def_var_ok(var, value)) [[likely]] {
        ctx_.ssa_.def_var(var, value, *current_);
        return;
    }
    if (auto r = try_def_var(var, value); !r) record(r.error());
}

Result<Value> FunctionBuilder::try_use_var(Variable var) {
    if (!var_usable(var)) [[unlikely]] return var_error(var, "use_var");
    if (!current_) {
        return FrontendError::make(Kind::NoCurrentBlock,
                                   "use_var(" + var.to_string() + "): no current block (switch_to_block first)",
                                   std::nullopt, var);
    }
    return ctx_.ssa_.use_var(func, var, ctx_.var_types_[var], *current_).value;
}

Value FunctionBuilder::use_var(Variable var) {
    if (var_usable(var) && current_) [[likely]] return ctx_.ssa_.use_var(func, var, ctx_.var_types_[var], *current_).value;
    auto r = try_use_var(var);
    if (r) return *r;
    record(r.error());
    return placeholder(var_type(var));
}

std::span<const UndefinedRead> FunctionBuilder::undefined_reads() const {
    return ctx_.ssa_.side_effects().undefined_reads;
}

// --- instructions -------------------------------------------------------------------

// The instruction is always created (InstBuilder reads its results); on
// misuse it just stays out of the layout.
Inst FunctionBuilder::build_inst(const InstructionData& data, Type ctrl) {
    DataFlowGraph& dfg = func.dfg;
    Inst inst = dfg.make_inst(data);
    dfg.make_inst_results(inst, ctrl);
    const bool misplaced = finalized_ || !current_ || std::as_const(ctx_.status_)[*current_] == BlockStatus::Filled;
    if (misplaced) [[unlikely]] {
        std::string op = "`" + std::string(opcode_name(data.opcode)) + "`";
        if (finalized_) {
            record(FrontendError::make(Kind::AlreadyFinalized, op + " built after finalize"));
        } else if (!current_) {
            record(FrontendError::make(Kind::NoCurrentBlock, op + " built with no current block (switch_to_block first)"));
        } else {
            record(FrontendError::make(Kind::InstAfterTerminator,
                                       current_->to_string() + ": " + op + " appended after the block's terminator",
                                       current_));
        }
        return inst;
    }
    Block block = *current_;
    func.layout.append_inst(inst, block);
    const OpcodeInfo& info = opcode_info(data.opcode);
    if (info.flags & opflags::BRANCH) declare_successors(inst, block);
    ctx_.status_[block] = (info.flags & opflags::TERM) ? BlockStatus::Filled : BlockStatus::Partial;
    return inst;
}

// Each destination block becomes a successor once per branch, even when the
// branch names it several times (brif to one block twice, br_table entries).
void FunctionBuilder::declare_successors(Inst branch, Block from) {
    DataFlowGraph& dfg = func.dfg;
    const InstructionData& data = dfg[branch];
    const ValueListPool& pool = dfg.value_lists;
    switch (data.opcode) {
    case Opcode::Jump:
        declare_successor(data.dests[0].block(pool), from, branch);
        return;
    case Opcode::Brif: {
        Block then = data.dests[0].block(pool), orelse = data.dests[1].block(pool);
        declare_successor(then, from, branch);
        if (orelse != then) declare_successor(orelse, from, branch);
        return;
    }
    default:
        break;
    }
    if (data.opcode == Opcode::BrTable) {
        JumpTable jt = data.jump_table();
        if (!dfg.jump_tables.is_valid(jt)) {
            record(FrontendError::make(Kind::InvalidBlock,
                                       from.to_string() + ": br_table uses " + jt.to_string() + ", which does not exist",
                                       from));
            return;
        }
        if (ctx_.jt_used_[jt]) {
            record(FrontendError::make(Kind::JumpTableReused,
                                       from.to_string() + ": " + jt.to_string() +
                                           " is already used by another br_table (create one table per br_table)",
                                       from));
            return;
        }
        ctx_.jt_used_[jt] = 1;
    }
    // A table may name a block many times: mark what was declared.
    if (++ctx_.dest_gen_ == 0) {
        ctx_.dest_mark_.clear();
        ctx_.dest_gen_ = 1;
    }
    const uint32_t gen = ctx_.dest_gen_;
    for (const BlockCall& call : dfg.branch_destinations(branch)) {
        Block dest = call.block(pool);
        if (dest.is_valid() && dfg.block_is_valid(dest)) {
            if (ctx_.dest_mark_[dest] == gen) continue;
            ctx_.dest_mark_[dest] = gen;
        }
        declare_successor(dest, from, branch);
    }
}

void FunctionBuilder::declare_successor(Block dest, Block from, Inst branch) {
    if (!dest.is_valid() || !func.dfg.block_is_valid(dest)) [[unlikely]] {
        record(FrontendError::make(Kind::InvalidBlock,
                                   from.to_string() + ": branch to " + dest.to_string() + ", which does not exist",
                                   from));
        return;
    }
    if (ctx_.ssa_.is_sealed(dest)) [[unlikely]] {
        record(FrontendError::make(Kind::BranchToSealedBlock,
                                   from.to_string() + ": branch to " + dest.to_string() + " after " + dest.to_string() +
                                       " was sealed",
                                   dest));
        return;
    }
    ctx_.ssa_.declare_block_predecessor(dest, from, branch);
}

// --- state ----------------------------------------------------------------------------

bool FunctionBuilder::is_filled() const {
    return current_ && std::as_const(ctx_.status_)[*current_] == BlockStatus::Filled;
}

bool FunctionBuilder::is_pristine() const {
    return current_ && std::as_const(ctx_.status_)[*current_] == BlockStatus::Empty;
}

bool FunctionBuilder::is_unreachable() const {
    if (!current_) return false;
    Block b = *current_;
    return func.layout.entry_block() != std::optional<Block>(b) && ctx_.ssa_.is_sealed(b) &&
           ctx_.ssa_.num_predecessors(b) == 0;
}

Result<void> FunctionBuilder::finalize() {
    if (finalized_) return FrontendError::make(Kind::AlreadyFinalized, "finalize: the builder was already finalized");
    if (sticky_) return *sticky_;
    const SSABuilder& ssa = ctx_.ssa_;
    for (uint32_t i = 0; i < func.dfg.num_blocks(); ++i) {
        Block b(i);
        bool inserted = func.layout.is_block_inserted(b);
        if (!inserted && ssa.num_predecessors(b) == 0) continue;  // created but never used
        if (!ssa.is_sealed(b)) {
            return FrontendError::make(Kind::UnsealedBlock,
                                       "finalize: " + b.to_string() +
                                           " is not sealed (seal_block it once every branch to it is built)",
                                       b);
        }
        if (std::as_const(ctx_.status_)[b] != BlockStatus::Filled) {
            std::string why = inserted ? " does not end with a terminator" : " is a branch target but was never built";
            return FrontendError::make(Kind::UnterminatedBlock, "finalize: " + b.to_string() + why, b);
        }
    }
    ctx_.ssa_.remove_redundant_params(func);
    std::span<const Value> removed = ctx_.ssa_.removed_params();
    if (!removed.empty()) {
        ctx_.ssa_.flatten_aliases(func);
        // Most arguments are no alias: test inline, resolve only those.
        DataFlowGraph& dfg = func.dfg;
        auto resolve = [&dfg](Value& v) {
            if (dfg.value_is_alias(v)) [[unlikely]] v = dfg.resolve_aliases(v);
        };
        // Every instruction, in creation order (no layout walk): when no
        // error was recorded, each one is in the layout.
        const uint32_t num_insts = dfg.num_insts();
        for (uint32_t i = 0; i < num_insts; ++i) dfg.for_each_inst_value(Inst(i), resolve);
        // Nothing refers to them any more: detach them so that the function
        // has no aliases left (a self-alias is an unattached value).
        for (Value v : removed) func.dfg.change_to_alias(v, v);
    }
    finalized_ = true;
    return {};
}

}  // namespace heron
