// The C twins of bench/naive/kernels.hn, built at -O2 -fno-inline (see
// bench/CMakeLists.txt). Integer arithmetic wraps as the language's does
// (through uint64_t where it could overflow); `>>` is arithmetic on i64.
#include "naive/naive_c.h"

namespace heron::bench {

int64_t c_collatz(int64_t n) {
    int64_t total = 0;
    for (int64_t i = 1; i < n; ++i) {
        int64_t x = i;
        while (x != 1) {
            x = x % 2 == 0 ? x / 2 : static_cast<int64_t>(3 * static_cast<uint64_t>(x) + 1);
            ++total;
        }
    }
    return total;
}

int64_t c_gcd_sum(int64_t n) {
    int64_t s = 0;
    for (int64_t a = 1; a < n; ++a) {
        for (int64_t b = 1; b < n; ++b) {
            int64_t x = a, y = b;
            while (y != 0) {
                int64_t t = x % y;
                x = y;
                y = t;
            }
            s += x;
        }
    }
    return s;
}

int64_t c_primes(int64_t n) {
    int64_t count = 0;
    for (int64_t k = 2; k < n; ++k) {
        int64_t d = 2, prime = 1;
        while (d * d <= k && prime) {
            if (k % d == 0) prime = 0;
            ++d;
        }
        count += prime;
    }
    return count;
}

int64_t c_mandel(int64_t n) {
    int64_t count = 0;
    for (int64_t py = 0; py < n; ++py) {
        for (int64_t px = 0; px < n; ++px) {
            double cx = static_cast<double>(px) * 3.0 / static_cast<double>(n) - 2.0;
            double cy = static_cast<double>(py) * 2.0 / static_cast<double>(n) - 1.0;
            double x = 0.0, y = 0.0;
            int64_t k = 0;
            while (k < 100 && x * x + y * y <= 4.0) {
                double t = x * x - y * y + cx;
                y = 2.0 * x * y + cy;
                x = t;
                ++k;
            }
            count += k;
        }
    }
    return count;
}

int64_t c_mix(int64_t n) {
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = 0; i < n; ++i) {
        h = (h ^ static_cast<uint64_t>(i)) * 1099511628211ull;
        h = h ^ static_cast<uint64_t>(static_cast<int64_t>(h) >> 29);
    }
    return static_cast<int64_t>(h);
}

int64_t c_fib(int64_t n) { return n < 2 ? n : c_fib(n - 1) + c_fib(n - 2); }

}  // namespace heron::bench
