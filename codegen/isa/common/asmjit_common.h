// What both emitters share on top of asmjit (codegen/isa/*/emit.cpp): the
// CodeHolder and its error recorder, out-of-line trap stubs, jump tables of
// 32-bit offsets, 8-byte call-target slots with their relocations, the walk
// over a block's instructions with the allocator's edits, and the finish
// from the CodeHolder to CompiledCode. Only codegen/isa/* includes this
// (asmjit stays out of the ISA-neutral layers).
#pragma once

#include <asmjit/core.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/function.h"
#include "codegen/machinst/compiled_code.h"
#include "codegen/machinst/emit_common.h"
#include "codegen/regalloc/regalloc.h"

namespace heron::isa {

/// Keeps the first error asmjit reports (emission goes on; `finish` fails).
struct ErrorRecorder : asmjit::ErrorHandler {
    std::string first;
    void handleError(asmjit::Error, const char* message, asmjit::BaseEmitter*) override {
        if (first.empty()) first = message;
    }
};

/// The base of an emitter: owns the CodeHolder for one function and the
/// pieces placed after the code. The ISA's Emitter derives from it and
/// attaches its assembler with `begin`.
class EmitterBase {
protected:
    explicit EmitterBase(CompiledCode& out) : out_(out), code_(own_code_.emplace()) {}
    /// With a CodeHolder kept between functions (reset, not rebuilt, for
    /// each: its zone memory is reused).
    EmitterBase(CompiledCode& out, asmjit::CodeHolder& code) : out_(out), code_(code) {}

    /// Initializes the CodeHolder for `arch` and attaches `a` (a CodeHolder
    /// kept from the previous function with `a` still attached is only
    /// emptied, see attach); makes a label
    /// per block of `vc` and sizes the tables of call-target slots and jump
    /// table labels.
    /// `with_block_labels` false: the ISA places its block jumps itself.
    template <class VCode>
    void begin(asmjit::Arch arch, asmjit::BaseAssembler& a, const VCode& vc, bool with_block_labels = true) {
        attach(arch, a);
        if (with_block_labels) {
            for (uint32_t b = 0; b < vc.num_blocks(); ++b) block_labels_.push_back(a.newLabel());
        }
        symbol_slots_.resize(vc.symbols.size());
        table_labels_.resize(vc.jump_tables.size());
    }

    void record_trap(TrapCode code, uint32_t ir_inst) {
        out_.trap_sites.push_back({static_cast<uint32_t>(asm_->offset()), code, ir_inst});
    }
    /// A label to jump to for a trap reporting `code`: an out-of-line stub.
    asmjit::Label trap_label(uint8_t code, uint32_t ir_inst) {
        asmjit::Label l = asm_->newLabel();
        stubs_.push_back({l, code, ir_inst});
        return l;
    }
    /// The label of the 8-byte slot holding the address of symbol `sym`'s
    /// cell (emitted after the code, relocated by the loader).
    asmjit::Label symbol_slot(uint32_t sym) {
        asmjit::Label& l = symbol_slots_[sym];
        if (!l.isValid()) l = asm_->newLabel();
        return l;
    }

