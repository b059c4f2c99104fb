// The small language's code generator: one FnCompiler per function walks the
// syntax tree and builds IR with the FunctionBuilder.
//
//   let x = e / x = e        declare_var + def_var / def_var (a new
//                            Variable per `let`, so inner lets shadow)
//   x                        use_var
//   (with locals_in_slots, as a naive frontend: a stack slot per variable,
//   `store` for each definition, `stack_addr` + `load` for each use)
//   if c { } else { }        brif to two sealed blocks, then a merge
//   while c { }              LoopScopes: begin_loop, loop_while, end_loop
//                            (a condition with && or || makes blocks of its
//                            own: then enter_body + break_if at the top)
//   for i in a..b { }        a hidden counter and bound; `i` is a fresh
//                            variable per iteration, so assigning it does
//                            not change the iteration
//   break / continue         break_loop / continue_loop
//   match e { 1 | 2 => ..}   Switch::emit over the arms' blocks
//   a && b, a || b           short-circuit through a variable and a merge
//
// After return/break/continue the current block is filled; the statements
// after it go to a fresh block without predecessors (dead code, still type
// checked). Such a block ends in `trap user1` where the construct around it
// ends, so it adds no edge (and no block parameters) to the code that
// follows. Falling off the end of a function returns 0 (or 0.0).
#include "tools/lang/codegen.h"

#include <set>
#include <utility>

#include "frontend/function_builder.h"
#include "frontend/loops.h"
#include "frontend/switch.h"
#include "tools/lang/host.h"

namespace heron::lang {

Signature signature_of(const std::vector<ValType>& params, ValType ret) {
    Signature sig;
    for (ValType p : params) sig.params.push_back(AbiParam(p == ValType::I64 ? types::I64 : types::F64));
    sig.returns.push_back(AbiParam(ret == ValType::I64 ? types::I64 : types::F64));
    return sig;
}

namespace {

Type ir_type(ValType t) { return t == ValType::I64 ? types::I64 : types::F64; }

const char* op_text(Tok op) {
    switch (op) {
    case Tok::Plus: case Tok::PlusAssign: return "+";
    case Tok::Minus: case Tok::MinusAssign: return "-";
    case Tok::Star: case Tok::StarAssign: return "*";
    case Tok::Slash: case Tok::SlashAssign: return "/";
    case Tok::Percent: case Tok::PercentAssign: return "%";
    case Tok::Amp: return "&";
    case Tok::Pipe: return "|";
    case Tok::Caret: return "^";
    case Tok::Shl: return "<<";
    case Tok::Shr: return ">>";
    case Tok::AndAnd: return "&&";
    case Tok::OrOr: return "||";
    case Tok::EqEq: return "==";
    case Tok::NotEq: return "!=";
    case Tok::Lt: return "<";
    case Tok::Le: return "<=";
    case Tok::Gt: return ">";
    case Tok::Ge: return ">=";
    case Tok::Bang: return "!";
    default: return "?";
    }
}

bool is_comparison(Tok op) {
    return op == Tok::EqEq || op == Tok::NotEq || op == Tok::Lt || op == Tok::Le || op == Tok::Gt || op == Tok::Ge;
}

/// Whether evaluating `e` creates blocks (short-circuit operators).
bool makes_blocks(const Expr& e) {
    if (e.kind == Expr::Kind::Binary && (e.op == Tok::AndAnd || e.op == Tok::OrOr)) return true;
    for (const ExprPtr& a : e.args) {
        if (makes_blocks(*a)) return true;
    }
    return false;
}

/// What a call can reach: functions of the program, of the environment,
/// and host functions.
struct Callee {
    std::string symbol;  // the IR name
    std::vector<ValType> params;
    ValType ret = ValType::I64;
    Signature sig;
};

struct Globals {
    std::map<std::string, Callee> fns;  // program and environment, by language name
};

/// A value and its language type.
struct TV {
    Value v;
    ValType t = ValType::I64;
};

/// A language variable: a frontend Variable, or with
/// CodegenOptions::locals_in_slots a stack slot of its own.
struct Var {
    Variable var;
    ValType t;
    PackedOption<StackSlot> slot;
};

class FnCompiler {
public:
    FnCompiler(FunctionBuilder& b, const Globals& g, CompiledFunction& out, std::optional<Diagnostic>& err,
               const CodegenOptions& options)
        : b_(b), g_(g), out_(out), err_(err), options_(options) {}

