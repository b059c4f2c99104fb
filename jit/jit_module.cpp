// JITModule implementation: compile on define, place and link on finalize.
#include "jit/jit_module.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "codegen/ir/cursor.h"
#include "codegen/ir/printer.h"
#include "codegen/context.h"
#include "jit/code_memory.h"
#include "jit/trap_handler.h"

namespace heron {

namespace {

std::string name_key(const ExternalName& n) {
    return n.kind == ExternalName::Kind::User ? "u" + std::to_string(n.ns) + ":" + std::to_string(n.index) : n.name;
}

/// A stable key for a signature (trampolines are cached by it).
std::string signature_key(const Signature& sig) { return print_signature(sig); }

}  // namespace

InterpOutcome to_interp_outcome(JitCallOutcome j) {
    InterpOutcome r;
    switch (j.kind) {
    case JitCallOutcome::Kind::Return: r.values = std::move(j.values); break;
    case JitCallOutcome::Kind::Trap:
        r.kind = InterpOutcome::Kind::Trap;
        r.trap = j.trap.code;
        r.message = std::move(j.message);
        break;
    case JitCallOutcome::Kind::Error:
        r.kind = InterpOutcome::Kind::Error;
        r.message = std::move(j.message);
        break;
    }
    return r;
}

JITBuilder::JITBuilder() = default;

JITBuilder& JITBuilder::symbol(std::string name, const void* address) {
    symbols_.define(std::move(name), address);
    return *this;
}
JITBuilder& JITBuilder::symbol_lookup(SymbolResolver::LookupFn fn) {
    symbols_.add_lookup(std::move(fn));
    return *this;
}
JITBuilder& JITBuilder::isa(std::unique_ptr<TargetIsa> isa) {
    isa_ = std::move(isa);
    return *this;
}
JITBuilder& JITBuilder::check_regalloc(bool on) {
    options_.check_regalloc = on;
    return *this;
}
JITBuilder& JITBuilder::regalloc(RegallocAlgorithm algorithm) {
    options_.regalloc = algorithm;
    return *this;
}
JITBuilder& JITBuilder::opt_level(OptLevel level) {
    options_.opt_level = level;
    return *this;
}
JITBuilder& JITBuilder::verify_passes(bool on) {
    options_.verify_passes = on;
    return *this;
}

struct JITModule::Impl {
    SymbolResolver symbols;
    // The compile driver (codegen/context.h): verifier tables, optimizer
    // and backend state, kept between definitions.
    std::unique_ptr<Context> compiler;
    CodeMemory memory;
    // Kept between definitions so that the next one allocates little:
    // compiled code buffers no function holds any more (each keeping its
    // capacity) and finalize's work lists. A module that installs its
    // functions in batches needs one buffer per function of a batch: up to
    // kSpareCode buffers of any size are kept, and beyond them, up to the
    // largest batch seen (at most kMaxSpareCode), buffers of small
    // functions only, so spares never hold much memory.
    //
    // The compiled code of every function (installed and pending) lives in
    // a slot of `codes` whose object never moves (compiled_code() hands
    // out pointers), so defining and installing only pass slot numbers
    // around.
    // Free slots are reused last-freed first; those beyond the spare
    // limits above hold no memory.
    static constexpr uint32_t kNoCode = ~0u;
    std::vector<std::unique_ptr<CompiledCode>> codes;
    std::vector<uint32_t> free_codes;
    static constexpr size_t kSpareCode = 4;
    static constexpr size_t kMaxSpareCode = 64;
    static constexpr size_t kSmallCodeBytes = 4096;
    size_t spare_limit = kSpareCode;
    struct Patch {
        uint32_t func;
        uint32_t offset;
        uint64_t* cell;
    };
    std::vector<Patch> patches;
    std::vector<CodeRegion> regions;
    std::vector<TrapSite> sites;                  // of all pending functions, in order
    std::vector<TrapRegistry::Update> trap_updates;  // one per pending function

