// fuzz_compile: arbitrary bytes -> parse as CLIF text -> every function that
// verifies is compiled for x86-64 with the register-allocation checker on.
// Nothing may crash (ASan/UBSan), and compilation must succeed: the only
// accepted failure is a documented "not supported" limit of the backend.
// An allocation the checker rejects, an instruction that cannot be lowered
// or emitted is a bug. The seed corpus is the file tests, whose functions
// the mutator then bends into IR nobody wrote by hand.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "codegen/context.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace heron;
    static Context ctx(host_isa(), [] {
        CompileOptions opts;
        opts.check_regalloc = true;
        return opts;
    }());
    std::string_view text(reinterpret_cast<const char*>(data), size);
    Diagnostics diags;
    auto funcs = parse_functions(text, diags);
    for (const auto& f : funcs) {
        CompiledCode code;
        std::optional<CompileError> err = ctx.compile(*f, code);
        if (!err || err->stage == CompileStage::Verify) continue;
        if (err->message.find("not supported") != std::string::npos) continue;
        std::fprintf(stderr, "fuzz_compile: a function that verifies does not compile: %s\n%s\n",
                     err->message.c_str(), print_function(*f).c_str());
        std::abort();
    }
    return 0;
}
