// The structurizer (structurize.h): region tree construction, the removal of
// break and continue, and the pseudo-code printer.
//
// Nodes. A block is node `b.index()`; a loop C seen from its parent region
// (one super-node with C's exits as successors) is node `num_blocks + C`.
// A loop header is both: the super-node from outside, and the block node
// that starts the body inside. The region of a node is the innermost loop
// that contains it as a direct member (kTop outside every loop).
//
// Emission is a work list of (node, sequence) tasks: "append the structured
// code of node's dominator subtree to this sequence". Each task appends to
// its own sequence only after every earlier append to it is done, so the
// order in which tasks run does not matter and nothing recurses:
//
//   do_tree(n):   merge children y1 < ... < yk of n (reverse postorder)
//                 block Lyk { ... block Ly1 { code(n); branches } ; tree(y1) ... } ; tree(yk)
//   branch to t:  continue R (t is R's header) | exitR = code; break R (t
//                 leaves R) | break Lt (t is a merge node) | tree(t) inline
#include "codegen/opt/structurize.h"

#include <algorithm>
#include <map>

#include "codegen/ir/printer.h"

namespace heron {

namespace {

constexpr uint32_t kTop = ~0u;

uint64_t exit_key(uint32_t loop, Block b) { return (static_cast<uint64_t>(loop) << 32) | b.index(); }

}  // namespace

std::string RegionTree::var_name(uint32_t var) const {
    const StructVar& v = vars[var];
    switch (v.kind) {
    case VarKind::ExitCode: return "exit" + std::to_string(v.label);
    case VarKind::BreakFlag: return "brk" + std::to_string(v.label);
    case VarKind::ContinueFlag: return "cont" + std::to_string(v.label);
    }
    return "?";
}

// --- region tree ---------------------------------------------------------------------

uint32_t Structurizer::node_of(Block b) const {
    if (auto l = loops_->loop_of_header(b)) return num_blocks_ + l->index();
    return b.index();
}

uint32_t Structurizer::region_of(uint32_t node) const {
    if (node >= num_blocks_) {
        auto p = loops_->parent(Loop(node - num_blocks_));
        return p ? p->index() : kTop;
    }
    auto l = loops_->innermost_loop(Block(node));
    return l ? l->index() : kTop;
}

uint32_t Structurizer::lift(Block d, uint32_t region) const {
    auto in = loops_->innermost_loop(d);
    uint32_t l = in ? in->index() : kTop;
    if (l == region) return d.index();
    for (;;) {
        auto p = loops_->parent(Loop(l));
        uint32_t pi = p ? p->index() : kTop;
        if (pi == region) return num_blocks_ + l;
        l = pi;
    }
}

bool Structurizer::in_region(uint32_t region, Block b) const {
    return region == kTop || loops_->contains(Loop(region), b);
}

Block Structurizer::header_block(uint32_t region) const { return loops_->header(Loop(region)); }

uint32_t Structurizer::add(Stmt s) {
    tree_->stmts.push_back(std::move(s));
    return static_cast<uint32_t>(tree_->stmts.size() - 1);
}

uint32_t Structurizer::new_label(bool is_loop, Block b) {
    tree_->labels.push_back({is_loop, b, {}});
    return static_cast<uint32_t>(tree_->labels.size());
}

void Structurizer::collect_arms(const Function& func, Inst term, std::vector<Arm>& arms) const {
    arms.clear();
    const InstructionData& d = func.dfg[term];
    auto dests = func.dfg.branch_destinations(term);
    if (d.format() != InstructionFormat::BranchTable) {
        for (uint32_t i = 0; i < dests.size(); ++i) arms.push_back({i, {}, false});
        return;
    }
    // br_table: destinations with the same block and arguments share an arm.
    std::map<std::vector<uint32_t>, uint32_t> seen;
    for (uint32_t i = 0; i < dests.size(); ++i) {
        std::vector<uint32_t> key{dests[i].block(func.dfg.value_lists).index()};
        for (Value v : dests[i].args(func.dfg.value_lists)) key.push_back(v.index());
        auto [it, fresh] = seen.emplace(std::move(key), static_cast<uint32_t>(arms.size()));
        if (fresh) arms.push_back({i, {}, false});
        Arm& arm = arms[it->second];
        if (i == 0) {
            arm.is_default = true;
        } else {
            arm.cases.push_back(i - 1);
        }
    }
}

void Structurizer::count_arms(const Function& func) {
    arms_in_.assign(num_blocks_ + loops_->num_loops(), 0);
    auto count = [&](uint32_t region, Block t) {
        if (region != kTop && t == header_block(region)) return;  // continue
        if (!in_region(region, t)) return;                          // an exit of the region
        ++arms_in_[node_of(t)];
    };
    for (Block b : domtree_->reverse_postorder()) {
        const Inst term = *func.layout.last_inst(b);
        collect_arms(func, term, arms_);
        auto dests = func.dfg.branch_destinations(term);
        for (const Arm& a : arms_) count(region_of(b.index()), dests[a.dest].block(func.dfg.value_lists));
    }
    for (Loop c : loops_->loops()) {
        const uint32_t parent = region_of(num_blocks_ + c.index());
        for (uint32_t i = exit_begin_[c.index()]; i < exit_begin_[c.index() + 1]; ++i) count(parent, exit_targets_[i]);
    }
}

void Structurizer::collect_exits() {
    exit_begin_.assign(1, 0);
    for (Loop c : loops_->loops()) {
        const size_t first = exit_targets_.size();
        for (Block e : loops_->exit_blocks(c)) exit_targets_.push_back(e);
        // The header's exit, if it has exactly one, is the normal exit: code 0.
        std::optional<Block> normal;
        for (const LoopEdge& e : loops_->exit_edges(c)) {
            if (e.from != loops_->header(c)) continue;
            if (normal && *normal != e.to) {
                normal.reset();
                break;
            }
            normal = e.to;
        }
        if (normal) {
            auto it = std::find(exit_targets_.begin() + first, exit_targets_.end(), *normal);
            std::rotate(exit_targets_.begin() + first, it, it + 1);
        }
        for (size_t i = first; i < exit_targets_.size(); ++i) {
            exit_code_[exit_key(c.index(), exit_targets_[i])] = static_cast<uint32_t>(i - first);
        }
        exit_begin_.push_back(static_cast<uint32_t>(exit_targets_.size()));
    }
}

std::optional<StructureError> Structurizer::run(const Function& func, RegionTree& out) {
    out.clear();
    auto entry = func.layout.entry_block();
    if (!entry || !func.layout.last_inst(*entry)) return StructureError{{}, {}, "structure: the function has no entry block"};
    own_cfg_.compute(func);
    own_domtree_.compute(func, own_cfg_);
    if (auto err = own_loops_.compute(func, own_cfg_, own_domtree_)) {
        return StructureError{err->from, err->to, err->message};
    }
    return run(func, own_cfg_, own_domtree_, own_loops_, out);
}

std::optional<StructureError> Structurizer::run(const Function& func, const ControlFlowGraph& cfg,
                                                const DominatorTree& domtree, const LoopAnalysis& loops,
                                                RegionTree& out) {
    out.clear();
    auto entry = func.layout.entry_block();
    if (!entry || !func.layout.last_inst(*entry)) return StructureError{{}, {}, "structure: the function has no entry block"};
    cfg_ = &cfg;
    domtree_ = &domtree;
    loops_ = &loops;
    tree_ = &out;
    func_ = &func;
    counted_.compute(func, loops);
    num_blocks_ = func.dfg.num_blocks();
    for (Block b : domtree_->reverse_postorder()) {
        auto last = func.layout.last_inst(b);
        if (!last || !is_terminator(func.dfg[*last].opcode)) {
            return StructureError{b, {}, "structure: " + b.to_string() + " does not end in a terminator"};
        }
    }
    exit_targets_.clear();
    exit_code_.clear();
    collect_exits();
    count_arms(func);

    // Merge children: nodes with several forward arms, by (lifted) idom, in
    // reverse postorder (a stable counting sort over the rpo walk).
    const uint32_t num_nodes = num_blocks_ + loops_->num_loops();
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (Block y : domtree_->reverse_postorder()) {
        auto d = domtree_->idom(y);
        if (!d) continue;
        const uint32_t n = node_of(y);
        if (arms_in_[n] < 2) continue;
        pairs.push_back({lift(*d, region_of(n)), n});
    }
    merge_begin_.assign(num_nodes + 1, 0);
    for (const auto& p : pairs) ++merge_begin_[p.first + 1];
    for (uint32_t i = 1; i <= num_nodes; ++i) merge_begin_[i] += merge_begin_[i - 1];
    merge_kids_.resize(pairs.size());
    {
        std::vector<uint32_t> next(merge_begin_.begin(), merge_begin_.end() - 1);
        for (const auto& p : pairs) merge_kids_[next[p.first]++] = p.second;
    }
    merge_label_.assign(num_nodes, 0);
    loop_label_.assign(loops_->num_loops(), 0);
    loop_var_.assign(loops_->num_loops(), kNoVar);

    out.stmts.reserve(6 * static_cast<size_t>(domtree_->reverse_postorder().size()));
    out.root = add(Stmt{});
    tasks_.clear();
    tasks_.push_back({entry->index(), out.root});
    while (!tasks_.empty()) {
        const Task t = tasks_.back();
        tasks_.pop_back();
        do_tree(func, t.node, t.seq);
    }
    tree_ = nullptr;
    // Consumers walk the tree recursively: bound its depth. A statement's
    // kids are always created after it, so one forward pass suffices.
    std::vector<uint32_t>& depth = merge_label_;  // reused as scratch
    depth.assign(out.stmts.size(), 0);
    for (uint32_t s = 0; s < out.stmts.size(); ++s) {
        for (uint32_t k : out.stmts[s].kids) depth[k] = depth[s] + 1;
        if (depth[s] <= kMaxNesting) continue;
        std::optional<Block> where;
        for (uint32_t t = s; t < out.stmts.size() && !where; ++t) {
            if (out.stmts[t].kind == StmtKind::Code) where = out.stmts[t].block;
        }
        out.clear();
        return StructureError{where, {},
                              "structure: statements nest deeper than " + std::to_string(kMaxNesting) +
                                  (where ? " (near " + where->to_string() + ")" : std::string())};
    }
    return std::nullopt;
}

void Structurizer::do_tree(const Function& func, uint32_t node, uint32_t seq) {
    uint32_t cur = seq;
    for (uint32_t i = merge_begin_[node + 1]; i-- > merge_begin_[node];) {
        const uint32_t y = merge_kids_[i];
        const Block yb = y < num_blocks_ ? Block(y) : loops_->header(Loop(y - num_blocks_));
        const uint32_t label = new_label(false, yb);
        merge_label_[y] = label;
        Stmt labeled;
        labeled.kind = StmtKind::Labeled;
        labeled.label = label;
        const uint32_t blk = add(std::move(labeled));
        const uint32_t body = add(Stmt{});
        tree_->stmts[blk].kids.push_back(body);
        append(cur, blk);
        tasks_.push_back({y, cur});
        cur = body;
    }
    if (node < num_blocks_) {
        Stmt code;
        code.kind = StmtKind::Code;
        code.block = Block(node);
        append(cur, add(std::move(code)));
        emit_terminator(func, Block(node), cur);
        return;
    }
    const Loop c(node - num_blocks_);
    const Block h = loops_->header(c);
    const uint32_t label = new_label(true, h);
    tree_->labels[label - 1].kind = counted_.describe(*func_, c);
    loop_label_[c.index()] = label;
    if (exit_begin_[c.index() + 1] - exit_begin_[c.index()] >= 2) {
        tree_->vars.push_back({VarKind::ExitCode, label});
        loop_var_[c.index()] = static_cast<uint32_t>(tree_->vars.size() - 1);
        Stmt set;
        set.kind = StmtKind::SetVar;
        set.var = loop_var_[c.index()];
        set.imm = 0;
        append(cur, add(std::move(set)));
    }
    Stmt loop;
    loop.kind = StmtKind::Loop;
    loop.label = label;
    loop.block = h;
    const uint32_t l = add(std::move(loop));
    const uint32_t body = add(Stmt{});
    tree_->stmts[l].kids.push_back(body);
    append(cur, l);
    tasks_.push_back({h.index(), body});
    emit_dispatch(c, cur);
}

void Structurizer::emit_terminator(const Function& func, Block b, uint32_t seq) {
    const Inst term = *func.layout.last_inst(b);
    const InstructionData& d = func.dfg[term];
    const uint32_t region = region_of(b.index());
    auto dests = func.dfg.branch_destinations(term);
    auto edge = [&](uint32_t dest, uint32_t into) {
        const Block t = dests[dest].block(func.dfg.value_lists);
        if (func.dfg.num_block_params(t) > 0) {
            Stmt assign;
            assign.kind = StmtKind::Assign;
            assign.inst = term;
            assign.dest = dest;
            append(into, add(std::move(assign)));
        }
        emit_goto(t, region, into);
    };
    switch (d.format()) {
    case InstructionFormat::Jump: edge(0, seq); return;
    case InstructionFormat::Brif: {
        Stmt s;
        s.kind = StmtKind::If;
        s.cond = d.args[0];
        const uint32_t st = add(std::move(s));
        const uint32_t then_seq = add(Stmt{});
        const uint32_t else_seq = add(Stmt{});
        tree_->stmts[st].kids = {then_seq, else_seq};
        append(seq, st);
        edge(0, then_seq);
        edge(1, seq);  // the then arm never falls through: no else needed
        return;
    }
    case InstructionFormat::BranchTable: {
        std::vector<Arm> arms;
        collect_arms(func, term, arms);
        // The default arm goes last.
        std::stable_partition(arms.begin(), arms.end(), [](const Arm& a) { return !a.is_default; });
        Stmt s;
        s.kind = StmtKind::Switch;
        s.cond = d.args[0];
        for (const Arm& a : arms) s.cases.push_back(a.cases);
        const uint32_t st = add(std::move(s));
        append(seq, st);
        for (const Arm& a : arms) {
            const uint32_t arm_seq = add(Stmt{});
            tree_->stmts[st].kids.push_back(arm_seq);
            // The default arm's code follows the switch (no arm falls through).
            edge(a.dest, a.is_default ? seq : arm_seq);
        }
        return;
    }
    default: {
        Stmt leaf;
        leaf.kind = StmtKind::Leaf;
        leaf.inst = term;
        append(seq, add(std::move(leaf)));
        return;
    }
    }
}

void Structurizer::emit_goto(Block t, uint32_t region, uint32_t seq) {
    if (region != kTop && t == header_block(region)) {
        Stmt s;
        s.kind = StmtKind::Continue;
        s.label = loop_label_[region];
        append(seq, add(std::move(s)));
        return;
    }
    if (!in_region(region, t)) {
        const uint32_t code = exit_code_.at(exit_key(region, t));
        if (loop_var_[region] != kNoVar && code != 0) {
            Stmt set;
            set.kind = StmtKind::SetVar;
            set.var = loop_var_[region];
            set.imm = code;
            append(seq, add(std::move(set)));
        }
        Stmt s;
        s.kind = StmtKind::Break;
        s.label = loop_label_[region];
        append(seq, add(std::move(s)));
        return;
    }
    const uint32_t n = node_of(t);
    if (arms_in_[n] >= 2) {
        Stmt s;
        s.kind = StmtKind::Break;
        s.label = merge_label_[n];
        append(seq, add(std::move(s)));
        return;
    }
    tasks_.push_back({n, seq});
}

void Structurizer::emit_dispatch(Loop c, uint32_t seq) {
    const uint32_t first = exit_begin_[c.index()];
    const uint32_t count = exit_begin_[c.index() + 1] - first;
    const uint32_t parent = region_of(num_blocks_ + c.index());
    if (count == 0) return;
    if (count == 1) {
        emit_goto(exit_targets_[first], parent, seq);
        return;
    }
    // Codes 1.. get arms; code 0 (the normal exit) is the default, whose
    // code follows the switch, so a chain of loops does not nest.
    Stmt s;
    s.kind = StmtKind::Switch;
    s.var = loop_var_[c.index()];
    for (uint32_t i = 1; i < count; ++i) s.cases.push_back({i});
    s.cases.push_back({0});
    const uint32_t st = add(std::move(s));
    append(seq, st);
    for (uint32_t i = 1; i <= count; ++i) {
        const uint32_t arm_seq = add(Stmt{});
        tree_->stmts[st].kids.push_back(arm_seq);
        if (i < count) emit_goto(exit_targets_[first + i], parent, arm_seq);
    }
    emit_goto(exit_targets_[first], parent, seq);
}

// --- removing break and continue ------------------------------------------------------

namespace {

class BreakRemover {
public:
    explicit BreakRemover(const RegionTree& in) : in_(in) {}

