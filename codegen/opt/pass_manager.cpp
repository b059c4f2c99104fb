// PassManager and PassContext; the pipeline runner is one loop:
//
//   for each pass:  ensure(required)  ->  run  ->  invalidate(closure) if
//                   changed  ->  verify if asked  ->  produce  ->  dump
#include "codegen/opt/pass_manager.h"

#include <algorithm>

#include "codegen/opt/tail_accumulate.h"
#include "codegen/verifier/verifier.h"

namespace heron {

std::string_view property_name(Property p) {
    switch (p) {
    case Property::Verified: return "Verified";
    case Property::CfgValid: return "CfgValid";
    case Property::DomTreeValid: return "DomTreeValid";
    case Property::LoopsValid: return "LoopsValid";
    case Property::LoopForm: return "LoopForm";
    case Property::CountedLoopsKnown: return "CountedLoopsKnown";
    case Property::Structured: return "Structured";
    }
    return "?";
}

PropertySet PropertySet::closure(PropertySet s) {
    // Dependencies, each listed after what it depends on, so one forward
    // sweep closes the set.
    if (s.contains(Property::CfgValid)) {
        s.insert({Property::DomTreeValid, Property::LoopForm, Property::Structured});
    }
    if (s.contains(Property::DomTreeValid)) s.insert(Property::LoopsValid);
    if (s.contains(Property::LoopsValid)) s.insert(Property::CountedLoopsKnown);
    return s;
}

std::string PropertySet::to_string() const {
    std::string out;
    for (unsigned i = 0; i < kNumProperties; ++i) {
        const auto p = static_cast<Property>(i);
        if (!contains(p)) continue;
        if (!out.empty()) out += ", ";
        out += property_name(p);
    }
    return out.empty() ? "none" : out;
}

// --- PassContext ---------------------------------------------------------------------

void PassContext::bind(Function& func, bool cfg_and_domtree_current) {
    func_ = &func;
    valid_ = {};
    if (cfg_and_domtree_current) valid_ = {Property::CfgValid, Property::DomTreeValid};
    cfg_state_ = CfgState::FromFunction;
    loop_error_.reset();
    for (uint32_t& c : computations_) c = 0;
}

const ControlFlowGraph& PassContext::cfg() {
    HERON_ASSERT(func_ && "PassContext::bind first");
    if (!valid_.contains(Property::CfgValid)) {
        cfg_.compute(*func_);
        valid_.insert(Property::CfgValid);
        ++computations_[static_cast<unsigned>(Property::CfgValid)];
    }
    return cfg_;
}

const DominatorTree& PassContext::domtree() {
    if (!valid_.contains(Property::DomTreeValid)) {
        const ControlFlowGraph& g = cfg();
        domtree_.compute(*func_, g);
        valid_.insert(Property::DomTreeValid);
        ++computations_[static_cast<unsigned>(Property::DomTreeValid)];
    }
    return domtree_;
}

const LoopAnalysis* PassContext::loops(std::optional<LoopError>* error) {
    if (!valid_.contains(Property::LoopsValid)) {
        const DominatorTree& dt = domtree();
        loop_error_ = loops_.compute(*func_, cfg_, dt);
        valid_.insert(Property::LoopsValid);
        ++computations_[static_cast<unsigned>(Property::LoopsValid)];
    }
    if (error) *error = loop_error_;
    return loop_error_ ? nullptr : &loops_;
}

const CountedLoops* PassContext::counted_loops(std::optional<LoopError>* error) {
    const LoopAnalysis* l = loops(error);
    if (!l) return nullptr;
    if (!valid_.contains(Property::CountedLoopsKnown)) {
        counted_.compute(*func_, *l);
        valid_.insert(Property::CountedLoopsKnown);
        ++computations_[static_cast<unsigned>(Property::CountedLoopsKnown)];
    }
    return &counted_;
}

LoopAnalysis& PassContext::recompute_cfg_keep_loops() {
    HERON_ASSERT(valid_.contains(Property::LoopsValid) && !loop_error_ && "recompute_cfg_keep_loops: no loops");
    update_cfg();
    valid_ = {Property::CfgValid};
    return loops_;
}

void PassContext::note_split(Block fresh, Block target, std::span<const Inst> sources) {
    HERON_ASSERT(valid_.contains(Property::CfgValid) && "note_split: the CFG was not current");
    cfg_.split_edges(fresh, *func_->layout.last_inst(fresh), target, sources, func_->layout);
    cfg_state_ = CfgState::Patched;
}

void PassContext::update_cfg() {
    switch (cfg_state_) {
    case CfgState::FromFunction:
        cfg_.compute(*func_);
        ++computations_[static_cast<unsigned>(Property::CfgValid)];
        break;
    case CfgState::Patched: cfg_.rebuild_rows(func_->dfg.num_blocks()); break;
    case CfgState::Current: break;
    }
    cfg_state_ = CfgState::Current;
}

LoopAnalysis& PassContext::loops_to_patch() {
    HERON_ASSERT(loops_.is_valid() && !loop_error_ && "loops_to_patch: no loops");
    return loops_;
}

void PassContext::keep_loop_nest() {
    HERON_ASSERT(loops_.is_valid() && !loop_error_ && "keep_loop_nest: no loops");
    update_cfg();
    cfg_state_ = CfgState::FromFunction;
    domtree_.compute(*func_, cfg_);
    ++computations_[static_cast<unsigned>(Property::DomTreeValid)];
    loops_.refresh_rows(*func_, cfg_, domtree_);
    valid_ = {Property::CfgValid, Property::DomTreeValid, Property::LoopsValid};
}

void PassContext::bypass_removed_blocks(std::span<const uint32_t> target) {
    valid_.erase(PropertySet{Property::CountedLoopsKnown});
    if (!valid_.contains(Property::CfgValid)) return;
    cfg_.bypass_removed(target);
    if (!valid_.contains(Property::DomTreeValid)) return;
    removed_.assign(target.size(), 0);
    for (size_t b = 0; b < target.size(); ++b) removed_[b] = target[b] != ControlFlowGraph::kNoTarget;
    domtree_.remove_blocks(removed_);
    if (!valid_.contains(Property::LoopsValid)) return;
    if (loop_error_ || !loops_.remove_blocks(removed_, *func_, cfg_, domtree_)) invalidate({Property::LoopsValid});
}

void PassContext::invalidate(PropertySet s) {
    valid_.erase(PropertySet::closure(s));
    if (!valid_.contains(Property::CfgValid)) cfg_state_ = CfgState::FromFunction;
}

// --- the check of kept analyses --------------------------------------------------------

namespace {

template <typename T, typename Eq>
bool same_rows(std::span<const T> a, std::span<const T> b, Eq eq) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), eq);
}
template <typename T>
bool same_rows(std::span<const T> a, std::span<const T> b) {
    return same_rows(a, b, [](const T& x, const T& y) { return x == y; });
}

