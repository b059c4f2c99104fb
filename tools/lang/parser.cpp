// Recursive-descent parser of the small language. One function per grammar
// rule (docs/lang.md); the first error wins: it is recorded with the
// location of the offending token and every rule returns at once.
#include "tools/lang/parser.h"

#include <algorithm>
#include <string>
#include <utility>

namespace heron::lang {

namespace {

class Parser {
public:
    explicit Parser(std::string_view src) : toks_(lex(src)) {}

    ParseResult file() {
        ParseResult r;
        while (ok() && !at(Tok::End)) {
            if (!at(Tok::Fn)) {
                fail("expected 'fn' (a file holds function definitions)");
                break;
            }
            fn_decl(r.program);
        }
        r.error = std::move(error_);
        return r;
    }

    ParseResult repl() {
        ParseResult r;
        while (ok() && !at(Tok::End)) {
            if (at(Tok::Fn)) {
                fn_decl(r.program);
                continue;
            }
            StmtPtr s = stmt(/*allow_tail=*/true);
            if (s) r.program.stmts.push_back(std::move(s));
            if (ok() && r.program.stmts.back()->is_tail && !at(Tok::End)) fail_missing_semi();
        }
        r.error = std::move(error_);
        return r;
    }

private:
    // --- tokens ----------------------------------------------------------------
    const Token& tok() const { return toks_[pos_]; }
    bool at(Tok k) const { return tok().kind == k; }
    bool ok() const { return !error_.has_value(); }
    void next() {
        if (!at(Tok::End)) ++pos_;
    }
    bool accept(Tok k) {
        if (!at(k)) return false;
        next();
        return true;
    }
    void fail(const std::string& msg) {
        if (error_) return;
        const Token& t = tok();
        error_ = Diagnostic{t.loc, t.kind == Tok::Error ? t.text : msg + ", found " + describe(t)};
    }
    /// A missing ';' is reported where it belongs: just after the previous token.
    void fail_missing_semi() {
        if (error_) return;
        if (tok().kind == Tok::Error || pos_ == 0) return fail("expected ';'");
        error_ = Diagnostic{toks_[pos_ - 1].end, "expected ';' before " + describe(tok())};
    }
    /// Counts one level of nesting while alive; past kMaxNesting it records
    /// an error (callers check ok()).
    struct Nest {
        Parser& p;
        explicit Nest(Parser& parser) : p(parser) {
            if (++p.depth_ > kMaxNesting) p.too_deep();
        }
        ~Nest() { --p.depth_; }
    };
    void too_deep() {
        if (!error_) error_ = Diagnostic{tok().loc, "nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)"};
    }

    bool expect(Tok k, const char* what) {
        if (accept(k)) return true;
        if (k == Tok::Semi) fail_missing_semi();
        else fail(std::string("expected ") + what);
        return false;
    }

    // --- declarations -------------------------------------------------------------
    void fn_decl(Program& prog) {
        FnDecl f;
        f.loc = tok().loc;
        next();  // fn
        if (!at(Tok::Ident)) return fail("expected a function name after 'fn'");
        f.name = tok().text;
        next();
        if (!expect(Tok::LParen, "'('")) return;
        while (ok() && !at(Tok::RParen)) {
            Param p;
            p.loc = tok().loc;
            if (!at(Tok::Ident)) return fail("expected a parameter name");
            p.name = tok().text;
            next();
            if (!expect(Tok::Colon, "':' and the parameter's type")) return;
            if (!type(p.type)) return;
            f.params.push_back(std::move(p));
            if (!at(Tok::RParen) && !expect(Tok::Comma, "',' or ')'")) return;
        }
        if (!expect(Tok::RParen, "')'")) return;
        if (accept(Tok::Arrow) && !type(f.ret)) return;
        if (!at(Tok::LBrace)) return fail("expected '{' to start the function body");
        f.body = block(/*allow_tail=*/true);
        if (ok()) prog.fns.push_back(std::move(f));
    }