    /// Emits the instructions of VCode block `b` with the allocator's edits
    /// around them, recording where each IR instruction's code starts and
    /// the block's label name. Blocks may come in any order (the layout of
    /// BlockOrder): `edit` is first set to the block's first edit
    /// (first_edit_at from the previous block's end), then moves forward
    /// through the block. `emit_inst(i)` emits instruction i,
    /// `emit_edit(e)` an edit. The caller binds the block's label first.
    template <class VCode, class EmitInst, class EmitEdit>
    void emit_block(const VCode& vc, const ra::Output& al, uint32_t b, size_t& edit, EmitInst&& emit_inst,
                    EmitEdit&& emit_edit) {
        const ra::Function& rf = vc.ra;
        if (vc.block_ir[b] != ~0u) {
            // "block<n>", written in place (no temporary strings).
            char name[16] = {'b', 'l', 'o', 'c', 'k'};
            const char* end = std::to_chars(name + 5, name + sizeof name, vc.block_ir[b]).ptr;
            out_.labels.emplace_back(offset(), std::string_view(name, static_cast<size_t>(end - name)));
        }
        const auto& edits = al.edits;
        edit = first_edit_at(edits, ra::ProgPoint::before(rf.block_insts_begin[b]).bits, edit);
        // `next`: the point of the next edit (~0u: none left), so that an
        // instruction without edits costs one comparison on each side.
        const size_t n = edits.size();
        uint32_t next = edit < n ? edits[edit].point.bits : ~0u;
        uint32_t last_ir = out_.ir_insts.empty() ? ~0u : out_.ir_insts.back().second;
        // Locals: emit_inst and emit_edit are calls, after which members
        // and vector data would be read again.
        const auto* insts = vc.insts.data();
        const ra::Edit* edit_data = edits.data();
        const uint32_t end = rf.block_insts_begin[b + 1];
        size_t e = edit;
        for (uint32_t i = rf.block_insts_begin[b]; i < end; ++i) {
            const uint32_t before = ra::ProgPoint::before(i).bits;
            if (next <= before) {
                while (e < n && edit_data[e].point.bits < before) ++e;
                while (e < n && edit_data[e].point.bits == before) emit_edit(edit_data[e++]);
                next = e < n ? edit_data[e].point.bits : ~0u;
            }
            const uint32_t ir = insts[i].ir_inst;
            if (ir != ~0u && ir != last_ir) {
                out_.ir_insts.push_back({offset(), ir});
                last_ir = ir;
            }
            emit_inst(i);
            if (next == before + 1) {
                while (e < n && edit_data[e].point.bits == before + 1) emit_edit(edit_data[e++]);
                next = e < n ? edit_data[e].point.bits : ~0u;
            }
        }
        edit = e;
    }

    /// The first of `edits` (sorted by program point) at or after point
    /// `point`. Blocks mostly come in instruction order, so the search
    /// starts at edit `from` when every edit before it is earlier (doubling
    /// steps forward, then a binary search in the last step), else at the
    /// start.
    static size_t first_edit_at(const std::vector<ra::Edit>& edits, uint32_t point, size_t from) {
        auto before = [&](const ra::Edit& x) { return x.point.bits < point; };
        if (from > edits.size() || (from > 0 && !before(edits[from - 1]))) from = 0;
        if (from == edits.size() || !before(edits[from])) return from;
        size_t lo = from + 1, step = 1;
        while (lo + step < edits.size() && before(edits[lo + step - 1])) {
            lo += step;
            step *= 2;
        }
        const auto hi = edits.begin() + static_cast<ptrdiff_t>(std::min(lo + step, edits.size()));
        return static_cast<size_t>(std::partition_point(edits.begin() + static_cast<ptrdiff_t>(lo), hi, before) -
                                   edits.begin());
    }

    /// The VCode blocks in code order: the VCode's layout (BlockOrder), or
    /// its own order when it has none (VCode built by hand in tests), made
    /// in `scratch`.
    template <class VCode>
    static const std::vector<uint32_t>& code_order(const VCode& vc, std::vector<uint32_t>& scratch) {
        if (vc.layout.size() == vc.num_blocks()) return vc.layout;
        scratch.resize(vc.num_blocks());
        for (uint32_t b = 0; b < scratch.size(); ++b) scratch[b] = b;
        return scratch;
    }

    /// Whether the allocator put edits before or after instruction `inst`
    /// (a binary search: the edits are sorted by program point).
    static bool has_edits(const ra::Output& al, uint32_t inst) {
        const uint32_t before = ra::ProgPoint::before(inst).bits;
        auto e = std::partition_point(al.edits.begin(), al.edits.end(),
                                      [&](const ra::Edit& x) { return x.point.bits < before; });
        return e != al.edits.end() && e->point.inst() == inst;
    }

