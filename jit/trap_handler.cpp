// The trap signal handler and guarded calls (see trap_handler.h).
//
// What the handler touches is async-signal-safe: the constant-initialized
// thread_local ThreadState (no lazy TLS construction), the lock-free
// TrapRegistry::lookup_raw, sigaction/raise, and siglongjmp. Everything that
// allocates (stack bounds, the alternate stack, converting the raw record
// into a TrapInfo) happens outside the handler, in the guarded call.
//
// How a stack overflow is recognised: the fault address lies in a window
// around the lowest usable address of the thread's stack, as
// pthread_getattr_np reported it when the thread was prepared. For a thread
// created by pthread_create the window is the guard area below the stack
// plus some slack. The main thread's stack grows on demand; its lowest
// address is the rlimit or the end of the mapping below it, and the kernel
// keeps a gap (stack_guard_gap, 1 MiB by default) before the latter, so its
// window reaches that far above the reported bound.
#include "jit/trap_handler.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

namespace heron {
namespace {

constexpr int kTrapSignals[] = {SIGILL, SIGFPE, SIGSEGV, SIGBUS};
constexpr int kNumTrapSignals = sizeof(kTrapSignals) / sizeof(kTrapSignals[0]);

constexpr size_t kAltStackSize = 128 * 1024;
constexpr uintptr_t kStackSlack = 64 * 1024;
constexpr uintptr_t kMainThreadGap = 1024 * 1024;

/// Dispositions found at installation, for faults that are not traps.
/// Written before our handler is installed, read-only afterwards.
struct sigaction g_previous[kNumTrapSignals];

/// Per-thread state the handler reads. Constant-initialized, so reaching it
/// from the handler never runs a TLS constructor.
struct ThreadState {
    sigjmp_buf* jump = nullptr;  // innermost recovery point; null outside guarded calls
    RawTrapInfo pending;         // filled by the handler before it jumps
    int pending_signal = 0;
    uintptr_t stack_lo = 0;      // lowest usable stack address
    uintptr_t guard_size = 0;
    bool main_thread = false;
    bool prepared = false;
};
constinit thread_local ThreadState t_state;

/// The thread's alternate signal stack: mapped by the thread's first guarded
/// call (unless a big enough one is already in place), the previous setting
/// restored and the memory unmapped when the thread exits.
class AltStack {
public:
    AltStack() = default;
    AltStack(const AltStack&) = delete;
    AltStack& operator=(const AltStack&) = delete;
    ~AltStack();
    std::optional<JitError> ensure();

private:
    bool ready_ = false;
    uint8_t* mapping_ = nullptr;
    size_t mapping_size_ = 0;
    stack_t previous_{};
};
thread_local AltStack t_altstack;

std::string errno_text(const char* call) {
    return std::string(call) + " failed: " + std::strerror(errno);
}

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

size_t wanted_altstack_size() {
    size_t size = kAltStackSize;
#ifdef _SC_SIGSTKSZ
    long dynamic = sysconf(_SC_SIGSTKSZ);
    if (dynamic > 0) size = std::max(size, static_cast<size_t>(dynamic) * 4);
#endif
    return size;
}

std::optional<JitError> AltStack::ensure() {
    if (ready_) return std::nullopt;
    size_t want = wanted_altstack_size();
    stack_t current{};
    if (sigaltstack(nullptr, &current) != 0) return JitError{errno_text("sigaltstack")};
    if (!(current.ss_flags & SS_DISABLE) && current.ss_size >= want) {
        ready_ = true;  // someone else's stack, big enough: keep it
        return std::nullopt;
    }
    // One PROT_NONE page below the stack catches the handler overflowing it.
    size_t guard = page_size();
    void* base = mmap(nullptr, want + guard, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (base == MAP_FAILED) return JitError{errno_text("mmap (signal stack)")};
    auto* mapping = static_cast<uint8_t*>(base);
    stack_t ss{};
    ss.ss_sp = mapping + guard;
    ss.ss_size = want;
    ss.ss_flags = 0;
    const char* failed = nullptr;
    if (mprotect(mapping, guard, PROT_NONE) != 0) failed = "mprotect (signal stack guard)";
    else if (sigaltstack(&ss, &previous_) != 0) failed = "sigaltstack";
    if (failed) {
        JitError error{errno_text(failed)};
        munmap(mapping, want + guard);
        return error;
    }
    mapping_ = mapping;
    mapping_size_ = want + guard;
    ready_ = true;
    return std::nullopt;
}

AltStack::~AltStack() {
    if (!mapping_) return;  // none of ours (or someone else's was kept)
    previous_.ss_flags &= SS_DISABLE;  // only 0 or SS_DISABLE may be passed back
    sigaltstack(&previous_, nullptr);
    munmap(mapping_, mapping_size_);
}

uintptr_t context_pc(const void* context) {
    const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
    return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
#error "trap handling: unsupported host architecture"
#endif
}

bool is_stack_overflow(int signo, const siginfo_t* info, const ThreadState& st) {
    if (signo != SIGSEGV && signo != SIGBUS) return false;
    if (!st.prepared || st.stack_lo == 0) return false;
    auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    uintptr_t below = st.guard_size + kStackSlack;
    uintptr_t above = kStackSlack + (st.main_thread ? kMainThreadGap : 0);
    return addr + below >= st.stack_lo && addr < st.stack_lo + above;
}

int signal_index(int signo) {
    for (int i = 0; i < kNumTrapSignals; ++i)
        if (kTrapSignals[i] == signo) return i;
    return -1;
}

/// Hands a signal that is not a JIT trap to whoever had it before us.
void forward_to_previous(int signo, siginfo_t* info, void* context) {
    int index = signal_index(signo);
    if (index < 0) return;
    const struct sigaction& prev = g_previous[index];
    if (prev.sa_flags & SA_SIGINFO) {
        if (prev.sa_sigaction) prev.sa_sigaction(signo, info, context);
        return;
    }
    if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
        prev.sa_handler(signo);
        return;
    }
    // Default or ignore: put it back. A fault re-executes the instruction on
    // return and meets that disposition; a sent signal must be sent again
    // (it stays pending until this handler returns).
    sigaction(signo, &prev, nullptr);
    if (info->si_code <= 0) raise(signo);
}

void handle_trap_signal(int signo, siginfo_t* info, void* context) {
    int saved_errno = errno;
    ThreadState& st = t_state;
    // si_code <= 0: sent by kill/raise, not raised by an instruction.
    if (st.jump && info->si_code > 0) {
        uintptr_t pc = context_pc(context);
        if (TrapRegistry::global().lookup_raw(pc, st.pending)) {
            if (st.pending.code == 0 && is_stack_overflow(signo, info, st))
                st.pending.code = TrapCode::kStackOverflow;
            if (st.pending.code != 0) {
                st.pending_signal = signo;
                siglongjmp(*st.jump, 1);
            }
        }
    }
    forward_to_previous(signo, info, context);
    errno = saved_errno;
}

std::optional<JitError> install_once() {
    for (int i = 0; i < kNumTrapSignals; ++i) {
        if (sigaction(kTrapSignals[i], nullptr, &g_previous[i]) != 0)
            return JitError{errno_text("sigaction")};
    }
    struct sigaction sa {};
    sa.sa_sigaction = handle_trap_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int signo : kTrapSignals) {
        if (sigaction(signo, &sa, nullptr) != 0) return JitError{errno_text("sigaction")};
    }
    return std::nullopt;
}

std::optional<JitError> record_stack_bounds(ThreadState& st) {
    pthread_attr_t attr;
    int rc = pthread_getattr_np(pthread_self(), &attr);
    if (rc != 0) return JitError{std::string("pthread_getattr_np failed: ") + std::strerror(rc)};
    void* addr = nullptr;
    size_t size = 0;
    size_t guard = 0;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_getguardsize(&attr, &guard);
    pthread_attr_destroy(&attr);
    st.stack_lo = reinterpret_cast<uintptr_t>(addr);
    st.guard_size = guard;
    st.main_thread = getpid() == gettid();
    return std::nullopt;
}

/// The part of a guarded call that holds the recovery point; kept apart so
/// that no local of the caller lives across sigsetjmp.
bool guarded_invoke(void (*fn)(void*), void* ctx) {
    ThreadState& st = t_state;
    sigjmp_buf env;
    sigjmp_buf* const outer = st.jump;
    st.jump = &env;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (sigsetjmp(env, 1) != 0) {
        // Back from the handler; the signal mask is restored.
        st.jump = outer;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        return false;
    }
    fn(ctx);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    st.jump = outer;
    return true;
}

}  // namespace

