// Variable: the frontend's name for a mutable local of the source language.
//
// A Variable is not an IR entity: it never appears in a function. The
// FunctionBuilder turns every definition and use of one into SSA values
// (frontend/ssa.h). It is a typed 32-bit index like the IR's entities, and
// prints as "var3" in error messages.
#pragma once

#include "codegen/ir/entity.h"

namespace heron {

struct VariableTag {
    static constexpr const char* kPrefix = "var";
};
using Variable = EntityRef<VariableTag>;

}  // namespace heron
