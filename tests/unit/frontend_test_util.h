// Helpers shared by the frontend unit tests: incoming block arguments and a
// check that no block parameter is trivial (Braun et al. call such
// parameters trivial phis: every incoming argument is one value or the
// parameter itself).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/ir/printer.h"
#include "frontend/function_builder.h"

namespace heron::fe_test {

/// With HERON_FRONTEND_DUMP=FILE set, appends the function's text to FILE
/// (value numbers included): run a test before and after a change to the
/// SSA builder and compare the files to show it builds the same IR.
inline void dump_function(const Function& f) {
    static const char* path = std::getenv("HERON_FRONTEND_DUMP");
    if (!path) return;
    if (std::FILE* out = std::fopen(path, "a")) {
        std::fputs(print_function(f).c_str(), out);
        std::fclose(out);
    }
}

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

/// Ends a loop as the tests build them: the body falls through to `latch`
/// (unless it is filled), the latch jumps to `header`, `sealable(block)`
/// is called for the latch, the header and `exit` (each test's sealing
/// policy), and building goes on in `exit`.
template <typename Sealable>
void close_loop(FunctionBuilder& b, Block latch, Block header, Block exit, Sealable&& sealable) {
    if (!b.is_filled()) b.ins().jump(latch);
    sealable(latch);
    b.switch_to_block(latch);
    b.ins().jump(header);
    sealable(header);
    sealable(exit);
    b.switch_to_block(exit);
}

/// A signature of `params` parameters of type `ty` returning one `ty`.
inline Signature signature_of(Type ty, int params) {
    Signature sig;
    for (int i = 0; i < params; ++i) sig.params.push_back(AbiParam(ty));
    sig.returns.push_back(AbiParam(ty));
    return sig;
}

/// A signature of `params` i32 parameters returning one i32.
inline Signature i32_signature(int params) { return signature_of(types::I32, params); }

/// The start most builder tests share: a function named `name` of `sig`, a
/// context and a builder over them, and the entry block (made first, so it
/// is block0), given the function's parameters and switched to; sealed
/// unless `seal` is false.
class EntryBuilder {
public:
    EntryBuilder(const char* name, const Signature& sig, bool seal = true)
        : f(ExternalName::testcase(name), sig), b(f, ctx), entry(b.create_block()) {
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        if (seal) b.seal_block(entry);
    }
    EntryBuilder(const EntryBuilder&) = delete;
    EntryBuilder& operator=(const EntryBuilder&) = delete;

    /// Parameter `i` of the entry block.
    Value param(uint32_t i = 0) { return b.block_params(entry)[i]; }

    Function f;
    FunctionBuilderContext ctx;
    FunctionBuilder b;
    Block entry;
};

/// Number of block parameters in the layout.
inline uint32_t count_params(const Function& f) {
    uint32_t n = 0;
    for (Block b : f.layout.blocks()) n += f.dfg.num_block_params(b);
    return n;
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
