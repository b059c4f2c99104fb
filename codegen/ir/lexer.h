// The lexer of the CLIF text format (shared/docs/text-format.md) and the
// decoders of its literals. The whole text is cut into tokens up front;
// comments are set aside with their line numbers, newlines are not tokens
// but every token knows its line, so the parser can tell where a line ends.
// Any byte the format has no use for (NUL, non-ASCII outside comments,
// stray punctuation) becomes an Error token; lexing never fails.
//
// The literal decoders are the one implementation of integer and float
// syntax: the function parser, run directives and parse_data_value all use
// them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/diagnostic.h"
#include "codegen/ir/parser.h"
#include "codegen/ir/types.h"

namespace heron {

enum class TokenKind : uint8_t {
    End,        // after the last token
    Error,      // a byte the format does not allow; see Token::error
    Word,       // identifier: opcodes, keywords, types, flags, trap codes
    Name,       // %ident; text excludes the '%'
    Value,      // vN
    Block,      // blockN
    StackSlot,  // ssN
    FuncRef,    // fnN
    SigRef,     // sigN
    Integer,    // [+-]digits or [+-]0xhex, '_' allowed
    Float,      // hex float, 0.0, [+-]Inf, [+-]NaN[:0xP], [+-]sNaN:0xP
    LParen, RParen, LBracket, RBracket, LBrace, RBrace,
    Comma, Equal, Colon, Dot, Arrow, EqEq, NotEq,
};

/// What is wrong with the bytes of an Error token.
enum class LexError : uint8_t {
    None,
    NulByte,
    NulInComment,
    NonAscii,
    UnexpectedChar,
    UnexpectedBang,
    UnexpectedPlus,
    UnexpectedMinus,
    PercentWithoutName,
};

/// "NUL byte", "unexpected character '!'", ...
const char* lex_error_message(LexError e);

/// One token. Kept to 32 bytes: a large file has millions of them, and they
/// are all alive while its functions are parsed.
struct Token {
    std::string_view text;            // the source bytes of the token
    uint32_t line = 0;                // 1-based
    uint32_t col = 0;                 // 1-based, in bytes
    uint32_t number = 0;              // entity number (saturates above kMaxEntityNumber)
    TokenKind kind = TokenKind::End;
    LexError error = LexError::None;  // Error tokens: what is wrong with `text`

    Location loc() const { return {line, col}; }
};
static_assert(sizeof(Token) <= 32);

/// Entity numbers above this are reported as too large instead of parsed.
inline constexpr uint32_t kMaxEntityNumber = 10'000'000;

struct LexedText {
    std::vector<Token> tokens;      // always ends with one End token
    std::vector<Comment> comments;  // in source order
};

LexedText lex(std::string_view text);

/// "'iadd'", "end of file", "invalid byte 0x00": the token as a message
/// names it after "found".
std::string describe_token(const Token& t);

// --- literal decoders ----------------------------------------------------------

struct IntLiteral {
    bool negative = false;
    uint64_t magnitude = 0;
};

/// [+-](decimal | 0x hex) with '_' between digits, magnitude below 2^64.
std::optional<IntLiteral> decode_integer(std::string_view text, std::string& error);

/// An immediate of a `bits`-wide integer: accepts -2^(bits-1) .. 2^bits-1 and
/// returns the bits-wide pattern (zero-extended).
std::optional<uint64_t> decode_int_immediate(std::string_view text, unsigned bits, std::string& error);

/// A non-negative integer no larger than `max`.
std::optional<uint64_t> decode_unsigned(std::string_view text, uint64_t max, std::string& error);

/// A signed integer in [min, max].
std::optional<int64_t> decode_signed(std::string_view text, int64_t min, int64_t max, std::string& error);

/// The bit pattern of a float literal of type `t` (F32 or F64). Rejects
/// anything that is not exactly representable.
std::optional<uint64_t> decode_float(std::string_view text, Type t, std::string& error);

}  // namespace heron