    std::optional<StructureError> run(RegionTree& out) {
        out_.stmts.reserve(in_.stmts.size() + in_.stmts.size() / 2);
        out_.vars = in_.vars;
        out_.labels = in_.labels;
        // A counted loop left by one break only (its header's test) keeps
        // its meaning as a counted loop; any other break makes it a loop on
        // a flag.
        std::vector<uint32_t> breaks(in_.labels.size() + 1, 0);
        for (const Stmt& st : in_.stmts) {
            if (st.kind == StmtKind::Break) ++breaks[st.label];
        }
        for (size_t n = 0; n < out_.labels.size(); ++n) {
            StructLabel& l = out_.labels[n];
            if (!l.is_loop || l.kind.rfind("counted ", 0) != 0) continue;
            l.counted_for = breaks[n + 1] == 1;
            if (!l.counted_for) l.kind = "conditional";
        }
        brk_.assign(in_.labels.size() + 1, kNoVar);
        cont_.assign(in_.labels.size() + 1, kNoVar);
        esc_.assign(in_.stmts.size(), {});
        falls_.assign(in_.stmts.size(), 1);
        if (!analyze(in_.root, 0)) return too_deep();
        out_.root = transform(in_.root, 0);
        if (deep_) return too_deep();
        drop_unread_flags();
        out_.no_break = true;
        out = std::move(out_);
        return std::nullopt;
    }

private:
    static StructureError too_deep() {
        return {{}, {}, "structure: statements nest deeper than " + std::to_string(kMaxNesting)};
    }

