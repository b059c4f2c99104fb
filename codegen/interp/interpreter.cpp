// The interpreter's execution engine (API and defaults: interpreter.h).
//
// A call runs one loop over an explicit stack of frames: each frame has its
// decoded function (decoded.h), a pc, a register file (a window of one
// shared vector<uint64_t>, one register per IR value) and its stack-slot
// bytes (a window of one shared byte arena). IR calls push a frame, returns
// pop one, tail calls replace the top one, so neither deep IR recursion nor
// long tail-call chains touch the host stack; the depth and memory limits
// turn runaway recursion into a `stk_ovf` trap.
//
// The opcode switch is one line per opcode; the semantics live in
// int_ops.h and float_ops.h, memory and calls in the Impl members below.
//
// Stack memory is addressed virtually: every activation with stack slots
// gets a fresh range of tagged addresses (never reused), laid out with each
// slot aligned to max(8, align) as an absolute address. An access must lie
// entirely inside one live slot (or one registered host buffer); otherwise
// it traps with the op's code, or is reported as UB for `notrap`, for an
// `aligned` access that is not, and for a slot of an activation that has
// already returned.
#include "codegen/interp/interpreter.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <unordered_map>

#include "codegen/interp/decoded.h"
#include "codegen/interp/float_ops.h"
#include "codegen/interp/int_ops.h"
#include "codegen/ir/printer.h"

namespace heron {

using namespace interp;

namespace {

constexpr uint64_t kDefaultFuel = 1'000'000'000;
constexpr uint32_t kDefaultMaxDepth = 100'000;
constexpr uint64_t kDefaultMaxStackBytes = uint64_t{256} << 20;

// Tagged address ranges: above every user-space pointer on x86-64 and
// AArch64, so they never collide with a registered host buffer.
constexpr uint64_t kStackBase = 0x5000'0000'0000'0000;
constexpr uint64_t kStackEnd = 0x6000'0000'0000'0000;
constexpr uint64_t kFuncBase = 0x6000'0000'0000'0000;
constexpr uint64_t kFuncStride = 16;
// Unused tagged bytes before and after each frame's slots: an overrun or
// underrun by less than this stays in its own frame's claim and traps as out
// of bounds; one that reaches an older activation's claim is reported as a
// use of a dead frame (UB), since provenance is not tracked.
constexpr uint64_t kFrameGap = 64 << 10;

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

bool same_types(const std::vector<AbiParam>& a, const std::vector<AbiParam>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].type != b[i].type) return false;
    }
    return true;
}
/// Whether a function of signature `b` can be called through `a`: same
/// parameter and return types (extension flags and conventions aside).
bool compatible(const Signature& a, const Signature& b) {
    return same_types(a.params, b.params) && same_types(a.returns, b.returns);
}

bool is_user_name(std::string_view s) {
    size_t colon = s.find(':');
    if (s.size() < 4 || s[0] != 'u' || colon == std::string_view::npos || colon < 2 || colon + 1 == s.size()) {
        return false;
    }
    for (size_t i = 1; i < s.size(); ++i) {
        if (i != colon && (s[i] < '0' || s[i] > '9')) return false;
    }
    return true;
}
/// The registry key of a name given by the embedder: "%name" or "u1:7".
std::string name_key(std::string_view name) {
    if ((!name.empty() && name[0] == '%') || is_user_name(name)) return std::string(name);
    return "%" + std::string(name);
}

uint64_t load_bytes(const uint8_t* p, unsigned n, bool big) {
    uint64_t v = 0;
    std::memcpy(&v, p, n);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v) >> (64 - 8 * n);
    if (big && n > 1) v = __builtin_bswap64(v) >> (64 - 8 * n);
    return v;
}
void store_bytes(uint8_t* p, uint64_t v, unsigned n, bool big) {
    v &= mask_of(8 * n);
    if (big && n > 1) v = __builtin_bswap64(v) >> (64 - 8 * n);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v) >> (64 - 8 * n);
    std::memcpy(p, &v, n);
}

}  // namespace

struct Interpreter::Impl {
    struct HostEntry {
        std::string key;
        Signature sig;
        HostFunction fn;
    };
    struct Target {
        enum class Kind : uint8_t { None, Interp, Host };
        Kind kind = Kind::None;
        std::string key;
        const Function* func = nullptr;
        DecodedFunction* code = nullptr;  // decoded lazily
        const HostEntry* host = nullptr;
        const Signature* sig = nullptr;
    };
    struct Frame {
        DecodedFunction* code;
        uint32_t pc;        // while a callee runs: the call instruction
        size_t reg_base;    // into regs_
        size_t arena_base;  // into arena_
        uint64_t vbase;     // tagged address of the slot area
    };
    /// A live frame with stack slots. Its claim [claim, vbase + bytes + gap)
    /// starts where the previous frame's ended, so every tagged address below
    /// vnext_ belongs to exactly one activation, live or dead.
    struct MemFrame {
        uint64_t claim, vbase, bytes;
        size_t arena_base;
        const DecodedFunction* code;
    };
    enum class Fault : uint8_t { None, OutOfBounds, Dead, Misaligned };
    enum class Step : uint8_t { Continue, Stop };

