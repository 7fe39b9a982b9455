/*
 * plan.h — a hybridized model: the optimised graph (passes.h), its memory
 * plan (planner.h), and a flat array of kernel calls whose tensors point
 * into one arena.  Built once per input shape; running it allocates
 * nothing.
 */
#ifndef HY_PLAN_H
#define HY_PLAN_H

#include "core/model-impl.h"
#include "core/backend.h"
#include "core/passes/passes.h"

typedef struct hy_plan hy_plan;

/* Plans a model for the input shapes `shapes` holds (hy_shapes_infer must
 * have succeeded) on `backend`: the arena, and on a device the weights,
 * are allocated there.  The plan keeps pointers into the model and the
 * backend: free it first. */
hy_plan *hy_plan_new (const hy_shapes *shapes, hy_backend *backend,
    GError **error);
void hy_plan_free (hy_plan *plan);

/* One forward.  inputs[i] (host memory) feeds model input i and must have
 * the planned shape (the executor checks); inputs NULL: the device slots
 * already hold them (hy_plan_device_input).  No allocation; on the CPU no
 * system call either.  FALSE only when a device call fails. */
gboolean hy_plan_run (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, GError **error);

/* Runs `iterations` forwards one call at a time, timing each (host-memory
 * backends only); *layers: per call, the mean ms, the node, op and
 * arithmetic, owned by the plan until its next profile or its free. */
gboolean hy_plan_profile (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, int iterations, const hy_layer_profile **layers,
    int *n_layers, GError **error);

/* Device backends: the arena slot model input `input` is uploaded into
 * (NULL on the CPU, or when nothing reads that input).  A caller that
 * fills it on the device runs the plan with inputs NULL: no upload. */
hy_tensor *hy_plan_device_input (hy_plan *plan, int input);

/* hybrid.h's hy_input_quantization for model input `input`: TRUE and
 * *out filled where a calibrated quantize_v2 alone reads it and its
 * output is held as bytes NHWC on a host-memory backend, in a plan run
 * as a whole (not image by image); FALSE otherwise. */
gboolean hy_plan_input_quantization (const hy_plan *plan, int input,
    hy_input_quantization *out);
/* A forward whose quantize node's output the caller wrote (as
 * hy_plan_input_quantization said): that call is skipped, its range
 * outputs written here.  FALSE + error where the plan has no such node. */
gboolean hy_plan_run_quantized (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, GError **error);

/* Output i of the last run, in host memory. */
const hy_tensor *hy_plan_output (const hy_plan *plan, int i);
void hy_plan_memory (const hy_plan *plan, hy_memory_stats *out);
/* What the passes did; `views` is counted by the plan, which turns those
 * ops into aliases of their input's memory. */
const hy_pass_stats *hy_plan_pass_stats (const hy_plan *plan);
int hy_plan_n_calls (const hy_plan *plan);

#endif /* HY_PLAN_H */