// Each returns what differs first, or "" when nothing does.
std::string cfg_difference(uint32_t nb, const ControlFlowGraph& kept, const ControlFlowGraph& fresh) {
    for (uint32_t i = 0; i < nb; ++i) {
        const Block b(i);
        if (!same_rows(kept.successors(b), fresh.successors(b))) return "the successors of " + b.to_string();
        if (!same_rows(kept.predecessors(b), fresh.predecessors(b))) return "the predecessors of " + b.to_string();
    }
    return "";
}

std::string domtree_difference(uint32_t nb, const DominatorTree& kept, const DominatorTree& fresh) {
    if (!same_rows(kept.reverse_postorder(), fresh.reverse_postorder())) return "the reverse postorder";
    for (uint32_t i = 0; i < nb; ++i) {
        const Block b(i);
        if (kept.is_reachable(b) != fresh.is_reachable(b) || kept.idom(b) != fresh.idom(b))
            return "the immediate dominator of " + b.to_string();
        if (!same_rows(kept.children(b), fresh.children(b))) return "the dominator tree children of " + b.to_string();
    }
    return "";
}

std::string loops_difference(uint32_t nb, const LoopAnalysis& kept, const LoopAnalysis& fresh) {
    if (kept.num_loops() != fresh.num_loops()) return "the number of loops";
    auto same_edge = [](const LoopEdge& x, const LoopEdge& y) {
        return x.from == y.from && x.inst == y.inst && x.to == y.to;
    };
    for (Loop l : fresh.loops()) {
        const std::string which = " of " + l.to_string();
        if (kept.header(l) != fresh.header(l) || kept.parent(l) != fresh.parent(l) ||
            kept.subtree_size(l) != fresh.subtree_size(l))
            return "the place in the loop tree" + which;
        if (!same_rows(kept.blocks(l), fresh.blocks(l))) return "the blocks" + which;
        if (!same_rows(kept.latches(l), fresh.latches(l))) return "the latches" + which;
        if (!same_rows(kept.entries(l), fresh.entries(l), same_edge)) return "the entering edges" + which;
        if (kept.preheader(l) != fresh.preheader(l)) return "the preheader" + which;
        if (!same_rows(kept.exit_edges(l), fresh.exit_edges(l), same_edge)) return "the exit edges" + which;
        if (!same_rows(kept.exit_blocks(l), fresh.exit_blocks(l))) return "the exit blocks" + which;
    }
    for (uint32_t i = 0; i < nb; ++i) {
        if (kept.innermost_loop(Block(i)) != fresh.innermost_loop(Block(i)))
            return "the innermost loop of " + Block(i).to_string();
    }
    return "";
}

