// C twins of the kernels in bench/naive/kernels.hn (naive_c.cpp).
#pragma once

#include <cstdint>

namespace heron::bench {

int64_t c_collatz(int64_t n);
int64_t c_gcd_sum(int64_t n);
int64_t c_primes(int64_t n);
int64_t c_mandel(int64_t n);
int64_t c_mix(int64_t n);
int64_t c_fib(int64_t n);

}  // namespace heron::bench
