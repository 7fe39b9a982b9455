/*
 * plan-impl.h — the inside of a plan, shared by plan.c (building and
 * running one for the whole batch) and plan-split.c (hy_plan_new,
 * hy_plan_run and hy_plan_profile: the whole batch at once, or image by
 * image on a plan for one image).
 */
#ifndef HY_PLAN_IMPL_H
#define HY_PLAN_IMPL_H

#include "core/plan.h"
#include "kernels/params/quantized.h"

/* A tensor struct that views caller input `input` (host memory), or the
 * arena slot that input is uploaded into (device memory). */
typedef struct input_binding {
  hy_tensor *tensor;
  int input;
} input_binding;

struct hy_plan {
  hy_backend *backend;
  hy_graph *graph;              /* the optimised copy */
  GPtrArray *owned;             /* tensors the passes made */
  hy_pass_stats pass_stats;
  hy_memory_stats memory;

  float *arena;                 /* backend memory */
  float *consts;                /* device backends: the uploaded weights */
  hy_tensor *values;            /* per value, then one per output copy */
  guint8 *value_private;        /* per value: held in the backend's own
                                 * layout (plan-segment.h), not planes */
  guint n_value_private;
  hy_call *calls;
  int n_calls;
  guint *call_nodes;            /* per call: its node in `graph`, or
                                 * G_MAXUINT for an output copy */
  guint *call_first_nodes;      /* per call: the node a fused call runs
                                 * before its own (plan-fuse.c), or
                                 * G_MAXUINT */
  uint32_t *call_const_bits;    /* the calls' const_inputs bitsets */
  GPtrArray *fused_args;        /* the fused calls' inputs and bitsets */
  hy_layer_profile *profile;    /* per call, made by the first profile */
  int n_prepared;               /* calls[0..n_prepared) were prepared */
  void *capture;                /* the backend's recording of the calls */
  const hy_tensor **call_in;    /* every call's argument lists, flat */
  hy_tensor **call_out;
  input_binding *bindings;
  int n_bindings;
  const hy_tensor **outputs;    /* per graph head */
  hy_tensor **host_outputs;     /* device backends: their host mirrors */
  int n_outputs;

  /* A batch run image by image (plan-split.c): the plan for one image,
   * and per graph output the whole batch's tensor it is gathered into
   * (`outputs` then points at these).  The rest of the struct is empty
   * but for the figures, which are the per-image plan's. */
  hy_plan *per_image;
  hy_tensor **batch_outputs;
  int64_t batch;
  /* One image of each graph input, as the per-image plan is given it:
   * sized by the model's inputs when the split is made, so a forward
   * allocates nothing whatever their count. */
  int n_image_inputs;
  hy_tensor *image_slices;
  const hy_tensor **image_inputs;

  /* Or image by image up to a cut, the rest for the whole batch: calls
   * [0, prefix_calls) run on `per_image` image after image, the values
   * that live across the cut copied, image by image, from its tensors
   * (cut_from) into this plan's (cut_to); this plan then runs its calls
   * from the cut on.  Each plan has dropped the other's calls. */
  int prefix_calls;
  int n_cut;
  /* A calibrated quantize_v2 that alone reads model input
   * `quantized_input` (plan-quantized-input.c): its call, which a caller
   * that writes its outputs itself skips. */
  gboolean has_quantized_input;
  int quantized_input_call;
  int quantized_input;
  /* that node's own params, copied: a backend may have given its call
   * params of its own (a kernel for values held as bytes) */
  hy_quantize_params quantized_input_params;
  const hy_tensor **cut_from;
  hy_tensor **cut_to;
};

/* plan.c: builds the plan for `shapes`, the whole batch at once (what
 * hy_plan_new starts from), and runs it (hy_plan_run and hy_plan_profile
 * on such a plan). */
hy_plan *hy_plan_build (const hy_shapes *shapes, hy_backend *backend,
    GError **error);
gboolean hy_plan_run_whole (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, GError **error);
gboolean hy_plan_profile_whole (hy_plan *plan,
    const hy_tensor *const *inputs, int n_inputs, int iterations,
    const hy_layer_profile **layers, int *n_layers, GError **error);

/* The same for calls [first, end) only (the graph's outputs are
 * downloaded when end is the last); the profile's other entries are left
 * as they were. */
gboolean hy_plan_run_calls (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, int first, int end, GError **error);
gboolean hy_plan_profile_calls (hy_plan *plan,
    const hy_tensor *const *inputs, int n_inputs, int iterations, int first,
    int end, const hy_layer_profile **layers, int *n_layers, GError **error);

/* The arithmetic of call c (as the profile counts it), 0 where the op
 * does not say. */
double hy_plan_call_flops (const hy_plan *plan, int c);

/* Whether t, one of the plan's values, is held in the backend's own
 * layout (its bytes are not fp32 planes). */
gboolean hy_plan_tensor_private (const hy_plan *plan, const hy_tensor *t);

/* plan-fuse.c: where the backend runs call c and call c + 1 as one
 * call, makes them one (calls from c + 2 on move down a place; neither
 * may be prepared yet, the fused call is); FALSE where it does not.
 * fusable: per graph node, whether the planner kept the pair that ends
 * at it fusable (the only reader of its first's output, the first's
 * inputs live through it). */
gboolean hy_plan_fuse_next (hy_plan *plan, int c, const gboolean *fusable);

/* plan-chain.c: runs each chain hy_plan_find_chains found (chain_last,
 * per graph node; NULL: none) as one call where the backend takes it,
 * once every call is prepared: the chain's calls are released, the calls
 * after it move down. */
void hy_plan_fuse_chains (hy_plan *plan, const int *chain_last);

/* Hands back what the backend set up for calls [first, end), which are
 * never run again (host-memory backends: their fn becomes NULL). */
void hy_plan_drop_calls (hy_plan *plan, int first, int end);

#endif /* HY_PLAN_IMPL_H */