std::string counted_difference(const CountedLoops& kept, const CountedLoops& fresh) {
    if (kept.all().size() != fresh.all().size()) return "which loops are counted";
    for (size_t k = 0; k < kept.all().size(); ++k) {
        const CountedLoop& a = kept.all()[k];
        const CountedLoop& b = fresh.all()[k];
        if (a.loop != b.loop || a.iv != b.iv || a.iv_index != b.iv_index || a.init != b.init || a.bound != b.bound ||
            a.next != b.next || a.step != b.step || a.cond != b.cond || a.compare != b.compare ||
            a.branch != b.branch || a.no_exit_at_max != b.no_exit_at_max)
            return "the counted range of " + a.loop.to_string();
    }
    return "";
}

}  // namespace

std::optional<std::string> PassContext::stale_analysis() {
    HERON_ASSERT(func_ && "PassContext::bind first");
    const Function& f = *func_;
    const uint32_t nb = f.dfg.num_blocks();
    auto report = [](Property p, const std::string& what) -> std::optional<std::string> {
        if (what.empty()) return std::nullopt;
        return std::string(property_name(p)) + " (" + what + " differ)";
    };
    if (!valid_.contains(Property::CfgValid)) return std::nullopt;
    const ControlFlowGraph cfg(f);
    if (auto e = report(Property::CfgValid, cfg_difference(nb, cfg_, cfg))) return e;
    if (!valid_.contains(Property::DomTreeValid)) return std::nullopt;
    const DominatorTree dt(f, cfg);
    if (auto e = report(Property::DomTreeValid, domtree_difference(nb, domtree_, dt))) return e;
    if (!valid_.contains(Property::LoopsValid)) return std::nullopt;
    LoopAnalysis loops;
    const std::optional<LoopError> error = loops.compute(f, cfg, dt);
    if (error.has_value() != loop_error_.has_value()) return report(Property::LoopsValid, "reducibility");
    if (error) return std::nullopt;
    if (auto e = report(Property::LoopsValid, loops_difference(nb, loops_, loops))) return e;
    if (!valid_.contains(Property::CountedLoopsKnown)) return std::nullopt;
    CountedLoops counted;
    counted.compute(f, loops);
    return report(Property::CountedLoopsKnown, counted_difference(counted_, counted));
}

