// The canonical text printer (shared/docs/text-format.md). One line per
// preamble declaration (stack slots, then signatures, then function
// references, each in entity order), then the blocks in layout order with
// their instructions. Entity numbers are printed as they are; nothing is
// renumbered, so diagnostics that name `v7` match the printed text.
//
// Aliases (`vA -> vB`) are not instructions and have no place in the
// layout; all of them are printed at the top of the entry block, in value
// order, which the parser accepts because it resolves forward references.
//
// The `.T` suffix is printed where the controlling type comes from the
// result. Where it comes from an operand it is left out, with one
// exception that only unverifiable IR can need: when forward references
// form a type cycle (v1 = imul v2, v2 / v2 = isub v1, v1), the parser could
// not type them back, so the printer runs the parser's inference and keeps
// the suffix on the first instruction of each such cycle.
#include "codegen/ir/printer.h"

#include "codegen/ir/data_value.h"

namespace heron {

namespace {

void write_value_list(std::string& out, std::span<const Value> vals) {
    for (size_t i = 0; i < vals.size(); ++i) {
        if (i) out += ", ";
        out += vals[i].to_string();
    }
}

void write_block_call(std::string& out, const DataFlowGraph& dfg, const BlockCall& bc) {
    if (!bc.is_valid()) {
        out += "<no block>";
        return;
    }
    out += bc.block(dfg.value_lists).to_string();
    auto args = bc.args(dfg.value_lists);
    if (args.empty()) return;
    out += '(';
    write_value_list(out, args);
    out += ')';
}

/// iconst: sign-extended from the type's width; decimal below 10000 (so
/// every negative), otherwise hex in groups of four digits from the right
/// without zero padding (0x2710, 0x1_0000, 0x7fff_ffff).
std::string format_imm(uint64_t imm, Type t) {
    unsigned bits = t.bits() && t.bits() < 64 ? t.bits() : 64;
    if (bits < 64) {
        uint64_t sign = uint64_t{1} << (bits - 1);
        imm = ((imm & ((uint64_t{1} << bits) - 1)) ^ sign) - sign;
    }
    auto s = static_cast<int64_t>(imm);
    if (s < 10000) return std::to_string(s);
    std::string digits;
    for (uint64_t v = imm; v; v >>= 4) digits.insert(digits.begin(), "0123456789abcdef"[v & 0xf]);
    std::string out = "0x";
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 4 == 0) out += '_';
        out += digits[i];
    }
    return out;
}

/// ` flag flag` in the order of ir-reference.md 12.2: the trap code (or
/// notrap), aligned, readonly, can_move, big, little.
void write_mem_flags(std::string& out, MemFlags f) {
    if (f.has(MemFlags::Notrap)) {
        out += " notrap";
    } else if (f.trap) {
        out += " " + trapcode_name(TrapCode{f.trap});
    }
    if (f.has(MemFlags::Aligned)) out += " aligned";
    if (f.has(MemFlags::Readonly)) out += " readonly";
    if (f.has(MemFlags::CanMove)) out += " can_move";
    if (f.has(MemFlags::Big)) out += " big";
    if (f.has(MemFlags::Little)) out += " little";
}

void write_offset(std::string& out, int32_t off) {
    if (off > 0) out += "+" + std::to_string(off);
    if (off < 0) out += std::to_string(off);
}

void write_abi_params(std::string& out, const std::vector<AbiParam>& params) {
    for (size_t i = 0; i < params.size(); ++i) {
        if (i) out += ", ";
        out += params[i].type.name();
        if (params[i].ext == ArgExt::Uext) out += " uext";
        if (params[i].ext == ArgExt::Sext) out += " sext";
    }
}

void write_signature(std::string& out, const Signature& sig) {
    out += '(';
    write_abi_params(out, sig.params);
    out += ')';
    if (!sig.returns.empty()) {
        out += " -> ";
        write_abi_params(out, sig.returns);
    }
    if (sig.call_conv != CallConv::Fast) {
        out += ' ';
        out += callconv_name(sig.call_conv);
    }
}