    // --- registry ---------------------------------------------------------------
    std::vector<Target> targets_ = std::vector<Target>(1);  // [0]: the unregistered root of call(func)
    std::unordered_map<std::string, uint32_t> interp_by_name_, host_by_name_;
    std::vector<std::unique_ptr<HostEntry>> hosts_;
    std::unordered_map<const Function*, std::unique_ptr<DecodedFunction>> decoded_;
    std::vector<std::unique_ptr<DecodedFunction>> retired_;  // dropped mid-run; live frames may use them
    DecodedFunction root_code_;
    uint64_t generation_ = 1;  // bumped whenever name resolution may change

    // --- settings ---------------------------------------------------------------
    uint64_t fuel_ = kDefaultFuel;
    uint32_t max_depth_ = kDefaultMaxDepth;
    uint64_t max_stack_bytes_ = kDefaultMaxStackBytes;
    std::vector<std::pair<uint64_t, uint64_t>> host_mem_;  // (base, size)

    // --- execution state --------------------------------------------------------
    bool running_ = false;
    std::vector<Frame> frames_;
    std::vector<uint64_t> regs_;
    std::vector<uint8_t> arena_;
    size_t arena_used_ = 0;
    std::vector<MemFrame> mem_frames_;
    uint64_t vnext_ = kStackBase;
    std::vector<uint64_t> edge_tmp_, args_tmp_, ret_tmp_;
    uint64_t steps_ = 0;
    uint64_t executed_ = 0;

    // --- registry -----------------------------------------------------------------

    uint32_t new_target(std::unordered_map<std::string, uint32_t>& map, const std::string& key) {
        auto [it, fresh] = map.try_emplace(key, static_cast<uint32_t>(targets_.size()));
        if (fresh) targets_.emplace_back();
        ++generation_;
        return it->second;
    }

    /// Forgets the decoded form of `func`, keeping it alive until the
    /// current run (if any) ends.
    void retire(const Function* func) {
        auto it = decoded_.find(func);
        if (it == decoded_.end()) return;
        retired_.push_back(std::move(it->second));
        decoded_.erase(it);
    }

    void add_function(const Function& func) {
        std::string key = func.name.to_string();
        Target& t = targets_[new_target(interp_by_name_, key)];
        if (t.func) retire(t.func);
        retire(&func);
        t = Target{Target::Kind::Interp, key, &func, nullptr, nullptr, &func.signature};
    }

    void add_host_function(std::string name, Signature sig, HostFunction fn) {
        std::string key = name_key(name);
        hosts_.push_back(std::make_unique<HostEntry>(HostEntry{key, std::move(sig), std::move(fn)}));
        const HostEntry* h = hosts_.back().get();
        targets_[new_target(host_by_name_, key)] = Target{Target::Kind::Host, key, nullptr, nullptr, h, &h->sig};
    }

    void invalidate(const Function& func) {
        retire(&func);
        for (Target& t : targets_) {
            if (t.func == &func) t.code = nullptr;
        }
        ++generation_;
    }

    std::optional<uint32_t> lookup(const std::string& key) const {
        if (targets_[0].kind != Target::Kind::None && targets_[0].key == key) return 0;
        if (auto it = interp_by_name_.find(key); it != interp_by_name_.end()) return it->second;
        if (auto it = host_by_name_.find(key); it != host_by_name_.end()) return it->second;
        return std::nullopt;
    }

    DecodedFunction* code_of(Target& t) {
        if (!t.code) {
            auto& slot = decoded_[t.func];
            if (!slot) {
                slot = std::make_unique<DecodedFunction>();
                decode_function(*t.func, *slot);
            }
            t.code = slot.get();
        }
        if (edge_tmp_.size() < t.code->max_edge_args) edge_tmp_.resize(t.code->max_edge_args);
        return t.code;
    }

    // --- outcomes -----------------------------------------------------------------

    static std::string where(const DecodedFunction* D, uint32_t pc) {
        if (!D) return "the entry call";
        std::string s = D->name;
        if (pc >= D->src_inst.size()) return s;
        Inst inst(D->src_inst[pc]);
        s += " at " + inst.to_string();
        if (auto b = D->func->layout.inst_block(inst)) s += " in " + b->to_string();
        return s + " (" + print_inst(*D->func, inst) + ")";
    }
    static void locate(InterpOutcome& out, const DecodedFunction* D, uint32_t pc) {
        if (!D) return;
        out.function = D->name;
        if (pc < D->src_inst.size()) out.inst = Inst(D->src_inst[pc]);
    }
    static Step trap(InterpOutcome& out, uint8_t code, const DecodedFunction* D, uint32_t pc,
                     const std::string& detail = {}) {
        out.kind = InterpOutcome::Kind::Trap;
        out.trap = TrapCode{code};
        out.message = trapcode_name(out.trap) + " in " + where(D, pc) + (detail.empty() ? "" : ": " + detail);
        locate(out, D, pc);
        return Step::Stop;
    }
    static Step error(InterpOutcome& out, const std::string& msg, const DecodedFunction* D = nullptr,
                      uint32_t pc = UINT32_MAX) {
        out.kind = InterpOutcome::Kind::Error;
        out.message = D ? msg + " in " + where(D, pc) : msg;
        locate(out, D, pc);
        return Step::Stop;
    }

    // --- frames -------------------------------------------------------------------

