// The CLIF text parser: recursive descent over the lexer's tokens
// (shared/docs/text-format.md, ir-reference.md sections 1.5, 1.6, 12-17).
//
// It builds each function directly in a Function, keeping the source's
// entity numbers as indices: `v7` is Value 7, gaps are filled with
// placeholder values and unused blocks. Forward references are normal: a
// value may be used before the line that defines it, so some facts are
// only checked when the closing brace is reached (undefined values and
// blocks, alias cycles, the type of an instruction whose controlling
// operand was a forward reference).
//
// Nothing here aborts on bad input. Every error is a Diagnostic with the
// line and column of the offending token, mostly "expected X, found Y";
// after the first error inside a function the parser skips to the next
// `function` keyword, so one file can report several errors. Every loop
// consumes a token per turn and there is no recursion, so no input can
// hang or exhaust the stack.
#include "codegen/ir/parser.h"

#include <algorithm>
#include <unordered_map>

#include "codegen/ir/lexer.h"

namespace heron {

namespace {

using Tk = TokenKind;

/// Stack slots, signatures and function references are declared one per
/// line and carry more data than a value, so their numbers are capped lower.
constexpr uint64_t kMaxPreambleNumber = 100'000;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}
std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// --- words that are not what they look like ------------------------------------

/// Types the parser knows by name but Heron does not support, with why.
std::optional<std::string> unsupported_type_message(std::string_view w) {
    if (w == "i128" || w == "f16" || w == "f128") return "unsupported type " + std::string(w);
    // Vector types: i32x4, f64x2, and dynamic ones such as i32x4xN.
    if ((w[0] == 'i' || w[0] == 'f') && w.size() > 1 && w[1] >= '0' && w[1] <= '9') {
        size_t x = w.find('x');
        if (x != std::string_view::npos && all_digits(w.substr(1, x - 1))) {
            return "unsupported type " + std::string(w) + " (vector types are not in Heron core)";
        }
    }
    if (w[0] == 'b' && w.size() > 1) {
        std::string_view rest = w.substr(1);
        rest = rest.substr(0, rest.find('x'));
        if (rest == "1" || rest == "8" || rest == "16" || rest == "32" || rest == "64" || rest == "128") {
            return "unsupported type " + std::string(w) + ": boolean types were removed; use i8";
        }
    }
    if (w == "r32" || w == "r64") return "unsupported type " + std::string(w) + ": reference types were removed";
    if (w == "iflags" || w == "fflags") {
        return "unsupported type " + std::string(w) + ": flags types were removed; use icmp/fcmp";
    }
    return std::nullopt;
}

std::optional<Type> type_from_name(std::string_view w) {
    if (w == "i8") return types::I8;
    if (w == "i16") return types::I16;
    if (w == "i32") return types::I32;
    if (w == "i64") return types::I64;
    if (w == "f32") return types::F32;
    if (w == "f64") return types::F64;
    return std::nullopt;
}

struct RemovedOpcode {
    std::string_view name;
    std::string_view hint;
};

// ir-reference.md section 15, plus older CLIF forms a reader may meet.
constexpr RemovedOpcode kRemovedOpcodes[] = {
    {"stack_load", "use stack_addr + load"},
    {"stack_store", "use stack_addr + store"},
    {"band_not", "use bnot + band"},
    {"bor_not", "use bnot + bor"},
    {"bxor_not", "use bnot + bxor"},
    {"global_value", "global values no longer exist"},
    {"bint", "comparisons give i8 0/1 now; use uextend"},
    {"bconst", "use iconst"},
    {"brz", "use brif"},
    {"brnz", "use brif"},
    {"br_icmp", "use icmp + brif"},
    {"ifcmp", "flags values are gone; use icmp"},
    {"ifcmp_imm", "flags values are gone; use iconst + icmp"},
    {"ffcmp", "flags values are gone; use fcmp"},
    {"trueif", "flags values are gone; use icmp"},
    {"trueff", "flags values are gone; use fcmp"},
    {"trapif", "flags values are gone; use icmp + trapnz"},
    {"trapff", "flags values are gone; use fcmp + trapnz"},
    {"selectif", "flags values are gone; use icmp + select"},
    {"brff", "flags values are gone; use fcmp + brif"},
    {"iadd_cin", "use uadd_overflow_cin"},
    {"iadd_cout", "use uadd_overflow"},
    {"iadd_carry", "use uadd_overflow_cin"},
    {"isub_bin", "use usub_overflow_bin"},
    {"isub_bout", "use usub_overflow"},
    {"isub_borrow", "use usub_overflow_bin"},
    {"fallthrough", "use jump"},
    {"heap_addr", "compute the address with iadd and check bounds explicitly"},
    {"table_addr", "compute the address with iadd and check bounds explicitly"},
    {"copy", "use the value itself"},
    {"raw_bitcast", "use bitcast"},
    {"resumable_trap", "use trap"},
    {"resumable_trapnz", "use trapnz"},
    {"null", "reference types were removed"},
    {"is_null", "reference types were removed"},
    {"is_invalid", "reference types were removed"},
};

// ir-reference.md section 16: CLIF 2026 opcodes outside Heron core.
constexpr std::string_view kUnsupportedOpcodes[] = {
    "splat", "swizzle", "insertlane", "extractlane", "shuffle", "vconst", "vany_true", "vall_true",
    "vhigh_bits", "avg_round", "snarrow", "unarrow", "uunarrow", "iadd_pairwise", "sqmul_round_sat",
    "scalar_to_vector", "fvdemote", "fvpromote_low", "fcvt_low_from_sint", "blendv", "f16const",
    "f128const", "isplit", "iconcat", "fence", "symbol_value", "tls_value", "dynamic_stack_addr",
    "dynamic_stack_load", "dynamic_stack_store", "extract_vector", "get_pinned_reg", "set_pinned_reg",
    "get_frame_pointer", "get_stack_pointer", "get_return_address", "try_call", "try_call_indirect",
    "get_exception_handler_address", "stack_switch", "sequence_point", "debugtrap", "vselect",
    "vsplit", "vconcat",
};

bool is_unsupported_opcode(std::string_view w) {
    for (std::string_view u : kUnsupportedOpcodes) {
        if (u == w) return true;
    }
    if (ends_with(w, "_sat")) return true;  // uadd_sat ... (the fcvt_*_sat ops are real opcodes)
    if (starts_with(w, "x86_") || starts_with(w, "atomic_")) return true;
    if (starts_with(w, "swiden_") || starts_with(w, "uwiden_")) return true;
    // Vector loads: uload8x8, sload16x4, uload32x2, ...
    if ((starts_with(w, "uload") || starts_with(w, "sload")) && w.find('x') != std::string_view::npos) return true;
    return false;
}

std::string unknown_opcode_message(std::string_view w) {
    std::string word(w);
    if (ends_with(w, "_imm")) {
        std::string base(w.substr(0, w.size() - 4));
        if (base == "irsub") base = "isub";
        if (opcode_from_name(base)) return word + " is not an opcode: use iconst + " + base;
    }
    for (const RemovedOpcode& r : kRemovedOpcodes) {
        if (r.name == w) return word + " was removed: " + std::string(r.hint);
    }
    if (is_unsupported_opcode(w)) return word + " is not supported yet";
    return "unknown opcode " + word;
}

std::optional<std::string> unsupported_callconv_message(std::string_view w) {
    constexpr std::string_view kKnown[] = {"apple_aarch64", "probestack", "winch", "preserve_all",
                                           "windows_fastcall"};
    for (std::string_view k : kKnown) {
        if (k == w) return "unsupported calling convention " + std::string(w);
    }
    return std::nullopt;
}

bool is_unsupported_param_purpose(std::string_view w) {
    return w == "sret" || w == "vmctx" || w == "stack_limit" || w == "sarg" || w == "patchable";
}

/// "user0", "user251": spelled like a user trap code but out of range.
bool looks_like_user_code(std::string_view w) { return starts_with(w, "user") && all_digits(w.substr(4)); }

// --- per-function bookkeeping -------------------------------------------------------

/// An instruction whose controlling operand had no known type when it was
/// parsed (a forward reference): its result types and its written `.T` are
/// settled at the closing brace.
struct PendingCtrl {
    Inst inst;
    Value operand;
    Type written;
    Location loc;
    bool resolved = false;
};

struct AliasDef {
    Value value;
    Location loc;
};

/// `fnN = ...`: materialized after the whole preamble is read, because an
/// inline signature takes the first sig number after every declared one.
struct FnDecl {
    uint32_t num = 0;
    ExtFuncData data;
    bool inline_sig = false;
    Signature sig;
    uint32_t sig_num = 0;
    Location sig_loc;
};

class Parser {
public:
    Parser(std::string_view src, Diagnostics& errors)
        : src_(src), lexed_(lex(src)), toks_(lexed_.tokens.data()), errors_(errors) {}

