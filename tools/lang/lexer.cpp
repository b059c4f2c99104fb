// Lexer of the small language: `//` comments, decimal integers (`_` allowed
// as a separator), decimal floats (`1.5`, `2e10`, `0.5e-3`), identifiers and
// keywords, one- and two-character operators.
#include "tools/lang/lexer.h"

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace heron::lang {

namespace {

struct Keyword {
    std::string_view text;
    Tok kind;
};
constexpr Keyword kKeywords[] = {
    {"fn", Tok::Fn},       {"let", Tok::Let},         {"if", Tok::If},         {"else", Tok::Else},
    {"while", Tok::While}, {"for", Tok::For},         {"in", Tok::In},         {"break", Tok::Break},
    {"continue", Tok::Continue}, {"return", Tok::Return}, {"match", Tok::Match}, {"i64", Tok::I64},
    {"f64", Tok::F64},     {"_", Tok::Underscore},
};

struct Op {
    std::string_view text;
    Tok kind;
};
// Longest first, so "<=" wins over "<".
constexpr Op kOps[] = {
    {"->", Tok::Arrow},  {"=>", Tok::FatArrow}, {"..", Tok::DotDot},  {"+=", Tok::PlusAssign},
    {"-=", Tok::MinusAssign}, {"*=", Tok::StarAssign}, {"/=", Tok::SlashAssign}, {"%=", Tok::PercentAssign},
    {"<<", Tok::Shl},    {">>", Tok::Shr},      {"&&", Tok::AndAnd},  {"||", Tok::OrOr},
    {"==", Tok::EqEq},   {"!=", Tok::NotEq},    {"<=", Tok::Le},      {">=", Tok::Ge},
    {"(", Tok::LParen},  {")", Tok::RParen},    {"{", Tok::LBrace},   {"}", Tok::RBrace},
    {",", Tok::Comma},   {";", Tok::Semi},      {":", Tok::Colon},    {"=", Tok::Assign},
    {"+", Tok::Plus},    {"-", Tok::Minus},     {"*", Tok::Star},     {"/", Tok::Slash},
    {"%", Tok::Percent}, {"&", Tok::Amp},       {"|", Tok::Pipe},     {"^", Tok::Caret},
    {"!", Tok::Bang},    {"<", Tok::Lt},        {">", Tok::Gt},
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || is_digit(c); }

class Lexer {
public:
    explicit Lexer(std::string_view src) : src_(src) {}

    std::vector<Token> run() {
        std::vector<Token> out;
        for (;;) {
            skip_space();
            Token t;
            t.loc = {line_, col_};
            if (pos_ >= src_.size()) {
                // "expected ... found end of input" points just past the last token.
                if (!out.empty()) t.loc = end_;
                out.push_back(std::move(t));
                return out;
            }
            char c = src_[pos_];
            if (is_digit(c)) {
                number(t);
            } else if (is_ident_start(c)) {
                word(t);
            } else if (!op(t)) {
                t.kind = Tok::Error;
                t.text = std::string("unexpected character '") + c + "'";
                advance(1);
            }
            end_ = {line_, col_};
            t.end = end_;
            out.push_back(std::move(t));
        }
    }

private:
    void advance(size_t n) {
        for (size_t i = 0; i < n && pos_ < src_.size(); ++i, ++pos_) {
            if (src_[pos_] == '\n') {
                ++line_;
                col_ = 1;
            } else {
                ++col_;
            }
        }
    }

    void skip_space() {
        while (pos_ < src_.size()) {
            char c = src_[pos_];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                advance(1);
            } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
                while (pos_ < src_.size() && src_[pos_] != '\n') advance(1);
            } else {
                return;
            }
        }
    }

    void number(Token& t) {
        size_t start = pos_;
        std::string digits;
        bool is_float = false;
        auto take_digits = [&] {
            while (pos_ < src_.size() && (is_digit(src_[pos_]) || src_[pos_] == '_')) {
                if (src_[pos_] != '_') digits.push_back(src_[pos_]);
                advance(1);
            }
        };
        take_digits();
        // "1..5" is a range, not the float "1." followed by ".5".
        if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
            is_float = true;
            digits.push_back('.');
            advance(1);
            take_digits();
        }
        if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
            size_t save_pos = pos_;
            uint32_t save_line = line_, save_col = col_;
            std::string exp = "e";
            advance(1);
            if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) {
                exp.push_back(src_[pos_]);
                advance(1);
            }
            if (pos_ < src_.size() && is_digit(src_[pos_])) {
                is_float = true;
                digits += exp;
                take_digits();
            } else {
                pos_ = save_pos;
                line_ = save_line;
                col_ = save_col;
            }
        }
        t.text = std::string(src_.substr(start, pos_ - start));
        if (pos_ < src_.size() && is_ident_start(src_[pos_])) {
            t.kind = Tok::Error;
            t.text = "malformed number '" + t.text + src_[pos_] + "...'";
            return;
        }
        errno = 0;
        if (is_float) {
            t.kind = Tok::Float;
            t.fval = std::strtod(digits.c_str(), nullptr);
            if (errno == ERANGE && (t.fval > 1 || t.fval < -1)) {
                t.kind = Tok::Error;
                t.text = "float literal " + t.text + " is out of range for f64";
            }
            return;
        }
        unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
        if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) {
            t.kind = Tok::Error;
            t.text = "integer literal " + t.text + " does not fit in i64";
            return;
        }
        t.kind = Tok::Int;
        t.ival = static_cast<int64_t>(v);
    }

    void word(Token& t) {
        size_t start = pos_;
        while (pos_ < src_.size() && is_ident(src_[pos_])) advance(1);
        t.text = std::string(src_.substr(start, pos_ - start));
        t.kind = Tok::Ident;
        for (const Keyword& k : kKeywords) {
            if (k.text == t.text) t.kind = k.kind;
        }
    }

    bool op(Token& t) {
        for (const Op& o : kOps) {
            if (src_.substr(pos_, o.text.size()) != o.text) continue;
            t.kind = o.kind;
            t.text = std::string(o.text);
            advance(o.text.size());
            return true;
        }
        return false;
    }

    std::string_view src_;
    size_t pos_ = 0;
    uint32_t line_ = 1, col_ = 1;
    Location end_;  // just past the last token
};

}  // namespace

std::vector<Token> lex(std::string_view src) { return Lexer(src).run(); }

std::string describe(const Token& t) {
    switch (t.kind) {
    case Tok::End: return "end of input";
    case Tok::Error: return t.text;
    case Tok::Ident: return "identifier '" + t.text + "'";
    case Tok::Int:
    case Tok::Float: return "number " + t.text;
    default: return "'" + t.text + "'";
    }
}

}  // namespace heron::lang
