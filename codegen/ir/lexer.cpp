// The CLIF lexer and literal decoders. The lexer is one pass over the bytes
// with no backtracking beyond one token; the decoders check every range and
// never convert through host floats (an sNaN must keep its bits).
#include "codegen/ir/lexer.h"

#include <bit>
#include <cstdio>

namespace heron {

namespace {

constexpr bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Identifier bytes by table: the scan loops run once per source byte.
struct IdentTable {
    bool ident[256];
};
constexpr IdentTable make_ident_table() {
    IdentTable t{};
    for (unsigned c = 0; c < 256; ++c) t.ident[c] = is_alpha(static_cast<char>(c)) || is_digit(static_cast<char>(c));
    return t;
}
constexpr IdentTable kIdent = make_ident_table();
bool is_ident(char c) { return kIdent.ident[static_cast<unsigned char>(c)]; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// Entity words: a prefix (v, block, ss, fn, sig) and a decimal number
/// without leading zeros. The prefixes differ in their first two bytes.
struct EntityPrefix {
    std::string_view prefix;
    TokenKind kind;
};
std::optional<EntityPrefix> entity_prefix(std::string_view w) {
    switch (w[0]) {
    case 'v': return EntityPrefix{"v", TokenKind::Value};
    case 'b': return EntityPrefix{"block", TokenKind::Block};
    case 'f': return EntityPrefix{"fn", TokenKind::FuncRef};
    case 's':
        if (w.size() > 1 && w[1] == 's') return EntityPrefix{"ss", TokenKind::StackSlot};
        return EntityPrefix{"sig", TokenKind::SigRef};
    default: return std::nullopt;
    }
}

class Lexer {
public:
    explicit Lexer(std::string_view src) : src_(src), data_(src.data()), size_(src.size()) {}

    LexedText run() {
        LexedText out;
        // CLIF text has about one token per 5 bytes; reserving pages that
        // stay untouched costs nothing, copying a grown vector does.
        out.tokens.reserve(size_ / 4 + 16);
        while (pos_ < size_) {
            const char c = data_[pos_];
            if (c == ' ' || is_space(c)) {
                ++pos_;
                continue;
            }
            if (c == '\n') {
                ++pos_;
                ++line_;
                line_start_ = pos_;
                continue;
            }
            if (c == ';') {
                scan_comment(out);
                continue;
            }
            // Built in place: a token is 48 bytes, copying each one counts.
            scan_token(out.tokens.emplace_back());
        }
        set(out.tokens.emplace_back(), TokenKind::End, pos_, pos_);
        return out;
    }

private:
    void set(Token& t, TokenKind kind, size_t begin, size_t end) const {
        t.kind = kind;
        t.text = std::string_view(data_ + begin, end - begin);
        t.line = line_;
        t.col = static_cast<uint32_t>(begin - line_start_ + 1);
    }

    void error_at(Token& t, size_t begin, size_t end, LexError what) {
        set(t, TokenKind::Error, begin, end);
        t.error = what;
        pos_ = end;
    }

    // A comment runs to the end of the line. UTF-8 is welcome in comments;
    // a NUL byte is not (it would truncate the line for C tools).
    void scan_comment(LexedText& out) {
        size_t begin = pos_ + 1;
        size_t end = src_.find('\n', begin);
        if (end == std::string_view::npos) end = size_;
        size_t nul = src_.substr(begin, end - begin).find('\0');
        if (nul != std::string_view::npos) {
            error_at(out.tokens.emplace_back(), begin + nul, begin + nul + 1, LexError::NulInComment);
        }
        out.comments.push_back(Comment{line_, std::string(src_.substr(begin, end - begin))});
        pos_ = end;
    }

    bool looking_at(size_t at, std::string_view s) const { return starts_with(src_.substr(at), s); }

    size_t scan_ident_end(size_t at) const {
        while (at < size_ && is_ident(data_[at])) ++at;
        return at;
    }

    // `Inf`, `NaN`, `sNaN`, optionally followed by `:payload`, starting at
    // `at`. Returns the end, or 0 when there is no such word there.
    size_t scan_special_float(size_t at) const {
        size_t word_end = scan_ident_end(at);
        std::string_view word = src_.substr(at, word_end - at);
        if (word == "Inf") return word_end;
        if (word != "NaN" && word != "sNaN") return 0;
        if (word_end < size_ && data_[word_end] == ':') return scan_ident_end(word_end + 1);
        return word_end;
    }

    void scan_token(Token& t) {
        const size_t begin = pos_;
        const char c = data_[pos_];
        const char next = pos_ + 1 < size_ ? data_[pos_ + 1] : '\0';
        auto fixed = [&](TokenKind k, size_t len) {
            pos_ = begin + len;
            set(t, k, begin, begin + len);
        };
        switch (c) {
        case '(': return fixed(TokenKind::LParen, 1);
        case ')': return fixed(TokenKind::RParen, 1);
        case '[': return fixed(TokenKind::LBracket, 1);
        case ']': return fixed(TokenKind::RBracket, 1);
        case '{': return fixed(TokenKind::LBrace, 1);
        case '}': return fixed(TokenKind::RBrace, 1);
        case ',': return fixed(TokenKind::Comma, 1);
        case ':': return fixed(TokenKind::Colon, 1);
        case '.': return fixed(TokenKind::Dot, 1);
        case '=':
            if (next == '=') return fixed(TokenKind::EqEq, 2);
            return fixed(TokenKind::Equal, 1);
        case '!':
            if (next == '=') return fixed(TokenKind::NotEq, 2);
            return error_at(t, begin, begin + 1, LexError::UnexpectedBang);
        case '%': return scan_name(t);
        case '-':
            if (next == '>') return fixed(TokenKind::Arrow, 2);
            [[fallthrough]];
        case '+':
            if (is_digit(next)) return scan_number(t);
            if (size_t end = scan_special_float(begin + 1)) {
                pos_ = end;
                return set(t, TokenKind::Float, begin, end);
            }
            return error_at(t, begin, begin + 1, c == '+' ? LexError::UnexpectedPlus : LexError::UnexpectedMinus);
        default: break;
        }
        if (is_digit(c)) return scan_number(t);
        if (is_alpha(c)) return scan_word(t);
        if (c == '\0') return error_at(t, begin, begin + 1, LexError::NulByte);
        if (static_cast<unsigned char>(c) >= 0x80) return error_at(t, begin, begin + 1, LexError::NonAscii);
        return error_at(t, begin, begin + 1, LexError::UnexpectedChar);
    }

    void scan_name(Token& t) {
        size_t begin = pos_;
        size_t end = scan_ident_end(begin + 1);
        if (end == begin + 1) return error_at(t, begin, begin + 1, LexError::PercentWithoutName);
        pos_ = end;
        set(t, TokenKind::Name, begin, end);
        t.text = t.text.substr(1);
    }

    void scan_word(Token& t) {
        size_t begin = pos_;
        if (scan_entity(t)) return;
        size_t end = scan_ident_end(begin);
        // Only words starting with I, N or s can be Inf, NaN or sNaN.
        const char c = data_[begin];
        if (c == 'I' || c == 'N' || c == 's') {
            if (size_t float_end = scan_special_float(begin)) {
                pos_ = float_end;
                return set(t, TokenKind::Float, begin, float_end);
            }
        }
        pos_ = end;
        set(t, TokenKind::Word, begin, end);
    }

    // An entity word (v7, block3, ss0, fn1, sig2) at pos_, read in one pass
    // with its number; false (and nothing consumed) if the word at pos_ is
    // anything else.
    bool scan_entity(Token& t) {
        const size_t begin = pos_;
        auto p = entity_prefix(std::string_view(data_ + begin, size_ - begin));
        if (!p) return false;
        size_t at = begin;
        for (char pc : p->prefix) {
            if (at == size_ || data_[at] != pc) return false;
            ++at;
        }
        const size_t digits = at;
        uint32_t n = 0;
        for (; at < size_ && is_digit(data_[at]); ++at) {
            n = n > kMaxEntityNumber ? n : n * 10 + static_cast<uint32_t>(data_[at] - '0');
        }
        if (at == digits || (at - digits > 1 && data_[digits] == '0')) return false;
        if (at < size_ && is_ident(data_[at])) return false;  // the word goes on: v1x
        pos_ = at;
        set(t, p->kind, begin, at);
        t.number = n;
        return true;
    }

    // Numbers: an optional sign, then digits, letters, '_' and '.'; a sign
    // right after the 'p' of a hex float belongs to its exponent.
    void scan_number(Token& t) {
        size_t begin = pos_;
        size_t at = begin;
        if (data_[at] == '+' || data_[at] == '-') ++at;
        bool hex = looking_at(at, "0x") || looking_at(at, "0X");
        bool has_dot = false, has_p = false;
        while (at < size_) {
            char c = data_[at];
            if (is_ident(c)) {
                if (hex && (c == 'p' || c == 'P')) has_p = true;
                ++at;
                continue;
            }
            if (c == '.') {
                has_dot = true;
                ++at;
                continue;
            }
            char prev = data_[at - 1];
            if ((c == '+' || c == '-') && hex && (prev == 'p' || prev == 'P')) {
                ++at;
                continue;
            }
            break;
        }
        pos_ = at;
        set(t, has_dot || has_p ? TokenKind::Float : TokenKind::Integer, begin, at);
    }

    std::string_view src_;
    const char* data_;
    size_t size_;
    size_t pos_ = 0;
    size_t line_start_ = 0;
    uint32_t line_ = 1;
};

}  // namespace

LexedText lex(std::string_view text) { return Lexer(text).run(); }

const char* lex_error_message(LexError e) {
    switch (e) {
    case LexError::None: return "invalid input";
    case LexError::NulByte: return "NUL byte";
    case LexError::NulInComment: return "NUL byte in a comment";
    case LexError::NonAscii: return "non-ASCII byte";
    case LexError::UnexpectedChar: return "unexpected character";
    case LexError::UnexpectedBang: return "unexpected character '!'";
    case LexError::UnexpectedPlus: return "unexpected character '+'";
    case LexError::UnexpectedMinus: return "unexpected character '-'";
    case LexError::PercentWithoutName: return "'%' without a name after it";
    }
    return "invalid input";
}

std::string describe_token(const Token& t) {
    switch (t.kind) {
    case TokenKind::End: return "end of file";
    case TokenKind::Error: {
        char buf[64];
        unsigned byte = t.text.empty() ? 0 : static_cast<unsigned char>(t.text[0]);
        std::snprintf(buf, sizeof buf, " (byte 0x%02x)", byte);
        return std::string(lex_error_message(t.error)) + buf;
    }
    case TokenKind::Name: return "'%" + std::string(t.text) + "'";
    default: return "'" + std::string(t.text) + "'";
    }
}

// --- integers --------------------------------------------------------------------

std::optional<IntLiteral> decode_integer(std::string_view text, std::string& error) {
    IntLiteral lit;
    std::string_view s = text;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        lit.negative = s[0] == '-';
        s.remove_prefix(1);
    }
    unsigned base = 10;
    if (starts_with(s, "0x") || starts_with(s, "0X")) {
        base = 16;
        s.remove_prefix(2);
    }
    unsigned digits = 0;
    for (char c : s) {
        if (c == '_') {
            if (digits == 0) {
                error = "integer literal '" + std::string(text) + "' has '_' before its first digit";
                return std::nullopt;
            }
            continue;
        }
        int d = base == 16 ? hex_value(c) : (is_digit(c) ? c - '0' : -1);
        if (d < 0) {
            error = "invalid digit '" + std::string(1, c) + "' in integer literal '" + std::string(text) + "'";
            return std::nullopt;
        }
        uint64_t limit = (~uint64_t{0} - static_cast<uint64_t>(d)) / base;
        if (lit.magnitude > limit) {
            error = "integer literal '" + std::string(text) + "' does not fit in 64 bits";
            return std::nullopt;
        }
        lit.magnitude = lit.magnitude * base + static_cast<uint64_t>(d);
        ++digits;
    }
    if (digits == 0) {
        error = "integer literal '" + std::string(text) + "' has no digits";
        return std::nullopt;
    }
    return lit;
}

std::optional<uint64_t> decode_int_immediate(std::string_view text, unsigned bits, std::string& error) {
    if (bits == 0 || bits > 64) bits = 64;
    auto lit = decode_integer(text, error);
    if (!lit) return std::nullopt;
    uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    uint64_t neg_limit = uint64_t{1} << (bits - 1);
    bool ok = lit->negative ? lit->magnitude <= neg_limit : lit->magnitude <= mask;
    if (!ok) {
        error = "integer " + std::string(text) + " is out of range for i" + std::to_string(bits) + " (-" +
                std::to_string(neg_limit) + " .. " + std::to_string(mask) + ")";
        return std::nullopt;
    }
    uint64_t v = lit->negative ? (0 - lit->magnitude) : lit->magnitude;
    return v & mask;
}

std::optional<uint64_t> decode_unsigned(std::string_view text, uint64_t max, std::string& error) {
    auto lit = decode_integer(text, error);
    if (!lit) return std::nullopt;
    if ((lit->negative && lit->magnitude != 0) || lit->magnitude > max) {
        error = "integer " + std::string(text) + " is out of range (0 .. " + std::to_string(max) + ")";
        return std::nullopt;
    }
    return lit->magnitude;
}

std::optional<int64_t> decode_signed(std::string_view text, int64_t min, int64_t max, std::string& error) {
    auto lit = decode_integer(text, error);
    if (!lit) return std::nullopt;
    // min <= 0 <= max here, so the magnitudes below fit in uint64_t.
    uint64_t lo = 0 - static_cast<uint64_t>(min);
    bool ok = lit->negative ? lit->magnitude <= lo : lit->magnitude <= static_cast<uint64_t>(max);
    if (!ok) {
        error = "integer " + std::string(text) + " is out of range (" + std::to_string(min) + " .. " +
                std::to_string(max) + ")";
        return std::nullopt;
    }
    return lit->negative ? static_cast<int64_t>(0 - lit->magnitude) : static_cast<int64_t>(lit->magnitude);
}

// --- floats ------------------------------------------------------------------------

namespace {

struct FloatFormat {
    unsigned exp_bits;   // w
    unsigned frac_bits;  // t
    const char* name;
};

std::optional<uint64_t> decode_nan(std::string_view body, uint64_t sign, const FloatFormat& f,
                                   std::string_view text, std::string& error) {
    uint64_t exp_all = ((uint64_t{1} << f.exp_bits) - 1) << f.frac_bits;
    uint64_t quiet = uint64_t{1} << (f.frac_bits - 1);
    bool signalling = body[0] == 's';
    std::string_view rest = body.substr(signalling ? 4 : 3);
    uint64_t payload = 0;
    if (!rest.empty()) {
        // rest is ":0x..."
        std::string_view p = rest.substr(1);
        if (!starts_with(p, "0x") || p.size() == 2) {
            error = "NaN payload in '" + std::string(text) + "' must be hexadecimal (0x...)";
            return std::nullopt;
        }
        for (char c : p.substr(2)) {
            int d = hex_value(c);
            if (d < 0) {
                error = "invalid digit in NaN payload of '" + std::string(text) + "'";
                return std::nullopt;
            }
            if (payload >= quiet) break;  // already too large; stop before overflowing
            payload = payload * 16 + static_cast<uint64_t>(d);
        }
        if (payload >= quiet) {
            error = "NaN payload of '" + std::string(text) + "' does not fit in " + f.name;
            return std::nullopt;
        }
    }
    if (signalling) {
        if (payload == 0) {
            error = "signalling NaN '" + std::string(text) + "' needs a nonzero payload (sNaN:0x1)";
            return std::nullopt;
        }
        return sign | exp_all | payload;
    }
    return sign | exp_all | quiet | payload;
}

}  // namespace

std::optional<uint64_t> decode_float(std::string_view text, Type t, std::string& error) {
    FloatFormat f = t == types::F64 ? FloatFormat{11, 52, "f64"} : FloatFormat{8, 23, "f32"};
    std::string_view s = text;
    unsigned total_bits = 1 + f.exp_bits + f.frac_bits;
    uint64_t sign = 0;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        if (s[0] == '-') sign = uint64_t{1} << (total_bits - 1);
        s.remove_prefix(1);
    }
    uint64_t exp_all = ((uint64_t{1} << f.exp_bits) - 1) << f.frac_bits;
    if (s == "Inf") return sign | exp_all;
    if (s == "NaN" || starts_with(s, "NaN:") || starts_with(s, "sNaN:")) return decode_nan(s, sign, f, text, error);
    if (s == "sNaN") {
        error = "signalling NaN '" + std::string(text) + "' needs a nonzero payload (sNaN:0x1)";
        return std::nullopt;
    }
    if (s == "0.0") return sign;
    if (!starts_with(s, "0x") && !starts_with(s, "0X")) {
        error = "float literal '" + std::string(text) + "' must be hexadecimal (e.g. 0x1.8p1), 0.0, Inf or NaN";
        return std::nullopt;
    }
    s.remove_prefix(2);