    /// Pushes a frame for `callee` with `args` in its entry parameters. On
    /// failure the outcome names the calling instruction (D, pc), or the
    /// callee itself when it is the entry function (D null: no caller).
    Step push_frame(DecodedFunction* callee, const std::vector<uint64_t>& args, InterpOutcome& out,
                    const DecodedFunction* D, uint32_t pc) {
        if (!callee->error.empty()) return error(out, callee->error, D, pc);
        if (!D) {
            D = callee;
            pc = UINT32_MAX;
        }
        if (frames_.size() >= max_depth_) {
            return trap(out, TrapCode::kStackOverflow, D, pc,
                        "call depth limit of " + std::to_string(max_depth_) + " frames reached");
        }
        size_t reg_base = regs_.size();
        uint64_t need = (reg_base + callee->num_regs) * 8 + arena_used_ + callee->frame_bytes;
        bool tags_left = kStackEnd - vnext_ > callee->frame_bytes + callee->frame_align + 2 * kFrameGap;
        if (callee->frame_bytes > max_stack_bytes_ || need > max_stack_bytes_ || !tags_left) {
            return trap(out, TrapCode::kStackOverflow, D, pc,
                        "stack memory limit of " + std::to_string(max_stack_bytes_) + " bytes reached");
        }
        regs_.resize(reg_base + callee->num_regs);  // zero-filled
        uint64_t* R = regs_.data() + reg_base;
        for (size_t i = 0; i < callee->entry_params.size(); ++i) R[callee->entry_params[i]] = args[i];
        Frame f{callee, 0, reg_base, arena_used_, 0};
        if (callee->frame_bytes > 0) {
            uint64_t claim = vnext_;
            f.vbase = (vnext_ + kFrameGap + callee->frame_align - 1) & ~(callee->frame_align - 1);
            vnext_ = f.vbase + callee->frame_bytes + kFrameGap;
            arena_used_ += callee->frame_bytes;
            if (arena_.size() < arena_used_) arena_.resize(arena_used_);
            std::memset(arena_.data() + f.arena_base, 0, callee->frame_bytes);  // fresh slots read as zeros
            mem_frames_.push_back({claim, f.vbase, callee->frame_bytes, f.arena_base, callee});
        }
        frames_.push_back(f);
        return Step::Continue;
    }

    void pop_frame() {
        const Frame& f = frames_.back();
        regs_.resize(f.reg_base);
        arena_used_ = f.arena_base;
        if (f.code->frame_bytes > 0) mem_frames_.pop_back();
        frames_.pop_back();
    }

    /// Leaves the top frame with `vals` as its results: into the caller's
    /// result registers, or into `out` when it was the outermost frame.
    Step finish_return(const std::vector<uint64_t>& vals, const std::vector<Type>& types, InterpOutcome& out) {
        pop_frame();
        if (frames_.empty()) {
            out.kind = InterpOutcome::Kind::Return;
            out.values.clear();
            for (size_t i = 0; i < vals.size(); ++i) out.values.emplace_back(types[i], vals[i]);
            return Step::Stop;
        }
        Frame& c = frames_.back();
        const CallSite& cs = c.code->calls[c.code->code[c.pc].x];
        if (cs.num_results != vals.size()) {
            return error(out, "callee returned " + std::to_string(vals.size()) + " values, the call expects " +
                                  std::to_string(cs.num_results), c.code, c.pc);
        }
        uint64_t* R = regs_.data() + c.reg_base;
        for (size_t i = 0; i < vals.size(); ++i) R[c.code->pool[cs.results + i]] = vals[i];
        ++c.pc;
        return Step::Continue;
    }

    // --- calls --------------------------------------------------------------------

    static bool decode_func_addr(uint64_t addr, size_t num_targets, uint32_t& id) {
        if (addr < kFuncBase || (addr - kFuncBase) % kFuncStride != 0) return false;
        uint64_t i = (addr - kFuncBase) / kFuncStride;
        if (i >= num_targets) return false;
        id = static_cast<uint32_t>(i);
        return true;
    }

    /// Finds the target of a call site (direct: by name, cached; indirect:
    /// from the address) and checks that its signature fits the site's.
    Step resolve(CallSite& cs, bool indirect, uint64_t addr, uint32_t& id, InterpOutcome& out,
                 const DecodedFunction* D, uint32_t pc) {
        if (!indirect) {
            if (cs.generation == generation_) {
                id = cs.target;
                return Step::Continue;
            }
            auto found = lookup(cs.callee_key);
            if (!found) return error(out, "missing callee " + cs.callee_key, D, pc);
            id = *found;
        } else {
            if (!decode_func_addr(addr, targets_.size(), id) || targets_[id].kind == Target::Kind::None) {
                return error(out, "UB: call_indirect to " + hex(addr) + " is not a function", D, pc);
            }
            if (cs.generation == generation_ && cs.target == id) return Step::Continue;
        }
        const Target& t = targets_[id];
        if (!compatible(*cs.sig, *t.sig)) {
            if (indirect) {
                return error(out, "UB: call_indirect to " + hex(addr) + " is not a function of signature " +
                                      print_signature(*cs.sig) + " (it is " + t.key + " " + print_signature(*t.sig) + ")", D, pc);
            }
            return error(out, "signature mismatch: " + t.key + " is " + print_signature(*t.sig) + ", called as " +
                                  print_signature(*cs.sig), D, pc);
        }
        cs.generation = generation_;
        cs.target = id;
        return Step::Continue;
    }

