/*
 * dnnl-segment.c — the convolutions of a bf16 segment, and the backend's
 * hooks that let the plan hold values as bf16 nhwc (dnnl-segment.h).
 *
 * One convolution of a segment: oneDNN's bf16 primitive (described as
 * conv-dnnl.c's are: dnnl-conv-setup.c) with BatchNorm as a per-channel
 * binary post-op (split_batch_norm says why not folded), the residual as
 * a `sum` post-op and the activation as an eltwise one, so that nothing
 * is left to do on the way out: its output is either bf16 nhwc for the next call of the
 * segment, or (leaving the segment) fp32 nhwc that is only transposed
 * into planes.  Its data input is read where it lies when it is bf16
 * nhwc; fp32 planes (entering a segment) are converted first.
 *
 * Threads as conv-dnnl.c: items of (image, slice of the filters), each
 * one execution on one thread of our pool with one OpenMP thread.  A
 * slice writes a dense piece of nhwc in the thread's scratch, copied into
 * the output's channels afterwards; with one slice an image the
 * primitive writes the output in place.  The sum post-op adds what the
 * destination holds, so the residual is copied there first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "hybrid.h"
#include "kernels/cpu/conv/dnnl-conv-setup.h"
#include "kernels/cpu/conv/dnnl-segment.h"
#include "kernels/cpu/conv/layout-blocked.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/nn.h"


/* Items per thread to aim at when an image's filters are cut into
 * slices: two, as conv-dnnl.c, so that a late thread holds up only half
 * its share; one on AMX, where each call pays for its tile set-up and
 * its panel of weights, and slices of 16 filters leave the tiles mostly
 * idle.  Measured 2026-12-02 on a 2-vCPU Xeon with AMX, median of two
 * runs: ResNet-18 b1 3.86 ms against 4.73 with two, ResNet-50 b1 13.5
 * against 14.0, batch 8 unchanged; without AMX
 * (ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16) neither won.  Half the
 * executes also halve what oneDNN allocates in them (docs/PRECISION.md,
 * "bf16 on AMX: one slice a thread").  conv-dnnl.c's per-layer bf16 calls stay at
 * two: one gained nothing on the MobileNets, where they run. */
static int
items_per_thread (void)
{
  return hy_cpu_features_get ()->amx_bf16 ? 1 : 2;
}

typedef struct seg_thread {
  dnnl_stream_t stream;
  dnnl_memory_t src, weights, bias, dst, scratch;
  dnnl_memory_t scale, shift;   /* BatchNorm's, binary post-ops 0 and 1
                                 * (shift: NULL when in the bias) */
} seg_thread;

/* How a segment holds a value: bf16 nhwc, or fp32 nhwc where it is read
 * as a residual (hy_dnnl_segment_output_bytes says why); outside the
 * segment, fp32 planes. */
typedef enum seg_form {
  FORM_PLANES,
  FORM_BF16,
  FORM_F32,
} seg_form;

typedef struct seg_conv {
  bool src_private, dst_private, res_private;
  seg_form src_form, dst_form, res_form;
  int res_input;                /* index of the residual, or -1 */
  int64_t batch, channels, filters;
  int64_t in_hw, out_hw;
  int64_t slice_filters, n_slices;
  bool direct;                  /* the primitive writes the output */
  dnnl_primitive_t primitive;
  char *weights;                /* n_slices × weight_bytes */
  size_t weight_bytes;
  float *bias;                  /* filters floats, less BatchNorm's mean;
                                 * or NULL */
  float *bn_scale, *bn_shift;   /* filters floats each, or NULL (the
                                 * shift also when in the bias) */
  size_t src16_bytes;           /* entering: the batch's bf16 nhwc input */
  size_t dst_bytes, scratch_bytes, thread_stride;
  int n_threads;
  seg_thread *threads;
  char name[48];
} seg_conv;

/* ---- the switch and the hooks ------------------------------------------ */

static bool
segments_on (const hy_cpu_ctx *ctx)
{
  static gsize once;
  static bool off;
  if (g_once_init_enter (&once)) {
    const char *v = g_getenv ("HYBRIDINFER_BF16_SEGMENT");
    off = v && strcmp (v, "0") == 0;
    g_once_init_leave (&once, 1);
  }
  return ctx->bf16 && !off;
}

