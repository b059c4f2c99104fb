// The direct x86-64 encoder against asmjit's x86::Assembler: see
// encoder_check.h. Only the unit tests link this file (heron_x64_testing).
#include "codegen/isa/x64/testing/encoder_check.h"

#include <asmjit/x86.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "codegen/isa/x64/encoder.h"

namespace heron::x64::testing {
namespace {

namespace x86 = asmjit::x86;

class Compare {
public:
    Compare() { reset(); }

    /// Emits one instruction with asmjit (`ref`) and with the encoder
    /// (`mine`); on a difference records `what()` and both byte strings.
    void check(const std::function<void(x86::Assembler&)>& ref, const std::function<uint8_t*(uint8_t*)>& mine,
               const std::function<std::string()>& what) {
        if (a_->offset() > (1u << 20)) reset();
        const size_t before = a_->offset();
        ref(*a_);
        const size_t n_ref = a_->offset() - before;
        uint8_t buf[32];
        const size_t n_mine = static_cast<size_t>(mine(buf) - buf);
        ++result.count;
        const uint8_t* r = a_->bufferData() + before;
        if (errors_.failed || n_ref != n_mine || std::memcmp(r, buf, n_ref) != 0) {
            if (++result.failures <= 10) {
                std::string s = what() + ": asmjit";
                char hex[4];
                for (size_t i = 0; i < n_ref; ++i) std::snprintf(hex, sizeof hex, " %02x", r[i]), s += hex;
                s += errors_.failed ? " (asmjit error)" : "";
                s += ", encoder";
                for (size_t i = 0; i < n_mine; ++i) std::snprintf(hex, sizeof hex, " %02x", buf[i]), s += hex;
                result.first_failures.push_back(std::move(s));
            }
            errors_.failed = false;
        }
    }