    uint32_t flag(std::vector<uint32_t>& table, VarKind kind, uint32_t label) {
        if (table[label] == kNoVar) {
            out_.vars.push_back({kind, label});
            table[label] = static_cast<uint32_t>(out_.vars.size() - 1);
        }
        return table[label];
    }

    static void unite(std::vector<uint32_t>& into, const std::vector<uint32_t>& from) {
        for (uint32_t f : from) {
            if (std::find(into.begin(), into.end(), f) == into.end()) into.push_back(f);
        }
    }
    static void drop(std::vector<uint32_t>& set, uint32_t f) {
        set.erase(std::remove(set.begin(), set.end(), f), set.end());
    }
    static bool has(const std::vector<uint32_t>& set, uint32_t f) {
        return f != kNoVar && std::find(set.begin(), set.end(), f) != set.end();
    }

    // Which flags a statement may set to leave itself (its escapes), and
    // whether it may complete normally (an over-approximation).
    bool analyze(uint32_t s, uint32_t depth) {
        if (depth > kMaxNesting) return false;
        const Stmt& st = in_.stmts[s];
        std::vector<uint32_t> esc;
        bool falls = true;
        switch (st.kind) {
        case StmtKind::Code:
        case StmtKind::Assign:
        case StmtKind::SetVar: break;
        case StmtKind::Leaf: falls = false; break;
        case StmtKind::Break:
            esc.push_back(flag(brk_, VarKind::BreakFlag, st.label));
            falls = false;
            break;
        case StmtKind::Continue:
            esc.push_back(flag(cont_, VarKind::ContinueFlag, st.label));
            falls = false;
            break;
        case StmtKind::Seq:
            for (uint32_t k : st.kids) {
                if (!analyze(k, depth + 1)) return false;
                unite(esc, esc_[k]);
                falls = falls && falls_[k];
            }
            break;
        case StmtKind::If:
        case StmtKind::Switch:
            falls = false;
            for (uint32_t k : st.kids) {
                if (!analyze(k, depth + 1)) return false;
                unite(esc, esc_[k]);
                falls = falls || falls_[k];
            }
            break;
        case StmtKind::Labeled: {
            if (!analyze(st.kids[0], depth + 1)) return false;
            esc = esc_[st.kids[0]];
            const bool left = has(esc, brk_[st.label]);
            drop(esc, brk_[st.label]);
            falls = falls_[st.kids[0]] || left;
            break;
        }
        case StmtKind::Loop: {
            if (!analyze(st.kids[0], depth + 1)) return false;
            esc = esc_[st.kids[0]];
            falls = has(esc, brk_[st.label]);
            drop(esc, brk_[st.label]);
            drop(esc, cont_[st.label]);
            break;
        }
        }
        esc_[s] = std::move(esc);
        falls_[s] = falls;
        return true;
    }

