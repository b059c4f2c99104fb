// Unit tests of run directives and typed literals: comparisons, result
// lists, traps, print directives, literal typing by the signature, and the
// errors (with columns) for every way a directive can be malformed.
#include <gtest/gtest.h>

#include "codegen/ir/run_command.h"

namespace heron {
namespace {

Signature sig_of(std::initializer_list<Type> params, std::initializer_list<Type> returns) {
    Signature s;
    for (Type t : params) s.params.emplace_back(t);
    for (Type t : returns) s.returns.emplace_back(t);
    return s;
}

RunCommand run_ok(std::string_view text, const Signature& sig, RunCommand::Kind kind = RunCommand::Kind::Run) {
    Diagnostic err;
    auto cmd = parse_run_command(text, kind, sig, err);
    EXPECT_TRUE(cmd.has_value()) << text << ": " << err.format("");
    return cmd.value_or(RunCommand{});
}

Diagnostic run_error(std::string_view text, const Signature& sig, RunCommand::Kind kind = RunCommand::Kind::Run) {
    Diagnostic err;
    auto cmd = parse_run_command(text, kind, sig, err);
    EXPECT_FALSE(cmd.has_value()) << text;
    return err;
}

TEST(RunCommandParse, EqualityWithOneResult) {
    RunCommand cmd = run_ok(" %add(1, -2) == 0xff", sig_of({types::I32, types::I8}, {types::I8}));
    EXPECT_EQ(cmd.kind, RunCommand::Kind::Run);
    EXPECT_EQ(cmd.func_name, "add");
    ASSERT_EQ(cmd.args.size(), 2u);
    EXPECT_EQ(cmd.args[0], DataValue::i32(1));
    EXPECT_EQ(cmd.args[1], DataValue::i8(-2));
    EXPECT_EQ(cmd.op, RunCommand::Op::Eq);
    ASSERT_EQ(cmd.expected.size(), 1u);
    EXPECT_EQ(cmd.expected[0], DataValue::i8(-1)) << "0xff and -1 are the same i8";
}

TEST(RunCommandParse, BracketedResultsAndInequality) {
    Signature sig = sig_of({types::I8, types::I8, types::I8}, {types::I8, types::I8});
    RunCommand cmd = run_ok("%pair(0, 1, 1) == [2, 0]", sig);
    ASSERT_EQ(cmd.expected.size(), 2u);
    EXPECT_EQ(cmd.expected[0], DataValue::i8(2));
    EXPECT_EQ(cmd.expected[1], DataValue::i8(0));

    RunCommand one = run_ok("%f(1) != [3]", sig_of({types::I64}, {types::I64}));
    EXPECT_EQ(one.op, RunCommand::Op::Ne);
    EXPECT_EQ(one.expected.at(0), DataValue::i64(3)) << "a single result may be bracketed";

    RunCommand none = run_ok("%g() == []", sig_of({}, {}));
    EXPECT_TRUE(none.args.empty());
    EXPECT_TRUE(none.expected.empty());
}

TEST(RunCommandParse, FloatLiteralsKeepEveryBit) {
    Signature sig = sig_of({types::F32, types::F64}, {types::F32});
    RunCommand cmd = run_ok("%isnan(+NaN:0x1, -0.0) == -sNaN:0x1", sig);
    EXPECT_EQ(cmd.args[0], DataValue::f32_bits(0x7fc00001));
    EXPECT_EQ(cmd.args[1], DataValue::f64_bits(0x8000000000000000));
    EXPECT_EQ(cmd.expected[0], DataValue::f32_bits(0xff800001));
    RunCommand inf = run_ok("%f(-Inf, 0x1.8p1) == 0x0.000002p-126", sig);
    EXPECT_EQ(inf.args[0], DataValue::f32_bits(0xff800000));
    EXPECT_EQ(inf.args[1], DataValue::f64(3.0));
    EXPECT_EQ(inf.expected[0], DataValue::f32_bits(1));
}

TEST(RunCommandParse, TrapsAndPrint) {
    RunCommand trap = run_ok("%div(1, 0) traps int_divz", sig_of({types::I32, types::I32}, {types::I32}));
    EXPECT_EQ(trap.op, RunCommand::Op::Traps);
    EXPECT_EQ(trap.trap, TrapCode::integer_division_by_zero());
    EXPECT_TRUE(trap.expected.empty());
    EXPECT_EQ(run_ok("%t() traps user7", sig_of({}, {})).trap, TrapCode::user(7));

    RunCommand print = run_ok("%f(10)", sig_of({types::I16}, {types::I16}), RunCommand::Kind::Print);
    EXPECT_EQ(print.kind, RunCommand::Kind::Print);
    EXPECT_EQ(print.args.at(0), DataValue::i16(10));
}

TEST(RunCommandErrors, CountsMustMatchTheSignature) {
    Signature sig = sig_of({types::I32, types::I32}, {types::I32, types::I8});
    Diagnostic args = run_error("%f(1) == [1, 0]", sig);
    EXPECT_EQ(args.message, "expected 2 arguments, found 1");
    EXPECT_EQ(args.loc.col, 3u) << "at the '('";
    EXPECT_EQ(run_error("%f(1, 2) == [1]", sig).message, "expected 2 results, found 1");
    EXPECT_EQ(run_error("%f(1, 2) == 1", sig).message, "expected 2 results, found 1");
    EXPECT_EQ(run_error("%g(1) == []", sig_of({types::I8}, {types::I8})).message, "expected 1 result, found 0");
}

TEST(RunCommandErrors, LiteralsAreTypedAndRangeChecked) {
    Signature sig = sig_of({types::I8, types::F32}, {types::I8});
    Diagnostic range = run_error("%f(256, 0.0) == 0", sig);
    EXPECT_NE(range.message.find("out of range for i8"), std::string::npos) << range.message;
    EXPECT_EQ(range.loc.col, 4u);
    Diagnostic not_float = run_error("%f(1, 0x10) == 0", sig);
    EXPECT_NE(not_float.message.find("expected f32 literal, found '0x10'"), std::string::npos) << not_float.message;
    EXPECT_EQ(not_float.loc.col, 7u);
    EXPECT_NE(run_error("%f(0x1.0p0, 0.0) == 0", sig).message.find("expected i8 literal"), std::string::npos);
    EXPECT_NE(run_error("%f(1, 0x1.000001p0) == 0", sig).message.find("not exactly representable"), std::string::npos);
}

TEST(RunCommandErrors, MalformedDirectives) {
    Signature sig = sig_of({types::I32}, {types::I32});
    EXPECT_EQ(run_error("f(1) == 1", sig).message, "expected function name (%name), found 'f'");
    EXPECT_EQ(run_error("%f(1) = 1", sig).message, "expected '==', '!=' or 'traps', found '='");
    EXPECT_EQ(run_error("%f(1)", sig).message, "expected '==', '!=' or 'traps', found end of file");
    EXPECT_EQ(run_error("%f(1) == 1 2", sig).message, "expected end of directive, found '2'");
    EXPECT_EQ(run_error("%f(1 2) == 1", sig).message, "expected ',' or ')', found '2'");
    EXPECT_EQ(run_error("%f(1) traps user0", sig).message, "invalid trap code user0");
    EXPECT_EQ(run_error("%f(1) == 1", sig, RunCommand::Kind::Print).message, "expected end of directive, found '=='");
    Diagnostic junk = run_error("%f(v1) == 1", sig);
    EXPECT_EQ(junk.message, "expected literal, found 'v1'");
    EXPECT_EQ(junk.loc.line, 1u);
    EXPECT_EQ(junk.loc.col, 4u);
}

TEST(RunCommandLiteral, ParseDataValue) {
    std::string err;
    EXPECT_EQ(parse_data_value("-1", types::I16, err), DataValue::i16(-1));
    EXPECT_EQ(parse_data_value(" 0xffff ", types::I16, err), DataValue::i16(-1));
    EXPECT_EQ(parse_data_value("0x1.8p1", types::F64, err), DataValue::f64(3.0));
    EXPECT_EQ(parse_data_value("+sNaN:0x1", types::F32, err), DataValue::f32_bits(0x7f800001));
    EXPECT_FALSE(parse_data_value("65536", types::I16, err));
    EXPECT_NE(err.find("out of range for i16"), std::string::npos) << err;
    EXPECT_FALSE(parse_data_value("1 2", types::I32, err));
    EXPECT_EQ(err, "expected one i32 literal, found '2'");
    EXPECT_FALSE(parse_data_value("", types::I32, err));
    EXPECT_EQ(err, "expected one i32 literal, found end of file");
    EXPECT_FALSE(parse_data_value("7", types::F32, err));
    EXPECT_NE(err.find("an integer is not a float"), std::string::npos) << err;
}

}  // namespace
}  // namespace heron