// --- pass needs ----------------------------------------------------------------------

uint8_t scan_pass_needs(const Function& func, uint8_t wanted) {
    constexpr uint8_t kWalked = pass_needs::kCycle | pass_needs::kForwarder;
    // A walked need not wanted starts as found, so the walk neither looks
    // for it nor waits for it; the result is masked at the end.
    uint8_t found = ~wanted & kWalked;
    if (const PackedOption<Block> entry = func.layout.entry_block()) {
        const PackedOption<Inst> last = func.layout.last_inst(*entry);
        if (last && func.dfg[*last].opcode == Opcode::Brif) found |= pass_needs::kEntryBrif;
    }
    if ((wanted & pass_needs::kSelfCall) && declares_self(func)) found |= pass_needs::kSelfCall;
    if ((wanted & pass_needs::kStackSlot) && !func.stack_slots.empty()) found |= pass_needs::kStackSlot;
    if ((found & kWalked) == kWalked) return found & wanted;
    for (Block b : func.layout.blocks()) {
        const PackedOption<Inst> first = func.layout.first_inst(b);
        if (!first) continue;
        const Inst last = *func.layout.last_inst(b);
        if (last == *first && func.dfg[last].opcode == Opcode::Jump) found |= pass_needs::kForwarder;
        if (!(found & pass_needs::kCycle)) {
            for (const BlockCall& bc : func.dfg.branch_destinations(last)) {
                const Block to = bc.block(func.dfg.value_lists);
                if (!func.layout.block_before(b, to)) {
                    found |= pass_needs::kCycle;
                    break;
                }
            }
        }
        if ((found & kWalked) == kWalked) break;
    }
    return found & wanted;
}

// --- PassManager -----------------------------------------------------------------------

std::optional<std::string> PassManager::add_pipeline(std::string_view names) {
    std::vector<const Pass*> found;
    while (!names.empty()) {
        const size_t comma = names.find(',');
        std::string_view name = names.substr(0, comma);
        names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
        while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
        while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
        if (name.empty()) continue;
        const Pass* p = find_pass(name);
        if (!p) {
            std::string known;
            for (const Pass& q : registered_passes()) known += (known.empty() ? "" : ", ") + std::string(q.name);
            return "unknown pass '" + std::string(name) + "' (known: " + known + ")";
        }
        found.push_back(p);
    }
    pipeline_.insert(pipeline_.end(), found.begin(), found.end());
    return std::nullopt;
}

std::optional<std::string> PassManager::ensure(const Pass& pass, bool skipped) {
    auto who = [&] { return "pass " + std::string(pass.name); };
    for (unsigned i = 0; i < kNumProperties; ++i) {
        const auto p = static_cast<Property>(i);
        if (!pass.required.contains(p)) continue;
        // A skipped pass computes no analysis, but a pipeline that lacks a
        // shape it requires is wrong whatever the function.
        if (skipped && p != Property::LoopForm && p != Property::Structured) continue;
        std::optional<LoopError> loop_error;
        switch (p) {
        case Property::CfgValid: ctx_.cfg(); break;
        case Property::DomTreeValid: ctx_.domtree(); break;
        case Property::LoopsValid:
            if (!ctx_.loops(&loop_error)) return who() + ": " + loop_error->message;
            break;
        case Property::Verified:
            if (!held_.contains(p)) {
                VerifierErrors errors;
                if (!verify_function(ctx_.function(), errors))
                    return who() + " requires valid IR: " + format_verifier_errors(errors);
            }
            break;
        case Property::CountedLoopsKnown:
            if (!ctx_.counted_loops(&loop_error)) return who() + ": " + loop_error->message;
            break;
        case Property::LoopForm:
        case Property::Structured:
            if (!held_.contains(p))
                return who() + " requires " + std::string(property_name(p)) + ", which no earlier pass produced";
            break;
        }
        held_.insert(p);
    }
    return std::nullopt;
}

