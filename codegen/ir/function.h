// A function: name, signature and the stencil (stack slots, data-flow graph,
// layout). The entry block is the first block in the layout; its parameters
// are the function's parameters.
#pragma once

#include <optional>
#include <string>

#include "codegen/ir/dfg.h"
#include "codegen/ir/layout.h"
#include "codegen/ir/signature.h"

namespace heron {

class Function {
public:
    Function() = default;
    Function(ExternalName n, Signature sig) : name(std::move(n)), signature(std::move(sig)) {}

    /// Forgets the body and declarations but keeps every table's memory.
    void clear();

    PackedOption<Block> entry_block() const { return layout.entry_block(); }
    StackSlot create_stack_slot(StackSlotData data) { return stack_slots.push(data); }
    SigRef import_signature(Signature sig) { return dfg.signatures.push(std::move(sig)); }
    FuncRef import_function(ExtFuncData data) { return dfg.ext_funcs.push(std::move(data)); }
    JumpTable create_jump_table(JumpTableData data) { return dfg.jump_tables.push(std::move(data)); }

    /// The IR in canonical text form (codegen/ir/printer.h).
    std::string to_string() const;

    ExternalName name;
    Signature signature;
    PrimaryMap<StackSlot, StackSlotData> stack_slots;
    DataFlowGraph dfg;
    Layout layout;
};

}  // namespace heron
