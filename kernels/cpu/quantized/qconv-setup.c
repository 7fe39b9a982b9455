/*
 * qconv-setup.c — which kernel runs a quantized convolution call (see
 * qconv-setup.h).
 */
#include "kernels/cpu/quantized/qconv-setup.h"
#include "kernels/cpu/quantized/qconv.h"
#ifdef HY_HAVE_DNNL
#include "kernels/cpu/quantized/conv-dnnl-int8.h"
#endif

void hy_cpu_quantized_conv_prepared (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* Whether every input before the ranges but the residual (the weight,
 * bias and BatchNorm) holds its value for the call's life. */
static gboolean
weights_constant (const hy_call *call)
{
  const hy_quantized_conv_params *p = call->params;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  for (int k = 1; k < at.min_data; k++)
    if (k != at.sum && !hy_call_input_const (call, k))
      return FALSE;
  return TRUE;
}

gboolean
hy_qconv_prepare_call (hy_cpu_ctx *ctx, hy_call *call, GError **error)
{
  /* values held as bytes (conv-dnnl-int8.h) are a promise to the
   * neighbours that only the oneDNN kernel can keep */
  const bool held = call->private_inputs || call->private_outputs;
  if (!weights_constant (call)) {
    if (held)
      g_set_error (error, HY_ERROR, HY_ERROR_BACKEND, "an int8 convolution "
          "whose values the plan holds as bytes has non-constant weights");
    return !held;
  }
#ifdef HY_HAVE_DNNL
  if (!hy_qconv_dnnl_prepare_call (ctx, call, error))
    return FALSE;
  if (hy_qconv_dnnl_kernel_name (call))
    return TRUE;
#endif
  if (held) {
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND, "an int8 convolution "
        "whose values the plan holds as bytes went to the reference");
    return FALSE;
  }
  call->params = hy_qconv_prepared_new (call->params, call->in);
  call->fn = (hy_kernel_ptr) hy_cpu_quantized_conv_prepared;
  return TRUE;
}

void
hy_qconv_release_call (hy_call *call)
{
  if (call->fn == (hy_kernel_ptr) hy_cpu_quantized_conv_prepared) {
    hy_qconv_prepared_free ((hy_qconv_prepared *) call->params);
    return;
  }
#ifdef HY_HAVE_DNNL
  hy_qconv_dnnl_release_call (call);
#endif
}

const char *
hy_qconv_kernel_name (const hy_call *call)
{
  if (call->fn == (hy_kernel_ptr) hy_cpu_quantized_conv_prepared)
    return "reference-prepared";
#ifdef HY_HAVE_DNNL
  if (hy_qconv_dnnl_kernel_name (call))
    return hy_qconv_dnnl_kernel_name (call);
#endif
  return "reference";
}
