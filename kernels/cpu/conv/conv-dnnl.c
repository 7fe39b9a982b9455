/*
 * conv-dnnl.c — 2-D convolutions through oneDNN (see conv-dnnl.h).
 *
 * The work is split into items (image, slice of the filters), each one
 * primitive execution on one thread of the kernels' pool: oneDNN's own
 * OpenMP threading is never used (one OpenMP thread per call), so the
 * pool's threads are the only busy ones and no OpenMP worker is left
 * spinning beside the next kernel.  Slices are whole 16-channel blocks
 * and all the same size, so one primitive serves them all; each item's
 * output slice is one thread's scratch, turned back into the plain output
 * (plus the epilogue) right after it is written.
 *
 * oneDNN adds the bias itself; BatchNorm, the residual and the activation
 * run in the pass back to plain planes, the same arithmetic as conv.c's
 * epilogue (epilogue.h): while the tensors between layers stay plain that
 * pass is paid anyway, and doing it there keeps hybrid mode computing
 * exactly what imperative mode (the same primitive, then BatchNorm and
 * the activation as ops of their own) computes.
 *
 * Precision bf16 (cpu-kernel.h's ctx->bf16): the same primitive made for
 * a bf16 input and bf16 weights, with fp32 bias, fp32 output and fp32
 * accumulation.  oneDNN is the library made for this (its AVX512_BF16
 * and AMX kernels pick their blocked weight layout through
 * format_tag::any), so there are no bf16 kernels of ours: the weights go
 * to bf16 once, in the set-up's reorder; the input is rounded to bf16
 * (nearest even) in the pass that lays it out for the primitive; the
 * epilogue and every tensor between layers stay fp32 (but inside a
 * pointwise-depthwise chain: conv-dnnl-chain.c).
 */
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "hybrid.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/conv/conv-dnnl.h"
#include "kernels/cpu/conv/dnnl-conv-setup.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/conv/layout-blocked.h"

/* Channels per block of oneDNN's nChw16c. */
#define B 16

/* Items per thread to aim at when an image is cut into filter slices: two
 * let a thread that starts late, or is preempted, hold up only half of
 * its share. */
#define ITEMS_PER_THREAD 2

/* What one thread executes with: its stream and memory objects, whose
 * data pointers are set per item (memory objects are not thread-safe). */
typedef struct conv_thread {
  dnnl_stream_t stream;
  dnnl_memory_t src, weights, bias, dst, scratch;
} conv_thread;

struct hy_conv_dnnl {
  hy_fused_epilogue fused;
  bool has_bias;
  int64_t batch, channels, filters;
  int64_t in_hw, out_hw;
  bool bf16;                    /* bf16 input and weights (above) */
  bool blocked_src;             /* false: the primitive reads the input */
  bool nhwc;                    /* else 16-channel blocks out */
  int64_t src_block, dst_block; /* channels per block (layout-blocked.h) */
  int64_t src_image_floats;     /* one image of the blocked input */
  int64_t slice_filters, n_slices;
  size_t src_bytes;             /* the whole batch's blocked input */
  size_t src16_bytes;           /* the same in bf16 (bf16 only) */
  size_t dst_bytes, scratch_bytes;      /* per thread */
  size_t thread_stride;
  dnnl_primitive_t primitive;
  char *weights;                /* n_slices × weight_bytes, oneDNN's layout */
  size_t weight_bytes;
  int n_threads;
  conv_thread *threads;
};

/* ---- the process's engine and the switch ------------------------------- */

static dnnl_engine_t
cpu_engine (GError **error)
{
  static gsize once;
  static dnnl_engine_t engine;
  static dnnl_status_t status;
  if (g_once_init_enter (&once)) {
    status = dnnl_engine_create (&engine, dnnl_cpu, 0);
    g_once_init_leave (&once, 1);
  }
  if (status != dnnl_success) {
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND,
        "oneDNN: no CPU engine (%s)", dnnl_status2str (status));
    return NULL;
  }
  return engine;
}

bool
hy_conv_dnnl_enabled (void)
{
  static gsize once;
  static bool enabled;
  if (g_once_init_enter (&once)) {
    /* Off unless asked for: oneDNN's execute allocates (a map of its
     * arguments per call), which breaks hybrid mode's promise of no
     * allocation per forward (tests/unit/test-plan-alloc.c). */
    const char *v = g_getenv ("HYBRIDINFER_DNNL");
    enabled = v && strcmp (v, "1") == 0;
    g_once_init_leave (&once, 1);
  }
  return enabled;
}