    TestFile parse_file();

private:
    // --- tokens ---------------------------------------------------------------------
    const Token& tok() const { return toks_[pos_]; }
    // The token list ends with its only End token, where the parser stays.
    const Token& peek_tok() const { return toks_[at(Tk::End) ? pos_ : pos_ + 1]; }
    void advance() {
        if (!at(Tk::End)) ++pos_;
    }
    bool at(Tk k) const { return tok().kind == k; }
    bool at_word(std::string_view w) const { return at(Tk::Word) && tok().text == w; }
    /// The current token continues the line of the previous one.
    bool on_same_line() const { return pos_ > 0 && !at(Tk::End) && tok().line == toks_[pos_ - 1].line; }

    bool fail(Location loc, std::string msg) {
        errors_.push_back(Diagnostic{loc, std::move(msg)});
        return false;
    }
    bool fail_expected(std::string_view what) {
        return fail(tok().loc(), "expected " + std::string(what) + ", found " + describe_token(tok()));
    }
    bool expect(Tk k, std::string_view what) {
        if (!at(k)) return fail_expected(what);
        advance();
        return true;
    }
    bool expect_comma() { return expect(Tk::Comma, "','"); }

    // --- file level -----------------------------------------------------------------
    void parse_header(TestFile& file);
    std::string_view rest_of_line(const Token& t) const;
    void skip_to_next_function(size_t failed_at);
    void distribute_comments(TestFile& file, const std::vector<std::pair<uint32_t, int>>& starts);

    // --- function level ---------------------------------------------------------------
    bool parse_function(ParsedFunction& out);
    void reset_function_state(Function* f, SourceMap* sm);
    bool parse_external_name(ExternalName& out);
    bool parse_signature(Signature& sig);
    bool parse_abi_param(AbiParam& p);
    bool parse_type(Type& out);
    bool parse_preamble();
    bool parse_stack_slot_decl();
    bool parse_sig_decl();
    bool parse_fn_decl();
    bool materialize_fn_decls();
    bool parse_body();
    bool parse_block_header(std::optional<Block>& cur);
    bool parse_instruction(Block block);
    bool parse_alias();
    bool parse_operands(InstructionData& d);
    bool bind_results(Inst inst, Type written, Location suffix_loc, Location op_loc,
                      const std::vector<const Token*>& results);
    bool finish_function();
    void resolve_pending(std::vector<Diagnostic>& late);
    void check_alias_cycles(std::vector<Diagnostic>& late);

    // --- operands ---------------------------------------------------------------------
    bool check_entity_number(const Token& t, uint64_t max, std::string_view what) {
        return t.number <= max || entity_number_too_large(t, what);
    }
    bool entity_number_too_large(const Token& t, std::string_view what);
    Value ensure_value(uint32_t n);
    Block ensure_block(uint32_t n);
    bool use_value(Value& out);
    bool use_block(Block& out);
    bool use_stack_slot(uint32_t& out);
    bool use_func_ref(uint32_t& out);
    bool use_sig_ref(uint32_t& out);
    bool parse_value_list(std::vector<Value>& out);
    bool parse_value_list_in_parens(std::vector<Value>& out);
    bool parse_branch_table(InstructionData& d);
    bool parse_block_call(BlockCall& out);
    bool parse_trap_code(uint8_t& out);
    bool parse_mem_flags(MemFlags& flags);
    bool parse_offset(int32_t& out);
    bool parse_int_imm(uint64_t& out, Type t);
    bool parse_float_imm(uint64_t& out, Type t);
    Type known_type(Value v) const;
    Value ctrl_operand(const InstructionData& d) const;

    std::string_view src_;
    LexedText lexed_;
    const Token* toks_;  // lexed_.tokens
    size_t pos_ = 0;
    Diagnostics& errors_;