/* The convolutions a segment takes: 2-D, ungrouped, an activation oneDNN
 * has as a post-op.  A first layer of at most 4 channels with a 3×3
 * kernel stays fp32 (conv-strategy.c's bf16_pays: the few-channels
 * kernel is faster there, and the MobileNets' first layers lost
 * accuracy in bf16). */
static bool
conv_takes (const hy_call_shape *s)
{
  if (s->op != HY_OP_CONVOLUTION || !s->in0 || !s->out0
      || s->in0->ndim != 4 || s->out0->ndim != 4
      || hy_shape_numel (s->out0) == 0 || hy_shape_numel (s->in0) == 0)
    return false;
  const hy_conv_params *p = s->params;
  if (p->n_spatial != 2 || p->num_group != 1)
    return false;
  switch (p->fused.act) {
    case HY_FUSED_ACT_NONE:
    case HY_FUSED_ACT_RELU:
    case HY_FUSED_ACT_CLIP:
    case HY_FUSED_ACT_LEAKY:
      break;
    default:
      return false;
  }
  return !(p->kernel[0] <= 3 && p->kernel[1] <= 3 && s->in0->dims[1] <= 4);
}

/* A value some call adds as its residual is held in fp32 (nhwc): ResNet's
 * blocks add their input to their output, so those values are the
 * network's running sum, and rounding each block's sum to bf16 (8
 * significant bits) compounds over the blocks.  Measured on the zoo's
 * random-weight ResNet-50 v1b (b2): max |bf16 - MXNet fp32| / max |MXNet|
 * 0.134 with the sums in bf16, over the tolerance (0.125), against 0.093
 * with every value fp32 planes.  Their readers as data convert them to
 * bf16 (a contiguous pass, no transpose). */
static bool has_direct_kernel (const hy_cpu_ctx *ctx,
    const hy_call_shape *call);

size_t
hy_dnnl_segment_output_bytes (const hy_cpu_ctx *ctx,
    const hy_call_shape *call, gboolean in0_private, gboolean read_as_operand)
{
  if (!segments_on (ctx))
    return 0;
  const bool takes = (conv_takes (call) && has_direct_kernel (ctx, call))
      || (in0_private && hy_segment_pool_takes (call));
  return takes ? (size_t) hy_shape_numel (call->out0)
      * (read_as_operand ? sizeof (float) : sizeof (uint16_t)) : 0;
}

gboolean
hy_dnnl_segment_reads (const hy_cpu_ctx *ctx, const hy_call_shape *call,
    int input)
{
  if (!segments_on (ctx))
    return FALSE;
  if (hy_segment_pool_takes (call))
    return input == 0;
  if (!conv_takes (call) || !has_direct_kernel (ctx, call))
    return FALSE;
  const hy_conv_params *p = call->params;
  const hy_fused_inputs f = hy_fused_inputs_of (p->no_bias, &p->fused);
  return input == 0 || input == f.residual;
}

/* ---- set-up ---------------------------------------------------------- */

typedef hy_dnnl_setup setup;

static inline bool
check (const setup *s, dnnl_status_t status, const char *call)
{
  return hy_dnnl_check (s, status, call);
}

static dnnl_engine_t
engine (const setup *s)
{
  static gsize once;
  static dnnl_engine_t e;
  static dnnl_status_t status;
  if (g_once_init_enter (&once)) {
    status = dnnl_engine_create (&e, dnnl_cpu, 0);
    g_once_init_leave (&once, 1);
  }
  return check (s, status, "engine creation") ? e : NULL;
}

/* BatchNorm after the primitive's bias, in fp32 as imperative mode runs
 * it: bias − mean as oneDNN's bias, then ×scale as a per-channel binary
 * post-op.  Folded into the weights instead (scale × W rounded to bf16),
 * hybrid mode's error was as large as imperative mode's but not the
 * same: on the zoo's random-weight ResNet-50 v1b and v1c the two modes
 * then differed by 1.1 times the bf16 tolerance, where they now round at
 * the same places (each layer's input).
 *
 * The shift goes into the bias as shift / scale where every scale is
 * non-zero and the quotient finite: (W·x + b − mean + shift/scale)·scale
 * differs from (W·x + b − mean)·scale + shift by fp32 roundings only
 * (about 2^-24 of |y| + |shift|, far below bf16's 2^-9), and it spares
 * each execute a post-op argument and oneDNN's growing its vector of
 * post-op arguments: two heap allocations per call
 * (docs/PRECISION.md, "Allocations").  Otherwise it stays a second
 * binary post-op. */
