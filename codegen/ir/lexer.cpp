// The CLIF lexer and literal decoders. The lexer is one pass over the bytes
// with no backtracking beyond one token; the decoders check every range and
// never convert through host floats (an sNaN must keep its bits).
#include "codegen/ir/lexer.h"

#include <bit>
#include <cstdio>

namespace heron {

namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident(char c) { return is_alpha(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// Entity words: a prefix and a decimal number without leading zeros.
struct EntityPrefix {
    std::string_view prefix;
    TokenKind kind;
};
constexpr EntityPrefix kEntityPrefixes[] = {
    {"v", TokenKind::Value},     {"block", TokenKind::Block}, {"ss", TokenKind::StackSlot},
    {"fn", TokenKind::FuncRef},  {"sig", TokenKind::SigRef},
};

class Lexer {
public:
    explicit Lexer(std::string_view src) : src_(src) {}

    LexedText run() {
        LexedText out;
        while (pos_ < src_.size()) {
            char c = src_[pos_];
            if (c == '\n') {
                ++pos_;
                ++line_;
                line_start_ = pos_;
                continue;
            }
            if (is_space(c)) {
                ++pos_;
                continue;
            }
            if (c == ';') {
                scan_comment(out);
                continue;
            }
            out.tokens.push_back(scan_token());
        }
        Token end = make(TokenKind::End, pos_, pos_);
        out.tokens.push_back(end);
        return out;
    }

private:
    Token make(TokenKind kind, size_t begin, size_t end) const {
        Token t;
        t.kind = kind;
        t.text = src_.substr(begin, end - begin);
        t.line = line_;
        t.col = static_cast<uint32_t>(begin - line_start_ + 1);
        t.offset = static_cast<uint32_t>(begin);
        return t;
    }

    Token error_at(size_t begin, size_t end, const char* what) {
        Token t = make(TokenKind::Error, begin, end);
        t.error = what;
        pos_ = end;
        return t;
    }

    // A comment runs to the end of the line. UTF-8 is welcome in comments;
    // a NUL byte is not (it would truncate the line for C tools).
    void scan_comment(LexedText& out) {
        size_t begin = pos_ + 1;
        size_t end = src_.find('\n', begin);
        if (end == std::string_view::npos) end = src_.size();
        size_t nul = src_.substr(begin, end - begin).find('\0');
        if (nul != std::string_view::npos) {
            out.tokens.push_back(error_at(begin + nul, begin + nul + 1, "NUL byte in a comment"));
        }
        out.comments.push_back(Comment{line_, std::string(src_.substr(begin, end - begin))});
        pos_ = end;
    }

    bool looking_at(size_t at, std::string_view s) const { return starts_with(src_.substr(at), s); }

    size_t scan_ident_end(size_t at) const {
        while (at < src_.size() && is_ident(src_[at])) ++at;
        return at;
    }

    // `Inf`, `NaN`, `sNaN`, optionally followed by `:payload`, starting at
    // `at`. Returns the end, or 0 when there is no such word there.
    size_t scan_special_float(size_t at) const {
        size_t word_end = scan_ident_end(at);
        std::string_view word = src_.substr(at, word_end - at);
        if (word == "Inf") return word_end;
        if (word != "NaN" && word != "sNaN") return 0;
        if (word_end < src_.size() && src_[word_end] == ':') return scan_ident_end(word_end + 1);
        return word_end;
    }

    Token scan_token() {
        size_t begin = pos_;
        char c = src_[pos_];
        char next = pos_ + 1 < src_.size() ? src_[pos_ + 1] : '\0';
        auto single = [&](TokenKind k) {
            pos_ = begin + 1;
            return make(k, begin, begin + 1);
        };
        switch (c) {
        case '(': return single(TokenKind::LParen);
        case ')': return single(TokenKind::RParen);
        case '[': return single(TokenKind::LBracket);
        case ']': return single(TokenKind::RBracket);
        case '{': return single(TokenKind::LBrace);
        case '}': return single(TokenKind::RBrace);
        case ',': return single(TokenKind::Comma);
        case ':': return single(TokenKind::Colon);
        case '.': return single(TokenKind::Dot);
        case '=':
            if (next == '=') {
                pos_ = begin + 2;
                return make(TokenKind::EqEq, begin, begin + 2);
            }
            return single(TokenKind::Equal);
        case '!':
            if (next == '=') {
                pos_ = begin + 2;
                return make(TokenKind::NotEq, begin, begin + 2);
            }
            return error_at(begin, begin + 1, "unexpected character '!'");
        case '%': return scan_name();
        case '-':
            if (next == '>') {
                pos_ = begin + 2;
                return make(TokenKind::Arrow, begin, begin + 2);
            }
            [[fallthrough]];
        case '+':
            if (is_digit(next)) return scan_number();
            if (size_t end = scan_special_float(begin + 1)) {
                pos_ = end;
                return make(TokenKind::Float, begin, end);
            }
            return error_at(begin, begin + 1, c == '+' ? "unexpected character '+'" : "unexpected character '-'");
        default: break;
        }
        if (is_digit(c)) return scan_number();
        if (is_alpha(c)) return scan_word();
        if (c == '\0') return error_at(begin, begin + 1, "NUL byte");
        if (static_cast<unsigned char>(c) >= 0x80) return error_at(begin, begin + 1, "non-ASCII byte");
        return error_at(begin, begin + 1, "unexpected character");
    }

    Token scan_name() {
        size_t begin = pos_;
        size_t end = scan_ident_end(begin + 1);
        if (end == begin + 1) return error_at(begin, begin + 1, "'%' without a name after it");
        pos_ = end;
        Token t = make(TokenKind::Name, begin, end);
        t.text = t.text.substr(1);
        return t;
    }

    Token scan_word() {
        size_t begin = pos_;
        if (size_t end = scan_special_float(begin)) {
            pos_ = end;
            return make(TokenKind::Float, begin, end);
        }
        size_t end = scan_ident_end(begin);
        pos_ = end;
        Token t = make(TokenKind::Word, begin, end);
        classify_entity(t);
        return t;
    }

    static void classify_entity(Token& t) {
        for (const EntityPrefix& p : kEntityPrefixes) {
            if (!starts_with(t.text, p.prefix)) continue;
            std::string_view digits = t.text.substr(p.prefix.size());
            if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) continue;
            uint64_t n = 0;
            bool all_digits = true;
            for (char d : digits) {
                if (!is_digit(d)) {
                    all_digits = false;
                    break;
                }
                n = n > kMaxEntityNumber ? n : n * 10 + static_cast<uint64_t>(d - '0');
            }
            if (!all_digits) continue;
            t.kind = p.kind;
            t.number = n;
            return;
        }
    }

    // Numbers: an optional sign, then digits, letters, '_' and '.'; a sign
    // right after the 'p' of a hex float belongs to its exponent.
    Token scan_number() {
        size_t begin = pos_;
        size_t at = begin;
        if (src_[at] == '+' || src_[at] == '-') ++at;
        bool hex = looking_at(at, "0x") || looking_at(at, "0X");
        bool has_dot = false, has_p = false;
        while (at < src_.size()) {
            char c = src_[at];
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
            char prev = src_[at - 1];
            if ((c == '+' || c == '-') && hex && (prev == 'p' || prev == 'P')) {
                ++at;
                continue;
            }
            break;
        }
        pos_ = at;
        return make(has_dot || has_p ? TokenKind::Float : TokenKind::Integer, begin, at);
    }

    std::string_view src_;
    size_t pos_ = 0;
    size_t line_start_ = 0;
    uint32_t line_ = 1;
};

}  // namespace

LexedText lex(std::string_view text) { return Lexer(text).run(); }

std::string describe_token(const Token& t) {
    switch (t.kind) {
    case TokenKind::End: return "end of file";
    case TokenKind::Error: {
        char buf[64];
        unsigned byte = t.text.empty() ? 0 : static_cast<unsigned char>(t.text[0]);
        std::snprintf(buf, sizeof buf, " (byte 0x%02x)", byte);
        return std::string(t.error ? t.error : "invalid input") + buf;
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
