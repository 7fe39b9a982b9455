/*
 * frame-plan.c — hy_frame_plan (hybrid-frame.h): a config's derived
 * numbers (kernels/frame/frame-desc.h), which device stages copy, and the
 * CPU conversion's tables, made with them so that a plan converts on the
 * CPU with no more set-up.  A plan is the host's: it lives with the CPU
 * converter, and kernels/frame/ holds only what both converters read.
 */
#include "kernels/cpu/frame-convert.h"
#include "kernels/frame/frame-desc.h"

struct hy_frame_plan {
  hy_frame_desc desc;
  hy_cpu_frame_converter *cpu;
};

hy_frame_plan *
hy_frame_plan_new (const hy_frame_config *config, GError **error)
{
  hy_frame_plan *plan = g_new0 (hy_frame_plan, 1);
  if (!hy_frame_desc_init (&plan->desc, config, error)) {
    g_free (plan);
    return NULL;
  }
  plan->cpu = hy_cpu_frame_converter_new (&plan->desc);
  return plan;
}

void
hy_frame_plan_free (hy_frame_plan *plan)
{
  if (!plan)
    return;
  hy_cpu_frame_converter_free (plan->cpu);
  g_free (plan);
}

const hy_frame_config *
hy_frame_plan_config (const hy_frame_plan *plan)
{
  return &plan->desc.config;
}

const hy_frame_desc *
hy_frame_plan_desc (const hy_frame_plan *plan)
{
  return &plan->desc;
}

void
hy_frame_plan_convert (const hy_frame_plan *plan,
    const uint8_t *const planes[3], const int strides[3], float *dst)
{
  hy_cpu_frame_convert (plan->cpu, planes, strides, dst);
}

void
hy_frame_plan_convert_quantized (const hy_frame_plan *plan,
    const uint8_t *const planes[3], const int strides[3],
    const hy_input_quantization *q, void *dst)
{
  hy_cpu_frame_convert_quantized (plan->cpu, planes, strides, q, dst);
}

void
hy_frame_plan_to_frame (const hy_frame_plan *plan, float x, float y,
    float *frame_x, float *frame_y)
{
  const hy_frame_desc *d = &plan->desc;
  *frame_x = (x - d->ox) * (float) d->config.src_width / d->rw;
  *frame_y = (y - d->oy) * (float) d->config.src_height / d->rh;
}