bool
hy_int8_dnnl_enabled (void)
{
  static gsize once;
  static bool enabled;
  if (g_once_init_enter (&once)) {
    const char *v = g_getenv ("HYBRIDINFER_DNNL");
    enabled = !(v && strcmp (v, "0") == 0);
    g_once_init_leave (&once, 1);
  }
  return enabled;
}

/* ---- set-up -------------------------------------------------------------- */

typedef hy_dnnl_setup setup;

static inline bool
check (const setup *s, dnnl_status_t status, const char *call)
{
  return hy_dnnl_check (s, status, call);
}

/* Which 1x1 convolutions go to oneDNN.  Such a convolution is one GEMM
 * over the planes as they lie, which conv.c runs without lowering
 * anything; oneDNN's product is faster only where there is enough work
 * per position to pay for the transposes into and out of its layout (a
 * pass over input and output each) and its per-call costs.  Measured per
 * layer on ResNet-50 and MobileNetV2, one thread (docs/PERFORMANCE.md):
 * conv.c wins on 28x28 maps and larger and on MobileNet's narrow layers
 * (64 -> 384, 96 -> 576: below 128 x 512 channel pairs), oneDNN on
 * ResNet-50's 14x14 and 7x7 layers (256 -> 1024 and up) and MobileNet's
 * 7x7 ones (160 -> 960 and up). */
#define MAX_POINTWISE_OUT_HW (14 * 14)
#define MIN_POINTWISE_CHANNEL_PAIRS (128 * 512)

/* Whether oneDNN should take the convolution at all (see above; spatial
 * kernels always: 1.4-2.4x conv.c's im2col + GEMM). */
/* Not applied in bf16, where oneDNN's bf16 kernels win on every 1x1
 * layer there is (ResNet-50, 2 threads, CPU ms per forward: 31.6 at b1
 * and 242.8 at b8 with every 1x1 in bf16, 36.5 and 278.5 with this rule
 * sending the large-map ones to conv.c in fp32). */
static bool
worth_it (const hy_conv_params *p, int64_t channels, int64_t out_hw)
{
  const bool pointwise = p->kernel[0] == 1 && p->kernel[1] == 1;
  return !pointwise || (out_hw <= MAX_POINTWISE_OUT_HW
      && channels * p->num_filter >= MIN_POINTWISE_CHANNEL_PAIRS);
}

/* Only oneDNN's direct kernels pay here (the brgconv and jit families):
 * its gemm and reference implementations are what conv.c already does. */
static bool
is_direct_kernel (const char *impl)
{
  return impl && (g_str_has_prefix (impl, "brg")
      || g_str_has_prefix (impl, "jit"));
}

