// Helpers shared by the frontend unit tests: incoming block arguments and a
// check that no block parameter is trivial (Braun et al. call such
// parameters trivial phis: every incoming argument is one value or the
// parameter itself).
#pragma once

#include <string>
#include <vector>

#include "codegen/ir/function.h"

namespace heron::fe_test {

/// The arguments passed to parameter `index` of `block` by every branch in
/// the layout (one per edge; a br_table entry counts as an edge).
inline std::vector<Value> incoming(const Function& f, Block block, uint32_t index) {
    std::vector<Value> out;
    for (Block b : f.layout.blocks()) {
        for (Inst i : f.layout.block_insts(b)) {
            for (const BlockCall& bc : f.dfg.branch_destinations(i)) {
                if (bc.block(f.dfg.value_lists) != block) continue;
                if (index < bc.num_args(f.dfg.value_lists)) out.push_back(bc.arg(index, f.dfg.value_lists));
            }
        }
    }
    return out;
}

/// Names every parameter of a block with incoming edges whose arguments
/// are all one value (or the parameter itself); empty if there is none.
inline std::string trivial_params(const Function& f) {
    std::string out;
    for (Block b : f.layout.blocks()) {
        auto params = f.dfg.block_params(b);
        for (uint32_t i = 0; i < params.size(); ++i) {
            auto in = incoming(f, b, i);
            if (in.empty()) continue;
            Value same;
            bool several = false;
            for (Value v : in) {
                v = f.dfg.resolve_aliases(v);
                if (v == params[i] || v == same) continue;
                if (same.is_valid()) several = true;
                same = v;
            }
            if (!several) out += params[i].to_string() + " in " + b.to_string() + "; ";
        }
    }
    return out;
}

/// Number of instructions in the layout.
inline uint32_t count_insts(const Function& f) {
    uint32_t n = 0;
    for (Block b : f.layout.blocks()) {
        for (Inst i : f.layout.block_insts(b)) {
            (void)i;
            ++n;
        }
    }
    return n;
}

}  // namespace heron::fe_test
