/*
 * single-rounded.h — float add, subtract and multiply rounded once each,
 * for the arithmetic that the CPU and CUDA kernels share
 * (kernels/detection-common.h) or that a CUDA kernel must keep bit for bit
 * with the CPU's.
 *
 * nvcc contracts a * b + c into an FMA by default, which rounds once
 * where the CPU rounds twice and can move a box across a threshold; the
 * _rn intrinsics are never contracted.  The host has nothing to contract
 * to (no FMA in the build's target), so there they are plain operators.
 *
 * C11 and CUDA alike: static inline functions in C, host-and-device ones
 * under nvcc.
 */
#ifndef HY_SINGLE_ROUNDED_H
#define HY_SINGLE_ROUNDED_H

#ifdef __CUDACC__
#define HY_ROUNDED_HD __host__ __device__ __forceinline__
#else
#define HY_ROUNDED_HD static inline
#endif

HY_ROUNDED_HD float
hy_add_rn (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fadd_rn (a, b);
#else
  return a + b;
#endif
}

HY_ROUNDED_HD float
hy_sub_rn (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fsub_rn (a, b);
#else
  return a - b;
#endif
}

HY_ROUNDED_HD float
hy_mul_rn (float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fmul_rn (a, b);
#else
  return a * b;
#endif
}

#endif /* HY_SINGLE_ROUNDED_H */
