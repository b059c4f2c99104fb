// The alias analysis the memory passes share (load_elim.cpp, licm.cpp),
// from what the IR says: an address is of a stack slot when it is a
// `stack_addr` of it or an `iadd` of such an address and a value that is
// not one; a slot whose addresses only feed loads' and stores' addresses
// and such iadds does not escape. Memory then splits into classes that no
// access of another class can touch: each slot that does not escape (class
// slot + 1), and the rest (class 0: escaping slots and everything reached
// through other pointers). A call may touch class 0 only.
//
// One walk over the reachable blocks in reverse postorder (an address is
// classified before its uses), and one over the unreachable ones (a slot
// they touch escapes). Memory is kept between functions.
#pragma once

#include <climits>
#include <cstdint>
#include <vector>

#include "codegen/analysis/dominator_tree.h"
#include "codegen/ir/function.h"

namespace heron {

class MemoryClasses {
public:
    void compute(const Function& func, const DominatorTree& domtree);
    /// The class of memory reached through `addr`.
    uint32_t of(Value addr) const {
        const uint32_t s = slot(addr);
        return s && !escapes_[s - 1] ? s : 0;
    }
    /// For an address into a slot that is `stack_addr` plus constants
    /// (through iadd), its offset in the slot; else kUnknown.
    static constexpr int64_t kUnknown = INT64_MIN;
    int64_t offset_in_slot(Value addr) const {
        const Value r = dfg_->value_is_alias(addr) ? dfg_->resolve_aliases(addr) : addr;
        return r.index() < slot_of_.size() && slot_of_[r.index()] ? offset_[r.index()] : kUnknown;
    }

private:
    /// slot + 1 of an address into a slot, else 0.
    uint32_t slot(Value v) const {
        const Value r = dfg_->value_is_alias(v) ? dfg_->resolve_aliases(v) : v;
        return r.index() < slot_of_.size() ? slot_of_[r.index()] : 0;
    }
    void visit(Inst i);
    void escape_operands(Inst i);

    const DataFlowGraph* dfg_ = nullptr;
    std::vector<uint32_t> slot_of_;  // by value
    std::vector<int64_t> offset_;    // by value, where slot_of_ is set
    std::vector<uint8_t> escapes_;   // by slot
};

}  // namespace heron