void write_operands(std::string& out, const Function& func, const InstructionData& d) {
    const DataFlowGraph& dfg = func.dfg;
    auto vargs = d.vargs.empty() ? std::span<const Value>() : std::span<const Value>(d.vargs.raw(dfg.value_lists),
                                                                                    d.vargs.size(dfg.value_lists));
    auto v = [&](unsigned i) { return d.args[i].to_string(); };
    switch (d.format()) {
    case InstructionFormat::NullAry: return;
    case InstructionFormat::UnaryImm: out += " " + format_imm(d.imm, d.type); return;
    case InstructionFormat::UnaryIeee32: out += " " + format_ieee32(static_cast<uint32_t>(d.imm)); return;
    case InstructionFormat::UnaryIeee64: out += " " + format_ieee64(d.imm); return;
    case InstructionFormat::Unary: out += " " + v(0); return;
    case InstructionFormat::UnaryFlags:
        write_mem_flags(out, d.flags);
        out += " " + v(0);
        return;
    case InstructionFormat::Binary: out += " " + v(0) + ", " + v(1); return;
    case InstructionFormat::Ternary: out += " " + v(0) + ", " + v(1) + ", " + v(2); return;
    case InstructionFormat::IntAddTrap: out += " " + v(0) + ", " + v(1) + ", " + trapcode_name(d.trap_code()); return;
    case InstructionFormat::IntCompare:
        out += " " + std::string(intcc_name(d.intcc())) + " " + v(0) + ", " + v(1);
        return;
    case InstructionFormat::FloatCompare:
        out += " " + std::string(floatcc_name(d.floatcc())) + " " + v(0) + ", " + v(1);
        return;
    case InstructionFormat::Load:
        write_mem_flags(out, d.flags);
        out += " " + v(0);
        write_offset(out, d.offset);
        return;
    case InstructionFormat::Store:
        write_mem_flags(out, d.flags);
        out += " " + v(0) + ", " + v(1);
        write_offset(out, d.offset);
        return;
    case InstructionFormat::StackAddr:
        out += " " + d.stack_slot().to_string();
        write_offset(out, d.offset);
        return;
    case InstructionFormat::FuncAddr: out += " " + d.func_ref().to_string(); return;
    case InstructionFormat::Jump:
        out += ' ';
        write_block_call(out, dfg, d.dests[0]);
        return;
    case InstructionFormat::Brif:
        out += " " + v(0) + ", ";
        write_block_call(out, dfg, d.dests[0]);
        out += ", ";
        write_block_call(out, dfg, d.dests[1]);
        return;
    case InstructionFormat::BranchTable: {
        out += " " + v(0) + ", ";
        if (!dfg.jump_tables.is_valid(d.jump_table()) || dfg.jump_tables[d.jump_table()].all.empty()) {
            out += "<no jump table>";
            return;
        }
        const JumpTableData& jt = dfg.jump_tables[d.jump_table()];
        write_block_call(out, dfg, jt.default_block());
        out += ", [";
        auto entries = jt.entries();
        for (size_t i = 0; i < entries.size(); ++i) {
            if (i) out += ", ";
            write_block_call(out, dfg, entries[i]);
        }
        out += ']';
        return;
    }
    case InstructionFormat::MultiAry:
        if (!vargs.empty()) out += ' ';
        write_value_list(out, vargs);
        return;
    case InstructionFormat::Trap: out += " " + trapcode_name(d.trap_code()); return;
    case InstructionFormat::CondTrap: out += " " + v(0) + ", " + trapcode_name(d.trap_code()); return;
    case InstructionFormat::Call:
        out += " " + d.func_ref().to_string() + "(";
        write_value_list(out, vargs);
        out += ')';
        return;
    case InstructionFormat::CallIndirect:
        out += " " + d.sig_ref().to_string() + ", ";
        out += vargs.empty() ? Value().to_string() : vargs[0].to_string();
        out += '(';
        if (!vargs.empty()) write_value_list(out, vargs.subspan(1));
        out += ')';
        return;
    }
}

bool ctrl_from_operand(Opcode op) {
    CtrlSource c = opcode_info(op).ctrl;
    return c == CtrlSource::Arg0 || c == CtrlSource::Arg1;
}

Value ctrl_operand(const DataFlowGraph& dfg, const InstructionData& d) {
    if (opcode_info(d.opcode).ctrl == CtrlSource::Arg1) return d.args[1];
    if (d.format() == InstructionFormat::CallIndirect) return d.vargs.empty() ? Value() : d.vargs.get(0, dfg.value_lists);
    return d.args[0];
}