static void
split_batch_norm (seg_conv *c, const float *bias, const float *bn)
{
  const int64_t n = c->filters;
  if (!bias && !bn)
    return;
  c->bias = g_new (float, n);
  for (int64_t f = 0; f < n; f++)
    c->bias[f] = (bias ? bias[f] : 0.0f) - (bn ? bn[f] : 0.0f);
  if (!bn)
    return;
  const float *scale = bn + n, *shift = bn + 2 * n;
  c->bn_scale = g_memdup2 (scale, (size_t) n * sizeof (float));
  bool foldable = true;
  for (int64_t f = 0; foldable && f < n; f++)
    foldable = scale[f] != 0.0f && isfinite (shift[f] / scale[f])
        && isfinite (c->bias[f] + shift[f] / scale[f]);
  if (!foldable) {
    c->bn_shift = g_memdup2 (shift, (size_t) n * sizeof (float));
    return;
  }
  for (int64_t f = 0; f < n; f++)
    c->bias[f] += shift[f] / scale[f];
}

/* The binary post-ops a convolution's BatchNorm takes (above). */
static int
batch_norm_post_ops (const seg_conv *c)
{
  return c->bn_shift ? 2 : c->bn_scale ? 1 : 0;
}

static bool
append_activation (const setup *s, dnnl_post_ops_t ops,
    const hy_fused_epilogue *e)
{
  switch (e->act) {
    case HY_FUSED_ACT_RELU:
      return check (s, dnnl_post_ops_append_eltwise (ops, 1.0f,
              dnnl_eltwise_relu, 0.0f, 0.0f), "post-op");
    case HY_FUSED_ACT_LEAKY:
      return check (s, dnnl_post_ops_append_eltwise (ops, 1.0f,
              dnnl_eltwise_relu, e->alpha, 0.0f), "post-op");
    case HY_FUSED_ACT_CLIP:
      return check (s, dnnl_post_ops_append_eltwise (ops, 1.0f,
              dnnl_eltwise_clip, e->alpha, e->beta), "post-op");
    default:
      return true;
  }
}

/* The primitive's description for one image and `slice` filters of the
 * convolution p from x to y: bf16 nhwc in, bf16 or fp32 nhwc out, the
 * post-ops as the call has them.  y = act (bn (W·x + b) + residual):
 * BatchNorm as bn_ops binary post-ops (×scale, then +shift where it is
 * not in the bias), the residual (a `sum`) what the destination holds
 * when the primitive runs. */
static bool
make_pd (const setup *s, dnnl_engine_t eng, const hy_conv_params *p,
    const hy_shape *x, const hy_shape *y, int64_t slice, bool has_bias,
    int bn_ops, bool dst_bf16, dnnl_primitive_desc_t *pd)
{
  const dnnl_dims_t channel_dims = { 1, slice, 1, 1 };
  dnnl_memory_desc_t channel_md;
  dnnl_post_ops_t ops = NULL;
  bool ok = check (s, dnnl_memory_desc_init_by_tag (&channel_md, 4,
          channel_dims, dnnl_f32, dnnl_nchw), "memory description")
      && check (s, dnnl_post_ops_create (&ops), "post-ops");
  if (ok && bn_ops >= 1)
    ok = check (s, dnnl_post_ops_append_binary (ops, dnnl_binary_mul,
            &channel_md), "post-op");
  if (ok && bn_ops >= 2)
    ok = check (s, dnnl_post_ops_append_binary (ops, dnnl_binary_add,
            &channel_md), "post-op");
  if (ok && p->fused.residual)
    ok = check (s, dnnl_post_ops_append_sum (ops, 1.0f), "post-op");
  const hy_dnnl_conv_spec spec = {
    .p = p, .channels = x->dims[1], .filters = slice,
    .in_h = x->dims[2], .in_w = x->dims[3],
    .out_h = y->dims[2], .out_w = y->dims[3],
    .compute = dnnl_bf16, .dst_type = dst_bf16 ? dnnl_bf16 : dnnl_f32,
    .src_tag = dnnl_nhwc, .dst_tag = dnnl_nhwc,
    .has_bias = has_bias, .post_ops = ops,
  };
  ok = ok && append_activation (s, ops, &p->fused)
      && hy_dnnl_conv_pd_create (s, eng, &spec, pd);
  dnnl_post_ops_destroy (ops);
  return ok;
}

