/*
 * epilogue-avx512.h — epilogue.h's activations on 16 floats at a time,
 * the one vector copy, for the AVX-512 kernels that apply a fused
 * epilogue in registers before their store (depthwise-avx512.c,
 * sgemm-packed.c, conv-few-channels.c).  The same comparisons and
 * operations as the scalar ones, so the results are the same bit for bit:
 * NaN passes ReLU and clip, leaky multiplies as the scalar does, and hard
 * sigmoid divides by 6 (vdivps rounds as divss does).  Which activations
 * they take is known on any machine; the vector code only where x86-64
 * intrinsics build.
 */
#ifndef HY_CPU_EPILOGUE_AVX512_H
#define HY_CPU_EPILOGUE_AVX512_H

#include <stdbool.h>

#include "kernels/params/nn.h"

/* Whether hy_avx512_act computes `act`: all but sigmoid and tanh, which
 * have no vector form here (a kernel leaves them, with the rest of the
 * epilogue, to epilogue.h's pass after it).  The first-layer kernel
 * (conv-few-channels.c) takes every one of these in registers. */
static inline bool
hy_avx512_act_computes (hy_fused_act act)
{
  return act != HY_FUSED_ACT_SIGMOID && act != HY_FUSED_ACT_TANH;
}

/* The ones the depthwise and packed kernels take in registers: those of
 * the networks they were measured on (MobileNets' ReLU6, hard sigmoid
 * and hard swish, ResNets' ReLU); leaky, which hy_avx512_act computes
 * too, stays with their pass after the kernel (not measured there). */
static inline bool
hy_avx512_act_fits (hy_fused_act act)
{
  return act == HY_FUSED_ACT_NONE || act == HY_FUSED_ACT_RELU
      || act == HY_FUSED_ACT_CLIP || act == HY_FUSED_ACT_HARD_SIGMOID
      || act == HY_FUSED_ACT_HARD_SWISH;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define HY_AVX512_INLINE \
  static inline __attribute__ ((always_inline, target ("avx512f")))

/* clip (v + 3, 0, 6) / 6, hy_epilogue_hard_sigmoid's steps. */
HY_AVX512_INLINE __m512
hy_avx512_hard_sigmoid (__m512 v)
{
  const __m512 six = _mm512_set1_ps (6.0f);
  const __m512 t = _mm512_add_ps (v, _mm512_set1_ps (3.0f));
  const __m512 c = _mm512_mask_mov_ps (_mm512_max_ps (_mm512_setzero_ps (),
          t), _mm512_cmp_ps_mask (t, six, _CMP_GT_OQ), six);
  return _mm512_div_ps (c, six);
}

/* hy_epilogue_act on 16 values, for an act that hy_avx512_act_computes;
 * alpha and beta broadcast. */
HY_AVX512_INLINE __m512
hy_avx512_act (hy_fused_act act, __m512 v, __m512 alpha, __m512 beta)
{
  const __m512 zero = _mm512_setzero_ps ();
  switch (act) {
    case HY_FUSED_ACT_RELU:
      return _mm512_mask_mov_ps (v, _mm512_cmp_ps_mask (v, zero,
              _CMP_LE_OQ), zero);
    case HY_FUSED_ACT_CLIP:
      /* v > beta ? beta : v < alpha ? alpha : v.  maxps (alpha, v) is
       * alpha > v ? alpha : v, v itself when v is NaN. */
      return _mm512_mask_mov_ps (_mm512_max_ps (alpha, v),
          _mm512_cmp_ps_mask (v, beta, _CMP_GT_OQ), beta);
    case HY_FUSED_ACT_LEAKY:
      /* v > 0 ? v : v · alpha */
      return _mm512_mask_mov_ps (_mm512_mul_ps (v, alpha),
          _mm512_cmp_ps_mask (v, zero, _CMP_GT_OQ), v);
    case HY_FUSED_ACT_HARD_SIGMOID:
      return hy_avx512_hard_sigmoid (v);
    case HY_FUSED_ACT_HARD_SWISH:
      return _mm512_mul_ps (v, hy_avx512_hard_sigmoid (v));
    default:
      return v;
  }
}

#endif /* x86-64 */

#endif /* HY_CPU_EPILOGUE_AVX512_H */
