// Errors the frontend reports instead of aborting, and a small Result type.
//
// Every misuse of the builder API (an instruction after a terminator, a
// variable used before it is declared, sealing a block twice, finalizing
// with unsealed or unterminated blocks, ...) becomes a FrontendError that
// names the block and the variable involved. The `try_` forms of the
// builder return `Result<T>`; the plain forms record the first error in the
// builder ("sticky") and `finalize()` returns it. std::expected is C++23 and
// not in g++ 12, hence the tiny Result below.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "codegen/ir/entity.h"
#include "frontend/variable.h"

namespace heron {

struct FrontendError {
    enum class Kind : uint8_t {
        NoCurrentBlock,        // an instruction, def_var or use_var with no block switched to
        InstAfterTerminator,   // an instruction appended to a block that already ends
        SwitchToFilledBlock,   // switch_to_block on a block that already ends
        InvalidBlock,          // a block the function does not have
        BlockNotPristine,      // append_block_param after instructions or SSA parameters
        BranchToSealedBlock,   // a new predecessor for a block already sealed
        SealedTwice,           // seal_block on a sealed block
        UnsealedBlock,         // finalize with a block not sealed
        UnterminatedBlock,     // finalize with a block that has no terminator
        UndeclaredVariable,    // def_var / use_var of a variable never declared
        WrongVariableType,     // def_var with a value whose type is not the variable's
        InvalidType,           // declare_var / append_block_param with no type
        InvalidValue,          // def_var with a value the function does not have
        JumpTableReused,       // one jump table used by two br_table instructions
        DuplicateCase,         // Switch: a case value given twice
        CaseOutOfRange,        // Switch: a case value the selector type cannot hold
        BadSelectorType,       // Switch: a selector that is not i8..i64
        LoopMisuse,            // loop scopes: break/continue outside a loop, unbalanced end
        AlreadyFinalized,      // any use of a builder after finalize()
    };

    Kind kind;
    std::string message;  // names the block / variable, e.g. "block3: ..."
    std::optional<Block> block;
    std::optional<Variable> var;

    static FrontendError make(Kind k, std::string msg, std::optional<Block> b = std::nullopt,
                              std::optional<Variable> v = std::nullopt) {
        return FrontendError{k, std::move(msg), b, v};
    }
};

/// "InstAfterTerminator", ... for test output and tools.
const char* frontend_error_kind_name(FrontendError::Kind kind);

/// A value or a FrontendError. Never throws: reading the wrong alternative
/// is an assertion failure in debug builds.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}               // NOLINT: implicit by design
    Result(FrontendError error) : v_(std::move(error)) {}   // NOLINT

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() {
        HERON_ASSERT(ok() && "Result holds an error");
        return *std::get_if<0>(&v_);
    }
    const T& value() const {
        HERON_ASSERT(ok() && "Result holds an error");
        return *std::get_if<0>(&v_);
    }
    T& operator*() { return value(); }
    const T& operator*() const { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T value_or(T dflt) const { return ok() ? value() : dflt; }

    const FrontendError& error() const {
        HERON_ASSERT(!ok() && "Result holds a value");
        return *std::get_if<1>(&v_);
    }

private:
    std::variant<T, FrontendError> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(FrontendError error) : err_(std::move(error)) {}  // NOLINT

    bool ok() const { return !err_.has_value(); }
    explicit operator bool() const { return ok(); }
    const FrontendError& error() const {
        HERON_ASSERT(!ok() && "Result holds no error");
        return *err_;
    }

private:
    std::optional<FrontendError> err_;
};

}  // namespace heron