static bool
make_threads (hy_conv_dnnl *c, const setup *s, dnnl_engine_t engine,
    dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *bias_md)
{
  const dnnl_memory_desc_t *src_md = dnnl_primitive_desc_query_md (pd,
      dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *weights_md = dnnl_primitive_desc_query_md (pd,
      dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *dst_md = dnnl_primitive_desc_query_md (pd,
      dnnl_query_dst_md, 0);
  const dnnl_memory_desc_t *scratch_md = dnnl_primitive_desc_query_md (pd,
      dnnl_query_scratchpad_md, 0);
  c->threads = g_new0 (conv_thread, c->n_threads);
  for (int t = 0; t < c->n_threads; t++) {
    conv_thread *th = &c->threads[t];
    if (!check (s, dnnl_stream_create (&th->stream, engine,
                dnnl_stream_default_flags), "stream creation")
        || !check (s, dnnl_memory_create (&th->src, src_md, engine,
                DNNL_MEMORY_NONE), "memory creation")
        || !check (s, dnnl_memory_create (&th->weights, weights_md, engine,
                DNNL_MEMORY_NONE), "memory creation")
        || !check (s, dnnl_memory_create (&th->dst, dst_md, engine,
                DNNL_MEMORY_NONE), "memory creation")
        || !check (s, dnnl_memory_create (&th->scratch, scratch_md, engine,
                DNNL_MEMORY_NONE), "memory creation")
        || (c->has_bias && !check (s, dnnl_memory_create (&th->bias,
                    bias_md, engine, DNNL_MEMORY_NONE), "memory creation")))
      return false;
  }
  return true;
}

/* Builds the primitive and everything around it; false with an error, or
 * false without one when oneDNN declines (before anything is made). */
static bool
build (hy_conv_dnnl *c, const setup *s, const hy_conv_params *p,
    const hy_tensor *x, const hy_tensor *w, const hy_tensor *y)
{
  dnnl_engine_t engine = cpu_engine (s->error);
  if (!engine)
    return false;
  const dnnl_format_tag_t blocked = c->nhwc ? dnnl_nhwc : dnnl_nChw16c;
  /* bf16: the input and the primitive's weights; the rest stays f32. */
  const hy_dnnl_conv_spec spec = {
    .p = p, .channels = c->channels, .filters = c->slice_filters,
    .in_h = x->shape.dims[2], .in_w = x->shape.dims[3],
    .out_h = y->shape.dims[2], .out_w = y->shape.dims[3],
    .compute = c->bf16 ? dnnl_bf16 : dnnl_f32, .dst_type = dnnl_f32,
    .src_tag = c->blocked_src ? blocked : dnnl_nchw, .dst_tag = blocked,
    .has_bias = c->has_bias,
  };
  const dnnl_dims_t bias_dims = { c->slice_filters };
  dnnl_memory_desc_t user_weights_md, bias_md;
  dnnl_primitive_desc_t pd = NULL;
  /* False without an error when oneDNN has nothing for this shape:
   * conv.c takes it. */
  bool ok = hy_dnnl_conv_user_weights_md (s, &spec, &user_weights_md)
      && check (s, dnnl_memory_desc_init_by_tag (&bias_md, 1, bias_dims,
              dnnl_f32, dnnl_x), "memory description")
      && hy_dnnl_conv_pd_create (s, engine, &spec, &pd);
  const char *impl = NULL;
  if (ok && (dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0,
              &impl) != dnnl_success || !is_direct_kernel (impl))) {
    g_debug ("%s: oneDNN offers %s only, conv.c runs it", s->what,
        impl ? impl : "nothing");
    ok = false;
  }
  if (ok) {
    g_debug ("%s: oneDNN %s, %" G_GINT64_FORMAT " slice(s) of %"
        G_GINT64_FORMAT " filters", s->what, impl, c->n_slices,
        c->slice_filters);
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_weights_md, 0);
    c->weight_bytes = (dnnl_memory_desc_get_size (wmd) + 63)
        & ~(size_t) 63;
    c->dst_bytes = dnnl_memory_desc_get_size (dnnl_primitive_desc_query_md (
            pd, dnnl_query_dst_md, 0));
    c->scratch_bytes = dnnl_memory_desc_get_size (
        dnnl_primitive_desc_query_md (pd, dnnl_query_scratchpad_md, 0));
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
        && hy_dnnl_reorder_weights (s, engine, w->data, &user_weights_md,
            wmd, c->n_slices, c->weights, c->weight_bytes)
        && make_threads (c, s, engine, pd, &bias_md);
  }
  dnnl_primitive_desc_destroy (pd);
  return ok;
}

/* nhwc in and out, or the plain input in and 16-channel blocks out. */
static void
set_layout (hy_conv_dnnl *c, bool nhwc)
{
  c->nhwc = c->blocked_src = nhwc;
  c->src_block = nhwc ? c->channels : B;
  c->dst_block = nhwc ? c->slice_filters : B;
  c->src_image_floats = nhwc ? c->channels * c->in_hw : 0;
  c->src_bytes = (size_t) (c->batch * c->src_image_floats) * sizeof (float);
  c->src16_bytes = c->bf16 ? (size_t) (c->batch * c->channels * c->in_hw)
      * sizeof (uint16_t) : 0;
}

