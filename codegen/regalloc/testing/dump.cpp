// Text dump of allocator inputs and results; see dump.h.
#include "codegen/regalloc/testing/dump.h"

namespace heron::ra::testing {
namespace {

using std::to_string;

std::string reg_name(PReg r) { return (r.cls == RegClass::Int ? "r" : "f") + to_string(r.hw); }

std::string alloc_name(Allocation a) {
    if (a.is_reg()) return reg_name(a.as_reg());
    if (a.is_stack()) return "stack" + to_string(a.index);
    return "none";
}

std::string operand_text(const Operand& op) {
    std::string s = "v" + to_string(op.vreg.index()) + (op.vreg.cls() == RegClass::Float ? "f" : "");
    s += op.kind == OperandKind::Use ? ":Use" : ":Def";
    s += op.pos == OperandPos::Early ? ":Early" : ":Late";
    switch (op.constraint) {
        case Constraint::Any: return s + ":Any";
        case Constraint::Reg: return s + ":Reg";
        case Constraint::Fixed: return s + ":Fixed(" + reg_name(op.fixed_reg()) + ")";
        case Constraint::Reuse: return s + ":Reuse(" + to_string(op.aux) + ")";
    }
    return s;
}

void dump_edits(const Output& out, ProgPoint p, const char* label, std::string& s) {
    bool any = false;
    for (const Edit& e : out.edits) {
        if (!(e.point == p)) continue;
        s += any ? "; " : std::string("      ") + label + ": ";
        s += alloc_name(e.from) + " -> " + alloc_name(e.to);
        any = true;
    }
    if (any) s += "\n";
}

}  // namespace

std::string dump(const Function& f, const Output* out) {
    std::string s;
    size_t ci = 0;
    for (uint32_t b = 0; b < f.num_blocks(); ++b) {
        s += "block" + to_string(b) + "(";
        for (uint32_t k = f.params_begin[b]; k < f.params_begin[b + 1]; ++k)
            s += (k > f.params_begin[b] ? ", v" : "v") + to_string(f.params[k].index());
        s += ") depth " + to_string(f.loop_depth[b]) + " <-";
        for (uint32_t k = f.preds_begin[b]; k < f.preds_begin[b + 1]; ++k) s += " block" + to_string(f.preds[k]);
        s += "\n";
        for (uint32_t i = f.block_insts_begin[b]; i < f.block_insts_begin[b + 1]; ++i) {
            if (out) dump_edits(*out, ProgPoint::before(i), "before", s);
            s += "  inst" + to_string(i) + ":";
            for (uint32_t o = f.operands_begin[i]; o < f.operands_begin[i + 1]; ++o) {
                s += (o > f.operands_begin[i] ? ", " : " ") + operand_text(f.operands[o]);
                if (out && o < out->allocs.size()) s += "=" + alloc_name(out->allocs[o]);
            }
            if (f.flags[i] & inst_flags::kMove) s += "  (move)";
            for (; ci < f.clobbers.size() && f.clobbers[ci].first == i; ++ci) {
                s += "  clobbers{";
                for (unsigned c = 0; c < kNumRegClasses; ++c)
                    for (unsigned hw = 0; hw < kMaxRegsPerClass; ++hw)
                        if (f.clobbers[ci].second.contains(PReg(static_cast<uint8_t>(hw), static_cast<RegClass>(c))))
                            s += " " + reg_name(PReg(static_cast<uint8_t>(hw), static_cast<RegClass>(c)));
                s += " }";
            }
            s += "\n";
            if (out) dump_edits(*out, ProgPoint::after(i), "after", s);
        }
        for (uint32_t e = f.succs_begin[b]; e < f.succs_begin[b + 1]; ++e) {
            s += "  edge -> block" + to_string(f.succs[e]) + "(";
            for (uint32_t k = f.branch_args_begin[e]; k < f.branch_args_begin[e + 1]; ++k)
                s += (k > f.branch_args_begin[e] ? ", v" : "v") + to_string(f.branch_args[k].index());
            s += ")\n";
        }
    }
    if (out) s += "spill slots: " + to_string(out->num_spill_slots) + "\n";
    return s;
}

}  // namespace heron::ra::testing
