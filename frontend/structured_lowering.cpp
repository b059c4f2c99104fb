// Region tree -> IR (structured_lowering.h). One recursive walk over the
// statements; `open_` says whether the current block can still take code
// (after a jump it cannot, and code that follows would be unreachable: it
// goes to a fresh block that no branch reaches).
#include "frontend/structured_lowering.h"

#include <vector>

namespace heron {
namespace {

class Lowering {
public:
    Lowering(const Function& src, const RegionTree& tree, Function& out, FunctionBuilderContext& ctx)
        : src_(src), tree_(tree), b_(out, ctx) {}

    std::optional<std::string> run() {
        const Block entry = b_.create_block();
        b_.append_block_params_for_function_params(entry);
        b_.switch_to_block(entry);
        open_ = true;
        const auto src_entry = src_.layout.entry_block();
        auto params = src_.dfg.block_params(*src_entry);
        for (size_t i = 0; i < params.size(); ++i) b_.def_var(var_of(params[i]), b_.block_params(entry)[i]);
        label_head_.assign(tree_.labels.size() + 1, Block());
        label_end_.assign(tree_.labels.size() + 1, Block());
        label_used_.assign(tree_.labels.size() + 1, 0);
        struct_vars_.assign(tree_.vars.size(), Variable());
        lower(tree_.root);
        if (open_ && !b_.is_filled()) b_.ins().trap(TrapCode::user(250));  // unreachable: every path ends
        b_.seal_all_blocks();
        Result<void> r = b_.finalize();
        if (too_deep_) return "lower_region_tree: statements nest deeper than " + std::to_string(kMaxNesting);
        if (!r.ok()) return r.error().message;
        return std::nullopt;
    }

private:
    Variable var_of(Value v) {
        v = src_.dfg.resolve_aliases(v);
        if (v.index() >= value_vars_.size()) value_vars_.resize(src_.dfg.num_values(), Variable());
        Variable& var = value_vars_[v.index()];
        if (!var.is_valid()) var = b_.declare_var(src_.dfg.value_type(v));
        return var;
    }
    Variable struct_var(uint32_t id) {
        Variable& var = struct_vars_[id];
        if (!var.is_valid()) var = b_.declare_var(tree_.vars[id].kind == VarKind::ExitCode ? types::I32 : types::I8);
        return var;
    }
    Value use(Value v) { return b_.use_var(var_of(v)); }

    void ensure_open() {
        if (open_ && !b_.is_filled()) return;
        b_.switch_to_block(b_.create_block());
        open_ = true;
    }
    void jump_to(Block target) {
        b_.ins().jump(target);
        open_ = false;
    }
    /// Continues in `b` if anything jumps there; otherwise nothing follows.
    void continue_in(Block b, bool used) {
        if (used) {
            b_.switch_to_block(b);
            open_ = true;
        } else {
            open_ = false;
        }
    }
    /// Jumps to `merge` if the current block can fall through; returns
    /// whether it did.
    bool fall_to(Block merge) {
        if (!open_ || b_.is_filled()) return false;
        jump_to(merge);
        return true;
    }

    void copy_inst(Inst inst) {
        InstructionData d = src_.dfg[inst];
        const unsigned n = d.num_fixed_args();
        for (unsigned i = 0; i < n; ++i) d.args[i] = use(d.args[i]);
        std::vector<Value> vargs;
        const uint32_t nv = d.vargs.size(src_.dfg.value_lists);
        for (uint32_t i = 0; i < nv; ++i) vargs.push_back(use(d.vargs.get(i, src_.dfg.value_lists)));
        d.vargs = ValueList();
        for (Value v : vargs) d.vargs.push(v, b_.func.dfg.value_lists);
        d.dests = {};
        auto old_results = src_.dfg.inst_results(inst);
        // Opcodes without a controlling type (f32const, f64const) take their
        // result type as the builder's `ctrl`, as InstBuilder does.
        Type ctrl = src_.dfg.ctrl_typevar(inst);
        if (!ctrl.is_valid() && !is_call(d.opcode) && !old_results.empty()) ctrl = src_.dfg.value_type(old_results[0]);
        const Inst copy = b_.ins().build(d, ctrl);
        std::vector<Value> new_results(b_.func.dfg.inst_results(copy).begin(), b_.func.dfg.inst_results(copy).end());
        for (size_t i = 0; i < old_results.size() && i < new_results.size(); ++i) {
            b_.def_var(var_of(old_results[i]), new_results[i]);
        }
        if (is_terminator(d.opcode)) open_ = false;
    }

    Value condition(const Stmt& st) {
        if (st.flags.empty()) return use(st.cond);
        Value any = b_.use_var(struct_var(st.flags[0]));
        for (size_t i = 1; i < st.flags.size(); ++i) any = b_.ins().bor(any, b_.use_var(struct_var(st.flags[i])));
        return any;
    }

    void lower(uint32_t s) {
        if (too_deep_ || depth_ > kMaxNesting) {
            too_deep_ = true;
            return;
        }
        ++depth_;
        lower_stmt(s);
        --depth_;
    }