hy_conv_dnnl *
hy_conv_dnnl_new (hy_cpu_ctx *ctx, const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const, GError **error)
{
  const hy_tensor *x = in[0], *w = in[1];
  if (p->n_spatial != 2 || p->num_group != 1 || !weights_const
      || x->shape.ndim != 4 || out->shape.ndim != 4
      || hy_shape_numel (&out->shape) == 0 || hy_shape_numel (&x->shape) == 0
      || (!ctx->bf16 && !worth_it (p, x->shape.dims[1], out->shape.dims[2]
              * out->shape.dims[3])))
    return NULL;

  hy_conv_dnnl *c = g_new0 (hy_conv_dnnl, 1);
  c->fused = p->fused;
  c->bf16 = ctx->bf16;
  c->has_bias = !p->no_bias;
  c->batch = x->shape.dims[0];
  c->channels = x->shape.dims[1];
  c->filters = p->num_filter;
  c->in_hw = x->shape.dims[2] * x->shape.dims[3];
  c->out_hw = out->shape.dims[2] * out->shape.dims[3];
  c->n_threads = hy_cpu_n_threads (ctx);
  c->n_slices = hy_dnnl_filter_slices (c->filters, c->batch, c->n_threads,
      ITEMS_PER_THREAD);
  c->slice_filters = c->filters / c->n_slices;

  /* ASCII: g_debug converts to the locale's charset. */
  g_autofree char *what = g_strdup_printf ("%" G_GINT64_FORMAT "x%"
      G_GINT64_FORMAT " convolution %" G_GINT64_FORMAT "->%" G_GINT64_FORMAT
      " on %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, p->kernel[0],
      p->kernel[1], c->channels, c->filters, x->shape.dims[2],
      x->shape.dims[3]);
  GError *failure = NULL;
  const setup s = { what, &failure };
  /* Made with one OpenMP thread, oneDNN's kernels are planned for one:
   * they run inside our pool.  The caller's own setting comes back. */
  const int omp_threads = omp_get_max_threads ();
  omp_set_num_threads (1);
  /* nhwc in and out first: its brgconv kernels are 5-40 % faster than
   * its 16-channel-block jit ones on ResNet-50's 3x3 layers, transposes
   * included, and 1.4x on a first layer's 3 channels.  Where it has no
   * direct kernel for nhwc, the input as it is with 16-channel blocks
   * out (its jit kernels for few channels). */
  set_layout (c, true);
  bool ok = build (c, &s, p, x, w, out);
  if (!ok && !failure) {         /* declined: nothing was made */
    set_layout (c, false);
    ok = build (c, &s, p, x, w, out);
  }
  omp_set_num_threads (omp_threads);
  if (!ok) {
    hy_conv_dnnl_free (c);
    if (failure)
      g_propagate_error (error, failure);
    return NULL;
  }
  return c;
}

bool
hy_conv_dnnl_is_bf16 (const hy_conv_dnnl *conv)
{
  return conv->bf16;
}

void
hy_conv_dnnl_free (hy_conv_dnnl *c)
{
  if (!c)
    return;
  for (int t = 0; c->threads && t < c->n_threads; t++) {
    conv_thread *th = &c->threads[t];
    dnnl_memory_destroy (th->src);
    dnnl_memory_destroy (th->weights);
    dnnl_memory_destroy (th->bias);
    dnnl_memory_destroy (th->dst);
    dnnl_memory_destroy (th->scratch);
    dnnl_stream_destroy (th->stream);
  }
  g_free (c->threads);
  dnnl_primitive_destroy (c->primitive);
  free (c->weights);
  g_free (c);
}

/* ---- a forward ----------------------------------------------------------- */

typedef struct conv_job {
  const hy_conv_dnnl *c;
  const float *x, *bias, *bn, *res;
  float *y;
  char *src;                    /* the blocked input (blocked_src) */
  uint16_t *src16;              /* the input the primitive reads, in bf16 */
  char *per_thread;             /* thread t's output slice and scratchpad */
  _Atomic int failed;           /* a dnnl_status_t */
} conv_job;

/* Tiles of positions [begin, end) over the images, into blocks (and, in
 * bf16, into the bf16 copy the primitive reads). */
static void
block_input (void *arg, int64_t begin, int64_t end, int thread)
{
  const conv_job *j = arg;
  const hy_conv_dnnl *c = j->c;
  const int64_t tiles = (c->in_hw + HY_BLOCKED_TILE - 1) / HY_BLOCKED_TILE;
  const int64_t image_elems = c->channels * c->in_hw;
  for (int64_t i = begin; i < end; i++) {
    const int64_t image = i / tiles, hw0 = i % tiles * HY_BLOCKED_TILE;
    const int64_t hw1 = hw0 + HY_BLOCKED_TILE < c->in_hw
        ? hw0 + HY_BLOCKED_TILE : c->in_hw;
    const float *x = j->x + image * image_elems;
    if (!c->blocked_src) {      /* bf16 planes: channel by channel */
      for (int64_t ch = 0; ch < c->channels; ch++)
        hy_bf16_from_floats (j->src16 + image * image_elems + ch * c->in_hw + hw0,
            x + ch * c->in_hw + hw0, hw1 - hw0);
      continue;
    }
    float *blocked = (float *) j->src + image * c->src_image_floats;
    hy_blocked_from_planes (blocked, x, c->channels, c->in_hw, c->src_block,
        hw0, hw1);
    /* nhwc (the only blocked form bf16 builds): the tile is one run. */
    if (c->bf16)
      hy_bf16_from_floats (j->src16 + image * image_elems + hw0 * c->channels,
          blocked + hw0 * c->channels, (hw1 - hw0) * c->channels);
  }
}