    /// Builds the body of a function whose entry block parameters are
    /// `params`. `ret` is the return type; for the REPL's statements it is
    /// unknown until the last expression is seen (`infer_ret`).
    void function(const std::vector<Param>& params, const StmtList& body, ValType ret, bool infer_ret,
                  bool& has_value, ValType& value_type) {
        ret_ = ret;
        Block entry = b_.create_block();
        b_.append_block_params_for_function_params(entry);
        b_.switch_to_block(entry);
        b_.seal_block(entry);
        scopes_.emplace_back();
        for (size_t i = 0; i < params.size(); ++i) {
            const Param& p = params[i];
            if (scopes_.back().count(p.name)) return fail(p.loc, "parameter '" + p.name + "' appears twice");
            Var v = new_var(p.type);
            set(v, b_.block_params(entry)[i]);
            scopes_.back()[p.name] = v;
        }
        for (size_t i = 0; i < body.size() && !err_; ++i) {
            const Stmt& s = *body[i];
            if (s.kind == Stmt::Kind::Expr && s.is_tail) {
                TV v = expr(*s.e1);
                if (err_) return;
                if (infer_ret) {
                    ret_ = v.t;
                    has_value = true;
                    value_type = v.t;
                } else if (v.t != ret_) {
                    return fail(s.e1->loc, std::string("the function returns ") + val_type_name(ret_) +
                                               " but this expression is " + val_type_name(v.t));
                }
                b_.ins().return_({v.v});
                continue;
            }
            stmt(s);
        }
        if (err_) return;
        end_dead_block();
        if (!b_.is_filled()) b_.ins().return_({zero(ret_)});
    }

    ValType ret() const { return ret_; }

private:
    void fail(Location loc, std::string msg) {
        if (!err_) err_ = Diagnostic{loc, std::move(msg)};
    }

    Value zero(ValType t) { return t == ValType::I64 ? b_.ins().iconst(types::I64, 0) : b_.ins().f64const(0.0); }

    void note(Inst inst, Location loc) {
        out_.srcmap.inst_line[inst] = loc.line;
        out_.inst_col[inst] = loc.col;
    }

    void start_dead_block() {
        Block d = b_.create_block();
        b_.switch_to_block(d);
        b_.seal_block(d);
    }

    /// Ends the current block if nothing reaches it (see the top of the file).
    void end_dead_block() {
        if (b_.is_unreachable() && !b_.is_filled()) b_.ins().trap(TrapCode::user(1));
    }

    bool check(const Result<void>& r, Location loc) {
        if (r.ok()) return true;
        fail(loc, "internal error: " + r.error().message);
        return false;
    }

    const Var* lookup(const std::string& name) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto f = it->find(name);
            if (f != it->end()) return &f->second;
        }
        return nullptr;
    }

    // --- statements ---------------------------------------------------------------
    void block(const StmtList& body) {
        scopes_.emplace_back();
        for (const StmtPtr& s : body) {
            if (err_) break;
            stmt(*s);
        }
        scopes_.pop_back();
    }

    void stmt(const Stmt& s) {
        switch (s.kind) {
        case Stmt::Kind::Let: return let_stmt(s);
        case Stmt::Kind::Assign: return assign(s);
        case Stmt::Kind::If: return if_stmt(s);
        case Stmt::Kind::While: return while_stmt(s);
        case Stmt::Kind::For: return for_stmt(s);
        case Stmt::Kind::Break:
        case Stmt::Kind::Continue: return jump_stmt(s);
        case Stmt::Kind::Return: return return_stmt(s);
        case Stmt::Kind::Match: return match_stmt(s);
        case Stmt::Kind::Block: return block(s.body);
        case Stmt::Kind::Expr:
            if (s.is_tail) return fail(s.loc, "expected ';' after the expression");
            expr(*s.e1);
            return;
        }
    }

    // --- variables: SSA through the frontend, or slots ------------------------