/* The implementation a description got, NULL for oneDNN's reference
 * ones (far slower than the fp32 kernels a segment would replace). */
static const char *
direct_impl (dnnl_primitive_desc_t pd)
{
  const char *impl = NULL;
  if (dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0, &impl)
      != dnnl_success || !impl || strstr (impl, "ref"))
    return NULL;
  return impl;
}

/* Whether oneDNN has a direct kernel for the convolution in a segment,
 * writing bf16 (inside) and fp32 (leaving): on maps of 1×1 or 2×2 (a
 * segmentation head's pooled branch, SSD's last layers) it has only its
 * reference kernel, and those stay with the per-layer path. */
static bool
has_direct_kernel (const hy_cpu_ctx *ctx, const hy_call_shape *call)
{
  const hy_conv_params *p = call->params;
  GError *ignored = NULL;
  const setup s = { "probe", &ignored };
  dnnl_engine_t eng = engine (&s);
  const int64_t slices = hy_dnnl_filter_slices (p->num_filter,
      call->in0->dims[0], hy_cpu_n_threads (ctx), items_per_thread ());
  bool ok = eng != NULL;
  for (int dst_bf16 = 0; ok && dst_bf16 < 2; dst_bf16++) {
    dnnl_primitive_desc_t pd = NULL;
    const int omp_threads = omp_get_max_threads ();
    omp_set_num_threads (1);
    ok = make_pd (&s, eng, p, call->in0, call->out0,
        p->num_filter / slices, !p->no_bias || p->fused.batch_norm,
        p->fused.batch_norm ? 2 : 0, dst_bf16, &pd) && direct_impl (pd);
    omp_set_num_threads (omp_threads);
    dnnl_primitive_desc_destroy (pd);
  }
  g_clear_error (&ignored);
  return ok;
}

static bool
build (seg_conv *c, const setup *s, const hy_conv_params *p,
    const hy_call *call, const float *w, const float *bias, const float *bn)
{
  dnnl_engine_t eng = engine (s);
  if (!eng)
    return false;
  const hy_shape *x = &call->in[0]->shape, *y = &call->out[0]->shape;
  const dnnl_dims_t bias_dims = { c->slice_filters };
  const dnnl_dims_t channel_dims = { 1, c->slice_filters, 1, 1 };
  dnnl_memory_desc_t user_w_md, bias_md, channel_md;
  const hy_dnnl_conv_spec weights = { .p = p, .channels = c->channels,
    .filters = c->slice_filters };
  if (!hy_dnnl_conv_user_weights_md (s, &weights, &user_w_md)
      || !check (s, dnnl_memory_desc_init_by_tag (&bias_md, 1, bias_dims,
              dnnl_f32, dnnl_x), "memory description")
      || !check (s, dnnl_memory_desc_init_by_tag (&channel_md, 4,
              channel_dims, dnnl_f32, dnnl_nchw), "memory description"))
    return false;
  split_batch_norm (c, bias, bn);
  dnnl_primitive_desc_t pd = NULL;
  bool ok = make_pd (s, eng, p, x, y, c->slice_filters, c->bias != NULL,
      batch_norm_post_ops (c), c->dst_form == FORM_BF16, &pd);
  const char *impl = ok ? direct_impl (pd) : NULL;
  if (!ok && !*s->error)        /* oneDNN has nothing for it */
    g_set_error (s->error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: oneDNN has no bf16 kernel for it", s->what);
  else if (ok && !impl) {
    g_set_error (s->error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: oneDNN has only its reference kernel for it in bf16", s->what);
    ok = false;
  }
  if (ok) {
    g_debug ("%s: bf16 segment, oneDNN %s", s->what, impl);
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_scratchpad_md, 0);
    const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_dst_md, 0);
    c->weight_bytes = (dnnl_memory_desc_get_size (wmd) + 63) & ~(size_t) 63;
    c->dst_bytes = dnnl_memory_desc_get_size (dmd);
    c->scratch_bytes = dnnl_memory_desc_get_size (smd);
    c->thread_stride = ((c->dst_bytes + 63) & ~(size_t) 63)
        + ((c->scratch_bytes + 63) & ~(size_t) 63);
    c->weights = aligned_alloc (64, c->n_slices * c->weight_bytes);
    if (!c->weights) {
      g_set_error (s->error, HY_ERROR, HY_ERROR_NO_MEMORY,
          "%s: out of memory for oneDNN's copy of the weights", s->what);
      ok = false;
    }
    ok = ok && check (s, dnnl_primitive_create (&c->primitive, pd),
        "convolution creation")
        && hy_dnnl_reorder_weights (s, eng, w, &user_w_md, wmd,
            c->n_slices, c->weights, c->weight_bytes);
    c->threads = g_new0 (seg_thread, c->n_threads);
    for (int t = 0; ok && t < c->n_threads; t++) {
      seg_thread *th = &c->threads[t];
      ok = check (s, dnnl_stream_create (&th->stream, eng,
              dnnl_stream_default_flags), "stream creation")
          && check (s, dnnl_memory_create (&th->src,
                  dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0),
                  eng, DNNL_MEMORY_NONE), "memory creation")
          && check (s, dnnl_memory_create (&th->weights, wmd, eng,
                  DNNL_MEMORY_NONE), "memory creation")
          && check (s, dnnl_memory_create (&th->dst, dmd, eng,
                  DNNL_MEMORY_NONE), "memory creation")
          && check (s, dnnl_memory_create (&th->scratch, smd, eng,
                  DNNL_MEMORY_NONE), "memory creation")
          && (!c->bias || check (s, dnnl_memory_create (&th->bias, &bias_md,
                      eng, DNNL_MEMORY_NONE), "memory creation"))
          && (!c->bn_scale || (check (s, dnnl_memory_create (&th->scale,
                      &channel_md, eng, DNNL_MEMORY_NONE), "memory creation")))
          && (!c->bn_shift || check (s, dnnl_memory_create (&th->shift,
                      &channel_md, eng, DNNL_MEMORY_NONE), "memory creation"));
    }
  }
  dnnl_primitive_desc_destroy (pd);
  return ok;
}

