/*
 * qconv-finish.c — the quantized convolution's epilogue over runs of
 * output channels, 16 a step with AVX-512 (qconv-finish.h).
 */
#include <immintrin.h>

#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/quantized/qconv-finish.h"
#include "kernels/cpu/quantized/qconv.h"

#define AVX512 __attribute__ ((target ("avx512f")))

bool
hy_qconv_epilogue_init (hy_qconv_epilogue *e,
    const hy_quantized_conv_params *p, const int32_t *bias_q,
    const float *scales, float sum_scale)
{
  *e = (hy_qconv_epilogue) {
    .bias_q = bias_q, .scales = scales, .sum_scale = sum_scale,
    .act = p->with_act, .sum = p->with_sum,
    .postsum_act = p->with_postsum_act,
    .sum_uint8 = p->sum_uint8, .out_uint8 = p->out_uint8,
  };
  return hy_cpu_features_get ()->avx512f
      && (!p->with_sum || p->sum_uint8 == p->out_uint8);
}

/* One channel, as hy_qconv_finish and hy_q_store compute it. */
static inline void
finish_one (const hy_qconv_epilogue *e, int64_t oc, int32_t acc,
    const void *sum, void *y, int64_t i)
{
  float v = ((float) acc + (float) e->bias_q[oc]) * e->scales[oc];
  if (e->act)
    v = fmaxf (v, 0.0f);
  if (e->sum)
    v += e->sum_scale * (e->sum_uint8 ? (float) ((const uint8_t *) sum)[i]
        : (float) ((const int8_t *) sum)[i]);
  if (e->postsum_act)
    v = fmaxf (v, 0.0f);
  v = hy_q_store (v, e->out_uint8);
  if (e->out_uint8)
    ((uint8_t *) y)[i] = (uint8_t) v;
  else
    ((int8_t *) y)[i] = (int8_t) v;
}

/* The same float operations in the same order, 16 channels at a time:
 * max against 0 gives 0 for NaN as fmaxf does, round-to-nearest-even is
 * rintf's, and the saturated value's low byte is the stored one. */
AVX512 void
hy_qconv_finish_run (const hy_qconv_epilogue *e, int64_t oc0,
    const int32_t *acc, const void *sum, void *y, int64_t n)
{
  const __m512 zero = _mm512_setzero_ps ();
  const __m512 lo = _mm512_set1_ps (e->out_uint8 ? 0.0f : -128.0f);
  const __m512 hi = _mm512_set1_ps (e->out_uint8 ? 255.0f : 127.0f);
  const __m512 sum_scale = _mm512_set1_ps (e->sum_scale);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 a = _mm512_cvtepi32_ps (_mm512_loadu_si512 (acc + i));
    const __m512 b = _mm512_cvtepi32_ps (_mm512_loadu_si512 (e->bias_q
            + oc0 + i));
    __m512 v = _mm512_mul_ps (_mm512_add_ps (a, b),
        _mm512_loadu_ps (e->scales + oc0 + i));
    if (e->act)
      v = _mm512_max_ps (v, zero);
    if (e->sum) {
      const __m128i s8 = _mm_loadu_si128 ((const __m128i *) ((const char *)
              sum + i));
      const __m512i s = e->sum_uint8 ? _mm512_cvtepu8_epi32 (s8)
          : _mm512_cvtepi8_epi32 (s8);
      v = _mm512_add_ps (v, _mm512_mul_ps (sum_scale,
              _mm512_cvtepi32_ps (s)));
    }
    if (e->postsum_act)
      v = _mm512_max_ps (v, zero);
    v = _mm512_roundscale_ps (v, _MM_FROUND_TO_NEAREST_INT
        | _MM_FROUND_NO_EXC);
    v = _mm512_min_ps (_mm512_max_ps (v, lo), hi);
    _mm_storeu_si128 ((__m128i *) ((char *) y + i),
        _mm512_cvtepi32_epi8 (_mm512_cvtps_epi32 (v)));
  }
  for (; i < n; i++)
    finish_one (e, oc0 + i, acc[i], sum, y, i);
}