    Step call_host(const HostEntry& h, const std::vector<uint64_t>& args, std::vector<uint64_t>& results,
                   InterpOutcome& out, const DecodedFunction* D, uint32_t pc) {
        std::vector<DataValue> in;
        in.reserve(args.size());
        for (size_t i = 0; i < args.size(); ++i) in.emplace_back(h.sig.params[i].type, args[i]);
        std::vector<DataValue> r;
        try {
            r = h.fn(in);
        } catch (const std::exception& e) {
            return error(out, "host function " + h.key + " threw: " + e.what(), D, pc);
        } catch (...) {
            return error(out, "host function " + h.key + " threw", D, pc);
        }
        bool ok = r.size() == h.sig.returns.size();
        for (size_t i = 0; ok && i < r.size(); ++i) ok = r[i].type == h.sig.returns[i].type;
        if (!ok) return error(out, "host function " + h.key + " returned values that do not match " + print_signature(h.sig), D, pc);
        results.clear();
        for (const DataValue& v : r) results.push_back(v.bits & v.type.mask());
        return Step::Continue;
    }

    /// call / call_indirect / return_call / return_call_indirect at the top
    /// frame's pc. Afterwards the top frame (caller, callee, or the tail
    /// callee) resumes at its pc.
    Step do_call(const DOp& d, InterpOutcome& out) {
        size_t fi = frames_.size() - 1;
        DecodedFunction* D = frames_[fi].code;
        uint32_t pc = frames_[fi].pc;
        uint64_t* R = regs_.data() + frames_[fi].reg_base;
        CallSite& cs = D->calls[d.x];
        bool indirect = d.op == Opcode::CallIndirect || d.op == Opcode::ReturnCallIndirect;
        bool tail = d.op == Opcode::ReturnCall || d.op == Opcode::ReturnCallIndirect;
        uint32_t id = 0;
        if (resolve(cs, indirect, indirect ? R[d.a] : 0, id, out, D, pc) == Step::Stop) return Step::Stop;
        args_tmp_.resize(cs.num_args);
        for (uint32_t i = 0; i < cs.num_args; ++i) args_tmp_[i] = R[D->pool[cs.args + i]];

        Target& t = targets_[id];
        if (t.kind == Target::Kind::Host) {
            const HostEntry* h = t.host;  // `t` may move if the host function registers functions
            if (call_host(*h, args_tmp_, ret_tmp_, out, D, pc) == Step::Stop) return Step::Stop;
            if (tail) {
                std::vector<Type> types;
                for (const AbiParam& p : h->sig.returns) types.push_back(p.type);
                return finish_return(ret_tmp_, types, out);
            }
            for (uint32_t i = 0; i < cs.num_results; ++i) R[D->pool[cs.results + i]] = ret_tmp_[i];
            ++frames_[fi].pc;
            return Step::Continue;
        }
        DecodedFunction* callee = code_of(t);
        if (!callee->error.empty()) return error(out, callee->error, D, pc);
        if (tail) pop_frame();  // the caller's frame, slots included, dies first
        return push_frame(callee, args_tmp_, out, D, pc);
    }

    // --- memory -------------------------------------------------------------------

    /// The host pointer for `n` bytes at `ea`, or null with the reason.
    uint8_t* translate(uint64_t ea, uint64_t n, Fault& fault) const {
        fault = Fault::OutOfBounds;
        if (ea - kStackBase < kStackEnd - kStackBase) {
            auto it = std::upper_bound(mem_frames_.begin(), mem_frames_.end(), ea,
                                       [](uint64_t a, const MemFrame& m) { return a < m.claim; });
            if (it != mem_frames_.begin() && ea < std::prev(it)->vbase + std::prev(it)->bytes + kFrameGap) {
                const MemFrame& m = *std::prev(it);
                return ea >= m.vbase ? in_slot(m, ea - m.vbase, n) : nullptr;
            }
            if (ea < vnext_) fault = Fault::Dead;  // claimed by an activation that has returned
            return nullptr;
        }
        for (const auto& [base, size] : host_mem_) {
            if (ea - base < size && size - (ea - base) >= n) return reinterpret_cast<uint8_t*>(ea);
        }
        return nullptr;
    }
    uint8_t* in_slot(const MemFrame& m, uint64_t rel, uint64_t n) const {
        const DecodedFunction& code = *m.code;
        const auto& order = code.slots_by_offset;
        auto it = std::upper_bound(order.begin(), order.end(), rel,
                                   [&](uint64_t r, uint32_t s) { return r < code.slots[s].offset; });
        if (it == order.begin()) return nullptr;
        const SlotLayout& s = code.slots[*std::prev(it)];
        if (rel - s.offset >= s.size || s.size - (rel - s.offset) < n) return nullptr;
        return const_cast<uint8_t*>(arena_.data()) + m.arena_base + rel;
    }

    Step memory_fault(InterpOutcome& out, Fault fault, const DOp& d, uint64_t ea, const DecodedFunction* D,
                      uint32_t pc) {
        std::string what = std::string(opcode_name(d.op)) + " of " + std::to_string(d.aux) + " bytes at " + hex(ea);
        if (fault == Fault::Misaligned) return error(out, "UB: aligned " + what + " is misaligned", D, pc);
        if (fault == Fault::Dead) {
            return error(out, "UB: " + what + " uses a stack slot of an activation that has returned", D, pc);
        }
        if (d.x == 0) return error(out, "UB: notrap " + what + " is outside every live stack slot and host buffer", D, pc);
        return trap(out, static_cast<uint8_t>(d.x), D, pc, what + " is outside every live stack slot and host buffer");
    }

