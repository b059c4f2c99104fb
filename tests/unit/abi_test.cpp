// Signature classification (codegen/machinst/abi.h) with both ISAs' facts,
// checked against the conventions: System V x86-64 (6 integer and 8 float
// argument registers, two results of each class in registers, the return
// area's address a hidden first argument in rdi) and AAPCS64 (8 + 8
// argument registers, results in the same registers, the return area in
// x8); stack arguments in 8-byte slots in parameter order; `tail` pops its
// stack arguments padded to 16 bytes; one error for a signature over the
// popped limit, whichever ISA and whether the function or a call has it.
#include <gtest/gtest.h>

#include <string>

#include "codegen/ir/parser.h"
#include "codegen/isa/aarch64/lower.h"
#include "codegen/isa/x64/lower.h"
#include "codegen/machinst/abi.h"

namespace heron {
namespace {

using Kind = AbiLoc::Kind;
using namespace types;

/// A signature from one letter per parameter and result: i = i64, w = i32,
/// d = f64, s = f32.
Signature sig_of(std::string_view params, std::string_view returns, CallConv cc = CallConv::Fast) {
    auto type_of = [](char c) {
        switch (c) {
        case 'w': return I32;
        case 'd': return F64;
        case 's': return F32;
        default: return I64;
        }
    };
    Signature s(cc);
    for (char c : params) s.params.push_back(AbiParam(type_of(c)));
    for (char c : returns) s.returns.push_back(AbiParam(type_of(c)));
    return s;
}

AbiSignature classify(const Signature& sig, const AbiFacts& facts) {
    AbiSignature out;
    EXPECT_EQ(classify_signature(sig, facts, out), "");
    return out;
}

::testing::AssertionResult in_reg(const AbiLoc& loc, ra::PReg r) {
    if (loc.kind != Kind::Reg) return ::testing::AssertionFailure() << "not in a register (offset " << loc.offset << ")";
    if (loc.reg != r) {
        return ::testing::AssertionFailure() << "in " << (loc.reg.cls == ra::RegClass::Float ? "float " : "int ")
                                             << int{loc.reg.hw};
    }
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult at(const AbiLoc& loc, Kind kind, uint32_t offset) {
    if (loc.kind != kind || loc.offset != offset) {
        return ::testing::AssertionFailure() << "kind " << int(loc.kind) << " offset " << loc.offset;
    }
    return ::testing::AssertionSuccess();
}

ra::PReg gpr(uint8_t hw) { return ra::PReg(hw, ra::RegClass::Int); }
ra::PReg fpr(uint8_t hw) { return ra::PReg(hw, ra::RegClass::Float); }

// System V encodings.
constexpr uint8_t RAX = 0, RCX = 1, RDX = 2, RSI = 6, RDI = 7, R8 = 8, R9 = 9;

TEST(AbiTest, SystemVArgumentsTakeSixIntAndEightFloatRegistersThenTheStack) {
    // Interleaved: the classes count separately, the stack takes the rest
    // in parameter order.
    const AbiSignature s = classify(sig_of("ididdiwdiddiddisid", ""), x64::abi_facts());
    const uint8_t int_regs[] = {RDI, RSI, RDX, RCX, R8, R9};
    unsigned ni = 0, nf = 0;
    uint32_t stack = 0;
    const std::string_view letters = "ididdiwdiddiddisid";
    ASSERT_EQ(s.params.size(), letters.size());
    for (size_t k = 0; k < letters.size(); ++k) {
        const bool is_float = letters[k] == 'd' || letters[k] == 's';
        if (is_float && nf < 8) {
            EXPECT_TRUE(in_reg(s.params[k], fpr(static_cast<uint8_t>(nf++)))) << k;
        } else if (!is_float && ni < 6) {
            EXPECT_TRUE(in_reg(s.params[k], gpr(int_regs[ni++]))) << k;
        } else {
            EXPECT_TRUE(at(s.params[k], Kind::Stack, stack)) << k;
            stack += 8;
        }
    }
    // 8 integers (6 in registers) and 10 floats (8): 4 on the stack.
    EXPECT_EQ(stack, 32u);
    EXPECT_EQ(s.stack_arg_bytes, 32u);
    EXPECT_EQ(s.popped_bytes, 0u);  // not `tail`: the caller pops
    EXPECT_FALSE(s.has_ret_area);
}

TEST(AbiTest, SystemVResultsBeyondRaxRdxAndXmm01GoToTheAreaWhosePointerTakesRdi) {
    const AbiSignature s = classify(sig_of("iiiiiid", "idiidwd"), x64::abi_facts());
    ASSERT_EQ(s.returns.size(), 7u);
    EXPECT_TRUE(in_reg(s.returns[0], gpr(RAX)));
    EXPECT_TRUE(in_reg(s.returns[1], fpr(0)));
    EXPECT_TRUE(in_reg(s.returns[2], gpr(RDX)));
    EXPECT_TRUE(at(s.returns[3], Kind::RetArea, 0));  // the third integer
    EXPECT_TRUE(in_reg(s.returns[4], fpr(1)));
    EXPECT_TRUE(at(s.returns[5], Kind::RetArea, 8));
    EXPECT_TRUE(at(s.returns[6], Kind::RetArea, 16));  // the third float
    EXPECT_TRUE(s.has_ret_area);
    EXPECT_EQ(s.ret_area_bytes, 24u);
    // rdi carries the area's address: the integer parameters start at rsi,
    // so the sixth goes to the stack; the float one still takes xmm0.
    const uint8_t int_regs[] = {RSI, RDX, RCX, R8, R9};
    for (size_t k = 0; k < 5; ++k) EXPECT_TRUE(in_reg(s.params[k], gpr(int_regs[k]))) << k;
    EXPECT_TRUE(at(s.params[5], Kind::Stack, 0));
    EXPECT_TRUE(in_reg(s.params[6], fpr(0)));
    EXPECT_EQ(s.stack_arg_bytes, 8u);
    EXPECT_EQ(x64::abi_facts().ret_area_reg, gpr(RDI));
}

TEST(AbiTest, Aapcs64ArgumentsTakeEightAndEightRegistersThenTheStack) {
    const std::string_view letters = "iiiiiddddiiiisddddddwi";
    const AbiSignature s = classify(sig_of(letters, ""), aarch64::abi_facts());
    unsigned ni = 0, nf = 0;
    uint32_t stack = 0;
    for (size_t k = 0; k < letters.size(); ++k) {
        const bool is_float = letters[k] == 'd' || letters[k] == 's';
        if (is_float && nf < 8) {
            EXPECT_TRUE(in_reg(s.params[k], fpr(static_cast<uint8_t>(nf++)))) << k;
        } else if (!is_float && ni < 8) {
            EXPECT_TRUE(in_reg(s.params[k], gpr(static_cast<uint8_t>(ni++)))) << k;
        } else {
            EXPECT_TRUE(at(s.params[k], Kind::Stack, stack)) << k;
            stack += 8;
        }
    }
    // 11 integers and 11 floats: 3 of each on the stack.
    EXPECT_EQ(stack, 48u);
    EXPECT_EQ(s.stack_arg_bytes, 48u);
}

TEST(AbiTest, Aapcs64ResultsBeyondEightPerClassGoToTheAreaInX8) {
    const AbiSignature s = classify(sig_of("i", "iiiiiiiiidid"), aarch64::abi_facts());
    for (uint8_t k = 0; k < 8; ++k) EXPECT_TRUE(in_reg(s.returns[k], gpr(k))) << int{k};
    EXPECT_TRUE(at(s.returns[8], Kind::RetArea, 0));
    EXPECT_TRUE(in_reg(s.returns[9], fpr(0)));
    EXPECT_TRUE(at(s.returns[10], Kind::RetArea, 8));
    EXPECT_TRUE(in_reg(s.returns[11], fpr(1)));
    EXPECT_TRUE(s.has_ret_area);
    EXPECT_EQ(s.ret_area_bytes, 16u);
    // x8 is a register of its own: the parameters still start at x0.
    EXPECT_TRUE(in_reg(s.params[0], gpr(0)));
    EXPECT_EQ(aarch64::abi_facts().ret_area_reg, gpr(8));
}

TEST(AbiTest, TailCalleesPopTheirStackArgumentsPaddedTo16Bytes) {
    struct Case {
        const AbiFacts& facts;
        unsigned ints;       // i64 parameters
        uint32_t stack, popped;
    };
    const Case cases[] = {
        {x64::abi_facts(), 6, 0, 0},      {x64::abi_facts(), 7, 8, 16},    {x64::abi_facts(), 8, 16, 16},
        {x64::abi_facts(), 9, 24, 32},    {aarch64::abi_facts(), 8, 0, 0}, {aarch64::abi_facts(), 9, 8, 16},
        {aarch64::abi_facts(), 11, 24, 32},
    };
    for (const Case& c : cases) {
        const std::string params(c.ints, 'i');
        const AbiSignature tail = classify(sig_of(params, "i", CallConv::Tail), c.facts);
        EXPECT_EQ(tail.stack_arg_bytes, c.stack) << c.ints;
        EXPECT_EQ(tail.popped_bytes, c.popped) << c.ints;
        // Other conventions leave the arguments to the caller.
        const AbiSignature fast = classify(sig_of(params, "i", CallConv::Fast), c.facts);
        EXPECT_EQ(fast.stack_arg_bytes, c.stack) << c.ints;
        EXPECT_EQ(fast.popped_bytes, 0u) << c.ints;
        const AbiSignature sysv = classify(sig_of(params, "i", CallConv::SystemV), c.facts);
        EXPECT_EQ(sysv.popped_bytes, 0u) << c.ints;
    }
}

TEST(AbiTest, OverTheLimitIsOneErrorForBothIsas) {
    // 65520 bytes popped is the most; one more slot pads to 65536.
    const std::string at_limit(6 + 65520 / 8, 'i'), over(6 + 65520 / 8 + 1, 'i');
    AbiSignature s;
    EXPECT_EQ(classify_signature(sig_of(at_limit, "", CallConv::Tail), x64::abi_facts(), s), "");
    EXPECT_EQ(s.popped_bytes, 65520u);
    EXPECT_EQ(classify_signature(sig_of(over, "", CallConv::Tail), x64::abi_facts(), s),
              "tail-convention function with 65536 bytes of stack arguments (at most 65520)");
    // Two more integer registers on AArch64: the same parameters pop 16 fewer bytes.
    EXPECT_EQ(classify_signature(sig_of(over, "", CallConv::Tail), aarch64::abi_facts(), s), "");
    EXPECT_EQ(s.popped_bytes, 65520u);
    const std::string over_a64(8 + 65520 / 8 + 1, 'i');
    EXPECT_EQ(classify_signature(sig_of(over_a64, "", CallConv::Tail), aarch64::abi_facts(), s),
              "tail-convention function with 65536 bytes of stack arguments (at most 65520)");
    // Not `tail`: nothing is popped, any size is fine.
    EXPECT_EQ(classify_signature(sig_of(over, "", CallConv::Fast), x64::abi_facts(), s), "");
}

TEST(AbiTest, BothBackendsReportTheLimitWithTheSharedText) {
    // A call to a `tail` callee with 8200 i64 parameters: 8194 on the stack
    // on x86-64 (65552 bytes), 8192 on AArch64 (65536).
    std::string params, args;
    for (int k = 0; k < 8200; ++k) {
        params += k ? ", i64" : "i64";
        args += k ? ", v0" : "v0";
    }
    Diagnostics errs;
    auto fs = parse_functions("function %f(i64) -> i64 {\n    fn0 = %g(" + params + ") -> i64 tail\nblock0(v0: i64):\n"
                              "    v1 = call fn0(" + args + ")\n    return v1\n}\n", errs);
    ASSERT_TRUE(errs.empty());
    ASSERT_EQ(fs.size(), 1u);
    x64::VCode xv;
    EXPECT_EQ(x64::lower_function(*fs[0], x64::Settings::host(), xv),
              "call to a " + popped_bytes_error(65552, 65520));
    aarch64::VCode av;
    EXPECT_EQ(aarch64::lower_function(*fs[0], av),
              "unsupported on aarch64: call to a " + popped_bytes_error(65536, 65520) + " in block0");
}

TEST(AbiTest, TheCacheClassifiesEachCallSignatureOncePerFunction) {
    // The second ask for a SigRef gets the first classification, whatever
    // Signature comes with it; a reset forgets it.
    AbiCache cache;
    cache.reset(2);
    std::string err;
    const Signature six = sig_of("iiiiiii", ""), two = sig_of("ii", "");
    const AbiSignature& a = cache.of_call(SigRef(1), six, x64::abi_facts(), err);
    EXPECT_EQ(a.stack_arg_bytes, 8u);
    const AbiSignature& b = cache.of_call(SigRef(1), two, x64::abi_facts(), err);
    EXPECT_EQ(&a, &b);
    EXPECT_EQ(b.stack_arg_bytes, 8u);
    EXPECT_EQ(cache.of_call(SigRef(0), two, x64::abi_facts(), err).params.size(), 2u);
    cache.reset(2);
    EXPECT_EQ(cache.of_call(SigRef(1), two, x64::abi_facts(), err).stack_arg_bytes, 0u);
    EXPECT_EQ(err, "");
}

TEST(AbiTest, TheFrameBelowTheSavedRegistersKeepsSp16ByteAligned) {
    // From sp up: 24 bytes of outgoing arguments, one spill slot, then a
    // 12-byte stack slot (8-aligned at 32) and a 16-aligned one (at 48):
    // 64 bytes, rounded with the saved registers above to a multiple of 16.
    Diagnostics errs;
    auto fs = parse_functions("function %f() {\n    ss0 = explicit_slot 12\n    ss1 = explicit_slot 4, align = 16\n"
                              "block0:\n    return\n}\n", errs);
    ASSERT_TRUE(errs.empty());
    ASSERT_EQ(fs.size(), 1u);
    std::vector<uint32_t> slots = {99};  // replaced, not appended to
    const FrameLayout none = frame_layout(*fs[0], 24, 1, 0, slots);
    EXPECT_EQ(none.spill_base, 24u);
    EXPECT_EQ(slots, (std::vector<uint32_t>{32, 48}));
    EXPECT_EQ(none.size, 64u);
    // One pushed register (x86-64 rbx): 56 + 8 = 64.
    EXPECT_EQ(frame_layout(*fs[0], 24, 1, 8, slots).size, 56u);
    // A saved pair (AArch64 stp): already aligned.
    EXPECT_EQ(frame_layout(*fs[0], 24, 1, 16, slots).size, 64u);
    // Two more spill slots: the stack slots at 48 and 64, 68 bytes used;
    // 80, and 72 below 8 saved bytes.
    EXPECT_EQ(frame_layout(*fs[0], 24, 3, 0, slots).size, 80u);
    EXPECT_EQ(slots, (std::vector<uint32_t>{48, 64}));
    EXPECT_EQ(frame_layout(*fs[0], 24, 3, 8, slots).size, 72u);
}

}  // namespace
}  // namespace heron