    // A flag that no loop condition and no guard reads (a continue or break
    // at the very end of its construct) need not be set at all.
    void drop_unread_flags() {
        std::vector<uint8_t> read(out_.vars.size(), 0);
        for (const Stmt& st : out_.stmts) {
            for (uint32_t f : st.flags) read[f] = 1;
            if (st.kind == StmtKind::Loop && st.var != kNoVar) read[st.var] = 1;
        }
        auto unread = [&](uint32_t k) {
            const Stmt& st = out_.stmts[k];
            return st.kind == StmtKind::SetVar && out_.vars[st.var].kind != VarKind::ExitCode && !read[st.var];
        };
        for (Stmt& st : out_.stmts) {
            if (st.kind != StmtKind::Seq) continue;
            st.kids.erase(std::remove_if(st.kids.begin(), st.kids.end(), unread), st.kids.end());
        }
    }

    uint32_t add(Stmt s) {
        out_.stmts.push_back(std::move(s));
        return static_cast<uint32_t>(out_.stmts.size() - 1);
    }
    uint32_t set_var(uint32_t var, int64_t imm) {
        Stmt s;
        s.kind = StmtKind::SetVar;
        s.var = var;
        s.imm = imm;
        return add(std::move(s));
    }
    uint32_t seq(std::vector<uint32_t> kids) {
        Stmt s;
        s.kids = std::move(kids);
        return add(std::move(s));
    }

