// The direct x86-64 encoder against asmjit's bytes, form by form
// (codegen/isa/x64/testing/encoder_check.h does the comparing; this file
// sets what must hold).
#include <gtest/gtest.h>

#include "codegen/isa/x64/testing/encoder_check.h"

namespace {

using heron::x64::testing::EncoderCheck;

std::string report(const EncoderCheck& c) {
    std::string s = std::to_string(c.failures) + " of " + std::to_string(c.count) + " differ";
    for (const std::string& f : c.first_failures) s += "\n  " + f;
    return s;
}

TEST(X64EmitEncoderTest, RegisterRegisterFormsMatchAsmjit) {
    const EncoderCheck c = heron::x64::testing::check_register_register_forms();
    EXPECT_EQ(c.failures, 0u) << report(c);
    EXPECT_GT(c.count, 16u * 16 * 4 * 11);
}

TEST(X64EmitEncoderTest, SingleRegisterAndImmediateFormsMatchAsmjit) {
    const EncoderCheck c = heron::x64::testing::check_single_register_and_immediate_forms();
    EXPECT_EQ(c.failures, 0u) << report(c);
    EXPECT_GT(c.count, 16u * 4 * 64 * 5);
}

TEST(X64EmitEncoderTest, MemoryFormsMatchAsmjit) {
    const EncoderCheck c = heron::x64::testing::check_memory_forms();
    EXPECT_EQ(c.failures, 0u) << report(c);
    EXPECT_GT(c.memory_shapes, 16u * 11);
    EXPECT_GT(c.count, c.memory_shapes * 16 * 20);
}

TEST(X64EmitEncoderTest, ScalarSseRegisterFormsMatchAsmjit) {
    const EncoderCheck c = heron::x64::testing::check_scalar_sse_register_forms();
    EXPECT_EQ(c.failures, 0u) << report(c);
    EXPECT_EQ(c.count, 15u * 256);
}

}  // namespace
