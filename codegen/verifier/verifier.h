// The IR verifier: every invariant later stages rely on (architecture.md,
// ir-reference.md sections 1-2 and each opcode's typing). It reports all
// errors it finds, each naming the instruction and block in printed form.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/ir/function.h"

namespace heron {

class ControlFlowGraph;
class DominatorTree;
struct VerifierAnalyses;

struct VerifierError {
    std::optional<Inst> inst;    // the offending instruction, if any
    std::optional<Block> block;  // the block it is in (or the offending block)
    std::string message;         // e.g. "v7 used in block4 is not dominated by its definition in block6"

    /// Where, as the tools print it before the message: "inst5 (v7 = iadd
    /// v3, v6) in block4" for an instruction, "block4" for a block, empty
    /// for declarations (signatures, stack slots, aliases), whose message
    /// names them. File tests place an error on its instruction's line,
    /// else its block's, else the function's.
    std::string context;
};

using VerifierErrors = std::vector<VerifierError>;

/// The verifier's per-function tables (control-flow graph, dominator tree,
/// per-value and per-block arrays), kept between calls so that verifying
/// the next function reuses their memory. One context serves one thread.
class VerifierContext {
public:
    VerifierContext();
    ~VerifierContext();
    VerifierContext(VerifierContext&&) noexcept;
    VerifierContext& operator=(VerifierContext&&) noexcept;

    struct Tables;

private:
    friend bool verify_function(const Function&, VerifierErrors&, VerifierContext&, VerifierAnalyses*);
    std::unique_ptr<Tables> tables_;
};

/// Verifies `func`; returns true when it is valid. Errors are appended, in
/// order: declarations, then blocks in layout order, each block's
/// instructions in order. Never aborts on dangling references or a
/// malformed layout.
bool verify_function(const Function& func, VerifierErrors& errors, VerifierContext& context);

/// Where the verifier builds the control-flow graph and dominator tree it
/// checks dominance with, for a caller that needs them next (the JIT hands
/// them to the optimizer, which would compute the same). `computed` comes
/// back true when both hold the analyses of the function verified: it
/// verified and has more than one block (one block needs no graph, and
/// none is built).
struct VerifierAnalyses {
    ControlFlowGraph* cfg = nullptr;
    DominatorTree* domtree = nullptr;
    bool computed = false;
};
/// verify_function with the graph and tree built in `out` (both must be
/// set) instead of the verifier's own dominance tables.
bool verify_function(const Function& func, VerifierErrors& errors, VerifierContext& context, VerifierAnalyses& out);
/// The same with tables of its own (allocated for this call).
bool verify_function(const Function& func, VerifierErrors& errors);

/// All errors joined one per line, for tools and test failure messages.
std::string format_verifier_errors(const VerifierErrors& errors);

}  // namespace heron
