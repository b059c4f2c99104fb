// The C++ twins of the CLIF kernels in bench/kernels/*.clif, compiled by
// the host compiler at -O2 (-fno-inline) in their own translation unit
// (kernels_c.cpp), so that nothing is folded into the benchmark's calls.
#pragma once

#include <cstdint>

namespace heron::bench {

int64_t k_fib(int64_t n);
int64_t k_sieve(uint8_t* buf, uint64_t n);
void k_matmul(const double* a, const double* b, double* c, uint64_t n);
int64_t k_mandelbrot(int64_t w, int64_t h, int64_t maxiter);
uint32_t k_crc32(const uint8_t* buf, uint64_t len, const uint32_t* table);
int64_t k_collatz(uint64_t limit);
int64_t k_bytecode(const int32_t* code);
void k_nbody(double* bodies, uint64_t n, uint64_t steps);

}  // namespace heron::bench
