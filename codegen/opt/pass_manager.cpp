// PassManager and PassContext; the pipeline runner is one loop:
//
//   for each pass:  ensure(required)  ->  run  ->  invalidate(closure) if
//                   changed  ->  verify if asked  ->  produce  ->  dump
#include "codegen/opt/pass_manager.h"

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

void PassContext::bind(Function& func) {
    func_ = &func;
    valid_ = {};
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

void PassContext::invalidate(PropertySet s) {
    valid_.erase(PropertySet::closure(s));
}

// --- pass needs ----------------------------------------------------------------------

uint8_t scan_pass_needs(const Function& func) {
    uint8_t found = 0;
    for (Block b : func.layout.blocks()) {
        const std::optional<Inst> first = func.layout.first_inst(b);
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
        if (found == (pass_needs::kCycle | pass_needs::kForwarder)) break;
    }
    return found;
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

std::optional<std::string> PassManager::run(Function& func) {
    ctx_.bind(func);
    held_ = {};
    skipped_ = 0;
    // Recomputed after every pass that changed the function.
    uint8_t present = scan_pass_needs(func);
    if (options_.verify_each) {
        VerifierErrors errors;
        if (!verify_function(func, errors)) return "input does not verify: " + format_verifier_errors(errors);
        held_.insert(Property::Verified);
    }
    for (const Pass* pass : pipeline_) {
        PassResult r;
        const bool skip = (present & pass->needs) != pass->needs;
        if (auto err = ensure(*pass, skip)) return err;
        if (skip) {
            ++skipped_;
        } else {
            r = pass->run(func, ctx_);
            if (!r.error.empty()) return "pass " + std::string(pass->name) + ": " + r.error;
        }
        if (r.changed) {
            present = scan_pass_needs(func);
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

bool PassManager::may_change(const Function& func) const {
    const uint8_t present = scan_pass_needs(func);
    for (const Pass* pass : pipeline_) {
        if ((present & pass->needs) == pass->needs) return true;
    }
    return false;
}

}  // namespace heron
