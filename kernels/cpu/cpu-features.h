/*
 * cpu-features.h — what this CPU offers the kernels, asked of it once per
 * process: every kernel that picks its code by the CPU asks here.
 */
#ifndef HY_CPU_FEATURES_H
#define HY_CPU_FEATURES_H

#include <stdbool.h>
#include <stdint.h>

typedef struct hy_cpu_features {
  /* AVX-512 Foundation: the packed GEMM and every kernel built on it,
   * the depthwise, Winograd and few-channels kernels, the masked im2col
   * and slice loops.  False on every other architecture. */
  bool avx512f;
  /* Byte/word, vector-length and doubleword/quadword extensions: with
   * avx512f, what OpenBLAS's SkylakeX kernels need (blas-tuning.c). */
  bool avx512bw, avx512vl, avx512dq;
  /* AVX512_VBMI: byte permutes across a whole register (vpermi2b), a
   * 128-entry byte table per instruction (quantized/qlut-bytes.c). */
  bool avx512vbmi;
  /* AVX512_BF16 (bf16 dot products with fp32 sums: what precision bf16
   * needs) and AMX-BF16 (tile products, which oneDNN uses where present
   * and the OS allows). */
  bool avx512_bf16, amx_bf16;
  /* The last-level (L3) cache's size in bytes, as the C library reads
   * it; 0 where it does not say. */
  int64_t l3_bytes;
} hy_cpu_features;

/* This CPU's, detected on the first call (thread-safe), then kept. */
const hy_cpu_features *hy_cpu_features_get (void);

/* Hot loops that gcc vectorises get AVX-512 (x86-64-v4) and AVX2 + FMA
 * (x86-64-v3) builds beside the baseline one, picked once at load time:
 * the library is built for generic x86-64 but runs on wider machines. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HY_CPU_VECTOR_CLONES \
  __attribute__ ((target_clones ("arch=x86-64-v4", "arch=x86-64-v3", \
          "default")))
#else
#define HY_CPU_VECTOR_CLONES
#endif

#endif /* HY_CPU_FEATURES_H */