    EncoderCheck result;

private:
    struct Errors : asmjit::ErrorHandler {
        bool failed = false;
        void handleError(asmjit::Error, const char*, asmjit::BaseEmitter*) override { failed = true; }
    };
    void reset() {
        a_.reset();
        code_.reset();
        code_.init(asmjit::Environment(asmjit::Arch::kX64));
        code_.setErrorHandler(&errors_);
        a_ = std::make_unique<x86::Assembler>(&code_);
    }
    Errors errors_;
    asmjit::CodeHolder code_;
    std::unique_ptr<x86::Assembler> a_;
};

x86::Gp gp(uint8_t r, unsigned size) {
    switch (size) {
    case 1: return x86::gpb(r);
    case 2: return x86::gpw(r);
    case 4: return x86::gpd(r);
    default: return x86::gpq(r);
    }
}

std::string reg_name(uint8_t r, unsigned size) { return "r" + std::to_string(r) + "/" + std::to_string(size); }

const unsigned kSizes[] = {1, 2, 4, 8};
const int32_t kDisps[] = {0, 1, -1, 8, 127, -128, 128, -129, 4096, INT32_MAX, INT32_MIN};

/// Every memory operand shape: all bases without index with every
/// displacement edge, and all base/index/scale combinations with a few.
std::vector<enc::Mem> all_mems() {
    std::vector<enc::Mem> v;
    for (uint8_t b = 0; b < 16; ++b) {
        for (int32_t d : kDisps) v.push_back({b, d});
        for (uint8_t i = 0; i < 16; ++i) {
            if (i == 4) continue;  // rsp is no index
            for (uint8_t s = 0; s < 4; ++s) {
                for (int32_t d : {0, -128, 128}) v.push_back({b, d, i, s});
            }
        }
    }
    return v;
}

x86::Mem ref_mem(const enc::Mem& m, unsigned size) {
    x86::Mem r = m.index == enc::Mem::kNoIndex ? x86::ptr(x86::gpq(m.base), m.disp)
                                               : x86::ptr(x86::gpq(m.base), x86::gpq(m.index), m.scale, m.disp);
    r.setSize(size);
    return r;
}

std::string mem_name(const enc::Mem& m) {
    return "[r" + std::to_string(m.base) + (m.index == enc::Mem::kNoIndex ? "" : " + r" + std::to_string(m.index) + "<<" + std::to_string(m.scale)) +
           " + " + std::to_string(m.disp) + "]";
}

asmjit::InstId alu_id(enc::Alu a) {
    switch (a) {
    case enc::Alu::Add: return x86::Inst::kIdAdd;
    case enc::Alu::Or: return x86::Inst::kIdOr;
    case enc::Alu::Adc: return x86::Inst::kIdAdc;
    case enc::Alu::Sbb: return x86::Inst::kIdSbb;
    case enc::Alu::And: return x86::Inst::kIdAnd;
    case enc::Alu::Sub: return x86::Inst::kIdSub;
    case enc::Alu::Xor: return x86::Inst::kIdXor;
    case enc::Alu::Cmp: return x86::Inst::kIdCmp;
    }
    return 0;
}
const enc::Alu kAlus[] = {enc::Alu::Add, enc::Alu::Or,  enc::Alu::Adc, enc::Alu::Sbb,
                          enc::Alu::And, enc::Alu::Sub, enc::Alu::Xor, enc::Alu::Cmp};

}  // namespace

EncoderCheck check_register_register_forms() {
    Compare c;
    for (unsigned size : kSizes) {
        for (uint8_t d = 0; d < 16; ++d) {
            for (uint8_t s = 0; s < 16; ++s) {
                auto what = [&](const char* op) {
                    return [=] { return std::string(op) + " " + reg_name(d, size) + ", " + reg_name(s, size); };
                };
                for (enc::Alu a : kAlus) {
                    c.check([&](x86::Assembler& as) { as.emit(alu_id(a), gp(d, size), gp(s, size)); },
                            [&](uint8_t* p) { return enc::alu_rr(p, a, size, d, s); }, what("alu"));
                }
                c.check([&](x86::Assembler& as) { as.mov(gp(d, size), gp(s, size)); },
                        [&](uint8_t* p) { return enc::mov_rr(p, size, d, s); }, what("mov"));
                c.check([&](x86::Assembler& as) { as.test(gp(d, size), gp(s, size)); },
                        [&](uint8_t* p) { return enc::test_rr(p, size, d, s); }, what("test"));
                if (size == 1) {
                    c.check([&](x86::Assembler& as) { as.movzx(x86::gpd(d), x86::gpb(s)); },
                            [&](uint8_t* p) { return enc::movzx_rr(p, 1, d, s); }, what("movzx8"));
                    continue;
                }
                if (size == 2) {
                    c.check([&](x86::Assembler& as) { as.movzx(x86::gpd(d), x86::gpw(s)); },
                            [&](uint8_t* p) { return enc::movzx_rr(p, 2, d, s); }, what("movzx16"));
                }
                c.check([&](x86::Assembler& as) { as.imul(gp(d, size), gp(s, size)); },
                        [&](uint8_t* p) { return enc::imul_rr(p, size, d, s); }, what("imul"));
                for (uint8_t cc = 0; cc < 16; ++cc) {
                    c.check([&](x86::Assembler& as) { as.cmov(static_cast<x86::CondCode>(cc), gp(d, size), gp(s, size)); },
                            [&](uint8_t* p) { return enc::cmov(p, cc, size, d, s); }, what("cmov"));
                }
            }
        }
    }
    return c.result;
}

EncoderCheck check_single_register_and_immediate_forms() {
    Compare c;
    const int32_t imms[] = {0, 1, -1, 2, 127, -128, 128, -129, 255, 256, 32767, -32768, 32768, -32769, INT32_MAX, INT32_MIN};
    const int64_t imm64s[] = {0,         1,          -1,         127,       -128,       INT32_MAX, INT32_MIN,
                              int64_t{INT32_MAX} + 1, int64_t{INT32_MIN} - 1, INT64_MAX, INT64_MIN, 0x123456789abcdefll};
    const struct {
        enc::Shift s;
        asmjit::InstId id;
    } shifts[] = {{enc::Shift::Rol, x86::Inst::kIdRol}, {enc::Shift::Ror, x86::Inst::kIdRor},
                  {enc::Shift::Shl, x86::Inst::kIdShl}, {enc::Shift::Shr, x86::Inst::kIdShr},
                  {enc::Shift::Sar, x86::Inst::kIdSar}};
    for (uint8_t r = 0; r < 16; ++r) {
        auto name = [&](const char* op, unsigned size, int64_t k) {
            return [=] { return std::string(op) + " " + reg_name(r, size) + ", " + std::to_string(k); };
        };
        for (unsigned size : kSizes) {
            const int64_t lo = size == 1 ? INT8_MIN : size == 2 ? INT16_MIN : INT32_MIN;
            const int64_t hi = size == 1 ? INT8_MAX : size == 2 ? INT16_MAX : INT32_MAX;
            for (int32_t k : imms) {
                if (k < lo || k > hi) continue;
                for (enc::Alu a : kAlus) {
                    c.check([&](x86::Assembler& as) { as.emit(alu_id(a), gp(r, size), asmjit::imm(k)); },
                            [&](uint8_t* p) { return enc::alu_ri(p, a, size, r, k); }, name("alu", size, k));
                }
            }
            for (uint8_t k = 0; k < 64; ++k) {
                for (const auto& sh : shifts) {
                    c.check([&](x86::Assembler& as) { as.emit(sh.id, gp(r, size), asmjit::imm(k)); },
                            [&](uint8_t* p) { return enc::shift_ri(p, sh.s, size, r, k); }, name("shift", size, k));
                }
            }
            for (const auto& sh : shifts) {
                c.check([&](x86::Assembler& as) { as.emit(sh.id, gp(r, size), x86::cl); },
                        [&](uint8_t* p) { return enc::shift_cl(p, sh.s, size, r); }, name("shift cl", size, 0));
            }
            c.check([&](x86::Assembler& as) { as.neg(gp(r, size)); },
                    [&](uint8_t* p) { return enc::unary(p, false, size, r); }, name("neg", size, 0));
            c.check([&](x86::Assembler& as) { as.not_(gp(r, size)); },
                    [&](uint8_t* p) { return enc::unary(p, true, size, r); }, name("not", size, 0));
        }
        for (int64_t k : imm64s) {
            c.check([&](x86::Assembler& as) { as.mov(x86::gpq(r), k); },
                    [&](uint8_t* p) { return enc::mov_r64_imm(p, r, k); }, name("mov64", 8, k));
            c.check([&](x86::Assembler& as) { as.mov(x86::gpd(r), static_cast<uint32_t>(k)); },
                    [&](uint8_t* p) { return enc::mov_r32_imm(p, r, static_cast<uint32_t>(k)); }, name("mov32", 4, k));
        }
        c.check([&](x86::Assembler& as) { as.push(x86::gpq(r)); }, [&](uint8_t* p) { return enc::push(p, r); },
                name("push", 8, 0));
        c.check([&](x86::Assembler& as) { as.pop(x86::gpq(r)); }, [&](uint8_t* p) { return enc::pop(p, r); },
                name("pop", 8, 0));
        for (uint8_t cc = 0; cc < 16; ++cc) {
            c.check([&](x86::Assembler& as) { as.set(static_cast<x86::CondCode>(cc), x86::gpb(r)); },
                    [&](uint8_t* p) { return enc::setcc(p, cc, r); }, name("setcc", 1, cc));
        }
    }
    c.check([](x86::Assembler& as) { as.ret(); }, [](uint8_t* p) { return enc::ret(p); }, [] { return std::string("ret"); });
    return c.result;
}

EncoderCheck check_memory_forms() {
    Compare c;
    const std::vector<enc::Mem> mems = all_mems();
    for (const enc::Mem& m : mems) {
        for (uint8_t r = 0; r < 16; ++r) {
            auto name = [&](const char* op, unsigned size) {
                return [=] { return std::string(op) + " " + reg_name(r, size) + ", " + mem_name(m); };
            };
            c.check([&](x86::Assembler& as) { as.lea(x86::gpq(r), ref_mem(m, 0)); },
                    [&](uint8_t* p) { return enc::lea(p, r, m); }, name("lea", 8));
            for (unsigned size : kSizes) {
                c.check([&](x86::Assembler& as) { as.mov(gp(r, size), ref_mem(m, size)); },
                        [&](uint8_t* p) { return enc::load(p, size, r, m); }, name("load", size));
                c.check([&](x86::Assembler& as) { as.mov(ref_mem(m, size), gp(r, size)); },
                        [&](uint8_t* p) { return enc::store(p, size, m, r); }, name("store", size));
                if (size == 1) continue;
                for (enc::Alu a : kAlus) {
                    c.check([&](x86::Assembler& as) { as.emit(alu_id(a), gp(r, size), ref_mem(m, size)); },
                            [&](uint8_t* p) { return enc::alu_rm(p, a, size, r, m); }, name("alu_rm", size));
                }
                c.check([&](x86::Assembler& as) { as.imul(gp(r, size), ref_mem(m, size)); },
                        [&](uint8_t* p) { return enc::imul_rm(p, size, r, m); }, name("imul_rm", size));
            }
            for (unsigned from : {1u, 2u}) {
                c.check([&](x86::Assembler& as) { as.movzx(x86::gpd(r), ref_mem(m, from)); },
                        [&](uint8_t* p) { return enc::movzx_load(p, from, r, m); }, name("movzx", from));
            }
            // Scalar SSE loads and stores (xmm r).
            c.check([&](x86::Assembler& as) { as.movsd(x86::xmm(r), ref_mem(m, 8)); },
                    [&](uint8_t* p) { return enc::sse_rm(p, 0xF2, 0x10, r, m); }, name("movsd load", 8));
            c.check([&](x86::Assembler& as) { as.movsd(ref_mem(m, 8), x86::xmm(r)); },
                    [&](uint8_t* p) { return enc::sse_rm(p, 0xF2, 0x11, r, m); }, name("movsd store", 8));
            c.check([&](x86::Assembler& as) { as.movss(x86::xmm(r), ref_mem(m, 4)); },
                    [&](uint8_t* p) { return enc::sse_rm(p, 0xF3, 0x10, r, m); }, name("movss load", 4));
            c.check([&](x86::Assembler& as) { as.movss(ref_mem(m, 4), x86::xmm(r)); },
                    [&](uint8_t* p) { return enc::sse_rm(p, 0xF3, 0x11, r, m); }, name("movss store", 4));
        }
        for (int32_t k : {0, -1, 127, 128, INT32_MIN, INT32_MAX}) {
            c.check([&](x86::Assembler& as) { as.mov(ref_mem(m, 8), k); },
                    [&](uint8_t* p) { return enc::mov_m64_imm(p, m, k); },
                    [&] { return "mov qword " + mem_name(m) + ", " + std::to_string(k); });
        }
    }
    c.result.memory_shapes = mems.size();
    return c.result;
}

EncoderCheck check_scalar_sse_register_forms() {
    Compare c;
    const struct {
        uint8_t pfx, op;
        asmjit::InstId id;
    } forms[] = {{0, 0x28, x86::Inst::kIdMovaps},    {0xF2, 0x58, x86::Inst::kIdAddsd}, {0xF2, 0x5C, x86::Inst::kIdSubsd},
                 {0xF2, 0x59, x86::Inst::kIdMulsd},  {0xF2, 0x5E, x86::Inst::kIdDivsd}, {0xF3, 0x58, x86::Inst::kIdAddss},
                 {0xF3, 0x5C, x86::Inst::kIdSubss},  {0xF3, 0x59, x86::Inst::kIdMulss}, {0xF3, 0x5E, x86::Inst::kIdDivss},
                 {0, 0x54, x86::Inst::kIdAndps},     {0, 0x56, x86::Inst::kIdOrps},     {0, 0x57, x86::Inst::kIdXorps},
                 {0, 0x55, x86::Inst::kIdAndnps},    {0x66, 0x2E, x86::Inst::kIdUcomisd}, {0, 0x2E, x86::Inst::kIdUcomiss}};
    for (const auto& f : forms) {
        for (uint8_t d = 0; d < 16; ++d) {
            for (uint8_t s = 0; s < 16; ++s) {
                c.check([&](x86::Assembler& as) { as.emit(f.id, x86::xmm(d), x86::xmm(s)); },
                        [&](uint8_t* p) { return enc::sse_rr(p, f.pfx, f.op, d, s); },
                        [&] { return "sse " + std::to_string(f.op) + " xmm" + std::to_string(d) + ", xmm" + std::to_string(s); });
            }
        }
    }
    return c.result;
}

}  // namespace heron::x64::testing
