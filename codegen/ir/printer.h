// The canonical text form of functions (docs: shared/docs/text-format.md).
// print(parse(text)) is canonical and parse(print(f)) rebuilds f. Values and
// blocks keep their entity numbers, so messages that name `v7` match the text.
#pragma once

#include <string>

#include "codegen/ir/function.h"

namespace heron {

/// Appends the function's text to `out`.
void write_function(std::string& out, const Function& func);
std::string print_function(const Function& func);
/// One instruction as it appears in the text, e.g. "v3 = iadd v1, v2".
std::string print_inst(const Function& func, Inst inst);
/// "(i32, i64 sext) -> i8 system_v"
std::string print_signature(const Signature& sig);

}  // namespace heron
