// Run directives (`; run: %f(1, 2) == 3`, `; run: %f(0) traps int_divz`,
// `; print: %f(10)`) and typed literals. The text is cut by the same lexer
// as functions and every literal goes through the lexer's decoders, so a
// literal means the same in a directive as in an instruction.
#include "codegen/ir/run_command.h"

#include "codegen/ir/lexer.h"

namespace heron {

namespace {

using Tk = TokenKind;

bool is_literal(const Token& t) { return t.kind == Tk::Integer || t.kind == Tk::Float; }

/// Decodes one literal token as a value of type `t`.
std::optional<DataValue> decode_literal(const Token& tok, Type t, std::string& error) {
    if (t.is_int()) {
        if (tok.kind != Tk::Integer) {
            error = "expected " + std::string(t.name()) + " literal, found " + describe_token(tok);
            return std::nullopt;
        }
        auto bits = decode_int_immediate(tok.text, t.bits(), error);
        if (!bits) return std::nullopt;
        return DataValue(t, *bits);
    }
    if (t.is_float()) {
        if (tok.kind != Tk::Float) {
            error = "expected " + std::string(t.name()) + " literal, found " + describe_token(tok) +
                    (tok.kind == Tk::Integer ? " (an integer is not a float; write e.g. 0x1.0p4)" : "");
            return std::nullopt;
        }
        auto bits = decode_float(tok.text, t, error);
        if (!bits) return std::nullopt;
        return DataValue(t, *bits);
    }
    error = "cannot read a literal of type " + std::string(t.name());
    return std::nullopt;
}

class RunCommandParser {
public:
    RunCommandParser(std::string_view text, const Signature& sig, Diagnostic& error)
        : lexed_(lex(text)), sig_(sig), error_(error) {}

    std::optional<RunCommand> parse(RunCommand::Kind kind) {
        RunCommand cmd;
        cmd.kind = kind;
        if (!at(Tk::Name)) return fail_expected("function name (%name)");
        cmd.func_name = std::string(tok().text);
        advance();
        if (!expect(Tk::LParen, "'('")) return std::nullopt;
        Location open = lexed_.tokens[pos_ - 1].loc();
        std::vector<const Token*> args;
        if (!at(Tk::RParen) && !parse_literal_list(args)) return std::nullopt;
        if (!expect(Tk::RParen, "',' or ')'")) return std::nullopt;
        if (!decode_all(args, sig_.params, open, "argument", cmd.args)) return std::nullopt;
        if (kind == RunCommand::Kind::Print) return finish(cmd);

        if (at(Tk::EqEq) || at(Tk::NotEq)) {
            cmd.op = at(Tk::EqEq) ? RunCommand::Op::Eq : RunCommand::Op::Ne;
            advance();
            return parse_expected(cmd);
        }
        if (at(Tk::Word) && tok().text == "traps") {
            cmd.op = RunCommand::Op::Traps;
            advance();
            if (!at(Tk::Word)) return fail_expected("trap code");
            auto code = trapcode_from_name(tok().text);
            if (!code) return fail(tok().loc(), "invalid trap code " + std::string(tok().text));
            cmd.trap = *code;
            advance();
            return finish(cmd);
        }
        return fail_expected("'==', '!=' or 'traps'");
    }

private:
    const Token& tok() const { return lexed_.tokens[pos_]; }
    bool at(Tk k) const { return tok().kind == k; }
    void advance() {
        if (pos_ + 1 < lexed_.tokens.size()) ++pos_;
    }
    std::nullopt_t fail(Location loc, std::string msg) {
        error_ = Diagnostic{loc, std::move(msg)};
        return std::nullopt;
    }
    std::nullopt_t fail_expected(std::string_view what) {
        return fail(tok().loc(), "expected " + std::string(what) + ", found " + describe_token(tok()));
    }
    bool expect(Tk k, std::string_view what) {
        if (at(k)) {
            advance();
            return true;
        }
        fail_expected(what);
        return false;
    }

    bool parse_literal_list(std::vector<const Token*>& out) {
        for (;;) {
            if (!is_literal(tok())) {
                fail_expected("literal");
                return false;
            }
            out.push_back(&tok());
            advance();
            if (!at(Tk::Comma)) return true;
            advance();
        }
    }

    bool decode_all(const std::vector<const Token*>& toks, const std::vector<AbiParam>& types, Location where,
                    std::string_view what, std::vector<DataValue>& out) {
        if (toks.size() != types.size()) {
            fail(where, "expected " + std::to_string(types.size()) + " " + std::string(what) +
                            (types.size() == 1 ? "" : "s") + ", found " + std::to_string(toks.size()));
            return false;
        }
        for (size_t i = 0; i < toks.size(); ++i) {
            std::string err;
            auto v = decode_literal(*toks[i], types[i].type, err);
            if (!v) {
                fail(toks[i]->loc(), err);
                return false;
            }
            out.push_back(*v);
        }
        return true;
    }

    // `[a, b]`, `[]`, or a bare literal when the function returns one value.
    std::optional<RunCommand> parse_expected(RunCommand& cmd) {
        Location where = tok().loc();
        std::vector<const Token*> vals;
        if (at(Tk::LBracket)) {
            advance();
            if (!at(Tk::RBracket) && !parse_literal_list(vals)) return std::nullopt;
            if (!expect(Tk::RBracket, "',' or ']'")) return std::nullopt;
        } else {
            if (!is_literal(tok())) return fail_expected("result (a literal or [...])");
            vals.push_back(&tok());
            advance();
        }
        if (!decode_all(vals, sig_.returns, where, "result", cmd.expected)) return std::nullopt;
        return finish(cmd);
    }

    std::optional<RunCommand> finish(RunCommand& cmd) {
        if (!at(Tk::End)) return fail_expected("end of directive");
        return std::move(cmd);
    }

    LexedText lexed_;
    size_t pos_ = 0;
    const Signature& sig_;
    Diagnostic& error_;
};

}  // namespace

std::optional<RunCommand> parse_run_command(std::string_view text, RunCommand::Kind kind, const Signature& sig,
                                            Diagnostic& error) {
    return RunCommandParser(text, sig, error).parse(kind);
}

std::optional<DataValue> parse_data_value(std::string_view text, Type t, std::string& error) {
    LexedText lexed = lex(text);
    const auto& toks = lexed.tokens;
    if (toks.size() != 2 || !is_literal(toks[0])) {
        const Token& bad = toks.size() >= 2 && is_literal(toks[0]) ? toks[1] : toks[0];
        error = "expected one " + std::string(t.name()) + " literal, found " + describe_token(bad);
        return std::nullopt;
    }
    return decode_literal(toks[0], t, error);
}

}  // namespace heron