    bool type(ValType& t) {
        if (accept(Tok::I64)) {
            t = ValType::I64;
            return true;
        }
        if (accept(Tok::F64)) {
            t = ValType::F64;
            return true;
        }
        fail("expected a type (i64 or f64)");
        return false;
    }

    // --- statements -------------------------------------------------------------------
    /// `{ stmt* }`; with allow_tail, a last expression without ';' is the value.
    StmtList block(bool allow_tail) {
        StmtList out;
        if (!expect(Tok::LBrace, "'{'")) return out;
        while (ok() && !at(Tok::RBrace)) {
            if (at(Tok::End)) {
                fail("expected '}'");
                break;
            }
            StmtPtr s = stmt(allow_tail);
            if (!s) break;
            bool tail = s->is_tail;
            out.push_back(std::move(s));
            if (tail && !at(Tok::RBrace)) fail_missing_semi();
        }
        expect(Tok::RBrace, "'}'");
        return out;
    }

    StmtPtr make(Stmt::Kind k) {
        auto s = std::make_unique<Stmt>();
        s->kind = k;
        s->loc = tok().loc;
        return s;
    }

    StmtPtr stmt(bool allow_tail) {
        Nest nest(*this);
        if (!ok()) return nullptr;
        switch (tok().kind) {
        case Tok::Let: return let_stmt();
        case Tok::If: return if_stmt();
        case Tok::While: return while_stmt();
        case Tok::For: return for_stmt();
        case Tok::Match: return match_stmt();
        case Tok::LBrace: {
            StmtPtr s = make(Stmt::Kind::Block);
            s->body = block(false);
            return ok() ? std::move(s) : nullptr;
        }
        default: break;
        }
        StmtPtr s = simple_stmt();
        if (!s) return nullptr;
        if (accept(Tok::Semi)) return s;
        bool at_end = at(Tok::RBrace) || at(Tok::End);
        if (s->kind == Stmt::Kind::Expr && allow_tail && at_end) {
            s->is_tail = true;
            return s;
        }
        fail_missing_semi();
        return nullptr;
    }

    /// The statements that end with ';' (or ',' in a match arm), without it:
    /// return, break, continue, assignment, expression.
    StmtPtr simple_stmt() {
        if (at(Tok::Return)) {
            StmtPtr s = make(Stmt::Kind::Return);
            next();
            if (!at(Tok::Semi) && !at(Tok::Comma) && !at(Tok::RBrace)) s->e1 = expr();
            return ok() ? std::move(s) : nullptr;
        }
        if (at(Tok::Break) || at(Tok::Continue)) {
            StmtPtr s = make(at(Tok::Break) ? Stmt::Kind::Break : Stmt::Kind::Continue);
            next();
            return s;
        }
        if (at(Tok::Ident) && is_assign_op(toks_[pos_ + 1].kind)) {
            StmtPtr s = make(Stmt::Kind::Assign);
            s->name = tok().text;
            next();
            s->op = tok().kind;
            next();
            s->e1 = expr();
            return ok() ? std::move(s) : nullptr;
        }
        StmtPtr s = make(Stmt::Kind::Expr);
        s->e1 = expr();
        return ok() ? std::move(s) : nullptr;
    }

    static bool is_assign_op(Tok k) {
        return k == Tok::Assign || k == Tok::PlusAssign || k == Tok::MinusAssign || k == Tok::StarAssign ||
               k == Tok::SlashAssign || k == Tok::PercentAssign;
    }

    StmtPtr let_stmt() {
        StmtPtr s = make(Stmt::Kind::Let);
        next();
        if (!at(Tok::Ident)) {
            fail("expected a variable name after 'let'");
            return nullptr;
        }
        s->name = tok().text;
        next();
        if (accept(Tok::Colon)) {
            s->has_type = true;
            if (!type(s->type)) return nullptr;
        }
        if (!expect(Tok::Assign, "'=' (a variable needs a value)")) return nullptr;
        s->e1 = expr();
        if (!ok() || !expect(Tok::Semi, "';'")) return nullptr;
        return s;
    }