std::optional<JitError> install_trap_handlers() {
    static std::once_flag once;
    static std::optional<JitError> result;
    std::call_once(once, [] { result = install_once(); });
    return result;
}

std::optional<JitError> prepare_thread_for_traps() {
    if (auto error = install_trap_handlers()) return error;
    ThreadState& st = t_state;
    if (st.prepared) return std::nullopt;
    if (auto error = t_altstack.ensure()) return error;
    if (auto error = record_stack_bounds(st)) return error;
    st.prepared = true;
    return std::nullopt;
}

GuardStatus run_guarded(void (*fn)(void*), void* ctx, TrapInfo& trap, JitError& error) {
    if (auto setup = prepare_thread_for_traps()) {
        error = std::move(*setup);
        return GuardStatus::SetupFailed;
    }
    if (guarded_invoke(fn, ctx)) return GuardStatus::Returned;
    const ThreadState& st = t_state;
    trap = st.pending.to_trap_info(st.pending_signal);
    if (trap.function.size() + 1 >= RawTrapInfo::kMaxFunctionName) {
        // The handler's copy was cut short; the registry has the whole name.
        auto name = TrapRegistry::global().function_at(trap.pc);
        if (name) trap.function = std::move(*name);
    }
    return GuardStatus::Trapped;
}

}  // namespace heron