static void
seg_conv_free (seg_conv *c)
{
  if (!c)
    return;
  for (int t = 0; c->threads && t < c->n_threads; t++) {
    seg_thread *th = &c->threads[t];
    dnnl_memory_destroy (th->src);
    dnnl_memory_destroy (th->weights);
    dnnl_memory_destroy (th->bias);
    dnnl_memory_destroy (th->scale);
    dnnl_memory_destroy (th->shift);
    dnnl_memory_destroy (th->dst);
    dnnl_memory_destroy (th->scratch);
    dnnl_stream_destroy (th->stream);
  }
  g_free (c->threads);
  dnnl_primitive_destroy (c->primitive);
  free (c->weights);
  g_free (c->bias);
  g_free (c->bn_scale);
  g_free (c->bn_shift);
  g_free (c);
}

static seg_conv *
seg_conv_new (hy_cpu_ctx *ctx, const hy_call *call, GError **error)
{
  const hy_conv_params *p = call->params;
  const hy_tensor *x = call->in[0], *y = call->out[0];
  const hy_call_shape shape = {
    call->op, p, &x->shape, &y->shape, FALSE, NULL,
  };
  const hy_fused_inputs f = hy_fused_inputs_of (p->no_bias, &p->fused);
  g_autofree char *what = g_strdup_printf ("%" G_GINT64_FORMAT "x%"
      G_GINT64_FORMAT " convolution %" G_GINT64_FORMAT "->%" G_GINT64_FORMAT
      " on %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, p->kernel[0],
      p->kernel[1], x->shape.dims[1], p->num_filter, x->shape.dims[2],
      x->shape.dims[3]);
  /* Constant weights, bias and BatchNorm: set up once here. */
  const gboolean constant = hy_call_input_const (call, 1)
      && (f.bias < 0 || hy_call_input_const (call, f.bias))
      && (f.bn < 0 || hy_call_input_const (call, f.bn));
  if (!conv_takes (&shape) || !constant) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: a bf16 segment needs an ungrouped 2-D convolution with "
        "constant weights, bias and BatchNorm", what);
    return NULL;
  }
  seg_conv *c = g_new0 (seg_conv, 1);
  c->src_private = call->private_inputs & 1u;
  c->dst_private = call->private_outputs & 1u;
  c->res_input = f.residual;
  c->res_private = f.residual >= 0
      && (call->private_inputs >> f.residual & 1u);
  c->src_form = !c->src_private ? FORM_PLANES
      : call->private_wide_inputs & 1u ? FORM_F32 : FORM_BF16;
  c->dst_form = !c->dst_private ? FORM_PLANES
      : call->private_wide_outputs & 1u ? FORM_F32 : FORM_BF16;
  c->res_form = !c->res_private ? FORM_PLANES
      : call->private_wide_inputs >> f.residual & 1u ? FORM_F32 : FORM_BF16;
  c->batch = x->shape.dims[0];
  c->channels = x->shape.dims[1];
  c->filters = p->num_filter;
  c->in_hw = x->shape.dims[2] * x->shape.dims[3];
  c->out_hw = y->shape.dims[2] * y->shape.dims[3];
  c->n_threads = hy_cpu_n_threads (ctx);
  c->n_slices = hy_dnnl_filter_slices (c->filters, c->batch, c->n_threads,
      items_per_thread ());
  c->slice_filters = c->filters / c->n_slices;
  c->direct = c->dst_private && c->n_slices == 1;
  c->src16_bytes = c->src_form == FORM_BF16 ? 0
      : (size_t) (c->batch * c->channels * c->in_hw) * sizeof (uint16_t);
  g_snprintf (c->name, sizeof c->name, "onednn-bf16-segment%s%s",
      c->src_private ? "" : " +entry reorder",
      c->dst_private ? "" : " +exit reorder");

  GError *failure = NULL;
  const setup s = { what, &failure };
  const int omp_threads = omp_get_max_threads ();
  omp_set_num_threads (1);
  const bool ok = build (c, &s, p, call, call->in[1]->data,
      f.bias >= 0 ? call->in[f.bias]->data : NULL,
      f.bn >= 0 ? call->in[f.bn]->data : NULL);
  omp_set_num_threads (omp_threads);
  if (!ok) {
    seg_conv_free (c);
    if (!failure)
      g_set_error (&failure, HY_ERROR, HY_ERROR_BACKEND,
          "%s: no bf16 segment kernel", what);
    g_propagate_error (error, failure);
    return NULL;
  }
  return c;
}