/* Items [begin, end): (image, filter slice). */
static void
run_items (void *arg, int64_t begin, int64_t end, int thread)
{
  conv_job *j = arg;
  const hy_conv_dnnl *c = j->c;
  const conv_thread *th = &c->threads[thread];
  char *mine = j->per_thread + (size_t) thread * c->thread_stride;
  float *dst = (float *) mine;
  void *scratch = mine + ((c->dst_bytes + 63) & ~(size_t) 63);
  /* This thread runs oneDNN's loops alone (a worker of ours is no
   * OpenMP thread: it would start a team of its own). */
  omp_set_num_threads (1);
  for (int64_t item = begin; item < end; item++) {
    const int64_t image = item / c->n_slices, slice = item % c->n_slices;
    const int64_t f0 = slice * c->slice_filters;
    const void *src = c->bf16
        ? (const void *) (j->src16 + image * c->channels * c->in_hw)
        : c->blocked_src
        ? (const void *) ((const float *) j->src
            + image * c->src_image_floats)
        : (const void *) (j->x + image * c->channels * c->in_hw);
    /* oneDNN's execute allocates a node per argument (docs/PRECISION.md,
     * "Allocations"): a scratchpad of no bytes is not passed. */
    dnnl_exec_arg_t args[5] = {
      { DNNL_ARG_SRC, th->src }, { DNNL_ARG_WEIGHTS, th->weights },
      { DNNL_ARG_DST, th->dst },
    };
    int n_args = 3;
    if (c->scratch_bytes)
      args[n_args++] = (dnnl_exec_arg_t) { DNNL_ARG_SCRATCHPAD, th->scratch };
    if (c->has_bias)
      args[n_args++] = (dnnl_exec_arg_t) { DNNL_ARG_BIAS, th->bias };
    dnnl_status_t st = dnnl_memory_set_data_handle (th->src, (void *) src);
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->weights,
          c->weights + slice * c->weight_bytes);
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->dst, dst);
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->scratch, scratch);
    if (st == dnnl_success && c->has_bias)
      st = dnnl_memory_set_data_handle (th->bias, (void *) (j->bias + f0));
    if (st == dnnl_success)
      st = dnnl_primitive_execute (c->primitive, th->stream, n_args, args);
    if (st != dnnl_success) {
      j->failed = st;
      return;
    }
    /* The bias is in already; the rest of the epilogue on the way out. */
    const int64_t n = c->filters - f0 < c->slice_filters
        ? c->filters - f0 : c->slice_filters;
    const size_t off = (size_t) ((image * c->filters + f0) * c->out_hw);
    const hy_epilogue_channels ch = {
      NULL, j->bn ? j->bn + f0 : NULL, c->filters,
    };
    hy_blocked_to_planes (j->y + off, dst, n, c->out_hw, c->dst_block,
        &c->fused, j->res ? j->res + off : NULL, &ch);
  }
}

void
hy_cpu_convolution_dnnl (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_conv_dnnl *c = params;
  const hy_fused_epilogue *e = &c->fused;
  /* Never more threads than set-up made memory objects for (fewer when
   * called from inside a loop). */
  const int threads = MIN (hy_cpu_n_threads (ctx), c->n_threads);
  const size_t src_room = ((c->src_bytes + 63) & ~(size_t) 63)
      + ((c->src16_bytes + 63) & ~(size_t) 63);
  char *ws = hy_cpu_workspace (ctx, src_room
      + (size_t) threads * c->thread_stride);
  const hy_epilogue_operands o = hy_epilogue_operands_of (!c->has_bias, e,
      in);
  conv_job j = {
    .c = c, .x = in[0]->data, .y = out[0]->data,
    .bias = o.bias, .bn = o.bn, .res = o.res,
    .src = ws,
    .src16 = (uint16_t *) (ws + ((c->src_bytes + 63) & ~(size_t) 63)),
    .per_thread = ws + src_room,
    .failed = dnnl_success,
  };
  if (c->blocked_src || c->bf16)
    hy_cpu_parallel_for (ctx, c->batch * ((c->in_hw + HY_BLOCKED_TILE - 1)
            / HY_BLOCKED_TILE), hy_cpu_grain (c->channels * HY_BLOCKED_TILE),
        block_input, &j);
  /* The calling thread is the application's: its OpenMP setting comes
   * back after. */
  const int omp_threads = omp_get_max_threads ();
  if (threads > 1)
    hy_cpu_parallel_each (ctx, c->batch * c->n_slices, run_items, &j);
  else
    run_items (&j, 0, c->batch * c->n_slices, 0);
  omp_set_num_threads (omp_threads);
  const int failed = j.failed;
  if (failed != dnnl_success)
    hy_cpu_fail (ctx, "oneDNN convolution %" G_GINT64_FORMAT "->%"
        G_GINT64_FORMAT " failed (%s)", c->channels, c->filters,
        dnnl_status2str ((dnnl_status_t) failed));
}