    StmtPtr if_stmt() {
        StmtPtr s = make(Stmt::Kind::If);
        next();
        s->e1 = expr();
        if (!ok()) return nullptr;
        s->body = block(false);
        if (!ok()) return nullptr;
        if (accept(Tok::Else)) {
            s->has_else = true;
            if (at(Tok::If)) {
                StmtPtr inner = if_stmt();
                if (!inner) return nullptr;
                s->else_body.push_back(std::move(inner));
            } else {
                s->else_body = block(false);
            }
        }
        return ok() ? std::move(s) : nullptr;
    }

    StmtPtr while_stmt() {
        StmtPtr s = make(Stmt::Kind::While);
        next();
        s->e1 = expr();
        if (!ok()) return nullptr;
        s->body = block(false);
        return ok() ? std::move(s) : nullptr;
    }

    StmtPtr for_stmt() {
        StmtPtr s = make(Stmt::Kind::For);
        next();
        if (!at(Tok::Ident)) {
            fail("expected the loop variable after 'for'");
            return nullptr;
        }
        s->name = tok().text;
        next();
        if (!expect(Tok::In, "'in'")) return nullptr;
        s->e1 = expr();
        if (!ok() || !expect(Tok::DotDot, "'..' (for i in a..b)")) return nullptr;
        s->e2 = expr();
        if (!ok()) return nullptr;
        s->body = block(false);
        return ok() ? std::move(s) : nullptr;
    }

    StmtPtr match_stmt() {
        StmtPtr s = make(Stmt::Kind::Match);
        next();
        s->e1 = expr();
        if (!ok() || !expect(Tok::LBrace, "'{' after the match selector")) return nullptr;
        while (ok() && !at(Tok::RBrace)) {
            MatchArm arm;
            arm.loc = tok().loc;
            if (!pattern(arm)) return nullptr;
            while (accept(Tok::Pipe)) {
                if (!pattern(arm)) return nullptr;
            }
            if (!expect(Tok::FatArrow, "'=>' or '|'")) return nullptr;
            if (at(Tok::LBrace)) {
                arm.body = block(false);
                if (!ok()) return nullptr;
                accept(Tok::Comma);
            } else {
                StmtPtr body = simple_stmt();
                if (!body) return nullptr;
                arm.body.push_back(std::move(body));
                if (!accept(Tok::Comma) && !accept(Tok::Semi) && !at(Tok::RBrace)) {
                    fail("expected ',' after the match arm");
                    return nullptr;
                }
            }
            s->arms.push_back(std::move(arm));
        }
        if (!expect(Tok::RBrace, "'}'")) return nullptr;
        return s;
    }

    bool pattern(MatchArm& arm) {
        Location loc = tok().loc;
        if (accept(Tok::Underscore)) {
            arm.is_default = true;
            return true;
        }
        bool neg = accept(Tok::Minus);
        if (!at(Tok::Int)) {
            fail("expected an integer pattern or '_'");
            return false;
        }
        int64_t v = tok().ival;
        next();
        arm.values.push_back(neg ? static_cast<int64_t>(0ull - static_cast<uint64_t>(v)) : v);
        arm.value_locs.push_back(loc);
        return true;
    }

    // --- expressions ----------------------------------------------------------------
    ExprPtr binary_node(Tok op, Location loc, ExprPtr l, ExprPtr r) {
        auto e = std::make_unique<Expr>();
        e->kind = Expr::Kind::Binary;
        e->op = op;
        e->loc = loc;
        e->height = std::max(l->height, r->height) + 1;
        e->args.push_back(std::move(l));
        e->args.push_back(std::move(r));
        if (e->height > kMaxNesting) too_deep();
        return e;
    }