    Var new_var(ValType t) {
        if (!options_.locals_in_slots) return Var{b_.declare_var(ir_type(t)), t, {}};
        StackSlotData d;
        d.size = 8;
        d.align = 8;
        return Var{Variable(), t, b_.create_sized_stack_slot(d)};
    }
    void set(const Var& v, Value x) {
        if (!v.slot) return b_.def_var(v.var, x);
        b_.ins().store(MemFlags::trusted(), x, b_.ins().stack_addr(types::I64, *v.slot));
    }
    Value get(const Var& v) {
        if (!v.slot) return b_.use_var(v.var);
        return b_.ins().load(ir_type(v.t), MemFlags::trusted(), b_.ins().stack_addr(types::I64, *v.slot));
    }

    void let_stmt(const Stmt& s) {
        TV v = expr(*s.e1);
        if (err_) return;
        if (s.has_type && v.t != s.type) {
            return fail(s.e1->loc, "'" + s.name + "' is declared " + val_type_name(s.type) + " but its value is " +
                                       val_type_name(v.t));
        }
        Var var = new_var(v.t);
        set(var, v.v);
        scopes_.back()[s.name] = var;
    }

    void assign(const Stmt& s) {
        const Var* var = lookup(s.name);
        if (!var) return fail(s.loc, "unknown variable '" + s.name + "' (declare it with let)");
        Var target = *var;
        TV v = expr(*s.e1);
        if (err_) return;
        if (s.op != Tok::Assign) {
            TV old{get(target), target.t};
            v = arith(s.op, old, v, s.loc);
            if (err_) return;
        }
        if (v.t != target.t) {
            return fail(s.e1->loc, "'" + s.name + "' is " + val_type_name(target.t) + " but the value is " +
                                       val_type_name(v.t));
        }
        set(target, v.v);
    }

    void if_stmt(const Stmt& s) {
        Value c = cond(*s.e1);
        if (err_) return;
        Block then_b = b_.create_block(), merge = b_.create_block();
        Block else_b = s.has_else ? b_.create_block() : merge;
        b_.ins().brif(c, then_b, else_b);
        b_.seal_block(then_b);
        b_.switch_to_block(then_b);
        block(s.body);
        if (err_) return;
        end_dead_block();
        if (!b_.is_filled()) b_.ins().jump(merge);
        if (s.has_else) {
            b_.seal_block(else_b);
            b_.switch_to_block(else_b);
            block(s.else_body);
            if (err_) return;
            end_dead_block();
            if (!b_.is_filled()) b_.ins().jump(merge);
        }
        b_.seal_block(merge);
        b_.switch_to_block(merge);
    }

    void while_stmt(const Stmt& s) {
        if (!check_loop(loops_.begin_loop(b_), s.loc)) return;
        if (makes_blocks(*s.e1)) {
            // The test builds blocks of its own, so it cannot end the header.
            if (!check(loops_.enter_body(b_), s.loc)) return;
            Value c = cond(*s.e1);
            if (err_) return;
            Value done = b_.ins().icmp_imm(IntCC::Eq, c, 0);
            if (!check(loops_.break_if(b_, done), s.loc)) return;
        } else {
            Value c = cond(*s.e1);
            if (err_) return;
            if (!check(loops_.loop_while(b_, c), s.loc)) return;
        }
        block(s.body);
        if (err_) return;
        end_dead_block();
        check(loops_.end_loop(b_), s.loc);
    }

    void for_stmt(const Stmt& s) {
        TV lo = expr(*s.e1);
        if (err_) return;
        TV hi = expr(*s.e2);
        if (err_) return;
        if (lo.t != ValType::I64 || hi.t != ValType::I64) {
            return fail(lo.t != ValType::I64 ? s.e1->loc : s.e2->loc, "a for range needs i64 bounds");
        }
        Var counter = new_var(ValType::I64), bound = new_var(ValType::I64);
        set(counter, lo.v);
        set(bound, hi.v);
        if (!check_loop(loops_.begin_loop(b_), s.loc)) return;
        Value c = b_.ins().icmp(IntCC::Slt, get(counter), get(bound));
        if (!check(loops_.loop_while(b_, c), s.loc)) return;
        scopes_.emplace_back();
        Var i = new_var(ValType::I64);
        Value cur = get(counter);
        set(i, cur);
        set(counter, b_.ins().iadd_imm(cur, 1));
        scopes_.back()[s.name] = i;
        block(s.body);
        scopes_.pop_back();
        if (err_) return;
        end_dead_block();
        check(loops_.end_loop(b_), s.loc);
    }