    uint32_t transform(uint32_t s, uint32_t depth) {
        if (depth > kMaxNesting) {
            deep_ = true;
            return seq({});
        }
        const Stmt& st = in_.stmts[s];
        switch (st.kind) {
        case StmtKind::Code:
        case StmtKind::Assign:
        case StmtKind::SetVar:
        case StmtKind::Leaf: return add(st);
        case StmtKind::Break: return set_var(brk_[st.label], 1);
        case StmtKind::Continue: return set_var(cont_[st.label], 1);
        case StmtKind::Seq: return transform_seq(st.kids, 0, depth);
        case StmtKind::If:
        case StmtKind::Switch: {
            Stmt copy = st;
            for (uint32_t& k : copy.kids) k = transform(k, depth + 1);
            return add(std::move(copy));
        }
        case StmtKind::Labeled: {
            const uint32_t body = transform(st.kids[0], depth + 1);
            const uint32_t f = brk_[st.label];
            if (f == kNoVar) return body;
            return seq({set_var(f, 0), body});
        }
        case StmtKind::Loop: {
            const uint32_t label = st.label;
            const Block header = st.block;
            const uint32_t body = transform(st.kids[0], depth + 1);
            const uint32_t b = brk_[label], c = cont_[label];
            Stmt loop;
            loop.kind = StmtKind::Loop;
            loop.label = label;
            loop.block = header;
            loop.var = b;
            loop.kids.push_back(c == kNoVar ? body : seq({set_var(c, 0), body}));
            const uint32_t l = add(std::move(loop));
            return b == kNoVar ? l : seq({set_var(b, 0), l});
        }
        }
        return seq({});
    }