/* ---- a forward ----------------------------------------------------- */

typedef struct seg_job {
  const seg_conv *c;
  const float *x;               /* planes (entering) */
  const uint16_t *src16;        /* bf16 nhwc the primitive reads */
  const void *res;
  void *y;
  char *per_thread;
  _Atomic int failed;
} seg_job;

/* Entering (or reading an fp32 nhwc value): tiles of positions [begin,
 * end) over the images, fp32 planes into bf16 nhwc (each tile's channels
 * read a run at a time), or fp32 nhwc into bf16. */
static void
enter (void *arg, int64_t begin, int64_t end, int thread)
{
  const seg_job *j = arg;
  const seg_conv *c = j->c;
  const int64_t tiles = (c->in_hw + HY_BLOCKED_TILE - 1) / HY_BLOCKED_TILE;
  uint16_t *src16 = (uint16_t *) j->src16;
  for (int64_t i = begin; i < end; i++) {
    const int64_t image = i / tiles, hw0 = i % tiles * HY_BLOCKED_TILE;
    const int64_t hw1 = MIN (hw0 + HY_BLOCKED_TILE, c->in_hw);
    const float *x = j->x + image * c->channels * c->in_hw;
    uint16_t *y = src16 + image * c->channels * c->in_hw;
    if (c->src_form == FORM_F32) {      /* fp32 nhwc: one run */
      hy_bf16_from_floats (y + hw0 * c->channels, x + hw0 * c->channels,
          (hw1 - hw0) * c->channels);
      continue;
    }
    for (int64_t ch = 0; ch < c->channels; ch++)
      for (int64_t q = hw0; q < hw1; q++)
        y[q * c->channels + ch] = hy_bf16_from_float (x[ch * c->in_hw + q]);
  }
}

/* Element (position q, channel k) of `image`'s residual as a float. */
static inline float
residual_at (const seg_job *j, int64_t image, int64_t q, int64_t k)
{
  const seg_conv *c = j->c;
  const int64_t hw = c->out_hw, at = image * c->filters * hw;
  switch (c->res_form) {
    case FORM_BF16:
      return hy_bf16_to_float (((const uint16_t *) j->res)[at + q * c->filters
              + k]);
    case FORM_F32:
      return ((const float *) j->res)[at + q * c->filters + k];
    default:
      return ((const float *) j->res)[at + k * hw + q];
  }
}

