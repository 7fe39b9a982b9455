/*
 * plan-quantized-input.c — a model input that only a calibrated
 * _contrib_quantize_v2 reads, quantized by the caller (hybrid.h,
 * hy_input_quantization).
 *
 * Why: an int8 export's graph starts data → quantize_v2 → the first
 * convolution.  A caller that makes the input's floats itself (the
 * element, converting a video frame) can round them to the quantize's
 * bytes in the same pass, straight into the arena where the quantize
 * node's output lives; the forward then skips that call.  No float copy
 * of the input is written or read.  The plan (plan.c) keeps that node's
 * outputs live from step 0, so that nothing before it shares their
 * memory while they wait for the forward, and marks the call
 * (mark_quantized_input); this file answers the caller and runs the
 * forward around it.
 */
#include <math.h>

#include "core/plan-impl.h"
#include "kernels/params/quantized.h"

/* The calibrated range's extent, as the kernel takes it
 * (kernels/cpu/quantized/quantize.c): uint8 covers [0, max]. */
static float
range_of (const hy_quantize_params *p)
{
  return p->out_uint8 ? fmaxf (0.0f, p->max_calib)
      : fmaxf (fabsf (p->min_calib), fabsf (p->max_calib));
}

/* The skippable call, when the plan runs as a whole and holds its output
 * as bytes (the layout hy_input_quantization promises). */
static const hy_call *
quantize_call (const hy_plan *plan)
{
  if (!plan->has_quantized_input || plan->per_image || plan->prefix_calls)
    return NULL;
  const hy_call *call = &plan->calls[plan->quantized_input_call];
  return call->private_outputs & 1u ? call : NULL;
}

gboolean
hy_plan_input_quantization (const hy_plan *plan, int input,
    hy_input_quantization *out)
{
  const hy_call *call = quantize_call (plan);
  if (!call || input != plan->quantized_input)
    return FALSE;
  const hy_quantize_params *p = &plan->quantized_input_params;
  out->is_uint8 = p->out_uint8;
  out->scale = (p->out_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE)
      / range_of (p);
  out->data = call->out[0]->data;
  return TRUE;
}

gboolean
hy_plan_run_quantized (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, GError **error)
{
  const hy_call *call = quantize_call (plan);
  if (!call) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "no input of this "
        "plan is quantized by the caller: its only reader is not a "
        "calibrated _contrib_quantize_v2 held as bytes");
    return FALSE;
  }
  /* The range the call would write: its calibrated one, as the kernel
   * states it (kernels/cpu/quantized/quantize.c). */
  const hy_quantize_params *p = &plan->quantized_input_params;
  call->out[1]->data[0] = p->out_uint8 ? 0.0f : -range_of (p);
  call->out[2]->data[0] = range_of (p);
  const int c = plan->quantized_input_call;
  return (c == 0 || hy_plan_run_calls (plan, inputs, n_inputs, 0, c, error))
      && hy_plan_run_calls (plan, inputs, n_inputs, c + 1, plan->n_calls,
          error);
}