    uint8_t* access(const DOp& d, uint64_t ea, Fault& fault) const {
        uint8_t* p = translate(ea, d.aux, fault);
        if (p && (d.aux2 & MemFlags::Aligned) && ea % d.aux != 0) {
            fault = Fault::Misaligned;
            return nullptr;
        }
        return p;
    }

    // --- the loop -----------------------------------------------------------------

    static uint32_t take_edge(const DecodedFunction* D, uint32_t id, uint64_t* R, uint64_t* tmp) {
        const Edge& e = D->edges[id];
        const uint32_t* args = D->pool.data() + e.args;
        const uint32_t* params = D->pool.data() + e.params;
        if (e.count == 1) {
            R[params[0]] = R[args[0]];
        } else if (e.count > 1) {  // parallel: read every argument first
            for (uint32_t i = 0; i < e.count; ++i) tmp[i] = R[args[i]];
            for (uint32_t i = 0; i < e.count; ++i) R[params[i]] = tmp[i];
        }
        return e.target;
    }

    void run(InterpOutcome& out);
    InterpOutcome start(uint32_t id, std::span<const DataValue> args);
};

void Interpreter::Impl::run(InterpOutcome& out) {
    DecodedFunction* D;
    const DOp* code;
    const DOp* ip;
    uint64_t* R;
#define HERON_RELOAD()                                   \
    do {                                                 \
        const Frame& fr_ = frames_.back();               \
        D = fr_.code;                                    \
        code = D->code.data();                           \
        ip = code + fr_.pc;                              \
        R = regs_.data() + fr_.reg_base;                 \
    } while (0)
#define HERON_PC static_cast<uint32_t>(ip - code)
#define HERON_STOP(step)        \
    do {                        \
        (void)(step);           \
        steps_ = steps;         \
        return;                 \
    } while (0)
#define HERON_TRAP_IF(code_byte) \
    if (uint8_t tc_ = (code_byte)) HERON_STOP(trap(out, tc_, D, HERON_PC))
#define HERON_F(fn, ...) (d.bits == 32 ? fn<float>(__VA_ARGS__) : fn<double>(__VA_ARGS__))
#define HERON_FIN(fn, ...) (d.aux == 32 ? fn<float>(__VA_ARGS__) : fn<double>(__VA_ARGS__))

    HERON_RELOAD();
    uint64_t steps = steps_;
    const uint64_t limit = fuel_ ? fuel_ : UINT64_MAX;
    for (;;) {
        const DOp& d = *ip;
        if (++steps > limit) [[unlikely]] {
            --steps;  // this one does not run
            out.kind = InterpOutcome::Kind::OutOfFuel;
            out.message = "out of fuel after " + std::to_string(limit) + " instructions in " + where(D, HERON_PC);
            locate(out, D, HERON_PC);
            HERON_STOP(0);
        }
        const unsigned B = d.bits;
        uint64_t t = 0;
        switch (d.op) {
        // 3. constants
        case Opcode::Iconst:
        case Opcode::F32const:
        case Opcode::F64const: R[d.dst] = d.imm; break;
        case Opcode::Nop: break;
        // 4. integer arithmetic
        case Opcode::Iadd: R[d.dst] = iadd(R[d.a], R[d.b], B); break;
        case Opcode::Isub: R[d.dst] = isub(R[d.a], R[d.b], B); break;
        case Opcode::Imul: R[d.dst] = imul(R[d.a], R[d.b], B); break;
        case Opcode::Ineg: R[d.dst] = ineg(R[d.a], B); break;
        case Opcode::Iabs: R[d.dst] = iabs(R[d.a], B); break;
        case Opcode::Umulhi: R[d.dst] = umulhi(R[d.a], R[d.b], B); break;
        case Opcode::Smulhi: R[d.dst] = smulhi(R[d.a], R[d.b], B); break;
        case Opcode::Udiv: HERON_TRAP_IF(udiv(R[d.a], R[d.b], B, t)); R[d.dst] = t; break;
        case Opcode::Sdiv: HERON_TRAP_IF(sdiv(R[d.a], R[d.b], B, t)); R[d.dst] = t; break;
        case Opcode::Urem: HERON_TRAP_IF(urem(R[d.a], R[d.b], B, t)); R[d.dst] = t; break;
        case Opcode::Srem: HERON_TRAP_IF(srem(R[d.a], R[d.b], B, t)); R[d.dst] = t; break;
        case Opcode::Smin: R[d.dst] = smin(R[d.a], R[d.b], B); break;
        case Opcode::Smax: R[d.dst] = smax(R[d.a], R[d.b], B); break;
        case Opcode::Umin: R[d.dst] = umin(R[d.a], R[d.b]); break;
        case Opcode::Umax: R[d.dst] = umax(R[d.a], R[d.b]); break;
        // 5. overflow flags (flag computed before either result is written)
        case Opcode::UaddOverflow: t = uadd_flag(R[d.a], R[d.b], B); R[d.dst] = iadd(R[d.a], R[d.b], B); R[d.dst2] = t; break;
        case Opcode::SaddOverflow: t = sadd_flag(R[d.a], R[d.b], B); R[d.dst] = iadd(R[d.a], R[d.b], B); R[d.dst2] = t; break;
        case Opcode::UsubOverflow: t = usub_flag(R[d.a], R[d.b]); R[d.dst] = isub(R[d.a], R[d.b], B); R[d.dst2] = t; break;
        case Opcode::SsubOverflow: t = ssub_flag(R[d.a], R[d.b], B); R[d.dst] = isub(R[d.a], R[d.b], B); R[d.dst2] = t; break;
        case Opcode::UmulOverflow: t = umul_flag(R[d.a], R[d.b], B); R[d.dst] = imul(R[d.a], R[d.b], B); R[d.dst2] = t; break;
        case Opcode::SmulOverflow: t = smul_flag(R[d.a], R[d.b], B); R[d.dst] = imul(R[d.a], R[d.b], B); R[d.dst2] = t; break;
        case Opcode::UaddOverflowCin:
            t = uadd_cin_flag(R[d.a], R[d.b], R[d.c], B);
            R[d.dst] = iadd_cin(R[d.a], R[d.b], R[d.c], B);
            R[d.dst2] = t;
            break;
        case Opcode::SaddOverflowCin:
            t = sadd_cin_flag(R[d.a], R[d.b], R[d.c], B);
            R[d.dst] = iadd_cin(R[d.a], R[d.b], R[d.c], B);
            R[d.dst2] = t;
            break;
        case Opcode::UsubOverflowBin:
            t = usub_bin_flag(R[d.a], R[d.b], R[d.c]);
            R[d.dst] = isub_bin(R[d.a], R[d.b], R[d.c], B);
            R[d.dst2] = t;
            break;
        case Opcode::SsubOverflowBin:
            t = ssub_bin_flag(R[d.a], R[d.b], R[d.c], B);
            R[d.dst] = isub_bin(R[d.a], R[d.b], R[d.c], B);
            R[d.dst2] = t;
            break;
        case Opcode::UaddOverflowTrap:
            if (uadd_flag(R[d.a], R[d.b], B)) HERON_STOP(trap(out, d.aux, D, HERON_PC));
            R[d.dst] = iadd(R[d.a], R[d.b], B);
            break;
        // 6. bitwise (also on float bits)
        case Opcode::Band: R[d.dst] = interp::band(R[d.a], R[d.b]); break;
        case Opcode::Bor: R[d.dst] = interp::bor(R[d.a], R[d.b]); break;
        case Opcode::Bxor: R[d.dst] = interp::bxor(R[d.a], R[d.b]); break;
        case Opcode::Bnot: R[d.dst] = interp::bnot(R[d.a], B); break;
        case Opcode::Bitselect: R[d.dst] = interp::bitselect(R[d.a], R[d.b], R[d.c], B); break;
        // 7. shifts and rotates
        case Opcode::Ishl: R[d.dst] = ishl(R[d.a], R[d.b], B); break;
        case Opcode::Ushr: R[d.dst] = ushr(R[d.a], R[d.b], B); break;
        case Opcode::Sshr: R[d.dst] = sshr(R[d.a], R[d.b], B); break;
        case Opcode::Rotl: R[d.dst] = rotl(R[d.a], R[d.b], B); break;
        case Opcode::Rotr: R[d.dst] = rotr(R[d.a], R[d.b], B); break;
        // 8. bit counting
        case Opcode::Clz: R[d.dst] = clz(R[d.a], B); break;
        case Opcode::Cls: R[d.dst] = cls(R[d.a], B); break;
        case Opcode::Ctz: R[d.dst] = ctz(R[d.a], B); break;
        case Opcode::Popcnt: R[d.dst] = popcnt(R[d.a], B); break;
        case Opcode::Bitrev: R[d.dst] = bitrev(R[d.a], B); break;
        case Opcode::Bswap: R[d.dst] = bswap(R[d.a], B); break;
        // 9. comparisons and selection
        case Opcode::Icmp: R[d.dst] = icmp(static_cast<IntCC>(d.aux), R[d.a], R[d.b], B); break;
        case Opcode::Fcmp: R[d.dst] = HERON_F(fcmp, static_cast<FloatCC>(d.aux), R[d.a], R[d.b]); break;
        case Opcode::Select:
        case Opcode::SelectSpectreGuard: R[d.dst] = select_of(R[d.a], R[d.b], R[d.c]); break;
        case Opcode::Bmask: R[d.dst] = interp::bmask(R[d.a], B); break;
        // 10. conversions (aux: the operand's width)
        case Opcode::Uextend: R[d.dst] = interp::uextend(R[d.a], d.aux); break;
        case Opcode::Sextend: R[d.dst] = interp::sextend(R[d.a], d.aux, B); break;
        case Opcode::Ireduce:
        case Opcode::Bitcast: R[d.dst] = interp::ireduce(R[d.a], B); break;
        case Opcode::Fpromote: R[d.dst] = fpromote(R[d.a]); break;
        case Opcode::Fdemote: R[d.dst] = fdemote(R[d.a]); break;
        case Opcode::FcvtToUint: HERON_TRAP_IF(HERON_FIN(fcvt_to_uint, R[d.a], B, t)); R[d.dst] = t; break;
        case Opcode::FcvtToSint: HERON_TRAP_IF(HERON_FIN(fcvt_to_sint, R[d.a], B, t)); R[d.dst] = t; break;
        case Opcode::FcvtToUintSat: R[d.dst] = HERON_FIN(fcvt_to_uint_sat, R[d.a], B); break;
        case Opcode::FcvtToSintSat: R[d.dst] = HERON_FIN(fcvt_to_sint_sat, R[d.a], B); break;
        case Opcode::FcvtFromUint: R[d.dst] = HERON_F(fcvt_from_uint, R[d.a], d.aux); break;
        case Opcode::FcvtFromSint: R[d.dst] = HERON_F(fcvt_from_sint, R[d.a], d.aux); break;
        // 11. float arithmetic
        case Opcode::Fadd: R[d.dst] = HERON_F(fadd, R[d.a], R[d.b]); break;
        case Opcode::Fsub: R[d.dst] = HERON_F(fsub, R[d.a], R[d.b]); break;
        case Opcode::Fmul: R[d.dst] = HERON_F(fmul, R[d.a], R[d.b]); break;
        case Opcode::Fdiv: R[d.dst] = HERON_F(fdiv, R[d.a], R[d.b]); break;
        case Opcode::Sqrt: R[d.dst] = HERON_F(fsqrt, R[d.a]); break;
        case Opcode::Fma: R[d.dst] = HERON_F(ffma, R[d.a], R[d.b], R[d.c]); break;
        case Opcode::Fneg: R[d.dst] = HERON_F(interp::fneg, R[d.a]); break;
        case Opcode::Fabs: R[d.dst] = HERON_F(interp::fabs, R[d.a]); break;
        case Opcode::Fcopysign: R[d.dst] = HERON_F(fcopysign, R[d.a], R[d.b]); break;
        case Opcode::Fmin: R[d.dst] = HERON_F(interp::fmin, R[d.a], R[d.b]); break;
        case Opcode::Fmax: R[d.dst] = HERON_F(interp::fmax, R[d.a], R[d.b]); break;
        case Opcode::Ceil: R[d.dst] = HERON_F(fceil, R[d.a]); break;
        case Opcode::Floor: R[d.dst] = HERON_F(ffloor, R[d.a]); break;
        case Opcode::Trunc: R[d.dst] = HERON_F(ftrunc, R[d.a]); break;
        case Opcode::Nearest: R[d.dst] = HERON_F(fnearest, R[d.a]); break;
        // 12. memory (aux: access bytes; aux2: MemFlags bits; x: trap code, 0 = notrap)
        case Opcode::Load:
        case Opcode::Uload8:
        case Opcode::Uload16:
        case Opcode::Uload32:
        case Opcode::Sload8:
        case Opcode::Sload16:
        case Opcode::Sload32: {
            uint64_t ea = R[d.a] + d.imm;
            Fault fault;
            const uint8_t* p = access(d, ea, fault);
            if (!p) HERON_STOP(memory_fault(out, fault, d, ea, D, HERON_PC));
            t = load_bytes(p, d.aux, d.aux2 & MemFlags::Big);
            bool sign = d.op == Opcode::Sload8 || d.op == Opcode::Sload16 || d.op == Opcode::Sload32;
            R[d.dst] = sign ? wrap(sext(t, 8u * d.aux), B) : t;
            break;
        }
        case Opcode::Store:
        case Opcode::Istore8:
        case Opcode::Istore16:
        case Opcode::Istore32: {
            uint64_t ea = R[d.a] + d.imm;
            Fault fault;
            uint8_t* p = access(d, ea, fault);
            if (!p) HERON_STOP(memory_fault(out, fault, d, ea, D, HERON_PC));
            store_bytes(p, R[d.b], d.aux, d.aux2 & MemFlags::Big);
            break;
        }
        case Opcode::StackAddr: R[d.dst] = frames_.back().vbase + d.imm; break;
        // 13. control flow
        case Opcode::Jump: ip = code + take_edge(D, d.x, R, edge_tmp_.data()); continue;
        case Opcode::Brif: ip = code + take_edge(D, R[d.a] != 0 ? d.b : d.c, R, edge_tmp_.data()); continue;
        case Opcode::BrTable: {
            const std::vector<uint32_t>& table = D->tables[d.x];
            uint64_t i = R[d.a];
            uint32_t edge = i < table.size() - 1 ? table[i + 1] : table[0];
            ip = code + take_edge(D, edge, R, edge_tmp_.data());
            continue;
        }
        case Opcode::Return: {
            ret_tmp_.resize(d.b);
            for (uint32_t i = 0; i < d.b; ++i) ret_tmp_[i] = R[D->pool[d.x + i]];
            if (finish_return(ret_tmp_, D->return_types, out) == Step::Stop) HERON_STOP(0);
            HERON_RELOAD();
            continue;
        }
        case Opcode::Trap: HERON_STOP(trap(out, d.aux, D, HERON_PC));
        case Opcode::Trapz:
            if (R[d.a] == 0) HERON_STOP(trap(out, d.aux, D, HERON_PC));
            break;
        case Opcode::Trapnz:
            if (R[d.a] != 0) HERON_STOP(trap(out, d.aux, D, HERON_PC));
            break;
        // 14. calls
        case Opcode::FuncAddr: {
            uint32_t id = 0;
            if (resolve(D->calls[d.x], false, 0, id, out, D, HERON_PC) == Step::Stop) HERON_STOP(0);
            R[d.dst] = kFuncBase + kFuncStride * id;
            break;
        }
        case Opcode::Call:
        case Opcode::CallIndirect:
        case Opcode::ReturnCall:
        case Opcode::ReturnCallIndirect:
            frames_.back().pc = HERON_PC;
            if (do_call(d, out) == Step::Stop) HERON_STOP(0);
            HERON_RELOAD();
            continue;
        }
        ++ip;
    }
#undef HERON_RELOAD
#undef HERON_PC
#undef HERON_STOP
#undef HERON_TRAP_IF
#undef HERON_F
#undef HERON_FIN
}