    void lower_stmt(uint32_t s) {
        const Stmt& st = tree_.stmts[s];
        switch (st.kind) {
        case StmtKind::Seq:
            for (uint32_t k : st.kids) lower(k);
            return;
        case StmtKind::Code: {
            ensure_open();
            const Inst last = *src_.layout.last_inst(st.block);
            for (Inst i : src_.layout.block_insts(st.block)) {
                if (i != last) copy_inst(i);
            }
            return;
        }
        case StmtKind::Assign: {
            ensure_open();
            const BlockCall bc = src_.dfg.branch_destinations(st.inst)[st.dest];
            auto params = src_.dfg.block_params(bc.block(src_.dfg.value_lists));
            std::vector<Value> vals;
            for (Value a : bc.args(src_.dfg.value_lists)) vals.push_back(use(a));
            for (size_t i = 0; i < params.size(); ++i) b_.def_var(var_of(params[i]), vals[i]);
            return;
        }
        case StmtKind::If: lower_if(st); return;
        case StmtKind::Switch: lower_switch(st); return;
        case StmtKind::Loop: lower_loop(st); return;
        case StmtKind::Labeled: {
            const Block end = b_.create_block();
            label_end_[st.label] = end;
            lower(st.kids[0]);
            const bool fell = fall_to(end);
            continue_in(end, fell || label_used_[st.label]);
            return;
        }
        case StmtKind::Break:
            ensure_open();
            label_used_[st.label] = 1;
            jump_to(label_end_[st.label]);
            return;
        case StmtKind::Continue:
            ensure_open();
            jump_to(label_head_[st.label]);
            return;
        case StmtKind::SetVar: {
            ensure_open();
            const Variable v = struct_var(st.var);
            b_.def_var(v, b_.ins().iconst(b_.var_type(v), st.imm));
            return;
        }
        case StmtKind::Leaf:
            ensure_open();
            copy_inst(st.inst);
            return;
        }
    }

    void lower_if(const Stmt& st) {
        ensure_open();
        const Value c = condition(st);
        const Block yes = b_.create_block(), no = b_.create_block(), merge = b_.create_block();
        // A flag condition is true when no flag is set.
        if (st.flags.empty()) {
            b_.ins().brif(c, yes, no);
        } else {
            b_.ins().brif(c, no, yes);
        }
        b_.switch_to_block(yes);
        open_ = true;
        lower(st.kids[0]);
        bool used = fall_to(merge);
        b_.switch_to_block(no);
        open_ = true;
        lower(st.kids[1]);
        used |= fall_to(merge);
        continue_in(merge, used);
    }

    void lower_switch(const Stmt& st) {
        ensure_open();
        const Value sel = st.var != kNoVar ? b_.use_var(struct_var(st.var)) : use(st.cond);
        std::vector<Block> arm_blocks;
        uint32_t size = 0;
        for (size_t a = 0; a < st.kids.size(); ++a) {
            arm_blocks.push_back(b_.create_block());
            for (uint32_t c : st.cases[a]) size = std::max(size, c + 1);
        }
        std::vector<Block> entries(size, arm_blocks.back());
        for (size_t a = 0; a < st.kids.size(); ++a) {
            for (uint32_t c : st.cases[a]) entries[c] = arm_blocks[a];
        }
        const JumpTable jt = b_.create_jump_table(arm_blocks.back(), entries);
        b_.ins().br_table(sel, jt);
        open_ = false;
        const Block merge = b_.create_block();
        bool used = false;
        for (size_t a = 0; a < st.kids.size(); ++a) {
            b_.switch_to_block(arm_blocks[a]);
            open_ = true;
            lower(st.kids[a]);
            used |= fall_to(merge);
        }
        continue_in(merge, used);
    }

    void lower_loop(const Stmt& st) {
        ensure_open();
        const Block head = b_.create_block(), end = b_.create_block();
        label_head_[st.label] = head;
        label_end_[st.label] = end;
        jump_to(head);
        b_.switch_to_block(head);
        open_ = true;
        if (st.var != kNoVar) {
            const Block body = b_.create_block();
            b_.ins().brif(b_.use_var(struct_var(st.var)), end, body);
            label_used_[st.label] = 1;
            b_.switch_to_block(body);
        }
        lower(st.kids[0]);
        fall_to(head);
        continue_in(end, label_used_[st.label]);
    }

    const Function& src_;
    const RegionTree& tree_;
    FunctionBuilder b_;
    bool open_ = false;
    uint32_t depth_ = 0;
    bool too_deep_ = false;
    std::vector<Variable> value_vars_;
    std::vector<Variable> struct_vars_;
    std::vector<Block> label_head_, label_end_;
    std::vector<uint8_t> label_used_;
};

}  // namespace

std::optional<std::string> lower_region_tree(const Function& func, const RegionTree& tree, Function& out,
                                             FunctionBuilderContext& ctx) {
    if (!func.layout.entry_block()) return std::string("lower_region_tree: the function has no entry block");
    out.name = func.name;
    out.signature = func.signature;
    out.stack_slots = func.stack_slots;
    out.dfg.signatures = func.dfg.signatures;
    out.dfg.ext_funcs = func.dfg.ext_funcs;
    return Lowering(func, tree, out, ctx).run();
}

}  // namespace heron