std::optional<std::string> PassManager::run(Function& func, uint8_t present, bool cfg_and_domtree_current) {
    ctx_.bind(func, cfg_and_domtree_current);
    held_ = {};
    skipped_ = 0;
    repeats_skipped_ = 0;
    constexpr uint32_t kNotIdle = ~0u;
    idle_at_.assign(pipeline_.size(), kNotIdle);
    uint32_t changes = 0;  // passes that changed the function so far
    // Whether pass `k` already ran with no change on the function as it is.
    // A pass that builds the region tree (produces Structured) writes the
    // context, not only the IR (remove-break edits the tree): it always runs.
    auto is_repeat = [&](size_t k) {
        const Pass& p = *pipeline_[k];
        if (p.only_produces && !p.produced.empty() && held_.contains_all(p.produced)) return true;
        if (p.produced.contains(Property::Structured)) return false;
        for (size_t j = 0; j < k; ++j) {
            if (pipeline_[j] == pipeline_[k] && idle_at_[j] == changes) return true;
        }
        return false;
    };
    // `present` is current for the needs in `known`. After a pass changed
    // the function only kSelfCall is (no pass adds declarations, and the
    // JIT withholds it when the names disagree): the others are looked for
    // again when a pass needs them, and only those.
    uint8_t known = pass_needs::kAll;
    if (options_.verify_each) {
        VerifierErrors errors;
        if (!verify_function(func, errors)) return "input does not verify: " + format_verifier_errors(errors);
        held_.insert(Property::Verified);
    }
    for (size_t k = 0; k < pipeline_.size(); ++k) {
        const Pass* pass = pipeline_[k];
        PassResult r;
        if (const uint8_t stale = pass->needs & ~known) {
            present = (present & ~stale) | scan_pass_needs(func, stale);
            known |= stale;
        }
        const bool skip = (present & pass->needs) != pass->needs;
        const bool repeat = !skip && is_repeat(k);
        if (auto err = ensure(*pass, skip || repeat)) return err;
        if (skip) {
            ++skipped_;
        } else if (repeat) {
            ++repeats_skipped_;
        } else {
            r = pass->run(func, ctx_);
            if (!r.error.empty()) return "pass " + std::string(pass->name) + ": " + r.error;
            if (!r.changed) idle_at_[k] = changes;
        }
        if (r.changed) {
            ++changes;
            known = pass_needs::kSelfCall;
            PropertySet lost = PropertySet::closure(pass->invalidated);
            lost.insert(Property::Verified);
            ctx_.invalidate(lost);
            held_.erase(lost);
        }
        if (options_.verify_each && !held_.contains(Property::Verified)) {
            VerifierErrors errors;
            if (!verify_function(func, errors))
                return "after pass " + std::string(pass->name) + ": " + format_verifier_errors(errors);
            held_.insert(Property::Verified);
            // What the pass kept must be what it would be recomputed as.
            if (auto stale = ctx_.stale_analysis())
                return "pass " + std::string(pass->name) + " changed the function but kept " + *stale;
        }
        held_.insert(pass->produced);
        // Analysis properties hold exactly while their cache is current.
        held_.erase({Property::CfgValid, Property::DomTreeValid, Property::LoopsValid, Property::CountedLoopsKnown});
        held_.insert(ctx_.valid());
        for (const std::string& name : options_.dump_after) {
            if (options_.dump && (name == "all" || name == pass->name)) options_.dump(pass->name, func);
        }
    }
    return std::nullopt;
}

bool PassManager::may_change(uint8_t present) const {
    for (const Pass* pass : pipeline_) {
        if ((present & pass->needs) == pass->needs) return true;
    }
    return false;
}

}  // namespace heron
