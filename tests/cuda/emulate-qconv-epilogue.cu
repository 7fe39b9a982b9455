/*
 * emulate-qconv-epilogue.cu — the CUDA quantized convolution's epilogue
 * (kernels/cuda/qconv-epilogue.cuh) run on the host and compared bit for
 * bit with the CPU's (kernels/cpu/quantized/qconv.h, hy_qconv_finish, as
 * qconv-finish.c applies it to an int32 sum): every combination of ReLU,
 * residual, post-sum ReLU and int8/uint8 output and residual, on sums
 * and biases at int32's ends, scales of 0, 2^31 (a dead layer's) and
 * tiny ones, ties at .5, saturation both ways, residual bytes over their
 * whole range.  No GPU needed (launch.cuh).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "kernels/cuda/qconv-epilogue.cuh"

extern "C" {
#include "kernels/cpu/quantized/qconv.h"
}

static const int32_t sums[] = {
  0, 1, -1, 127, -128, 255, 256, 1000, -1000, 65535, -65536, 1 << 30,
  -(1 << 30), INT32_MAX, INT32_MIN, INT32_MAX - 64, INT32_MIN + 64,
};
static const float scales[] = {
  1.0f, 0.5f, 0.25f, 1.0f / 3.0f, 0.0f, 2147483648.0f, 1e-9f, 0.0123f,
  3.5f, 1e-30f,
};
static const float sum_scales[] = { 1.0f, 0.5f, 0.37f, 2.0f, 0.0f, 1e-3f };

/* Never launched: no kernel uses the epilogue yet, so this makes nvcc
 * compile it for the device too (the single-rounded intrinsics' path). */
__global__ void
emulate_qconv_epilogue_device_build (hy_cuda_qconv_epilogue e,
    const int32_t *acc, const float *sum, float *y, int64_t n)
{
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    y[i] = hy_cuda_qconv_finish_at (&e, 0, acc[i], sum[i]);
}

static int passed, failed;

static bool
same (float a, float b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  return memcmp (&a, &b, sizeof a) == 0;
}

/* One flag combination over every sum, bias, scale, residual scale and
 * residual byte. */
static void
check_flags (const hy_quantized_conv_params *p)
{
  int32_t bias_q[G_N_ELEMENTS (sums)];
  memcpy (bias_q, sums, sizeof bias_q);
  hy_cuda_qconv_epilogue e;
  char why[256] = "";
  int64_t n = 0;
  for (size_t ss = 0; ss < G_N_ELEMENTS (sum_scales) && !*why; ss++) {
    for (size_t s = 0; s < G_N_ELEMENTS (scales) && !*why; s++) {
      float scale_per_oc[G_N_ELEMENTS (sums)];
      for (size_t oc = 0; oc < G_N_ELEMENTS (sums); oc++)
        scale_per_oc[oc] = scales[(s + oc) % G_N_ELEMENTS (scales)];
      e = hy_cuda_qconv_epilogue_plan (p, bias_q, scale_per_oc,
          sum_scales[ss]);
      for (size_t oc = 0; oc < G_N_ELEMENTS (sums) && !*why; oc++)
        for (size_t a = 0; a < G_N_ELEMENTS (sums) && !*why; a++)
          for (int b = p->sum_uint8 ? 0 : -128;
              b <= (p->sum_uint8 ? 255 : 127) && !*why; b += 17) {
            const float sum = (float) b;
            const float want = hy_qconv_finish (((float) sums[a]
                    + (float) bias_q[oc]) * scale_per_oc[oc], sum,
                sum_scales[ss], p);
            const float got = hy_cuda_qconv_finish_at (&e, (int64_t) oc,
                sums[a], sum);
            n++;
            if (!same (want, got))
              snprintf (why, sizeof why, "sum %d bias %d scale %g residual "
                  "%d × %g: got %.9g, want %.9g", sums[a], bias_q[oc],
                  scale_per_oc[oc], b, sum_scales[ss], got, want);
          }
    }
  }
  printf ("%s act=%d sum=%d postsum_act=%d out_%s sum_%s (%" G_GINT64_FORMAT
      " outputs)%s%s\n", *why ? "FAIL" : "ok", p->with_act, p->with_sum,
      p->with_postsum_act, p->out_uint8 ? "uint8" : "int8",
      p->sum_uint8 ? "uint8" : "int8", (gint64) n, *why ? ": " : "", why);
  if (*why)
    failed++;
  else
    passed++;
}

int
main (void)
{
  for (int bits = 0; bits < 32; bits++) {
    hy_quantized_conv_params p;
    memset (&p, 0, sizeof p);
    p.op = HY_OP_QUANTIZED_CONV;
    p.with_act = bits & 1;
    p.with_sum = bits & 2;
    p.with_postsum_act = bits & 4;
    p.out_uint8 = bits & 8;
    p.sum_uint8 = bits & 16;
    if (!p.with_sum && p.sum_uint8)
      continue;                 /* the residual's dtype means nothing */
    check_flags (&p);
  }
  printf ("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