    // The statements items[start..] as one sequence. After a statement that
    // may leave an enclosing construct, the rest runs only if it did not:
    // in the arm of an if or switch that cannot leave, when every other arm
    // always leaves; otherwise under `if !(flags)`.
    uint32_t transform_seq(const std::vector<uint32_t>& items, size_t start, uint32_t depth) {
        std::vector<uint32_t> out;
        for (size_t i = start; i < items.size(); ++i) {
            const uint32_t s = items[i];
            const bool last = i + 1 == items.size();
            if (last || esc_[s].empty()) {
                out.push_back(transform(s, depth + 1));
                continue;
            }
            const Stmt& st = in_.stmts[s];
            if (st.kind == StmtKind::If || st.kind == StmtKind::Switch) {
                // One arm completes without leaving, every other arm never
                // completes: the rest of the sequence goes into that arm.
                for (size_t o = 0; o < st.kids.size(); ++o) {
                    const uint32_t arm = st.kids[o];
                    if (!esc_[arm].empty() || !falls_[arm]) continue;
                    bool others_leave = true;
                    for (size_t a = 0; a < st.kids.size(); ++a) others_leave &= a == o || !falls_[st.kids[a]];
                    if (!others_leave) continue;
                    std::vector<uint32_t> rest;
                    if (in_.stmts[arm].kind == StmtKind::Seq) {
                        rest = in_.stmts[arm].kids;
                    } else {
                        rest.push_back(arm);
                    }
                    rest.insert(rest.end(), items.begin() + static_cast<std::ptrdiff_t>(i) + 1, items.end());
                    Stmt copy = in_.stmts[s];
                    for (size_t a = 0; a < copy.kids.size(); ++a) {
                        copy.kids[a] = a == o ? transform_seq(rest, 0, depth + 1) : transform(copy.kids[a], depth + 1);
                    }
                    out.push_back(add(std::move(copy)));
                    return seq(std::move(out));
                }
            }
            out.push_back(transform(s, depth + 1));
            Stmt guard;
            guard.kind = StmtKind::If;
            guard.flags = esc_[s];
            std::sort(guard.flags.begin(), guard.flags.end());
            guard.kids = {transform_seq(items, i + 1, depth + 1), seq({})};
            out.push_back(add(std::move(guard)));
            return seq(std::move(out));
        }
        return seq(std::move(out));
    }