    // Significand digits: drop leading zeros; keep at most 16 significant
    // digits (64 bits), and require any digits beyond those to be zero.
    uint64_t mant = 0;
    unsigned sig_digits = 0;      // digits kept in mant (after the first nonzero)
    int64_t exp2 = 0;             // value = mant * 2^exp2 * 2^(written exponent)
    bool seen_dot = false, any_digit = false, lost_nonzero = false;
    size_t i = 0;
    for (; i < s.size(); ++i) {
        char c = s[i];
        if (c == '.') {
            if (seen_dot) {
                error = "float literal '" + std::string(text) + "' has two '.'";
                return std::nullopt;
            }
            seen_dot = true;
            continue;
        }
        if (c == 'p' || c == 'P') break;
        int d = hex_value(c);
        if (d < 0) {
            error = "invalid character '" + std::string(1, c) + "' in float literal '" + std::string(text) + "'";
            return std::nullopt;
        }
        any_digit = true;
        if (seen_dot) exp2 -= 4;
        if (mant == 0 && d == 0) continue;  // leading zeros
        if (sig_digits < 16) {
            mant = mant * 16 + static_cast<uint64_t>(d);
            ++sig_digits;
        } else {
            exp2 += 4;  // digit dropped: scale instead
            if (d != 0) lost_nonzero = true;
        }
    }
    if (!any_digit) {
        error = "float literal '" + std::string(text) + "' has no digits";
        return std::nullopt;
    }
    int64_t written_exp = 0;
    if (i < s.size()) {
        std::string_view e = s.substr(i + 1);
        bool neg = false;
        if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
            neg = e[0] == '-';
            e.remove_prefix(1);
        }
        if (e.empty()) {
            error = "float literal '" + std::string(text) + "' has no exponent digits after 'p'";
            return std::nullopt;
        }
        for (char c : e) {
            if (!is_digit(c)) {
                error = "invalid exponent in float literal '" + std::string(text) + "'";
                return std::nullopt;
            }
            if (written_exp < 1'000'000) written_exp = written_exp * 10 + (c - '0');
        }
        if (neg) written_exp = -written_exp;
    }
    if (mant == 0) return sign;  // any spelling of zero
    if (lost_nonzero) {
        error = "float literal '" + std::string(text) + "' is not exactly representable as " + f.name;
        return std::nullopt;
    }

    // value = odd * 2^low, leading bit at 2^e.
    int tz = std::countr_zero(mant);
    uint64_t odd = mant >> tz;
    int64_t low = exp2 + written_exp + tz;
    int len = 64 - std::countl_zero(odd);
    int64_t e = low + len - 1;
    int64_t bias = (int64_t{1} << (f.exp_bits - 1)) - 1;
    int64_t emin = 1 - bias;
    if (e > bias) {
        error = "float literal '" + std::string(text) + "' is too large for " + f.name;
        return std::nullopt;
    }
    int64_t frac_bits = static_cast<int64_t>(f.frac_bits);
    if (e >= emin) {
        if (len - 1 > frac_bits) {
            error = "float literal '" + std::string(text) + "' is not exactly representable as " + f.name +
                    " (too many significant bits)";
            return std::nullopt;
        }
        uint64_t frac = (odd << (frac_bits - (len - 1))) & ((uint64_t{1} << frac_bits) - 1);
        return sign | (static_cast<uint64_t>(e + bias) << f.frac_bits) | frac;
    }
    // Subnormal: the lowest set bit must be at or above 2^(emin - t).
    int64_t shift = low - (emin - frac_bits);
    if (shift < 0) {
        error = "float literal '" + std::string(text) + "' is not exactly representable as " + f.name +
                " (below the smallest subnormal)";
        return std::nullopt;
    }
    return sign | (odd << shift);
}

}  // namespace heron
