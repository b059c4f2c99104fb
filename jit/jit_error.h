// Errors of the JIT runtime. Mapping memory, changing its protection and
// resolving symbols can fail for reasons outside the caller's control (an
// mmap limit, an undefined host symbol); such failures come back as values —
// `JitResult<T>` for calls that produce something, `std::optional<JitError>`
// (empty = success) for calls that only act. Nothing in jit/ throws.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "codegen/ir/entity.h"

namespace heron {

struct JitError {
    std::string message;
};

/// A value or the error that prevented it.
template <typename T>
class JitResult {
public:
    JitResult(T value) : state_(std::move(value)) {}       // NOLINT: implicit by design
    JitResult(JitError error) : state_(std::move(error)) {}  // NOLINT: implicit by design

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() {
        HERON_ASSERT(ok() && "value() of a failed JitResult");
        return std::get<0>(state_);
    }
    const T& value() const {
        HERON_ASSERT(ok() && "value() of a failed JitResult");
        return std::get<0>(state_);
    }
    const JitError& error() const {
        HERON_ASSERT(!ok() && "error() of a successful JitResult");
        return std::get<1>(state_);
    }

    T& operator*() { return value(); }
    const T& operator*() const { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

private:
    std::variant<T, JitError> state_;
};

}  // namespace heron