    const RegionTree& in_;
    RegionTree out_;
    std::vector<uint32_t> brk_, cont_;  // by label
    std::vector<std::vector<uint32_t>> esc_;
    std::vector<uint8_t> falls_;
    bool deep_ = false;
};

}  // namespace

std::optional<StructureError> remove_break_continue(RegionTree& tree) {
    if (tree.no_break) return std::nullopt;
    BreakRemover remover(tree);
    return remover.run(tree);
}

// --- printer ----------------------------------------------------------------------------

namespace {

class TreePrinter {
public:
    TreePrinter(const Function& func, const RegionTree& tree, std::string& out)
        : func_(func), tree_(tree), out_(out) {}

    void print(uint32_t s, uint32_t depth) {
        if (depth > kMaxNesting) {
            line(depth, "; ... statements nest deeper than " + std::to_string(kMaxNesting));
            return;
        }
        const Stmt& st = tree_.stmts[s];
        switch (st.kind) {
        case StmtKind::Seq:
            for (uint32_t k : st.kids) print(k, depth);
            return;
        case StmtKind::Code: {
            line(depth, st.block.to_string() + ":");
            const Inst last = *func_.layout.last_inst(st.block);
            for (Inst i : func_.layout.block_insts(st.block)) {
                if (i != last) line(depth + 1, print_inst(func_, i));
            }
            return;
        }
        case StmtKind::Assign: {
            const BlockCall bc = func_.dfg.branch_destinations(st.inst)[st.dest];
            const Block t = bc.block(func_.dfg.value_lists);
            std::string lhs, rhs;
            for (Value p : func_.dfg.block_params(t)) lhs += (lhs.empty() ? "" : ", ") + p.to_string();
            for (Value a : bc.args(func_.dfg.value_lists)) rhs += (rhs.empty() ? "" : ", ") + a.to_string();
            line(depth, lhs + " := " + rhs);
            return;
        }
        case StmtKind::If: {
            line(depth, "if " + condition(st) + " {");
            print_arm(st.kids[0], depth + 1);
            if (!is_empty(st.kids[1])) {
                line(depth, "} else {");
                print(st.kids[1], depth + 1);
            }
            line(depth, "}");
            return;
        }
        case StmtKind::Switch: {
            line(depth, "switch " + (st.var != kNoVar ? tree_.var_name(st.var) : st.cond.to_string()) + " {");
            for (size_t a = 0; a < st.kids.size(); ++a) {
                // An empty default arm: unlisted values continue after the switch.
                if (a + 1 == st.kids.size() && is_empty(st.kids[a])) break;
                std::string head;
                for (uint32_t c : st.cases[a]) head += (head.empty() ? "case " : ", ") + std::to_string(c);
                if (a + 1 == st.kids.size()) head += head.empty() ? "default" : ", default";
                line(depth + 1, head + ":");
                print_arm(st.kids[a], depth + 2);
            }
            line(depth, "}");
            return;
        }
        case StmtKind::Loop: {
            const std::string label = "L" + std::to_string(st.label);
            const std::string& kind = tree_.labels[st.label - 1].kind;
            if (!tree_.no_break) {
                line(depth, "loop " + label + " {  ; " + kind);
            } else if (tree_.labels[st.label - 1].counted_for) {
                // "counted v3 in [A, B] step S cc" -> "for v3 in [A, B] step S cc"
                const std::string flag = st.var != kNoVar ? " (while !" + tree_.var_name(st.var) + ")" : "";
                line(depth, "for " + kind.substr(8) + " {  ; " + label + flag);
            } else if (st.var != kNoVar) {
                line(depth, "while !" + tree_.var_name(st.var) + " {  ; " + label + " " + kind);
            } else {
                line(depth, "while true {  ; " + label + " " + kind);
            }
            print(st.kids[0], depth + 1);
            line(depth, "}");
            return;
        }
        case StmtKind::Labeled:
            line(depth, "block L" + std::to_string(st.label) + " {");
            print(st.kids[0], depth + 1);
            line(depth, "}");
            return;
        case StmtKind::Break: line(depth, "break L" + std::to_string(st.label)); return;
        case StmtKind::Continue: line(depth, "continue L" + std::to_string(st.label)); return;
        case StmtKind::SetVar: line(depth, tree_.var_name(st.var) + " = " + std::to_string(st.imm)); return;
        case StmtKind::Leaf: line(depth, print_inst(func_, st.inst)); return;
        }
    }

private:
    /// An arm that does nothing says so, so that it does not read as falling
    /// into the next one.
    void print_arm(uint32_t s, uint32_t depth) {
        if (is_empty(s)) {
            line(depth, "pass");
        } else {
            print(s, depth);
        }
    }
    bool is_empty(uint32_t s) const {
        const Stmt& st = tree_.stmts[s];
        return st.kind == StmtKind::Seq && st.kids.empty();
    }
    std::string condition(const Stmt& st) const {
        if (st.flags.empty()) return st.cond.to_string();
        if (st.flags.size() == 1) return "!" + tree_.var_name(st.flags[0]);
        std::string s = "!(";
        for (size_t i = 0; i < st.flags.size(); ++i) s += (i ? " | " : "") + tree_.var_name(st.flags[i]);
        return s + ")";
    }
    void line(uint32_t depth, const std::string& text) {
        out_.append(4 * (depth + 1), ' ');
        out_ += text;
        out_ += '\n';
    }

    const Function& func_;
    const RegionTree& tree_;
    std::string& out_;
};

}  // namespace

std::string print_region_tree(const Function& func, const RegionTree& tree) {
    std::string out = "function " + func.name.to_string() + print_signature(func.signature) + " {\n";
    TreePrinter(func, tree, out).print(tree.root, 0);
    out += "}\n";
    return out;
}

}  // namespace heron
