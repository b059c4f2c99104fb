// fuzz_text: arbitrary bytes -> parse -> print -> parse -> print.
// Nothing may crash or leak (ASan/UBSan); when the first parse succeeds,
// the printed text must parse again and print identically.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace heron;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    Diagnostics errs;
    auto funcs = parse_functions(text, errs);
    for (const auto& f : funcs) {
        std::string once = print_function(*f);
        Diagnostics again_errs;
        auto again = parse_functions(once, again_errs);
        if (!again_errs.empty() || again.size() != 1) {
            std::fprintf(stderr, "printed text does not parse back:\n%s\n%s\n", once.c_str(),
                         again_errs.empty() ? "(wrong function count)" : again_errs[0].format("printed").c_str());
            std::abort();
        }
        std::string twice = print_function(*again[0]);
        if (twice != once) {
            std::fprintf(stderr, "print(parse(print(f))) differs:\n%s\n---\n%s\n", once.c_str(), twice.c_str());
            std::abort();
        }
    }
    return 0;
}
