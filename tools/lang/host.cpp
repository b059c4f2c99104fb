// The language's host functions. They write through C stdio, which
// std::cout is synchronized with, so a REPL session's own output and the
// program's prints come out in order.
#include "tools/lang/host.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace heron::lang {

namespace {

int64_t host_print_i64(int64_t v) {
    std::printf("%lld\n", static_cast<long long>(v));
    return 0;
}

int64_t host_print_f64(double v) {
    std::printf("%s\n", format_f64(v).c_str());
    return 0;
}

int64_t host_print_char(int64_t c) {
    std::putchar(static_cast<int>(c & 0xff));
    return 0;
}

}  // namespace

std::string format_f64(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, d);
    std::string s(buf, r.ptr);
    // An integral value still reads as a float.
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

const std::vector<HostFunction>& host_functions() {
    static const std::vector<HostFunction> fns = {
        {"print", "heron_lang_print_i64", {ValType::I64}, ValType::I64, reinterpret_cast<const void*>(&host_print_i64)},
        {"print", "heron_lang_print_f64", {ValType::F64}, ValType::I64, reinterpret_cast<const void*>(&host_print_f64)},
        {"print_char", "heron_lang_print_char", {ValType::I64}, ValType::I64,
         reinterpret_cast<const void*>(&host_print_char)},
    };
    return fns;
}

JITBuilder& add_host_symbols(JITBuilder& builder) {
    for (const HostFunction& h : host_functions()) builder.symbol(h.symbol, h.address);
    return builder;
}

}  // namespace heron::lang
