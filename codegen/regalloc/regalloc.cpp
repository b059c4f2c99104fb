// Entry points of the register allocator (see regalloc.h for the contract and
// alloc_state.h for the phases): validation and liveness, linear scan with
// interval splitting (Wimmer and Franz, CGO 2010; Wimmer and Mössenböck, VEE
// 2005), then resolution into operand allocations and edits.
#include "codegen/regalloc/regalloc.h"

#include "codegen/regalloc/alloc_state.h"

namespace heron::ra {

void Function::clear() {
    num_vregs = 0;
    block_insts_begin.clear();
    succs_begin.clear();
    succs.clear();
    preds_begin.clear();
    preds.clear();
    params_begin.clear();
    params.clear();
    branch_args_begin.clear();
    branch_args.clear();
    loop_depth.clear();
    operands_begin.clear();
    operands.clear();
    flags.clear();
    clobbers.clear();
}

void Output::clear() {
    allocs.clear();
    edits.clear();
    num_spill_slots = 0;
    stats = Stats();
}

Context::Context() : impl(new Impl) {}
Context::~Context() {
    delete impl;
    delete_single_pass(single_pass);
}

std::string allocate(const Function& func, const MachineEnv& env, Output& out, Context& ctx, Algorithm algorithm) {
    if (algorithm == Algorithm::SinglePass) return allocate_single_pass(func, env, out, ctx);
    out.clear();
    Context::Impl& s = *ctx.impl;
    s.func = &func;
    s.env = &env;
    s.trust_block_structure = ctx.trust_block_structure;
    std::string err = build_liveness(s);
    if (err.empty()) err = linear_scan(s);
    if (!err.empty()) return err;
    resolve(s, out);
    return {};
}

}  // namespace heron::ra
