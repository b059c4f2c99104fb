// Run directives of file tests: `; run: %f(1, 2) == 3`,
// `; run: %f(0) traps int_divz`, `; print: %f(10)` (text-format.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/data_value.h"
#include "codegen/ir/diagnostic.h"
#include "codegen/ir/instructions.h"
#include "codegen/ir/signature.h"

namespace heron {

struct RunCommand {
    enum class Kind { Run, Print };
    enum class Op { Eq, Ne, Traps };
    Kind kind = Kind::Run;
    std::string func_name;              // without '%'
    std::vector<DataValue> args;        // typed by the signature's params
    Op op = Op::Eq;
    std::vector<DataValue> expected;    // typed by the signature's returns
    TrapCode trap;                      // Op::Traps
};

/// Parses the text after "run:" / "print:" of a comment. `sig` types the
/// literals; errors name the column within `text` (1-based).
std::optional<RunCommand> parse_run_command(std::string_view text, RunCommand::Kind kind,
                                            const Signature& sig, Diagnostic& error);

/// Parses one literal of type `t` (integer in range for t, or a hex float
/// for f32/f64, exactly as text-format.md says).
std::optional<DataValue> parse_data_value(std::string_view text, Type t, std::string& error);

}  // namespace heron