/* Filters [f0, f0 + n) of the residual of `image` into the nhwc
 * destination d (a row of `stride` channels a position), in the
 * destination's type: the sum post-op adds what d holds. */
static void
residual_into (const seg_job *j, int64_t image, int64_t f0, int64_t n,
    void *d, int64_t stride)
{
  const seg_conv *c = j->c;
  const bool bf16 = c->dst_form == FORM_BF16;
  const size_t elem = bf16 ? sizeof (uint16_t) : sizeof (float);
  if (c->res_form != FORM_PLANES && (c->res_form == FORM_BF16) == bf16) {
    const char *r = (const char *) j->res
        + (size_t) (image * c->filters * c->out_hw + f0) * elem;
    for (int64_t q = 0; q < c->out_hw; q++)
      memcpy ((char *) d + (size_t) (q * stride) * elem,
          r + (size_t) (q * c->filters) * elem, (size_t) n * elem);
    return;
  }
  for (int64_t q = 0; q < c->out_hw; q++)
    for (int64_t k = 0; k < n; k++) {
      const float v = residual_at (j, image, q, f0 + k);
      if (bf16)
        ((uint16_t *) d)[q * stride + k] = hy_bf16_from_float (v);
      else
        ((float *) d)[q * stride + k] = v;
    }
}

static void
run_items (void *arg, int64_t begin, int64_t end, int thread)
{
  seg_job *j = arg;
  const seg_conv *c = j->c;
  const seg_thread *th = &c->threads[thread];
  char *mine = j->per_thread + (size_t) thread * c->thread_stride;
  void *scratch = mine + ((c->dst_bytes + 63) & ~(size_t) 63);
  const int64_t out_image = c->filters * c->out_hw;
  omp_set_num_threads (1);
  for (int64_t item = begin; item < end; item++) {
    const int64_t image = item / c->n_slices, slice = item % c->n_slices;
    const int64_t f0 = slice * c->slice_filters;
    const size_t elem = c->dst_form == FORM_BF16 ? sizeof (uint16_t)
        : sizeof (float);
    void *dst = c->direct ? (void *) ((char *) j->y
            + (size_t) (image * out_image) * elem) : (void *) mine;
    const int64_t stride = c->direct ? c->filters : c->slice_filters;
    /* The sum post-op adds what dst holds: the residual goes there
     * first (the planner never gives it the output's slot, since the
     * call reads it while it writes). */
    if (c->res_input >= 0)
      residual_into (j, image, f0, c->slice_filters, dst, stride);
    dnnl_exec_arg_t args[7] = {
      { DNNL_ARG_SRC, th->src }, { DNNL_ARG_WEIGHTS, th->weights },
      { DNNL_ARG_DST, th->dst },
    };
    int n_args = 3;
    if (c->scratch_bytes)
      args[n_args++] = (dnnl_exec_arg_t) { DNNL_ARG_SCRATCHPAD, th->scratch };
    if (c->bias)
      args[n_args++] = (dnnl_exec_arg_t) { DNNL_ARG_BIAS, th->bias };
    if (c->bn_scale)
      args[n_args++] = (dnnl_exec_arg_t) {
        DNNL_ARG_ATTR_MULTIPLE_POST_OP (0) | DNNL_ARG_SRC_1, th->scale };
    if (c->bn_shift)
      args[n_args++] = (dnnl_exec_arg_t) {
        DNNL_ARG_ATTR_MULTIPLE_POST_OP (1) | DNNL_ARG_SRC_1, th->shift };
    dnnl_status_t st = dnnl_memory_set_data_handle (th->src,
        (void *) (j->src16 + image * c->channels * c->in_hw));
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->weights,
          c->weights + slice * c->weight_bytes);
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->dst, dst);
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->scratch, scratch);
    if (st == dnnl_success && c->bias)
      st = dnnl_memory_set_data_handle (th->bias, c->bias + f0);
    if (st == dnnl_success && c->bn_scale)
      st = dnnl_memory_set_data_handle (th->scale, c->bn_scale + f0);
    if (st == dnnl_success && c->bn_shift)
      st = dnnl_memory_set_data_handle (th->shift, c->bn_shift + f0);
    if (st == dnnl_success)
      st = dnnl_primitive_execute (c->primitive, th->stream, n_args, args);
    if (st != dnnl_success) {
      j->failed = st;
      return;
    }
    if (c->direct)
      continue;
    if (c->dst_private) {       /* the slice's channels into the output */
      char *y = (char *) j->y + (size_t) (image * out_image + f0) * elem;
      for (int64_t q = 0; q < c->out_hw; q++)
        memcpy (y + (size_t) (q * c->filters) * elem, (const char *) dst
            + (size_t) (q * c->slice_filters) * elem,
            (size_t) c->slice_filters * elem);
    } else {                    /* leaving: fp32 nhwc into planes */
      const hy_fused_epilogue none = { 0 };
      const hy_epilogue_channels ch = { NULL, NULL, c->filters };
      hy_blocked_to_planes ((float *) j->y + image * out_image
          + f0 * c->out_hw, dst, c->slice_filters, c->out_hw,
          c->slice_filters, &none, NULL, &ch);
    }
  }
}