    bool check_loop(const Result<LoopBlocks>& r, Location loc) {
        if (r.ok()) return true;
        fail(loc, "internal error: " + r.error().message);
        return false;
    }

    void jump_stmt(const Stmt& s) {
        bool is_break = s.kind == Stmt::Kind::Break;
        if (loops_.depth() == 0) return fail(s.loc, std::string("'") + (is_break ? "break" : "continue") + "' outside a loop");
        if (!check(is_break ? loops_.break_loop(b_) : loops_.continue_loop(b_), s.loc)) return;
        start_dead_block();
    }

    void return_stmt(const Stmt& s) {
        Value v;
        if (s.e1) {
            TV r = expr(*s.e1);
            if (err_) return;
            if (r.t != ret_) {
                return fail(s.e1->loc, std::string("the function returns ") + val_type_name(ret_) + " but this is " +
                                           val_type_name(r.t));
            }
            v = r.v;
        } else {
            v = zero(ret_);
        }
        b_.ins().return_({v});
        start_dead_block();
    }

    void match_stmt(const Stmt& s) {
        TV sel = expr(*s.e1);
        if (err_) return;
        if (sel.t != ValType::I64) return fail(s.e1->loc, "match needs an i64 selector, this is f64");
        Block merge = b_.create_block();
        std::optional<Block> dflt;
        std::set<int64_t> seen;
        std::vector<Block> arm_blocks;
        Switch sw;
        for (const MatchArm& arm : s.arms) {
            Block ab = b_.create_block();
            arm_blocks.push_back(ab);
            if (arm.is_default) {
                if (dflt) return fail(arm.loc, "a second '_' arm");
                dflt = ab;
            }
            for (size_t k = 0; k < arm.values.size(); ++k) {
                if (!seen.insert(arm.values[k]).second) {
                    return fail(arm.value_locs[k], "case " + std::to_string(arm.values[k]) +
                                                       " appears twice in this match");
                }
                sw.set_entry(static_cast<uint64_t>(arm.values[k]), ab);
            }
        }
        if (!check(sw.emit(b_, sel.v, dflt ? *dflt : merge), s.loc)) return;
        for (size_t a = 0; a < s.arms.size(); ++a) {
            b_.seal_block(arm_blocks[a]);
            b_.switch_to_block(arm_blocks[a]);
            block(s.arms[a].body);
            if (err_) return;
            end_dead_block();
            if (!b_.is_filled()) b_.ins().jump(merge);
        }
        b_.seal_block(merge);
        b_.switch_to_block(merge);
    }

    // --- expressions -------------------------------------------------------------------
    /// A value for brif: an icmp result as is, else an i64.
    Value cond(const Expr& e) {
        if (e.kind == Expr::Kind::Binary && is_comparison(e.op)) {
            TV l = expr(*e.args[0]);
            if (err_) return Value();
            TV r = expr(*e.args[1]);
            if (err_) return Value();
            return compare(e.op, l, r, e.loc);
        }
        TV v = expr(e);
        if (err_) return Value();
        if (v.t != ValType::I64) {
            fail(e.loc, "a condition must be i64 (0 is false), this is f64; compare it instead");
            return Value();
        }
        return v.v;
    }

    TV expr(const Expr& e) {
        switch (e.kind) {
        case Expr::Kind::Int: return {b_.ins().iconst(types::I64, e.ival), ValType::I64};
        case Expr::Kind::Float: return {b_.ins().f64const(e.fval), ValType::F64};
        case Expr::Kind::Var: {
            const Var* v = lookup(e.name);
            if (!v) {
                fail(e.loc, "unknown variable '" + e.name + "'");
                return {};
            }
            return {get(*v), v->t};
        }
        case Expr::Kind::Unary: return unary(e);
        case Expr::Kind::Binary: return binary(e);
        case Expr::Kind::Call: return call(e);
        }
        return {};
    }

