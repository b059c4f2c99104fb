// Function signatures, calling conventions, external names and the
// declarations a function's preamble holds (ir-reference.md section 14).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/entity.h"
#include "codegen/ir/types.h"

namespace heron {

enum class CallConv : uint8_t { Fast, SystemV, Tail };
std::string_view callconv_name(CallConv cc);
/// Accepts "fast", "system_v", "tail" and the retired "cold" (read as fast).
std::optional<CallConv> callconv_from_name(std::string_view name);

enum class ArgExt : uint8_t { None, Uext, Sext };

struct AbiParam {
    Type type;
    ArgExt ext = ArgExt::None;

    AbiParam() = default;
    AbiParam(Type t, ArgExt e = ArgExt::None) : type(t), ext(e) {}  // NOLINT
    friend bool operator==(const AbiParam& a, const AbiParam& b) { return a.type == b.type && a.ext == b.ext; }
};

struct Signature {
    std::vector<AbiParam> params;
    std::vector<AbiParam> returns;
    CallConv call_conv = CallConv::Fast;

    Signature() = default;
    explicit Signature(CallConv cc) : call_conv(cc) {}
    void clear(CallConv cc = CallConv::Fast) {
        params.clear();
        returns.clear();
        call_conv = cc;
    }
    friend bool operator==(const Signature& a, const Signature& b) {
        return a.params == b.params && a.returns == b.returns && a.call_conv == b.call_conv;
    }
};

/// A function's name: `%ident` (a test-case name) or `uNS:IDX` (a user name
/// the embedder maps to its own symbols).
struct ExternalName {
    enum class Kind : uint8_t { TestCase, User };
    Kind kind = Kind::TestCase;
    std::string name;        // TestCase: without the '%'
    uint32_t ns = 0, index = 0;  // User

    static ExternalName testcase(std::string_view n) { return {Kind::TestCase, std::string(n), 0, 0}; }
    static ExternalName user(uint32_t ns, uint32_t idx) { return {Kind::User, {}, ns, idx}; }
    /// "%name" or "u1:7".
    std::string to_string() const;
    friend bool operator==(const ExternalName& a, const ExternalName& b) {
        return a.kind == b.kind && a.name == b.name && a.ns == b.ns && a.index == b.index;
    }
};

/// `fnN = [colocated] NAME SIG`.
struct ExtFuncData {
    ExternalName name;
    SigRef signature;
    bool colocated = false;
};

/// `ssN = explicit_slot SIZE[, align = A][, key = K]`.
struct StackSlotData {
    uint32_t size = 0;
    uint32_t align = 1;  // a power of two; the text omits it when 1
    std::optional<uint64_t> key;
};

}  // namespace heron
