// Function: clearing for reuse, and the text form.
#include "codegen/ir/function.h"

#include "codegen/ir/printer.h"

namespace heron {

void Function::clear() {
    name = ExternalName();
    signature.clear();
    stack_slots.clear();
    dfg.clear();
    layout.clear();
}

std::string Function::to_string() const { return print_function(*this); }

}  // namespace heron