    TV unary(const Expr& e) {
        TV v = expr(*e.args[0]);
        if (err_) return {};
        if (e.op == Tok::Minus) {
            return v.t == ValType::I64 ? TV{b_.ins().ineg(v.v), v.t} : TV{b_.ins().fneg(v.v), v.t};
        }
        if (v.t != ValType::I64) {
            fail(e.loc, "'!' needs an i64 operand, this is f64");
            return {};
        }
        return {b_.ins().uextend(types::I64, b_.ins().icmp_imm(IntCC::Eq, v.v, 0)), ValType::I64};
    }

    TV binary(const Expr& e) {
        if (e.op == Tok::AndAnd || e.op == Tok::OrOr) return short_circuit(e);
        TV l = expr(*e.args[0]);
        if (err_) return {};
        TV r = expr(*e.args[1]);
        if (err_) return {};
        if (is_comparison(e.op)) {
            Value c = compare(e.op, l, r, e.loc);
            if (err_) return {};
            return {b_.ins().uextend(types::I64, c), ValType::I64};
        }
        return arith(e.op, l, r, e.loc);
    }

    bool same_types(Tok op, TV l, TV r, Location loc) {
        if (l.t == r.t) return true;
        fail(loc, std::string("'") + op_text(op) + "' needs operands of one type, got " + val_type_name(l.t) +
                      " and " + val_type_name(r.t) + " (convert with f64(x) or i64(x))");
        return false;
    }

    Value compare(Tok op, TV l, TV r, Location loc) {
        if (!same_types(op, l, r, loc)) return Value();
        if (l.t == ValType::I64) {
            IntCC cc = op == Tok::EqEq ? IntCC::Eq : op == Tok::NotEq ? IntCC::Ne : op == Tok::Lt ? IntCC::Slt
                     : op == Tok::Le ? IntCC::Sle : op == Tok::Gt ? IntCC::Sgt : IntCC::Sge;
            return b_.ins().icmp(cc, l.v, r.v);
        }
        FloatCC cc = op == Tok::EqEq ? FloatCC::Eq : op == Tok::NotEq ? FloatCC::Ne : op == Tok::Lt ? FloatCC::Lt
                   : op == Tok::Le ? FloatCC::Le : op == Tok::Gt ? FloatCC::Gt : FloatCC::Ge;
        return b_.ins().fcmp(cc, l.v, r.v);
    }

    TV arith(Tok op, TV l, TV r, Location loc) {
        if (!same_types(op, l, r, loc)) return {};
        if (l.t == ValType::F64) {
            switch (op) {
            case Tok::Plus: case Tok::PlusAssign: return {b_.ins().fadd(l.v, r.v), l.t};
            case Tok::Minus: case Tok::MinusAssign: return {b_.ins().fsub(l.v, r.v), l.t};
            case Tok::Star: case Tok::StarAssign: return {b_.ins().fmul(l.v, r.v), l.t};
            case Tok::Slash: case Tok::SlashAssign: return {b_.ins().fdiv(l.v, r.v), l.t};
            default:
                fail(loc, std::string("'") + op_text(op) + "' needs i64 operands, these are f64");
                return {};
            }
        }
        switch (op) {
        case Tok::Plus: case Tok::PlusAssign: return {b_.ins().iadd(l.v, r.v), l.t};
        case Tok::Minus: case Tok::MinusAssign: return {b_.ins().isub(l.v, r.v), l.t};
        case Tok::Star: case Tok::StarAssign: return {b_.ins().imul(l.v, r.v), l.t};
        case Tok::Slash: case Tok::SlashAssign: return {noted(b_.ins().sdiv(l.v, r.v), loc), l.t};
        case Tok::Percent: case Tok::PercentAssign: return {noted(b_.ins().srem(l.v, r.v), loc), l.t};
        case Tok::Amp: return {b_.ins().band(l.v, r.v), l.t};
        case Tok::Pipe: return {b_.ins().bor(l.v, r.v), l.t};
        case Tok::Caret: return {b_.ins().bxor(l.v, r.v), l.t};
        case Tok::Shl: return {b_.ins().ishl(l.v, r.v), l.t};
        case Tok::Shr: return {b_.ins().sshr(l.v, r.v), l.t};
        default:
            fail(loc, std::string("internal error: operator ") + op_text(op));
            return {};
        }
    }