    /// Jump threading, per VCode block: the block control really reaches
    /// when jumping to it. A block is a forwarder when its only instruction
    /// is a jump (`is_jump(inst)`, its target in `aux`) with no allocator
    /// edits around it (an edge block without moves, an empty IR block);
    /// the entry block never is (its code follows the prologue). Chains are
    /// followed; a block of a cycle of forwarders (an empty infinite loop)
    /// keeps itself, so every final target is its own final target and a
    /// forwarded block's code can be left out. `forward` gets one entry
    /// more, ~0u: "the block after the last" matches no target.
    /// `next` is scratch kept by the caller. Only blocks of one jump look
    /// for edits, by one walk along them (the blocks' instructions come in
    /// increasing order). An edge block is one jump to its successor
    /// (LowerBase::lower_blocks), so its instruction is not read: in a
    /// large function that read would miss the cache for most blocks.
    template <class VCode, class IsJump>
    static void compute_forwarding(const VCode& vc, const ra::Output& al, IsJump&& is_jump,
                                   std::vector<uint32_t>& next, std::vector<uint32_t>& forward) {
        const ra::Function& rf = vc.ra;
        const uint32_t nb = rf.num_blocks();
        next.resize(nb);
        const ra::Edit* edits = al.edits.data();
        const size_t ne = al.edits.size();
        size_t e = 0;
        for (uint32_t b = 0; b < nb; ++b) {
            const uint32_t first = rf.block_insts_begin[b];
            next[b] = b;
            if (b == 0 || rf.block_insts_begin[b + 1] != first + 1) continue;
            const bool edge = vc.block_ir[b] == ~0u;
            if (!edge && !is_jump(vc.insts[first])) continue;
            while (e < ne && edits[e].point.inst() < first) ++e;
            if (e == ne || edits[e].point.inst() != first) next[b] = edge ? rf.succs[rf.succs_begin[b]] : vc.insts[first].aux;
        }
        forward.resize(nb + 1);
        for (uint32_t b = 0; b < nb; ++b) {
            uint32_t t = b;
            for (uint32_t steps = 0; steps < nb && next[t] != t; ++steps) t = next[t];
            forward[b] = next[t] == t ? t : b;
        }
        forward[nb] = ~0u;
    }

    /// Binds each trap stub and emits its trapping instruction with
    /// `emit_trap()` (ud2, udf), recording the trap site.
    template <class EmitTrap>
    void emit_trap_stubs(EmitTrap&& emit_trap) {
        for (const Stub& s : stubs_) {
            asm_->bind(s.label);
            record_trap(TrapCode{s.code}, s.ir_inst);
            emit_trap();
        }
    }

    /// The jump tables that were used (their label bound by the ISA's
    /// BrTable): 32-bit offsets of each target from the table's start, the
    /// non-default targets first, then the default (entry 0 of each table).
    /// `embed_entry(b, table)` embeds the entry of VCode block b of the
    /// table whose label is `table` (bound at the current offset's table
    /// start).
    template <class EmbedEntry>
    void emit_jump_tables(const std::vector<std::vector<uint32_t>>& tables, EmbedEntry&& embed_entry) {
        for (size_t t = 0; t < tables.size(); ++t) {
            if (!table_labels_[t].isValid()) continue;
            asm_->align(asmjit::AlignMode::kData, 4);
            asm_->bind(table_labels_[t]);
            const std::vector<uint32_t>& targets = tables[t];
            for (size_t k = 1; k < targets.size(); ++k) embed_entry(targets[k], table_labels_[t]);
            embed_entry(targets[0], table_labels_[t]);
        }
    }

    /// The 8-byte slots of the symbols used, each with a relocation.
    /// `align_always`: align to 8 even when no slot follows.
    void emit_symbol_slots(const std::vector<ExternalName>& symbols, bool align_always);

    /// Resolves the labels and copies the code into out_.bytes; sorts the
    /// trap sites. Returns "<isa> emission failed: ..." on an asmjit error.
    std::string finish(std::string_view isa_name);

    uint32_t offset() const { return static_cast<uint32_t>(asm_->offset()); }
    /// The id of the first label made for this function (a reused
    /// CodeHolder keeps the earlier functions' labels below it).
    uint32_t first_label() const { return first_label_; }

    CompiledCode& out_;
    std::optional<asmjit::CodeHolder> own_code_;  // without a kept CodeHolder
    asmjit::CodeHolder& code_;
    ErrorRecorder errors_;
    struct Stub {
        asmjit::Label label;
        uint8_t code;
        uint32_t ir_inst;
    };
    std::vector<Stub> stubs_;
    std::vector<asmjit::Label> block_labels_;  // per VCode block
    std::vector<asmjit::Label> symbol_slots_;
    std::vector<asmjit::Label> table_labels_;  // per jump table; valid once a BrTable used it

private:
    void attach(asmjit::Arch arch, asmjit::BaseAssembler& a);

    asmjit::BaseAssembler* asm_ = nullptr;
    uint32_t first_label_ = 0;
};

}  // namespace heron::isa