    // Precedence levels, loosest first.
    static int level_of(Tok k) {
        switch (k) {
        case Tok::OrOr: return 1;
        case Tok::AndAnd: return 2;
        case Tok::EqEq: case Tok::NotEq: case Tok::Lt: case Tok::Le: case Tok::Gt: case Tok::Ge: return 3;
        case Tok::Pipe: return 4;
        case Tok::Caret: return 5;
        case Tok::Amp: return 6;
        case Tok::Shl: case Tok::Shr: return 7;
        case Tok::Plus: case Tok::Minus: return 8;
        case Tok::Star: case Tok::Slash: case Tok::Percent: return 9;
        default: return 0;
        }
    }

    ExprPtr expr() {
        Nest nest(*this);
        if (!ok()) return nullptr;
        return binary(1);
    }

    ExprPtr binary(int min_level) {
        ExprPtr lhs = unary();
        while (ok()) {
            int lvl = level_of(tok().kind);
            if (lvl < min_level || lvl == 0) break;
            Tok op = tok().kind;
            Location loc = tok().loc;
            next();
            ExprPtr rhs = binary(lvl + 1);
            if (!ok()) return nullptr;
            if (lvl == 3 && level_of(tok().kind) == 3) {
                error_ = Diagnostic{tok().loc, "comparisons do not chain; use && between them"};
                return nullptr;
            }
            lhs = binary_node(op, loc, std::move(lhs), std::move(rhs));
            if (!ok()) return nullptr;
        }
        return ok() ? std::move(lhs) : nullptr;
    }

    ExprPtr unary() {
        if (at(Tok::Minus) || at(Tok::Bang)) {
            Nest nest(*this);
            if (!ok()) return nullptr;
            auto e = std::make_unique<Expr>();
            e->kind = Expr::Kind::Unary;
            e->op = tok().kind;
            e->loc = tok().loc;
            next();
            ExprPtr operand = unary();
            if (!operand) return nullptr;
            e->height = operand->height + 1;
            e->args.push_back(std::move(operand));
            return e;
        }
        return primary();
    }

    ExprPtr primary() {
        auto e = std::make_unique<Expr>();
        e->loc = tok().loc;
        switch (tok().kind) {
        case Tok::Int:
            e->kind = Expr::Kind::Int;
            e->ival = tok().ival;
            next();
            return e;
        case Tok::Float:
            e->kind = Expr::Kind::Float;
            e->fval = tok().fval;
            next();
            return e;
        case Tok::LParen: {
            next();
            ExprPtr inner = expr();
            if (!ok() || !expect(Tok::RParen, "')'")) return nullptr;
            return inner;
        }
        case Tok::I64:
        case Tok::F64:  // conversions i64(x), f64(x) are calls of the type's name
        case Tok::Ident: {
            e->name = tok().text;
            bool is_type = !at(Tok::Ident);
            next();
            if (!at(Tok::LParen)) {
                if (is_type) {
                    fail("expected '(' after " + e->name + " (a conversion: " + e->name + "(x))");
                    return nullptr;
                }
                e->kind = Expr::Kind::Var;
                return e;
            }
            next();
            e->kind = Expr::Kind::Call;
            while (ok() && !at(Tok::RParen)) {
                ExprPtr a = expr();
                if (!a) return nullptr;
                e->height = std::max(e->height, a->height + 1);
                e->args.push_back(std::move(a));
                if (!at(Tok::RParen) && !expect(Tok::Comma, "',' or ')'")) return nullptr;
            }
            if (!expect(Tok::RParen, "')'")) return nullptr;
            return e;
        }
        default:
            fail("expected an expression");
            return nullptr;
        }
    }

    std::vector<Token> toks_;
    size_t pos_ = 0;
    uint32_t depth_ = 0;
    std::optional<Diagnostic> error_;
};

}  // namespace

ParseResult parse_program(std::string_view src) { return Parser(src).file(); }
ParseResult parse_repl_input(std::string_view src) { return Parser(src).repl(); }

}  // namespace heron::lang