    /// Records where the instruction defining `v` came from (it may trap).
    Value noted(Value v, Location loc) {
        ValueDef d = b_.func.dfg.value_def(v);
        if (d.is_result()) note(d.inst(), loc);
        return v;
    }

    TV short_circuit(const Expr& e) {
        bool is_and = e.op == Tok::AndAnd;
        Var t = new_var(ValType::I64);
        Value l = truth(*e.args[0]);
        if (err_) return {};
        set(t, l);
        Block rhs = b_.create_block(), merge = b_.create_block();
        if (is_and) b_.ins().brif(l, rhs, merge);
        else b_.ins().brif(l, merge, rhs);
        b_.seal_block(rhs);
        b_.switch_to_block(rhs);
        Value r = truth(*e.args[1]);
        if (err_) return {};
        set(t, r);
        b_.ins().jump(merge);
        b_.seal_block(merge);
        b_.switch_to_block(merge);
        return {get(t), ValType::I64};
    }

    /// 0 or 1 as i64.
    Value truth(const Expr& e) {
        Value c = cond(e);
        if (err_) return Value();
        if (b_.func.dfg.value_type(c) == types::I64) c = b_.ins().icmp_imm(IntCC::Ne, c, 0);
        return b_.ins().uextend(types::I64, c);
    }

    TV call(const Expr& e) {
        std::vector<TV> args;
        for (const ExprPtr& a : e.args) {
            args.push_back(expr(*a));
            if (err_) return {};
        }
        if (e.name == "i64" || e.name == "f64" || e.name == "sqrt") return builtin(e, args);
        if (const HostFunction* h = host(e.name, args)) {
            Callee c{h->symbol, h->params, h->ret, signature_of(h->params, h->ret)};
            c.sig.call_conv = CallConv::SystemV;
            return emit_call(e, c, args);
        }
        auto it = g_.fns.find(e.name);
        if (it == g_.fns.end()) {
            fail(e.loc, "unknown function '" + e.name + "'");
            return {};
        }
        return emit_call(e, it->second, args);
    }

    const HostFunction* host(const std::string& name, const std::vector<TV>& args) {
        const HostFunction* any = nullptr;
        for (const HostFunction& h : host_functions()) {
            if (name != h.name) continue;
            any = &h;
            if (h.params.size() != args.size()) continue;
            bool fits = true;
            for (size_t i = 0; i < args.size(); ++i) fits = fits && args[i].t == h.params[i];
            if (fits) return &h;
        }
        return any;  // the arity/type check in emit_call reports the mismatch
    }

    TV builtin(const Expr& e, const std::vector<TV>& args) {
        if (args.size() != 1) {
            fail(e.loc, e.name + " takes 1 argument, " + std::to_string(args.size()) + " given");
            return {};
        }
        TV a = args[0];
        if (e.name == "i64") {
            if (a.t == ValType::I64) return a;
            return {b_.ins().fcvt_to_sint_sat(types::I64, a.v), ValType::I64};
        }
        if (e.name == "f64") {
            if (a.t == ValType::F64) return a;
            return {b_.ins().fcvt_from_sint(types::F64, a.v), ValType::F64};
        }
        if (a.t != ValType::F64) {
            fail(e.args[0]->loc, "sqrt needs an f64 argument, this is i64");
            return {};
        }
        return {b_.ins().sqrt(a.v), ValType::F64};
    }

    TV emit_call(const Expr& e, const Callee& c, const std::vector<TV>& args) {
        if (args.size() != c.params.size()) {
            fail(e.loc, e.name + " takes " + std::to_string(c.params.size()) + " argument(s), " +
                            std::to_string(args.size()) + " given");
            return {};
        }
        for (size_t i = 0; i < args.size(); ++i) {
            if (args[i].t == c.params[i]) continue;
            fail(e.args[i]->loc, "argument " + std::to_string(i + 1) + " of " + e.name + " is " +
                                     val_type_name(args[i].t) + ", expected " + val_type_name(c.params[i]));
            return {};
        }
        auto it = imported_.find(c.symbol);
        FuncRef ref;
        if (it != imported_.end()) {
            ref = it->second;
        } else {
            SigRef sig = b_.import_signature(c.sig);
            ref = b_.import_function(ExtFuncData{ExternalName::testcase(c.symbol), sig, false});
            imported_.emplace(c.symbol, ref);
        }
        std::vector<Value> vals;
        for (const TV& a : args) vals.push_back(a.v);
        Inst inst = b_.ins().call(ref, vals);
        note(inst, e.loc);
        return {b_.func.dfg.first_result(inst), c.ret};
    }

