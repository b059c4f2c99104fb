// Turning a trap in JIT code into a value the caller can report.
//
// One set of process-wide handlers for SIGILL (ud2 / udf), SIGFPE (integer
// division), SIGSEGV and SIGBUS (a load or store at a trap site, or a stack
// overflow) is installed on first use. A guarded call records a recovery
// point (sigsetjmp) in a thread_local slot; the handler looks the faulting
// pc up in TrapRegistry::global() and, if it is a registered trap site — or
// a SIGSEGV/SIGBUS whose address lies at the thread's stack guard while the
// pc is in JIT code, reported as stk_ovf — jumps back to that point with the
// TrapInfo. Anything else is not ours: the previous disposition takes over
// (the previous handler is called, or the default action is restored and the
// fault re-triggers), so a crash stays a crash.
//
// Each thread that calls into JIT code gets an alternate signal stack (the
// handler must run somewhere when the thread's own stack is exhausted) and
// its stack bounds, both set up by its first guarded call. Guarded calls
// nest: a host function called from JIT code may itself make a guarded call,
// and a trap returns to the innermost one.
//
// siglongjmp skips destructors: between a guarded call and the trapping
// instruction there must be only JIT frames and frames without live C++
// objects that need destroying (call the JIT function directly in `f`).
#pragma once

#include <optional>
#include <type_traits>
#include <utility>

#include "jit/jit_error.h"
#include "jit/trap_registry.h"

namespace heron {

/// Installs the process-wide handlers; later calls do nothing and return the
/// first call's result. Thread-safe.
std::optional<JitError> install_trap_handlers();

/// Installs the handlers and gives the calling thread its alternate signal
/// stack and cached stack bounds. Idempotent per thread; the guarded calls
/// below call it themselves.
std::optional<JitError> prepare_thread_for_traps();

enum class GuardStatus { Returned, Trapped, SetupFailed };

/// Runs fn(ctx) with a recovery point. Returned: fn returned. Trapped: JIT
/// code trapped and `trap` describes it. SetupFailed: fn did not run and
/// `error` says why.
GuardStatus run_guarded(void (*fn)(void*), void* ctx, TrapInfo& trap, JitError& error);

/// The outcome of `call_with_traps`: exactly one of `value` (f returned),
/// `trap` (f trapped) or `error` (the guard could not be set up) is set.
template <typename R>
struct TrapResult {
    std::optional<R> value;
    std::optional<TrapInfo> trap;
    std::optional<JitError> error;
    bool returned() const { return value.has_value(); }
};
template <>
struct TrapResult<void> {
    bool did_return = false;
    std::optional<TrapInfo> trap;
    std::optional<JitError> error;
    bool returned() const { return did_return; }
};

/// `run_guarded` for any callable: call_with_traps([&] { return fn(1, 2); }).
template <typename F>
auto call_with_traps(F&& f) -> TrapResult<std::invoke_result_t<F&>> {
    using R = std::invoke_result_t<F&>;
    TrapResult<R> result;
    struct Context {
        F* f;
        TrapResult<R>* result;
    } ctx{&f, &result};
    auto trampoline = [](void* p) {
        auto* c = static_cast<Context*>(p);
        if constexpr (std::is_void_v<R>) {
            (*c->f)();
            c->result->did_return = true;
        } else {
            c->result->value.emplace((*c->f)());
        }
    };
    TrapInfo trap;
    JitError error;
    switch (run_guarded(trampoline, &ctx, trap, error)) {
    case GuardStatus::Returned: break;
    case GuardStatus::Trapped: result.trap = std::move(trap); break;
    case GuardStatus::SetupFailed: result.error = std::move(error); break;
    }
    return result;
}

}  // namespace heron