InterpOutcome Interpreter::Impl::start(uint32_t id, std::span<const DataValue> args) {
    InterpOutcome out;
    if (running_) {
        error(out, "Interpreter::call is not re-entrant (called from a host function?)");
        return out;
    }
    executed_ = 0;
    Target& t = targets_[id];
    const Signature& sig = *t.sig;
    if (args.size() != sig.params.size()) {
        error(out, t.key + " takes " + std::to_string(sig.params.size()) + " arguments, " +
                       std::to_string(args.size()) + " given");
        return out;
    }
    args_tmp_.clear();
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].type != sig.params[i].type) {
            error(out, "argument " + std::to_string(i + 1) + " of " + t.key + " is " +
                           std::string(args[i].type.name()) + ", expected " + std::string(sig.params[i].type.name()));
            return out;
        }
        args_tmp_.push_back(args[i].bits & args[i].type.mask());
    }
    running_ = true;
    if (t.kind == Target::Kind::Host) {
        const HostEntry* h = t.host;
        std::vector<uint64_t> results;
        if (call_host(*h, args_tmp_, results, out, nullptr, 0) == Step::Continue) {
            for (size_t i = 0; i < results.size(); ++i) out.values.emplace_back(h->sig.returns[i].type, results[i]);
        }
        running_ = false;
        retired_.clear();
        return out;
    }
    // Tagged stack addresses are never reused within a run; between runs the
    // range starts over once half of it is used up.
    if (vnext_ - kStackBase > (kStackEnd - kStackBase) / 2) vnext_ = kStackBase;
    frames_.clear();
    regs_.clear();
    mem_frames_.clear();
    arena_used_ = 0;
    steps_ = 0;
    if (push_frame(code_of(t), args_tmp_, out, nullptr, 0) == Step::Continue) run(out);
    executed_ = steps_;
    frames_.clear();
    regs_.clear();
    mem_frames_.clear();
    arena_used_ = 0;
    running_ = false;
    retired_.clear();
    return out;
}