/// Instructions with an operand-controlled type that the parser could not
/// type from the printed text without a suffix (see the file comment). The
/// walk mirrors the parser: text order first, then a fixpoint over the
/// forward references; each round that makes no progress forces the suffix
/// on the first unresolved instruction.
std::vector<uint8_t> forced_suffixes(const Function& func) {
    const DataFlowGraph& dfg = func.dfg;
    std::vector<uint8_t> known(dfg.num_values()), forced(dfg.num_insts());
    auto is_known = [&](Value v) {
        if (!dfg.value_is_valid(v)) return true;  // malformed; nothing to print anyway
        v = dfg.resolve_aliases(v);
        return known[v.index()] != 0;
    };
    auto define = [&](Inst i) {
        for (Value r : dfg.inst_results(i)) known[r.index()] = 1;
    };
    std::vector<Inst> pending;
    for (Block b : func.layout.blocks()) {
        for (Value p : dfg.block_params(b)) known[p.index()] = 1;
        for (Inst i : func.layout.block_insts(b)) {
            bool open = ctrl_from_operand(dfg[i].opcode) && dfg.has_results(i) && !is_known(ctrl_operand(dfg, dfg[i]));
            if (open) {
                pending.push_back(i);
            } else {
                define(i);
            }
        }
    }
    std::vector<uint8_t> done(pending.size());
    size_t first_open = 0;
    for (;;) {
        for (bool progress = true; progress;) {
            progress = false;
            for (size_t k = pending.size(); k-- > 0;) {
                if (done[k] || !is_known(ctrl_operand(dfg, dfg[pending[k]]))) continue;
                done[k] = 1;
                define(pending[k]);
                progress = true;
            }
        }
        while (first_open < pending.size() && done[first_open]) ++first_open;
        if (first_open == pending.size()) return forced;
        Inst i = pending[first_open];
        forced[i.index()] = 1;
        done[first_open] = 1;
        define(i);
    }
}

void write_inst(std::string& out, const Function& func, Inst inst, bool force_suffix = false) {
    const DataFlowGraph& dfg = func.dfg;
    const InstructionData& d = dfg[inst];
    auto results = dfg.inst_results(inst);
    if (!results.empty()) {
        write_value_list(out, results);
        out += " = ";
    }
    out += opcode_name(d.opcode);
    Type suffix;
    if (opcode_info(d.opcode).ctrl == CtrlSource::Result) suffix = d.type;
    if (force_suffix) {
        Value v = ctrl_operand(dfg, d);
        if (dfg.value_is_valid(v)) suffix = dfg.value_type(dfg.resolve_aliases(v));
    }
    if (suffix.is_valid()) {
        out += '.';
        out += suffix.name();
    }
    write_operands(out, func, d);
}

void write_block_header(std::string& out, const Function& func, Block b) {
    out += b.to_string();
    auto params = func.dfg.block_params(b);
    if (!params.empty()) {
        out += '(';
        for (size_t i = 0; i < params.size(); ++i) {
            if (i) out += ", ";
            out += params[i].to_string() + ": ";
            out += func.dfg.value_type(params[i]).name();
        }
        out += ')';
    }
    if (func.layout.is_cold(b)) out += " cold";
    out += ":\n";
}

/// `vA -> vB` for every alias; placeholders (self-aliases) are not aliases.
void write_aliases(std::string& out, const DataFlowGraph& dfg) {
    for (uint32_t i = 0; i < dfg.num_values(); ++i) {
        Value v(i);
        if (!dfg.value_is_alias(v)) continue;
        Value target(dfg.value_def(v).owner);
        if (target == v) continue;
        out += "    " + v.to_string() + " -> " + target.to_string() + "\n";
    }
}

void write_preamble(std::string& out, const Function& func) {
    for (StackSlot ss : func.stack_slots.keys()) {
        const StackSlotData& data = func.stack_slots[ss];
        out += "    " + ss.to_string() + " = explicit_slot " + std::to_string(data.size);
        if (data.align != 1) out += ", align = " + std::to_string(data.align);
        if (data.key) out += ", key = " + std::to_string(*data.key);
        out += '\n';
    }
    for (SigRef sig : func.dfg.signatures.keys()) {
        out += "    " + sig.to_string() + " = ";
        write_signature(out, func.dfg.signatures[sig]);
        out += '\n';
    }
    for (FuncRef fn : func.dfg.ext_funcs.keys()) {
        const ExtFuncData& data = func.dfg.ext_funcs[fn];
        if (!data.signature.is_valid()) continue;  // a gap in the source's numbering
        out += "    " + fn.to_string() + " = ";
        if (data.colocated) out += "colocated ";
        out += data.name.to_string() + " " + data.signature.to_string() + "\n";
    }
}

}  // namespace

std::string print_signature(const Signature& sig) {
    std::string out;
    write_signature(out, sig);
    return out;
}

std::string print_inst(const Function& func, Inst inst) {
    std::string out;
    write_inst(out, func, inst);
    return out;
}

void write_function(std::string& out, const Function& func) {
    out += "function " + func.name.to_string();
    write_signature(out, func.signature);
    out += " {\n";
    write_preamble(out, func);
    std::vector<uint8_t> forced = forced_suffixes(func);
    bool entry = true;
    for (Block b : func.layout.blocks()) {
        write_block_header(out, func, b);
        if (entry) write_aliases(out, func.dfg);
        entry = false;
        for (Inst inst : func.layout.block_insts(b)) {
            out += "    ";
            write_inst(out, func, inst, forced[inst.index()] != 0);
            out += '\n';
        }
    }
    out += "}\n";
}

std::string print_function(const Function& func) {
    std::string out;
    write_function(out, func);
    return out;
}

}  // namespace heron
