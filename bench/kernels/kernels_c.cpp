// C++ twins of bench/kernels/*.clif: the same algorithm, loop shape and
// floating-point operation order as the CLIF text, so results are
// bit-equal and the runtime ratio measures the code generators. Built at
// -O2 -fno-inline (bench/CMakeLists.txt).
#include "kernels_c.h"

#include <cmath>

namespace heron::bench {

int64_t k_fib(int64_t n) { return n < 2 ? n : k_fib(n - 1) + k_fib(n - 2); }

int64_t k_sieve(uint8_t* buf, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) buf[i] = 1;
    int64_t count = 0;
    for (uint64_t i = 2; i < n; ++i) {
        if (!buf[i]) continue;
        ++count;
        for (uint64_t j = i * i; j < n; j += i) buf[j] = 0;
    }
    return count;
}

void k_matmul(const double* a, const double* b, double* c, uint64_t n) {
    const double* arow = a;
    double* crow = c;
    for (uint64_t i = 0; i < n; ++i, arow += n, crow += n) {
        for (uint64_t j = 0; j < n; ++j) {
            const double* pa = arow;
            const double* pb = b + j;
            double sum = 0.0;
            for (uint64_t k = 0; k < n; ++k, ++pa, pb += n) sum = sum + *pa * *pb;
            crow[j] = sum;
        }
    }
}

int64_t k_mandelbrot(int64_t w, int64_t h, int64_t maxiter) {
    int64_t total = 0;
    double wf = static_cast<double>(w), hf = static_cast<double>(h);
    for (int64_t y = 0; y < h; ++y) {
        double ci = static_cast<double>(y) * 2.0 / hf - 1.0;
        for (int64_t x = 0; x < w; ++x) {
            double cr = static_cast<double>(x) * 3.0 / wf - 2.0;
            double zr = 0.0, zi = 0.0;
            int64_t it = 0;
            while (it < maxiter) {
                double zr2 = zr * zr, zi2 = zi * zi;
                if (zr2 + zi2 > 4.0) break;
                double t = zr2 - zi2 + cr;
                zi = zr * 2.0 * zi + ci;
                zr = t;
                ++it;
            }
            total += it;
        }
    }
    return total;
}

uint32_t k_crc32(const uint8_t* buf, uint64_t len, const uint32_t* table) {
    uint32_t crc = 0xffffffffu;
    for (uint64_t i = 0; i < len; ++i) crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

int64_t k_collatz(uint64_t limit) {
    int64_t total = 0;
    for (uint64_t n = 1; n < limit; ++n) {
        uint64_t x = n;
        while (x != 1) {
            x = (x & 1) ? 3 * x + 1 : x >> 1;
            ++total;
        }
    }
    return total;
}

int64_t k_bytecode(const int32_t* code) {
    uint64_t pc = 0, acc = 0, cnt = 0;
    for (;;) {
        uint32_t op = static_cast<uint32_t>(code[2 * pc]);
        int64_t arg = code[2 * pc + 1];
        uint64_t next = pc + 1;
        switch (op) {
        case 1: acc += static_cast<uint64_t>(arg); pc = next; break;
        case 2: acc *= static_cast<uint64_t>(arg); pc = next; break;
        case 3: acc ^= static_cast<uint64_t>(arg); pc = next; break;
        case 4: cnt -= 1; pc = next; break;
        case 5: pc = cnt != 0 ? static_cast<uint64_t>(arg) : next; break;
        case 6: acc ^= acc >> (arg & 63); pc = next; break;
        case 7: cnt = static_cast<uint64_t>(arg); pc = next; break;
        default: return static_cast<int64_t>(acc);
        }
    }
}

void k_nbody(double* bodies, uint64_t n, uint64_t steps) {
    const double dt = 0.01;
    double* end = bodies + 7 * n;
    for (uint64_t s = 0; s < steps; ++s) {
        for (double* bi = bodies; bi < end; bi += 7) {
            for (double* bj = bi + 7; bj < end; bj += 7) {
                double dx = bi[0] - bj[0], dy = bi[1] - bj[1], dz = bi[2] - bj[2];
                double d2 = dx * dx + dy * dy + dz * dz;
                double mag = dt / (d2 * std::sqrt(d2));
                double mjm = bj[6] * mag;
                bi[3] = bi[3] - dx * mjm;
                bi[4] = bi[4] - dy * mjm;
                bi[5] = bi[5] - dz * mjm;
                double mim = bi[6] * mag;
                bj[3] = bj[3] + dx * mim;
                bj[4] = bj[4] + dy * mim;
                bj[5] = bj[5] + dz * mim;
            }
        }
        for (double* p = bodies; p < end; p += 7) {
            p[0] = p[0] + dt * p[3];
            p[1] = p[1] + dt * p[4];
            p[2] = p[2] + dt * p[5];
        }
    }
}

}  // namespace heron::bench