// --- public API -------------------------------------------------------------------

Interpreter::Interpreter() : impl_(new Impl) {}
Interpreter::~Interpreter() { delete impl_; }

void Interpreter::add_function(const Function& func) { impl_->add_function(func); }
void Interpreter::add_host_function(std::string name, Signature sig, HostFunction fn) {
    impl_->add_host_function(std::move(name), std::move(sig), std::move(fn));
}
void Interpreter::set_fuel(uint64_t fuel) { impl_->fuel_ = fuel; }
void Interpreter::set_max_depth(uint32_t depth) { impl_->max_depth_ = std::max<uint32_t>(depth, 1); }
void Interpreter::set_max_stack_bytes(uint64_t bytes) { impl_->max_stack_bytes_ = bytes; }
void Interpreter::add_host_memory(void* base, size_t size) {
    impl_->host_mem_.emplace_back(reinterpret_cast<uintptr_t>(base), size);
}
void Interpreter::clear_host_memory() { impl_->host_mem_.clear(); }
void Interpreter::invalidate(const Function& func) { impl_->invalidate(func); }
uint64_t Interpreter::executed() const { return impl_->executed_; }

bool Interpreter::read_memory(uint64_t addr, void* out, size_t size) const {
    Impl::Fault fault;
    const uint8_t* p = size ? impl_->translate(addr, size, fault) : nullptr;
    if (p) std::memcpy(out, p, size);
    return p != nullptr || size == 0;
}
bool Interpreter::write_memory(uint64_t addr, const void* in, size_t size) {
    Impl::Fault fault;
    uint8_t* p = size ? impl_->translate(addr, size, fault) : nullptr;
    if (p) std::memcpy(p, in, size);
    return p != nullptr || size == 0;
}

InterpOutcome Interpreter::call(std::string_view name, std::span<const DataValue> args) {
    auto id = impl_->lookup(name_key(name));
    if (!id) {
        InterpOutcome out;
        Impl::error(out, "no function named " + name_key(name));
        return out;
    }
    return impl_->start(*id, args);
}

InterpOutcome Interpreter::call(const Function& func, std::span<const DataValue> args) {
    std::string key = func.name.to_string();
    if (auto it = impl_->interp_by_name_.find(key);
        it != impl_->interp_by_name_.end() && impl_->targets_[it->second].func == &func) {
        return impl_->start(it->second, args);
    }
    if (impl_->running_) {
        InterpOutcome out;
        Impl::error(out, "Interpreter::call is not re-entrant (called from a host function?)");
        return out;
    }
    // Not the registered function of that name: decode it for this call only.
    decode_function(func, impl_->root_code_);
    impl_->targets_[0] = Impl::Target{Impl::Target::Kind::Interp, key, &func, &impl_->root_code_, nullptr,
                                      &func.signature};
    ++impl_->generation_;
    InterpOutcome out = impl_->start(0, args);
    impl_->targets_[0] = Impl::Target{};
    ++impl_->generation_;
    return out;
}

}  // namespace heron