    // The function being parsed.
    Function* f_ = nullptr;
    SourceMap* sm_ = nullptr;
    std::vector<uint8_t> value_defined_;
    std::vector<uint8_t> block_defined_;
    std::unordered_map<uint32_t, Location> value_forward_uses_;
    std::unordered_map<uint32_t, Location> block_forward_uses_;
    std::vector<uint8_t> ss_declared_, sig_declared_, fn_declared_;
    std::vector<FnDecl> fn_decls_;
    std::vector<PendingCtrl> pending_;
    std::vector<AliasDef> aliases_;
    std::vector<Type> scratch_types_;
    // Reused by every instruction, so that parsing one allocates nothing
    // once they have grown: result tokens, operand lists, branch arguments.
    std::vector<const Token*> result_toks_;
    std::vector<Value> scratch_vals_, scratch_args_;
};

// --- file level -----------------------------------------------------------------------

TestFile Parser::parse_file() {
    TestFile file;
    parse_header(file);
    // (line of each `function` keyword, index into file.functions or -1)
    std::vector<std::pair<uint32_t, int>> starts;
    std::unordered_map<std::string, uint32_t> first_line;  // function name -> line of its definition
    while (!at(Tk::End)) {
        if (!at_word("function")) {
            fail_expected("'function'");
            skip_to_next_function(pos_);
            continue;
        }
        size_t start = pos_;
        uint32_t line = tok().line;
        ParsedFunction pf;
        if (parse_function(pf)) {
            // Two functions of one name: the JIT and the interpreter would
            // each pick one. The second is an error and is dropped.
            auto [first, fresh] = first_line.try_emplace(pf.func->name.to_string(), line);
            if (!fresh) {
                fail(pf.srcmap.function, "function " + pf.func->name.to_string() + " is defined twice (first at line " +
                                             std::to_string(first->second) + ")");
                starts.emplace_back(line, -1);
                continue;
            }
            starts.emplace_back(line, static_cast<int>(file.functions.size()));
            file.functions.push_back(std::move(pf));
            continue;
        }
        starts.emplace_back(line, -1);
        skip_to_next_function(start);
    }
    f_ = nullptr;
    sm_ = nullptr;
    distribute_comments(file, starts);
    return file;
}

void Parser::skip_to_next_function(size_t failed_at) {
    if (pos_ <= failed_at) pos_ = failed_at;
    if (pos_ == failed_at) advance();
    while (!at(Tk::End) && !at_word("function")) advance();
}

std::string_view Parser::rest_of_line(const Token& t) const {
    size_t begin = static_cast<size_t>(t.text.data() - src_.data()) + t.text.size();
    size_t end = begin;
    while (end < src_.size() && src_[end] != '\n' && src_[end] != ';') ++end;
    return trim(src_.substr(begin, end - begin));
}

// `test KIND`, `set NAME[=VALUE]`, `target ISA [flags]`: kept as text for the
// test runner, which knows what they mean.
void Parser::parse_header(TestFile& file) {
    while (at_word("test") || at_word("set") || at_word("target")) {
        const Token& kw = tok();
        std::string_view rest = rest_of_line(kw);
        uint32_t line = kw.line;
        if (rest.empty()) {
            fail(kw.loc(), "expected text after '" + std::string(kw.text) + "', found end of line");
        } else if (kw.text == "test") {
            file.tests.emplace_back(rest);
        } else if (kw.text == "target") {
            file.targets.emplace_back(rest);
        } else {
            size_t eq = rest.find('=');
            std::string_view name = trim(rest.substr(0, eq));
            // A bare `set NAME` switches a boolean setting on, as in Cranelift.
            std::string_view value = eq == std::string_view::npos ? "true" : trim(rest.substr(eq + 1));
            file.settings.emplace_back(std::string(name), std::string(value));
        }
        while (!at(Tk::End) && tok().line == line) advance();
    }
}

// A comment belongs to the function whose `function` line is the last one
// at or before it; comments before the first function form the preamble.
void Parser::distribute_comments(TestFile& file, const std::vector<std::pair<uint32_t, int>>& starts) {
    size_t next = 0;
    int owner = -2;  // -2: preamble; -1: a function that failed to parse
    for (const Comment& c : lexed_.comments) {
        while (next < starts.size() && starts[next].first <= c.line) owner = starts[next++].second;
        if (owner == -2) {
            file.preamble_comments.push_back(c);
        } else if (owner >= 0) {
            file.functions[static_cast<size_t>(owner)].comments.push_back(c);
        }
    }
}

// --- function level ----------------------------------------------------------------------

void Parser::reset_function_state(Function* f, SourceMap* sm) {
    f_ = f;
    sm_ = sm;
    value_defined_.clear();
    block_defined_.clear();
    value_forward_uses_.clear();
    block_forward_uses_.clear();
    ss_declared_.clear();
    sig_declared_.clear();
    fn_declared_.clear();
    fn_decls_.clear();
    pending_.clear();
    aliases_.clear();
}

bool Parser::parse_function(ParsedFunction& out) {
    auto func = std::make_unique<Function>();
    reset_function_state(func.get(), &out.srcmap);
    out.srcmap.function = tok().loc();
    advance();  // `function`
    if (!parse_external_name(func->name)) return false;
    if (!parse_signature(func->signature)) return false;
    if (!expect(Tk::LBrace, "'{'")) return false;
    if (!parse_preamble()) return false;
    if (!parse_body()) return false;
    out.srcmap.end_line = tok().line;
    advance();  // `}`
    if (!finish_function()) return false;
    out.func = std::move(func);
    return true;
}

bool Parser::parse_external_name(ExternalName& out) {
    if (at(Tk::Name)) {
        out = ExternalName::testcase(tok().text);
        advance();
        return true;
    }
    if (!at(Tk::Word) || tok().text.size() < 2 || tok().text[0] != 'u' || !all_digits(tok().text.substr(1))) {
        return fail_expected("function name (%name or uN:M)");
    }
    std::string err;
    auto ns = decode_unsigned(tok().text.substr(1), UINT32_MAX, err);
    if (!ns) return fail(tok().loc(), "user name namespace: " + err);
    advance();
    if (!expect(Tk::Colon, "':' in user name uN:M")) return false;
    if (!at(Tk::Integer)) return fail_expected("index of user name uN:M");
    auto index = decode_unsigned(tok().text, UINT32_MAX, err);
    if (!index) return fail(tok().loc(), "user name index: " + err);
    advance();
    out = ExternalName::user(static_cast<uint32_t>(*ns), static_cast<uint32_t>(*index));
    return true;
}

// `(T [uext|sext], ...) [-> T [uext|sext], ...] [callconv]`
bool Parser::parse_signature(Signature& sig) {
    sig.clear();
    if (!expect(Tk::LParen, "'('")) return false;
    if (!at(Tk::RParen)) {
        for (;;) {
            AbiParam p;
            if (!parse_abi_param(p)) return false;
            sig.params.push_back(p);
            if (!at(Tk::Comma)) break;
            advance();
        }
    }
    if (!expect(Tk::RParen, "',' or ')'")) return false;
    if (at(Tk::Arrow)) {
        advance();
        for (;;) {
            AbiParam p;
            if (!parse_abi_param(p)) return false;
            sig.returns.push_back(p);
            if (!at(Tk::Comma)) break;
            advance();
        }
    }
    if (at(Tk::Word) && on_same_line()) {
        std::string_view w = tok().text;
        if (auto cc = callconv_from_name(w)) {
            sig.call_conv = *cc;
            advance();
            return true;
        }
        if (auto msg = unsupported_callconv_message(w)) return fail(tok().loc(), *msg);
        return fail(tok().loc(), "unknown calling convention " + std::string(w));
    }
    return true;
}

bool Parser::parse_abi_param(AbiParam& p) {
    if (!parse_type(p.type)) return false;
    if (!at(Tk::Word) || !on_same_line()) return true;
    std::string_view w = tok().text;
    if (w == "uext" || w == "sext") {
        p.ext = w == "uext" ? ArgExt::Uext : ArgExt::Sext;
        advance();
    } else if (is_unsupported_param_purpose(w)) {
        return fail(tok().loc(), "parameter attribute " + std::string(w) + " is not supported");
    }
    return true;
}

bool Parser::parse_type(Type& out) {
    if (!at(Tk::Word)) return fail_expected("type");
    std::string_view w = tok().text;
    if (auto t = type_from_name(w)) {
        out = *t;
        advance();
        return true;
    }
    if (auto msg = unsupported_type_message(w)) return fail(tok().loc(), *msg);
    return fail_expected("type");
}

// --- preamble ------------------------------------------------------------------------------

bool Parser::parse_preamble() {
    for (;;) {
        bool ok = true;
        if (at(Tk::StackSlot)) {
            ok = parse_stack_slot_decl();
        } else if (at(Tk::SigRef)) {
            ok = parse_sig_decl();
        } else if (at(Tk::FuncRef)) {
            ok = parse_fn_decl();
        } else if (at(Tk::Word) && peek_tok().kind == Tk::Equal) {
            std::string_view w = tok().text;
            if (starts_with(w, "jt") && all_digits(w.substr(2))) {
                return fail(tok().loc(), "jump table declarations were removed: write the table inline, "
                                         "br_table v0, block1, [block2, block3]");
            }
            if (starts_with(w, "gv") && all_digits(w.substr(2))) {
                return fail(tok().loc(), "global value declarations were removed: global values no longer exist");
            }
            return fail(tok().loc(), "unsupported declaration " + quoted(w));
        } else {
            break;
        }
        if (!ok) return false;
        if (on_same_line()) return fail_expected("end of line");
    }
    return materialize_fn_decls();
}

bool Parser::entity_number_too_large(const Token& t, std::string_view what) {
    return fail(t.loc(), std::string(what) + " number too large: " + std::string(t.text));
}

// `ssN = explicit_slot SIZE[, align = A][, key = K]`
bool Parser::parse_stack_slot_decl() {
    const Token& name = tok();
    if (!check_entity_number(name, kMaxPreambleNumber, "stack slot")) return false;
    uint32_t n = static_cast<uint32_t>(name.number);
    if (n < ss_declared_.size() && ss_declared_[n]) return fail(name.loc(), std::string(name.text) + " declared twice");
    advance();
    if (!expect(Tk::Equal, "'='")) return false;
    if (!at_word("explicit_slot")) {
        if (at(Tk::Word)) return fail(tok().loc(), "unsupported stack slot kind " + quoted(tok().text));
        return fail_expected("'explicit_slot'");
    }
    advance();
    if (!at(Tk::Integer)) return fail_expected("stack slot size");
    std::string err;
    auto size = decode_unsigned(tok().text, UINT32_MAX, err);
    if (!size) return fail(tok().loc(), "stack slot size: " + err);
    advance();
    StackSlotData data;
    data.size = static_cast<uint32_t>(*size);
    while (at(Tk::Comma) && on_same_line()) {
        advance();
        if (!at_word("align") && !at_word("key")) return fail_expected("'align' or 'key'");
        bool is_align = tok().text == "align";
        advance();
        if (!expect(Tk::Equal, "'='")) return false;
        if (!at(Tk::Integer)) return fail_expected(is_align ? "alignment" : "key");
        if (is_align) {
            auto a = decode_unsigned(tok().text, UINT32_MAX, err);
            if (!a) return fail(tok().loc(), "alignment: " + err);
            if (*a == 0 || (*a & (*a - 1)) != 0) return fail(tok().loc(), "alignment must be a power of two");
            data.align = static_cast<uint32_t>(*a);
        } else {
            auto k = decode_unsigned(tok().text, UINT64_MAX, err);
            if (!k) return fail(tok().loc(), "key: " + err);
            data.key = *k;
        }
        advance();
    }
    while (f_->stack_slots.size() <= n) f_->stack_slots.push(StackSlotData{});
    f_->stack_slots[StackSlot(n)] = data;
    if (ss_declared_.size() <= n) ss_declared_.resize(n + 1);
    ss_declared_[n] = 1;
    return true;
}

// `sigN = SIGNATURE`
bool Parser::parse_sig_decl() {
    const Token& name = tok();
    if (!check_entity_number(name, kMaxPreambleNumber, "signature")) return false;
    uint32_t n = static_cast<uint32_t>(name.number);
    if (n < sig_declared_.size() && sig_declared_[n]) return fail(name.loc(), std::string(name.text) + " declared twice");
    advance();
    if (!expect(Tk::Equal, "'='")) return false;
    Signature sig;
    if (!parse_signature(sig)) return false;
    while (f_->dfg.signatures.size() <= n) f_->dfg.signatures.push(Signature());
    f_->dfg.signatures[SigRef(n)] = std::move(sig);
    if (sig_declared_.size() <= n) sig_declared_.resize(n + 1);
    sig_declared_[n] = 1;
    return true;
}

// `fnN = [colocated] NAME (sigM | SIGNATURE)`
bool Parser::parse_fn_decl() {
    const Token& name = tok();
    if (!check_entity_number(name, kMaxPreambleNumber, "function reference")) return false;
    FnDecl decl;
    decl.num = static_cast<uint32_t>(name.number);
    if (decl.num < fn_declared_.size() && fn_declared_[decl.num])
        return fail(name.loc(), std::string(name.text) + " declared twice");
    // Marked here (materialize_fn_decls marks it again), so that the check
    // above costs one lookup, not a scan of the declarations so far.
    if (fn_declared_.size() <= decl.num) fn_declared_.resize(decl.num + 1);
    fn_declared_[decl.num] = 1;
    advance();
    if (!expect(Tk::Equal, "'='")) return false;
    if (at_word("colocated")) {
        decl.data.colocated = true;
        advance();
    }
    if (!parse_external_name(decl.data.name)) return false;
    if (at(Tk::SigRef)) {
        if (!check_entity_number(tok(), kMaxPreambleNumber, "signature")) return false;
        decl.sig_num = static_cast<uint32_t>(tok().number);
        decl.sig_loc = tok().loc();
        advance();
    } else if (at(Tk::LParen)) {
        decl.inline_sig = true;
        if (!parse_signature(decl.sig)) return false;
    } else {
        return fail_expected("signature reference or '('");
    }
    fn_decls_.push_back(std::move(decl));
    return true;
}

// Inline signatures take the numbers after the highest declared `sigN`, in
// the order of their `fn` lines (ir-reference.md 14.1).
bool Parser::materialize_fn_decls() {
    auto& dfg = f_->dfg;
    for (FnDecl& d : fn_decls_) {
        SigRef sig;
        if (d.inline_sig) {
            sig = dfg.signatures.push(std::move(d.sig));
            if (sig_declared_.size() <= sig.index()) sig_declared_.resize(sig.index() + 1);
            sig_declared_[sig.index()] = 1;
        } else {
            if (d.sig_num >= sig_declared_.size() || !sig_declared_[d.sig_num]) {
                return fail(d.sig_loc, "undefined signature sig" + std::to_string(d.sig_num));
            }
            sig = SigRef(d.sig_num);
        }
        d.data.signature = sig;
        // Gaps stay ExtFuncData{} with no signature; the printer skips them.
        while (dfg.ext_funcs.size() <= d.num) dfg.ext_funcs.push(ExtFuncData{});
        dfg.ext_funcs[FuncRef(d.num)] = d.data;
        if (fn_declared_.size() <= d.num) fn_declared_.resize(d.num + 1);
        fn_declared_[d.num] = 1;
    }
    return true;
}

// --- body ----------------------------------------------------------------------------------

bool Parser::parse_body() {
    std::optional<Block> cur;
    for (;;) {
        switch (tok().kind) {
        case Tk::RBrace: return true;
        case Tk::Block:
            if (!parse_block_header(cur)) return false;
            break;
        case Tk::Value:
        case Tk::Word:
            if (at_word("function")) return fail_expected("'}'");
            if (!cur) return fail_expected("block header");
            if (!parse_instruction(*cur)) return false;
            break;
        default: return fail_expected(cur ? "instruction, block header or '}'" : "block header or '}'");
        }
    }
}

Value Parser::ensure_value(uint32_t n) {
    auto& dfg = f_->dfg;
    while (dfg.num_values() <= n) dfg.make_value_placeholder(Type());
    // Grown geometrically, as values mostly come one at a time. Entries past
    // the last value stay 0 and are never read.
    if (value_defined_.size() <= n) value_defined_.resize(std::max<size_t>(n + 1, value_defined_.size() * 2));
    return Value(n);
}

Block Parser::ensure_block(uint32_t n) {
    auto& dfg = f_->dfg;
    while (dfg.num_blocks() <= n) dfg.make_block();
    if (block_defined_.size() <= n) block_defined_.resize(std::max<size_t>(n + 1, block_defined_.size() * 2));
    return Block(n);
}

// `blockN[(vA: T, ...)] [cold]:`
bool Parser::parse_block_header(std::optional<Block>& cur) {
    const Token& name = tok();
    if (!check_entity_number(name, kMaxEntityNumber, "block")) return false;
    Block b = ensure_block(static_cast<uint32_t>(name.number));
    if (block_defined_[b.index()]) return fail(name.loc(), b.to_string() + " defined twice");
    block_defined_[b.index()] = 1;
    f_->layout.append_block(b);
    sm_->block_line[b] = name.line;
    advance();
    if (at(Tk::LParen) && on_same_line()) {
        advance();
        if (!at(Tk::RParen)) {
            for (;;) {
                if (!at(Tk::Value)) return fail_expected("block parameter");
                const Token& vt = tok();
                if (!check_entity_number(vt, kMaxEntityNumber, "value")) return false;
                Value v = ensure_value(static_cast<uint32_t>(vt.number));
                if (value_defined_[v.index()]) return fail(vt.loc(), "value " + v.to_string() + " defined twice");
                value_defined_[v.index()] = 1;
                advance();
                if (!expect(Tk::Colon, "':'")) return false;
                Type t;
                if (!parse_type(t)) return false;
                f_->dfg.attach_block_param(b, v);
                f_->dfg.set_value_type(v, t);
                if (!at(Tk::Comma)) break;
                advance();
            }
        }
        if (!expect(Tk::RParen, "',' or ')'")) return false;
    }
    if (at_word("cold")) {
        f_->layout.set_cold(b);
        advance();
    }
    if (!expect(Tk::Colon, "':'")) return false;
    cur = b;
    return true;
}

// `[vA, vB =] opcode[.T] operands` or the alias line `vA -> vB`.
bool Parser::parse_instruction(Block block) {
    uint32_t line = tok().line;
    std::vector<const Token*>& results = result_toks_;
    results.clear();
    if (at(Tk::Value)) {
        if (peek_tok().kind == Tk::Arrow) return parse_alias();
        for (;;) {
            if (!at(Tk::Value)) return fail_expected("result value");
            if (!check_entity_number(tok(), kMaxEntityNumber, "value")) return false;
            results.push_back(&tok());
            advance();
            if (!at(Tk::Comma)) break;
            advance();
        }
        if (!expect(Tk::Equal, "'=' or ','")) return false;
    }
    if (!at(Tk::Word)) return fail_expected("opcode");
    const Token& op_tok = tok();
    auto op = opcode_from_name(op_tok.text);
    if (!op) return fail(op_tok.loc(), unknown_opcode_message(op_tok.text));
    advance();
    const OpcodeInfo& info = opcode_info(*op);
    const std::string_view name = info.name;

    Type written;
    Location suffix_loc = op_tok.loc();
    if (at(Tk::Dot)) {
        advance();
        suffix_loc = tok().loc();
        if (!parse_type(written)) return false;
        if (info.ctrl == CtrlSource::None) {
            return fail(suffix_loc, "opcode " + std::string(name) + " does not take a type suffix");
        }
    } else if (info.ctrl == CtrlSource::Result) {
        const std::string n(name);
        return fail(op_tok.loc(), "opcode " + n + " needs a type suffix (e.g. " + n + ".i32)");
    }

    InstructionData d;
    d.opcode = *op;
    if (info.ctrl == CtrlSource::Result) d.type = written;
    if (!parse_operands(d)) return false;
    if (on_same_line() && !at(Tk::RBrace)) return fail_expected("end of line");

    Inst inst = f_->dfg.make_inst(d);
    f_->layout.append_inst(inst, block);
    sm_->inst_line[inst] = line;
    return bind_results(inst, written, suffix_loc, op_tok.loc(), results);
}

Value Parser::ctrl_operand(const InstructionData& d) const {
    const OpcodeInfo& info = opcode_info(d.opcode);
    if (info.ctrl == CtrlSource::Arg1) return d.args[1];
    if (d.format() == InstructionFormat::CallIndirect) {
        return d.vargs.empty() ? Value() : d.vargs.get(0, f_->dfg.value_lists);
    }
    return d.args[0];
}

/// The type of `v` if its definition has been seen and typed, following
/// aliases (a bounded walk: a cycle is reported at the closing brace).
Type Parser::known_type(Value v) const {
    const auto& dfg = f_->dfg;
    for (int steps = 0; steps < 1000; ++steps) {
        if (!dfg.value_is_valid(v)) return Type();
        if (!dfg.value_is_alias(v)) return dfg.value_type(v);
        Value next = Value(dfg.value_def(v).owner);
        if (next == v) return Type();  // a placeholder: not defined yet
        v = next;
    }
    return Type();
}

bool Parser::bind_results(Inst inst, Type written, Location suffix_loc, Location op_loc,
                          const std::vector<const Token*>& results) {
    auto& dfg = f_->dfg;
    const InstructionData& d = dfg[inst];
    const OpcodeInfo& info = opcode_info(d.opcode);
    Type ctrl;
    bool pending = false;
    Value operand;
    switch (info.ctrl) {
    case CtrlSource::Result: ctrl = written; break;
    case CtrlSource::None:
        ctrl = info.typing == Typing::F32Const ? types::F32 : info.typing == Typing::F64Const ? types::F64 : Type();
        break;
    case CtrlSource::Arg0:
    case CtrlSource::Arg1: {
        operand = ctrl_operand(d);
        Type t = known_type(operand);
        if (t.is_valid()) {
            if (written.is_valid() && written != t) {
                return fail(suffix_loc, "type suffix ." + std::string(written.name()) + " does not match the type of " +
                                            operand.to_string() + " (" + std::string(t.name()) + ")");
            }
            ctrl = t;
        } else {
            ctrl = written;
            pending = true;
        }
        break;
    }
    }

    dfg.result_types(inst, ctrl, scratch_types_);
    if (scratch_types_.size() != results.size()) {
        Location at = results.empty() ? op_loc : results[0]->loc();
        size_t n = scratch_types_.size();
        return fail(at, std::string(info.name) + " produces " + std::to_string(n) + (n == 1 ? " result" : " results") +
                            ", but " + std::to_string(results.size()) + " are named");
    }
    for (size_t i = 0; i < results.size(); ++i) {
        Value v = ensure_value(static_cast<uint32_t>(results[i]->number));
        if (value_defined_[v.index()]) return fail(results[i]->loc(), "value " + v.to_string() + " defined twice");
        value_defined_[v.index()] = 1;
        dfg.attach_result(inst, v);
        dfg.set_value_type(v, scratch_types_[i]);
    }
    if (pending && (!results.empty() || written.is_valid())) {
        pending_.push_back(PendingCtrl{inst, operand, written, suffix_loc});
    }
    return true;
}

// `vA -> vB`
bool Parser::parse_alias() {
    const Token& dest = tok();
    if (!check_entity_number(dest, kMaxEntityNumber, "value")) return false;
    Value v = ensure_value(static_cast<uint32_t>(dest.number));
    if (value_defined_[v.index()]) return fail(dest.loc(), "value " + v.to_string() + " defined twice");
    advance();  // vA
    advance();  // ->
    Value src;
    if (!use_value(src)) return false;
    if (on_same_line() && !at(Tk::RBrace)) return fail_expected("end of line");
    value_defined_[v.index()] = 1;
    f_->dfg.change_to_alias(v, src);
    aliases_.push_back(AliasDef{v, dest.loc()});
    return true;
}

// --- operands --------------------------------------------------------------------------

bool Parser::use_value(Value& out) {
    if (!at(Tk::Value)) return fail_expected("value");
    const Token& t = tok();
    if (!check_entity_number(t, kMaxEntityNumber, "value")) return false;
    Value v = ensure_value(static_cast<uint32_t>(t.number));
    if (!value_defined_[v.index()]) value_forward_uses_.emplace(v.index(), t.loc());
    advance();
    out = v;
    return true;
}

bool Parser::use_block(Block& out) {
    if (!at(Tk::Block)) return fail_expected("block");
    const Token& t = tok();
    if (!check_entity_number(t, kMaxEntityNumber, "block")) return false;
    Block b = ensure_block(static_cast<uint32_t>(t.number));
    if (!block_defined_[b.index()]) block_forward_uses_.emplace(b.index(), t.loc());
    advance();
    out = b;
    return true;
}

bool Parser::use_stack_slot(uint32_t& out) {
    if (!at(Tk::StackSlot)) return fail_expected("stack slot");
    if (tok().number >= ss_declared_.size() || !ss_declared_[tok().number]) {
        return fail(tok().loc(), "undefined stack slot " + std::string(tok().text));
    }
    out = static_cast<uint32_t>(tok().number);
    advance();
    return true;
}

bool Parser::use_func_ref(uint32_t& out) {
    if (!at(Tk::FuncRef)) return fail_expected("function reference");
    if (tok().number >= fn_declared_.size() || !fn_declared_[tok().number]) {
        return fail(tok().loc(), "undefined function reference " + std::string(tok().text));
    }
    out = static_cast<uint32_t>(tok().number);
    advance();
    return true;
}

bool Parser::use_sig_ref(uint32_t& out) {
    if (!at(Tk::SigRef)) return fail_expected("signature reference");
    if (tok().number >= sig_declared_.size() || !sig_declared_[tok().number]) {
        return fail(tok().loc(), "undefined signature " + std::string(tok().text));
    }
    out = static_cast<uint32_t>(tok().number);
    advance();
    return true;
}

// `v1, v2, ...`: at least one value.
bool Parser::parse_value_list(std::vector<Value>& out) {
    for (;;) {
        Value v;
        if (!use_value(v)) return false;
        out.push_back(v);
        if (!at(Tk::Comma)) return true;
        advance();
    }
}

// `(v1, v2)`, possibly empty.
bool Parser::parse_value_list_in_parens(std::vector<Value>& out) {
    out.clear();
    if (!expect(Tk::LParen, "'('")) return false;
    if (!at(Tk::RParen) && !parse_value_list(out)) return false;
    return expect(Tk::RParen, "',' or ')'");
}

// `br_table vI, blockD(args), [blockA(args), ...]`: the default comes first.
bool Parser::parse_branch_table(InstructionData& d) {
    JumpTableData table;
    BlockCall bc;
    if (!use_value(d.args[0]) || !expect_comma() || !parse_block_call(bc) || !expect_comma()) return false;
    table.all.push_back(bc);
    if (!expect(Tk::LBracket, "'['")) return false;
    if (!at(Tk::RBracket)) {
        for (;;) {
            if (!parse_block_call(bc)) return false;
            table.all.push_back(bc);
            if (!at(Tk::Comma)) break;
            advance();
        }
    }
    if (!expect(Tk::RBracket, "',' or ']'")) return false;
    d.entity = f_->create_jump_table(std::move(table)).index();
    return true;
}

// `blockN` or `blockN(args)`.
bool Parser::parse_block_call(BlockCall& out) {
    Block b;
    if (!use_block(b)) return false;
    std::vector<Value>& args = scratch_args_;
    args.clear();
    if (at(Tk::LParen) && on_same_line() && !parse_value_list_in_parens(args)) return false;
    out = f_->dfg.block_call(b, args);
    return true;
}

bool Parser::parse_trap_code(uint8_t& out) {
    if (!at(Tk::Word)) return fail_expected("trap code");
    std::string_view w = tok().text;
    auto code = trapcode_from_name(w);
    if (!code) {
        if (looks_like_user_code(w)) {
            return fail(tok().loc(), "invalid trap code " + std::string(w) + " (user codes are user1 .. user250)");
        }
        return fail(tok().loc(), "invalid trap code " + std::string(w));
    }
    out = code->byte;
    advance();
    return true;
}

// Memory flags in any order; `notrap` and a trap code overwrite each other.
bool Parser::parse_mem_flags(MemFlags& flags) {
    while (at(Tk::Word) && on_same_line()) {
        std::string_view w = tok().text;
        if (w == "notrap") {
            flags.set(MemFlags::Notrap);
        } else if (w == "aligned") {
            flags.set(MemFlags::Aligned);
        } else if (w == "readonly") {
            flags.set(MemFlags::Readonly);
        } else if (w == "can_move") {
            flags.set(MemFlags::CanMove);
        } else if (w == "big" || w == "little") {
            MemFlags::Bit bit = w == "big" ? MemFlags::Big : MemFlags::Little;
            MemFlags::Bit other = w == "big" ? MemFlags::Little : MemFlags::Big;
            if (flags.has(other)) return fail(tok().loc(), "memory flags 'big' and 'little' exclude each other");
            flags.set(bit);
        } else if (auto code = trapcode_from_name(w)) {
            flags.set_trap_code(*code);
        } else if (looks_like_user_code(w)) {
            return fail(tok().loc(), "invalid trap code " + std::string(w) + " (user codes are user1 .. user250)");
        } else if (w == "heap" || w == "table" || w == "vmctx" || w == "checked") {
            return fail(tok().loc(), "memory flag " + std::string(w) + " is not supported");
        } else {
            return fail_expected("memory flag or value");
        }
        advance();
    }
    return true;
}

// `+N` / `-N` right after an address or stack slot; absent means 0.
bool Parser::parse_offset(int32_t& out) {
    out = 0;
    if (!at(Tk::Integer) || !on_same_line()) return true;
    std::string_view text = tok().text;
    if (text[0] != '+' && text[0] != '-') return fail(tok().loc(), "offset needs an explicit sign, e.g. +8 or -4");
    std::string err;
    auto v = decode_signed(text, INT32_MIN, INT32_MAX, err);
    if (!v) return fail(tok().loc(), "offset: " + err);
    out = static_cast<int32_t>(*v);
    advance();
    return true;
}

bool Parser::parse_int_imm(uint64_t& out, Type t) {
    if (!at(Tk::Integer)) return fail_expected("integer immediate");
    std::string err;
    auto v = decode_int_immediate(tok().text, t.bits(), err);
    if (!v) return fail(tok().loc(), err);
    out = *v;
    advance();
    return true;
}

bool Parser::parse_float_imm(uint64_t& out, Type t) {
    if (at(Tk::Integer)) {
        return fail(tok().loc(), "expected float literal, found integer " + quoted(tok().text) +
                                     " (write a hex float such as 0x1.0p4)");
    }
    if (!at(Tk::Float)) return fail_expected("float literal");
    std::string err;
    auto v = decode_float(tok().text, t, err);
    if (!v) return fail(tok().loc(), err);
    out = *v;
    advance();
    return true;
}

bool Parser::parse_operands(InstructionData& d) {
    auto& dfg = f_->dfg;
    std::vector<Value>& vals = scratch_vals_;
    vals.clear();
    switch (d.format()) {
    case InstructionFormat::NullAry: return true;
    case InstructionFormat::UnaryImm: return parse_int_imm(d.imm, d.type);
    case InstructionFormat::UnaryIeee32: return parse_float_imm(d.imm, types::F32);
    case InstructionFormat::UnaryIeee64: return parse_float_imm(d.imm, types::F64);
    case InstructionFormat::Unary: return use_value(d.args[0]);
    case InstructionFormat::UnaryFlags: return parse_mem_flags(d.flags) && use_value(d.args[0]);
    case InstructionFormat::Binary: return use_value(d.args[0]) && expect_comma() && use_value(d.args[1]);
    case InstructionFormat::Ternary:
        return use_value(d.args[0]) && expect_comma() && use_value(d.args[1]) && expect_comma() &&
               use_value(d.args[2]);
    case InstructionFormat::IntAddTrap:
        return use_value(d.args[0]) && expect_comma() && use_value(d.args[1]) && expect_comma() &&
               parse_trap_code(d.code);
    case InstructionFormat::IntCompare: {
        auto cc = at(Tk::Word) ? intcc_from_name(tok().text) : std::nullopt;
        if (!cc) return fail_expected("integer condition code (eq ne slt sge sgt sle ult uge ugt ule)");
        d.code = static_cast<uint8_t>(*cc);
        advance();
        return use_value(d.args[0]) && expect_comma() && use_value(d.args[1]);
    }
    case InstructionFormat::FloatCompare: {
        auto cc = at(Tk::Word) ? floatcc_from_name(tok().text) : std::nullopt;
        if (!cc) return fail_expected("float condition code (ord uno eq ne one ueq lt le gt ge ult ule ugt uge)");
        d.code = static_cast<uint8_t>(*cc);
        advance();
        return use_value(d.args[0]) && expect_comma() && use_value(d.args[1]);
    }
    case InstructionFormat::Load: return parse_mem_flags(d.flags) && use_value(d.args[0]) && parse_offset(d.offset);
    case InstructionFormat::Store:
        return parse_mem_flags(d.flags) && use_value(d.args[0]) && expect_comma() && use_value(d.args[1]) &&
               parse_offset(d.offset);
    case InstructionFormat::StackAddr: return use_stack_slot(d.entity) && parse_offset(d.offset);
    case InstructionFormat::FuncAddr: return use_func_ref(d.entity);
    case InstructionFormat::Jump: return parse_block_call(d.dests[0]);
    case InstructionFormat::Brif:
        return use_value(d.args[0]) && expect_comma() && parse_block_call(d.dests[0]) && expect_comma() &&
               parse_block_call(d.dests[1]);
    case InstructionFormat::BranchTable: return parse_branch_table(d);
    case InstructionFormat::MultiAry:
        if (at(Tk::Value) && on_same_line() && !parse_value_list(vals)) return false;
        d.vargs = ValueList::from(vals.begin(), vals.end(), dfg.value_lists);
        return true;
    case InstructionFormat::Trap: return parse_trap_code(d.code);
    case InstructionFormat::CondTrap: return use_value(d.args[0]) && expect_comma() && parse_trap_code(d.code);
    case InstructionFormat::Call:
        if (!use_func_ref(d.entity) || !parse_value_list_in_parens(vals)) return false;
        d.vargs = ValueList::from(vals.begin(), vals.end(), dfg.value_lists);
        return true;
    case InstructionFormat::CallIndirect: {
        Value callee;
        if (!use_sig_ref(d.entity) || !expect_comma() || !use_value(callee)) return false;
        if (!parse_value_list_in_parens(vals)) return false;
        d.vargs.push(callee, dfg.value_lists);
        for (Value v : vals) d.vargs.push(v, dfg.value_lists);
        return true;
    }
    }
    return fail_expected("operands");
}

// --- the closing brace ------------------------------------------------------------------------

bool Parser::finish_function() {
    std::vector<Diagnostic> late;
    for (const auto& [idx, loc] : block_forward_uses_) {
        if (!block_defined_[idx]) late.push_back({loc, "undefined block block" + std::to_string(idx)});
    }
    for (const auto& [idx, loc] : value_forward_uses_) {
        if (!value_defined_[idx]) late.push_back({loc, "undefined value v" + std::to_string(idx)});
    }
    if (late.empty()) check_alias_cycles(late);
    if (late.empty()) resolve_pending(late);
    if (!late.empty()) {
        std::sort(late.begin(), late.end(), [](const Diagnostic& a, const Diagnostic& b) {
            return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
        });
        errors_.insert(errors_.end(), late.begin(), late.end());
        return false;
    }
    for (const AliasDef& a : aliases_) f_->dfg.set_value_type(a.value, known_type(a.value));
    return true;
}

// Reports each alias chain that never reaches a real definition, once, at
// the first alias line whose walk closes the cycle.
void Parser::check_alias_cycles(std::vector<Diagnostic>& late) {
    enum : uint8_t { kVisiting = 1, kGood, kBad };
    const auto& dfg = f_->dfg;
    std::unordered_map<uint32_t, uint8_t> state;
    std::vector<uint32_t> path;
    for (const AliasDef& a : aliases_) {
        path.clear();
        Value cur = a.value;
        uint8_t verdict = kGood;
        for (;;) {
            if (!dfg.value_is_alias(cur)) break;
            auto it = state.find(cur.index());
            if (it != state.end() && it->second != kVisiting) {
                verdict = it->second;
                break;
            }
            if (it != state.end()) {
                verdict = kBad;
                late.push_back({a.loc, "alias cycle through " + cur.to_string()});
                break;
            }
            state[cur.index()] = kVisiting;
            path.push_back(cur.index());
            cur = Value(dfg.value_def(cur).owner);
        }
        for (uint32_t v : path) state[v] = verdict;
    }
}

// Settles instructions whose controlling operand was a forward reference.
// Each pass walks the list backwards, so a chain of forward references
// written in program order resolves in one pass.
void Parser::resolve_pending(std::vector<Diagnostic>& late) {
    auto& dfg = f_->dfg;
    bool progress = true;
    while (progress) {
        progress = false;
        for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
            PendingCtrl& p = *it;
            if (p.resolved) continue;
            Type t = known_type(p.operand);
            if (!t.is_valid()) continue;
            p.resolved = true;
            progress = true;
            if (p.written.is_valid() && p.written != t) {
                late.push_back({p.loc, "type suffix ." + std::string(p.written.name()) + " does not match the type of " +
                                           p.operand.to_string() + " (" + std::string(t.name()) + ")"});
                continue;
            }
            dfg.result_types(p.inst, t, scratch_types_);
            auto results = dfg.inst_results(p.inst);
            for (size_t i = 0; i < results.size() && i < scratch_types_.size(); ++i) {
                dfg.set_value_type(results[i], scratch_types_[i]);
            }
        }
    }
    for (const PendingCtrl& p : pending_) {
        if (p.resolved || p.written.is_valid()) continue;
        late.push_back({p.loc, "cannot determine the type of " + std::string(opcode_name(dfg[p.inst].opcode)) +
                                   ": its controlling operand " + p.operand.to_string() +
                                   " has no known type (write a type suffix)"});
    }
}

}  // namespace

ParseOutcome parse_test_file(std::string_view text) {
    ParseOutcome out;
    Parser parser(text, out.errors);
    out.file = parser.parse_file();
    return out;
}

std::vector<std::unique_ptr<Function>> parse_functions(std::string_view text, Diagnostics& errors) {
    ParseOutcome outcome = parse_test_file(text);
    errors.insert(errors.end(), outcome.errors.begin(), outcome.errors.end());
    std::vector<std::unique_ptr<Function>> funcs;
    for (ParsedFunction& pf : outcome.file.functions) funcs.push_back(std::move(pf.func));
    return funcs;
}

}  // namespace heron
