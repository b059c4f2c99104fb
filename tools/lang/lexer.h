// The lexer of Heron's small language (docs/lang.md): turns source text into
// tokens, each with the line and column of its first character. Bad input
// (a stray character, an integer too large for i64) becomes an Error token
// carrying the message; the parser reports it with its location.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/diagnostic.h"

namespace heron::lang {

enum class Tok : uint8_t {
    End,
    Error,  // `text` holds the message
    Ident,
    Int,
    Float,
    // keywords
    Fn, Let, If, Else, While, For, In, Break, Continue, Return, Match, I64, F64,
    // punctuation and operators
    LParen, RParen, LBrace, RBrace, Comma, Semi, Colon, Arrow, FatArrow, DotDot, Underscore,
    Assign, PlusAssign, MinusAssign, StarAssign, SlashAssign, PercentAssign,
    Plus, Minus, Star, Slash, Percent, Amp, Pipe, Caret, Shl, Shr, Bang,
    AndAnd, OrOr, EqEq, NotEq, Lt, Le, Gt, Ge,
};

struct Token {
    Tok kind = Tok::End;
    Location loc;
    Location end;         // just past its last character
    std::string text;     // identifier, literal spelling, or error message
    int64_t ival = 0;     // Int
    double fval = 0;      // Float
};

/// Every token of `src`, ending with one End token.
std::vector<Token> lex(std::string_view src);

/// "'+'", "identifier", "end of input": for messages.
std::string describe(const Token& t);

}  // namespace heron::lang