static void
hy_cpu_segment_conv (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const seg_conv *c = params;
  const int threads = MIN (hy_cpu_n_threads (ctx), c->n_threads);
  const size_t src_room = (c->src16_bytes + 63) & ~(size_t) 63;
  char *ws = hy_cpu_workspace (ctx, src_room
      + (size_t) threads * c->thread_stride);
  seg_job j = {
    .c = c, .x = in[0]->data,
    .src16 = c->src_form == FORM_BF16 ? (const uint16_t *) in[0]->data
        : (const uint16_t *) ws,
    .res = c->res_input >= 0 ? (const void *) in[c->res_input]->data : NULL,
    .y = out[0]->data, .per_thread = ws + src_room,
    .failed = dnnl_success,
  };
  if (c->src_form != FORM_BF16)
    hy_cpu_parallel_for (ctx, c->batch * ((c->in_hw + HY_BLOCKED_TILE - 1)
            / HY_BLOCKED_TILE), hy_cpu_grain (c->channels * HY_BLOCKED_TILE),
        enter, &j);
  const int omp_threads = omp_get_max_threads ();
  if (threads > 1)
    hy_cpu_parallel_each (ctx, c->batch * c->n_slices, run_items, &j);
  else
    run_items (&j, 0, c->batch * c->n_slices, 0);
  omp_set_num_threads (omp_threads);
  const int failed = j.failed;
  if (failed != dnnl_success)
    hy_cpu_fail (ctx, "oneDNN bf16 segment convolution %" G_GINT64_FORMAT
        "->%" G_GINT64_FORMAT " failed (%s)", c->channels, c->filters,
        dnnl_status2str ((dnnl_status_t) failed));
}

/* ---- the backend's side ------------------------------------------- */

gboolean
hy_dnnl_segment_prepare_call (hy_cpu_ctx *ctx, hy_call *call, GError **error)
{
  if (call->op == HY_OP_POOLING) {
    void *pool = hy_segment_pool_new (call, error);
    if (!pool)
      return FALSE;
    call->fn = (hy_kernel_ptr) hy_cpu_segment_pool;
    call->params = pool;
    return TRUE;
  }
  seg_conv *c = seg_conv_new (ctx, call, error);
  if (!c)
    return FALSE;
  call->fn = (hy_kernel_ptr) hy_cpu_segment_conv;
  call->params = c;
  return TRUE;
}

bool
hy_dnnl_segment_runs (const hy_call *call)
{
  return call->fn == (hy_kernel_ptr) hy_cpu_segment_conv
      || call->fn == (hy_kernel_ptr) hy_cpu_segment_pool;
}

void
hy_dnnl_segment_release_call (hy_call *call)
{
  if (call->fn == (hy_kernel_ptr) hy_cpu_segment_conv)
    seg_conv_free ((seg_conv *) call->params);
  else
    hy_segment_pool_free ((void *) call->params);
}

const char *
hy_dnnl_segment_kernel_name (const hy_call *call)
{
  if (call->fn == (hy_kernel_ptr) hy_cpu_segment_conv)
    return ((const seg_conv *) call->params)->name;
  return call->private_outputs ? "bf16-segment-pool"
      : "bf16-segment-pool +exit reorder";
}