    FunctionBuilder& b_;
    const Globals& g_;
    CompiledFunction& out_;
    std::optional<Diagnostic>& err_;
    const CodegenOptions& options_;
    ValType ret_ = ValType::I64;
    std::vector<std::map<std::string, Var>> scopes_;
    LoopScopes loops_;
    std::map<std::string, FuncRef> imported_;
};

bool is_reserved(const std::string& name) {
    if (name == "i64" || name == "f64" || name == "sqrt") return true;
    for (const HostFunction& h : host_functions()) {
        if (name == h.name) return true;
    }
    return false;
}

/// The language view of an environment signature, if it has one (i64/f64
/// parameters, one i64/f64 result).
std::optional<Callee> callee_of(const std::string& name, const Signature& sig) {
    Callee c;
    c.symbol = name;
    c.sig = sig;
    auto to_val = [](Type t) -> std::optional<ValType> {
        if (t == types::I64) return ValType::I64;
        if (t == types::F64) return ValType::F64;
        return std::nullopt;
    };
    for (const AbiParam& p : sig.params) {
        auto v = to_val(p.type);
        if (!v) return std::nullopt;
        c.params.push_back(*v);
    }
    if (sig.returns.size() != 1) return std::nullopt;
    auto r = to_val(sig.returns[0].type);
    if (!r) return std::nullopt;
    c.ret = *r;
    return c;
}

}  // namespace

CodegenResult compile(const Program& prog, const Environment& env, const std::string& stmts_name,
                      const CodegenOptions& options) {
    CodegenResult res;
    Globals g;
    for (const auto& [name, sig] : env) {
        if (auto c = callee_of(name, sig)) g.fns[name] = *c;
    }
    std::set<std::string> defined;
    for (const FnDecl& f : prog.fns) {
        if (f.name.rfind("__", 0) == 0) {
            res.error = Diagnostic{f.loc, "function names starting with __ are reserved"};
            return res;
        }
        if (is_reserved(f.name)) {
            res.error = Diagnostic{f.loc, "'" + f.name + "' is a built-in function and cannot be redefined"};
            return res;
        }
        if (!defined.insert(f.name).second) {
            res.error = Diagnostic{f.loc, "function '" + f.name + "' is defined twice"};
            return res;
        }
        std::vector<ValType> params;
        for (const Param& p : f.params) params.push_back(p.type);
        g.fns[f.name] = Callee{f.name, params, f.ret, signature_of(params, f.ret)};
    }
    FunctionBuilderContext ctx;
    auto build = [&](const std::string& name, const std::vector<Param>& params, ValType ret, const StmtList& body,
                     Location loc, bool infer) -> bool {
        std::vector<ValType> ptypes;
        for (const Param& p : params) ptypes.push_back(p.type);
        CompiledFunction cf;
        cf.func = std::make_unique<Function>(ExternalName::testcase(name), signature_of(ptypes, ret));
        cf.srcmap.function = loc;
        FunctionBuilder b(*cf.func, ctx);
        FnCompiler fc(b, g, cf, res.error, options);
        fc.function(params, body, ret, infer, res.has_value, res.value_type);
        if (res.error) return false;
        if (infer) {
            cf.func->signature = signature_of(ptypes, fc.ret());
            cf.func->name = ExternalName::testcase(name + "_" + val_type_name(fc.ret()));
        }
        Result<void> r = b.finalize();
        if (!r) {
            res.error = Diagnostic{loc, "internal error: " + r.error().message};
            return false;
        }
        res.fns.push_back(std::move(cf));
        return true;
    };
    for (const FnDecl& f : prog.fns) {
        if (!build(f.name, f.params, f.ret, f.body, f.loc, false)) return res;
    }
    if (!prog.stmts.empty()) {
        res.has_stmts = true;
        Location loc = prog.stmts.front()->loc;
        if (!build(stmts_name, {}, ValType::I64, prog.stmts, loc, true)) return res;
    }
    return res;
}

}  // namespace heron::lang