    struct Func {
        std::string name;
        Linkage linkage = Linkage::Local;
        Signature sig;
        uint64_t* cell = nullptr;
        CodeRegion region;
        bool installed = false;
        uint32_t pending = kNoCode;  // slot of the pending definition's code
        uint32_t code = kNoCode;     // slot of the installed version's
        // The pending definition's `fnN` declarations: the callee's key and
        // the signature the definition calls it with (checked at finalize
        // against the callee's declaration).
        std::vector<std::pair<std::string, Signature>> imports;
    };
    std::vector<Func> funcs;
    std::vector<uint32_t> pending;  // functions with a pending definition, in definition order
    std::unordered_map<std::string, uint32_t> by_name;

    std::vector<std::unique_ptr<uint64_t[]>> cell_chunks;
    size_t cells_in_last = 0;
    static constexpr size_t kCellsPerChunk = 256;
    std::unordered_map<std::string, uint64_t*> host_cells;

    struct Data {
        std::string name;
        bool writable = false;
        std::vector<uint8_t> bytes;
    };
    std::vector<Data> data;

    std::unordered_map<std::string, FuncId> trampolines;

    /// A slot with empty code, reusing a free one's buffers if there is one.
    uint32_t take_code() {
        if (free_codes.empty()) {
            codes.push_back(std::make_unique<CompiledCode>());
            return static_cast<uint32_t>(codes.size() - 1);
        }
        const uint32_t slot = free_codes.back();
        free_codes.pop_back();
        codes[slot]->clear();
        return slot;
    }
    /// Frees `slot`, keeping its buffers for a later define within the
    /// spare limits (else they are released).
    void free_code(uint32_t slot) {
        const size_t spares = free_codes.size();
        if (spares >= kSpareCode && (spares >= spare_limit || codes[slot]->bytes.capacity() > kSmallCodeBytes))
            *codes[slot] = CompiledCode{};
        free_codes.push_back(slot);
    }

    uint64_t* new_cell() {
        if (cell_chunks.empty() || cells_in_last == kCellsPerChunk) {
            cell_chunks.push_back(std::make_unique<uint64_t[]>(kCellsPerChunk));
            cells_in_last = 0;
        }
        uint64_t* c = &cell_chunks.back()[cells_in_last++];
        *c = 0;
        return c;
    }

