/*
 * qconv-finish.c — the quantized convolution's epilogue, 16 outputs a
 * step with AVX-512 (qconv-finish.h).
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
    .p = p, .bias_q = bias_q, .scales = scales, .sum_scale = sum_scale,
  };
  return hy_cpu_features_get ()->avx512f;
}

/* One output, by the reference's own epilogue. */
static inline float
finish_one (const hy_qconv_epilogue *e, int64_t oc, int32_t acc, float sum)
{
  return hy_qconv_finish (((float) acc + (float) e->bias_q[oc])
      * e->scales[oc], sum, e->sum_scale, e->p);
}

static inline float
byte_value (const void *x, int64_t at, bool u8)
{
  return u8 ? (float) ((const uint8_t *) x)[at]
      : (float) ((const int8_t *) x)[at];
}

/* hy_qconv_finish on 16 outputs: the same float operations in the same
 * order (no fused multiply-add).  max against 0 gives 0 for NaN as fmaxf
 * does, and round-to-nearest-even is rintf's.  The result is saturated
 * into the residual's dtype where there is one, else the output's, as
 * hy_qconv_store does; its low byte is the stored one. */
AVX512 static inline __m512i
finish16 (const hy_quantized_conv_params *p, __m512 acc, __m512 bias,
    __m512 scale, __m512 sum, float sum_scale)
{
  const bool u8 = p->with_sum ? p->sum_uint8 : p->out_uint8;
  const __m512 zero = _mm512_setzero_ps ();
  __m512 v = _mm512_mul_ps (_mm512_add_ps (acc, bias), scale);
  if (p->with_act)
    v = _mm512_max_ps (v, zero);
  if (p->with_sum)
    v = _mm512_add_ps (v, _mm512_mul_ps (_mm512_set1_ps (sum_scale), sum));
  if (p->with_postsum_act)
    v = _mm512_max_ps (v, zero);
  v = _mm512_roundscale_ps (v, _MM_FROUND_TO_NEAREST_INT
      | _MM_FROUND_NO_EXC);
  v = _mm512_min_ps (_mm512_max_ps (v, _mm512_set1_ps (u8 ? 0.0f
              : -128.0f)), _mm512_set1_ps (u8 ? 255.0f : 127.0f));
  return _mm512_cvtps_epi32 (v);
}

AVX512 void
hy_qconv_finish_run (const hy_qconv_epilogue *e, int64_t oc0,
    const int32_t *acc, const void *sum, void *y, int64_t n)
{
  const hy_quantized_conv_params *p = e->p;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 s = _mm512_setzero_ps ();
    if (p->with_sum) {
      const __m128i s8 = _mm_loadu_si128 ((const __m128i *) ((const char *)
              sum + i));
      s = _mm512_cvtepi32_ps (p->sum_uint8 ? _mm512_cvtepu8_epi32 (s8)
          : _mm512_cvtepi8_epi32 (s8));
    }
    const __m512i r = finish16 (p,
        _mm512_cvtepi32_ps (_mm512_loadu_si512 (acc + i)),
        _mm512_cvtepi32_ps (_mm512_loadu_si512 (e->bias_q + oc0 + i)),
        _mm512_loadu_ps (e->scales + oc0 + i), s, e->sum_scale);
    _mm_storeu_si128 ((__m128i *) ((char *) y + i), _mm512_cvtepi32_epi8 (r));
  }
  for (; i < n; i++) {
    const float v = finish_one (e, oc0 + i, acc[i],
        p->with_sum ? byte_value (sum, i, p->sum_uint8) : 0.0f);
    if (p->out_uint8)
      ((uint8_t *) y)[i] = (uint8_t) v;
    else
      ((int8_t *) y)[i] = (int8_t) v;
  }
}

AVX512 void
hy_qconv_finish_plane (const hy_qconv_epilogue *e, int64_t oc,
    const int32_t *acc, int64_t acc_stride, const float *sum_f,
    const void *sum_b, int64_t sum_stride, float *y, int64_t n)
{
  const hy_quantized_conv_params *p = e->p;
  const __m512 bias = _mm512_set1_ps ((float) e->bias_q[oc]);
  const __m512 scale = _mm512_set1_ps (e->scales[oc]);
  const __m512i lanes = _mm512_set_epi32 (15, 14, 13, 12, 11, 10, 9, 8, 7,
      6, 5, 4, 3, 2, 1, 0);
  const __m512i at = _mm512_mullo_epi32 (lanes,
      _mm512_set1_epi32 ((int) acc_stride));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 s = _mm512_setzero_ps ();
    if (p->with_sum && sum_f) {
      s = _mm512_loadu_ps (sum_f + i);
    } else if (p->with_sum) {
      /* strided bytes: a gather of 32-bit words would read past the
       * last one */
      float v[16];
      for (int k = 0; k < 16; k++)
        v[k] = byte_value (sum_b, (i + k) * sum_stride, p->sum_uint8);
      s = _mm512_loadu_ps (v);
    }
    const __m512 a = _mm512_cvtepi32_ps (_mm512_i32gather_epi32 (at,
            acc + i * acc_stride, 4));
    __m512i r = finish16 (p, a, bias, scale, s, e->sum_scale);
    /* the stored byte read as the output's dtype (hy_qconv_store) */
    r = p->out_uint8 ? _mm512_and_si512 (r, _mm512_set1_epi32 (0xff))
        : _mm512_srai_epi32 (_mm512_slli_epi32 (r, 24), 24);
    _mm512_storeu_ps (y + i, _mm512_cvtepi32_ps (r));
  }
  for (; i < n; i++)
    y[i] = finish_one (e, oc, acc[i * acc_stride], !p->with_sum ? 0.0f
        : sum_f ? sum_f[i] : byte_value (sum_b, i * sum_stride,
            p->sum_uint8));
}