    ~Impl() {
        // One registry update for all the module's ranges.
        std::vector<TrapRegistry::Update> removals;
        for (Func& f : funcs) {
            if (f.installed) removals.push_back({f.region.code, nullptr, 0, {}, {}});
        }
        if (!removals.empty()) (void)TrapRegistry::global().update(removals);
    }
};

JITModule::JITModule(JITBuilder builder) : impl_(std::make_unique<Impl>()) {
    impl_->symbols = std::move(builder.symbols_);
    std::shared_ptr<TargetIsa> isa = builder.isa_ ? std::move(builder.isa_) : std::shared_ptr<TargetIsa>(host_isa());
    impl_->compiler = std::make_unique<Context>(std::move(isa), builder.options_);
    isa_ = &impl_->compiler->isa();
}

OptLevel JITModule::opt_level() const { return impl_->compiler->options().opt_level; }

JITModule::~JITModule() = default;

JitResult<FuncId> JITModule::declare_function(std::string_view name, Linkage linkage, const Signature& sig) {
    auto it = impl_->by_name.find(std::string(name));
    if (it != impl_->by_name.end()) {
        Impl::Func& f = impl_->funcs[it->second];
        if (!(f.sig == sig)) {
            return JitError{"function %" + std::string(name) + " declared again with a different signature: " +
                            print_signature(f.sig) + " vs " + print_signature(sig)};
        }
        return FuncId{it->second};
    }
    Impl::Func f;
    f.name = std::string(name);
    f.linkage = linkage;
    f.sig = sig;
    f.cell = impl_->new_cell();
    uint32_t id = static_cast<uint32_t>(impl_->funcs.size());
    impl_->funcs.push_back(std::move(f));
    impl_->by_name.emplace(std::string(name), id);
    return FuncId{id};
}

std::optional<FuncId> JITModule::find_function(std::string_view name) const {
    auto it = impl_->by_name.find(std::string(name));
    if (it == impl_->by_name.end()) return std::nullopt;
    return FuncId{it->second};
}

std::optional<JitError> JITModule::define_function(FuncId id, const Function& func) {
    if (id.index >= impl_->funcs.size()) return JitError{"define_function: unknown function id"};
    Impl::Func& f = impl_->funcs[id.index];
    if (!(func.signature == f.sig)) {
        return JitError{"function %" + f.name + " is defined with signature " + print_signature(func.signature) +
                        " but declared with " + print_signature(f.sig)};
    }
    // A call links by the declared name: a call to the IR's own name is a
    // self-call only when the two agree.
    CompileRequest request;
    request.own_name_is_self = name_key(func.name) == f.name;
    const uint32_t slot = impl_->take_code();
    if (auto e = impl_->compiler->compile(func, *impl_->codes[slot], request)) {
        impl_->free_code(slot);
        switch (e->stage) {
        case CompileStage::Verify: return JitError{"function %" + f.name + " does not verify:\n" + e->message};
        case CompileStage::Optimize: return JitError{"cannot optimize %" + f.name + ": " + e->message};
        default: return JitError{"cannot compile %" + f.name + ": " + e->message};
        }
    }
    f.imports.clear();
    for (const ExtFuncData& ef : func.dfg.ext_funcs) {
        if (!ef.signature.is_valid() || ef.signature.index() >= func.dfg.signatures.size()) continue;
        f.imports.emplace_back(name_key(ef.name), func.dfg.signatures[ef.signature]);
    }
    if (f.pending != Impl::kNoCode) {
        impl_->free_code(f.pending);
    } else {
        impl_->pending.push_back(id.index);
    }
    f.pending = slot;
    return std::nullopt;
}

std::optional<JitError> JITModule::finalize_definitions() {
    Impl& m = *impl_;
    m.spare_limit = std::max(m.spare_limit, std::min(m.pending.size(), Impl::kMaxSpareCode));
    // First resolve every relocation, so that an error installs nothing.
    std::vector<Impl::Patch>& patches = m.patches;
    patches.clear();
    for (uint32_t i : m.pending) {
        Impl::Func& f = m.funcs[i];
        // A call declared with another signature than its callee's would
        // pass arguments where the callee does not look for them. Host
        // symbols carry no signature: only module functions are checked.
        for (const auto& [key, used] : f.imports) {
            auto it = m.by_name.find(key);
            if (it == m.by_name.end()) continue;
            const Impl::Func& callee = m.funcs[it->second];
            if (callee.sig == used) continue;
            return JitError{"%" + f.name + " calls %" + key + " as " + print_signature(used) + " but %" + key +
                            " is declared as " + print_signature(callee.sig)};
        }
        for (const Relocation& r : m.codes[f.pending]->relocations) {
            std::string key = name_key(r.target);
            auto it = m.by_name.find(key);
            if (it != m.by_name.end()) {
                const Impl::Func& callee = m.funcs[it->second];
                if (!callee.installed && callee.pending == Impl::kNoCode) {
                    return JitError{"%" + f.name + " refers to %" + key + ", which is declared but not defined"};
                }
                patches.push_back({i, r.offset, callee.cell});
                continue;
            }
            auto hc = m.host_cells.find(key);
            if (hc != m.host_cells.end()) {
                patches.push_back({i, r.offset, hc->second});
                continue;
            }
            JitResult<const void*> addr = m.symbols.resolve(key);
            if (!addr) return JitError{"%" + f.name + ": " + addr.error().message};
            uint64_t* cell = m.new_cell();
            *cell = reinterpret_cast<uint64_t>(addr.value());
            m.host_cells.emplace(key, cell);
            patches.push_back({i, r.offset, cell});
        }
    }
    // Place every pending function in pooled code memory, then seal them
    // all with one protection change.
    std::vector<CodeRegion>& regions = m.regions;
    regions.clear();
    regions.reserve(m.pending.size());
    auto undo = [&] {
        for (const CodeRegion& r : regions) m.memory.release(r);
    };
    size_t next_patch = 0;  // the patches are in pending order
    for (uint32_t i : m.pending) {
        CompiledCode& code = *m.codes[m.funcs[i].pending];
        for (; next_patch < patches.size() && patches[next_patch].func == i; ++next_patch) {
            const Impl::Patch& p = patches[next_patch];
            uint64_t v = reinterpret_cast<uint64_t>(p.cell);
            std::memcpy(code.bytes.data() + p.offset, &v, 8);
        }
        JitResult<CodeRegion> region = m.memory.allocate_code(code.bytes);
        if (!region) {
            undo();
            return region.error();
        }
        regions.push_back(region.value());
    }
    if (auto e = m.memory.finalize_all()) {
        undo();
        return e;
    }
    // Every new range, and the removal of a redefined function's old one,
    // in one registry update: on error nothing is installed.
    std::vector<TrapSite>& sites = m.sites;
    sites.clear();
    for (uint32_t i : m.pending) {
        for (const CodeTrapSite& s : m.codes[m.funcs[i].pending]->trap_sites) {
            TrapSite t;
            t.offset = s.offset;
            t.code = s.code;
            if (s.ir_inst != ~0u) t.inst = Inst(s.ir_inst);
            sites.push_back(t);
        }
    }
    std::vector<TrapRegistry::Update>& updates = m.trap_updates;
    updates.clear();
    updates.reserve(m.pending.size());
    size_t first_site = 0;
    for (size_t k = 0; k < m.pending.size(); ++k) {
        const Impl::Func& f = m.funcs[m.pending[k]];
        const CompiledCode& code = *m.codes[f.pending];
        const size_t n = code.trap_sites.size();
        updates.push_back({f.installed ? f.region.code : nullptr, regions[k].code, code.bytes.size(), f.name,
                           std::span<const TrapSite>(sites).subspan(first_site, n)});
        first_site += n;
    }
    if (auto e = TrapRegistry::global().update(updates)) {
        undo();
        return e;
    }
    for (size_t k = 0; k < m.pending.size(); ++k) {
        Impl::Func& f = m.funcs[m.pending[k]];
        // Calls go to the new code before the old code's pages are released.
        *f.cell = reinterpret_cast<uint64_t>(regions[k].code);
        if (f.installed) m.memory.release(f.region);
        f.region = regions[k];
        f.installed = true;
        if (f.code != Impl::kNoCode) m.free_code(f.code);
        f.code = f.pending;
        f.pending = Impl::kNoCode;
    }
    m.pending.clear();
    return std::nullopt;
}

std::optional<JitError> JITModule::free_function(FuncId id) {
    if (id.index >= impl_->funcs.size()) return JitError{"free_function: unknown function id"};
    Impl::Func& f = impl_->funcs[id.index];
    if (!f.installed) return std::nullopt;
    TrapRegistry::global().unregister_range(f.region.code);
    auto e = impl_->memory.release(f.region);
    f.installed = false;
    f.region = CodeRegion{};
    *f.cell = 0;
    return e;
}

uint64_t JITModule::code_memory_syscalls() const { return impl_->memory.num_syscalls(); }

const void* JITModule::get_finalized_function(FuncId id) const {
    if (id.index >= impl_->funcs.size() || !impl_->funcs[id.index].installed) return nullptr;
    return impl_->funcs[id.index].region.code;
}

const CompiledCode* JITModule::compiled_code(FuncId id) const {
    if (id.index >= impl_->funcs.size() || !impl_->funcs[id.index].installed) return nullptr;
    return impl_->codes[impl_->funcs[id.index].code].get();
}

const Signature* JITModule::signature(FuncId id) const {
    if (id.index >= impl_->funcs.size()) return nullptr;
    return &impl_->funcs[id.index].sig;
}

JitResult<DataId> JITModule::declare_data(std::string_view name, bool writable) {
    impl_->data.push_back({std::string(name), writable, {}});
    return DataId{static_cast<uint32_t>(impl_->data.size() - 1)};
}

std::optional<JitError> JITModule::define_data(DataId id, std::span<const uint8_t> bytes) {
    if (id.index >= impl_->data.size()) return JitError{"define_data: unknown data id"};
    impl_->data[id.index].bytes.assign(bytes.begin(), bytes.end());
    impl_->symbols.define(impl_->data[id.index].name, impl_->data[id.index].bytes.data());
    return std::nullopt;
}

void* JITModule::get_finalized_data(DataId id) const {
    if (id.index >= impl_->data.size()) return nullptr;
    return impl_->data[id.index].bytes.data();
}

JitCallOutcome JITModule::call(FuncId id, std::span<const DataValue> args) {
    JitCallOutcome out;
    const void* target = get_finalized_function(id);
    if (!target) {
        out.kind = JitCallOutcome::Kind::Error;
        out.message = "function is not finalized";
        return out;
    }
    // A copy: creating a trampoline below may grow the function table.
    const Signature sig = impl_->funcs[id.index].sig;
    if (args.size() != sig.params.size()) {
        out.kind = JitCallOutcome::Kind::Error;
        out.message = "expected " + std::to_string(sig.params.size()) + " argument(s), got " + std::to_string(args.size());
        return out;
    }
    // A trampoline per signature: (args*, fn) loads the arguments from the
    // buffer, calls fn, stores the results back.
    std::string key = signature_key(sig);
    auto it = impl_->trampolines.find(key);
    if (it == impl_->trampolines.end()) {
        Function t(ExternalName::testcase("__heron_trampoline_" + std::to_string(impl_->trampolines.size())),
                   Signature(CallConv::SystemV));
        t.signature.params = {types::I64, types::I64};
        Block b = t.dfg.make_block();
        t.layout.append_block(b);
        Value buf = t.dfg.append_block_param(b, types::I64);
        Value fn = t.dfg.append_block_param(b, types::I64);
        SigRef sref = t.import_signature(sig);
        FuncCursor cur(t);
        cur.at_bottom(b);
        std::vector<Value> loaded;
        for (size_t k = 0; k < sig.params.size(); ++k) {
            loaded.push_back(cur.ins().load(sig.params[k].type, MemFlags::trusted(), buf, static_cast<int32_t>(8 * k)));
        }
        Inst call = cur.ins().call_indirect(sref, fn, loaded);
        std::vector<Value> results(t.dfg.inst_results(call).begin(), t.dfg.inst_results(call).end());
        for (size_t k = 0; k < results.size(); ++k) {
            cur.ins().store(MemFlags::trusted(), results[k], buf, static_cast<int32_t>(8 * k));
        }
        cur.ins().return_(std::span<const Value>());
        auto tid = declare_function(t.name.name, Linkage::Local, t.signature);
        if (!tid) {
            out.kind = JitCallOutcome::Kind::Error;
            out.message = tid.error().message;
            return out;
        }
        if (auto e = define_function(tid.value(), t)) {
            out.kind = JitCallOutcome::Kind::Error;
            out.message = "trampoline: " + e->message;
            return out;
        }
        if (auto e = finalize_definitions()) {
            out.kind = JitCallOutcome::Kind::Error;
            out.message = "trampoline: " + e->message;
            return out;
        }
        it = impl_->trampolines.emplace(key, tid.value()).first;
    }
    using Tramp = void(uint64_t*, const void*);
    Tramp* tramp = get_function<Tramp>(it->second);
    std::vector<uint64_t> buf(std::max(sig.params.size(), sig.returns.size()) + 1, 0);
    for (size_t k = 0; k < args.size(); ++k) buf[k] = args[k].bits;
    auto r = call_with_traps([&] { tramp(buf.data(), target); });
    if (r.error) {
        out.kind = JitCallOutcome::Kind::Error;
        out.message = r.error->message;
        return out;
    }
    if (r.trap) {
        out.kind = JitCallOutcome::Kind::Trap;
        out.trap = *r.trap;
        out.message = r.trap->to_string();
        return out;
    }
    for (size_t k = 0; k < sig.returns.size(); ++k) out.values.push_back(DataValue(sig.returns[k].type, buf[k]));
    return out;
}

}  // namespace heron
