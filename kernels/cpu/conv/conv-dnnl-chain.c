/*
 * conv-dnnl-chain.c — a pointwise-depthwise chain in bf16 through oneDNN
 * (see conv-dnnl-chain.h).
 *
 * Why: on MobileNetV2's blocks as oneDNN runs them with nothing around
 * them (tests/bench/pw_dw_bf16_bench.c: Xeon with AMX, one thread, CPU
 * ms), the thirteen blocks the fp32 rules fuse take 1.9-2.4 ms as bf16
 * chains on nhwc bf16 activations (brgconv_1x1 on AMX for the pointwise
 * layers, brdgmm_dw for the depthwise ones), against 4.6 ms for
 * conv-pw-dw.c's fp32 chains in a forward; each pointwise layer alone in
 * oneDNN bf16, fp32 planes between layers, was slower than both (10.9 ms
 * a forward against 7.0 with the fp32 chains).  In a forward, with the
 * layout and conversion at the chain's ends, the bf16 chain wins on the
 * small maps only (conv-strategy.c's rule); there MobileNetV2 b1 went
 * from 7.40 to 5.60 CPU ms per forward, b8 from 50.9 to 43.0
 * (docs/PRECISION.md).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/conv/conv-dnnl-chain.h"
#include "kernels/cpu/conv/layout-blocked.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/params/nn.h"

#define MAX_STAGES 3
#define TILE 64                 /* positions per transpose tile */
#define TILE_C 16

/* One layer of the chain, as the fused call's inputs give it. */
typedef struct stage {
  hy_conv_params p;
  int weight, bias, bn, res;    /* indices into the call's inputs, or -1 */
  int64_t channels, filters, groups;
  int64_t in_h, in_w, out_h, out_w;     /* the whole image's */
  const float *w_data, *bias_data, *bn_data;    /* constant operands */
} stage;

/* What a thread runs one stage of one band with. */
typedef struct stage_thread {
  dnnl_stream_t stream;
  dnnl_memory_t src, weights, bias, dst, scratch;
} stage_thread;

/* One stage made for one band's rows. */
typedef struct band_stage {
  dnnl_primitive_t prim;
  void *weights;                /* oneDNN's layout, bf16 */
  float *bias;                  /* folded (inner stages) or the layer's;
                                 * NULL: none (no argument for it) */
  size_t dst_bytes, scratch_bytes;
  stage_thread *threads;
} band_stage;

/* Output rows [o0, o1) of every image; the chain's input rows [i0, i1). */
typedef struct band {
  int64_t o0, o1, i0, i1;
  band_stage st[MAX_STAGES];
} band;

struct hy_conv_dnnl_chain {
  int n_stages;
  stage st[MAX_STAGES];
  int dw;                       /* which stage is the depthwise one */
  int64_t batch;
  int runs;                     /* bands per image */
  int n_threads;
  band *bands;
  size_t in_bytes;              /* a band's input, nhwc bf16 */
  size_t stage_bytes[MAX_STAGES];       /* a band's stage outputs */
  size_t scratch_bytes;
  size_t thread_bytes;
};

static size_t
round64 (size_t n)
{
  return (n + 63) & ~(size_t) 63;
}

/* ---- the stages, from the calls ----------------------------------------- */

static bool
constant (const hy_call *call, int k)
{
  return k < 0 || hy_call_input_const (call, k);
}

/* Stage from `call` (2-D, 4-D tensors), its operands at `at` + their
 * index in call; false where this chain cannot run it. */
static bool
stage_of (stage *s, const hy_call *call, int at, bool depthwise)
{
  const hy_conv_params *p = call->params;
  if (p->n_spatial != 2 || call->in[0]->shape.ndim != 4
      || call->out[0]->shape.ndim != 4 || p->dilate[0] != 1
      || p->dilate[1] != 1 || p->stride[0] != p->stride[1])
    return false;
  const hy_fused_inputs f = hy_fused_inputs_of (p->no_bias, &p->fused);
  if (!constant (call, 1) || !constant (call, f.bias)
      || !constant (call, f.bn))
    return false;
  const hy_shape *x = &call->in[0]->shape, *y = &call->out[0]->shape;
  *s = (stage) {
    .p = *p,
    .weight = 1 + at, .bias = f.bias < 0 ? -1 : f.bias + at,
    .bn = f.bn < 0 ? -1 : f.bn + at,
    .res = f.residual < 0 ? -1 : f.residual + at,
    .channels = x->dims[1], .filters = p->num_filter,
    .groups = p->num_group,
    .in_h = x->dims[2], .in_w = x->dims[3],
    .out_h = y->dims[2], .out_w = y->dims[3],
    .w_data = call->in[1]->data,
    .bias_data = f.bias < 0 ? NULL : call->in[f.bias]->data,
    .bn_data = f.bn < 0 ? NULL : call->in[f.bn]->data,
  };
  if (depthwise)
    return p->num_group == s->channels && s->filters == s->channels
        && p->kernel[0] == p->kernel[1] && p->pad[0] == p->pad[1];
  return p->num_group == 1 && p->kernel[0] == 1 && p->kernel[1] == 1
      && p->stride[0] == 1 && p->pad[0] == 0 && p->pad[1] == 0;
}

/* Inside the chain the activation is a oneDNN post-op: these only. */
static bool
inner_ok (const stage *s)
{
  const hy_fused_act a = s->p.fused.act;
  return !s->p.fused.residual && (a == HY_FUSED_ACT_NONE
      || a == HY_FUSED_ACT_RELU || a == HY_FUSED_ACT_CLIP
      || a == HY_FUSED_ACT_HARD_SWISH);
}

/* ---- making a band's primitives ----------------------------------------- */

#define OK(call) ((call) == dnnl_success)

static dnnl_engine_t
engine (void)
{
  static dnnl_engine_t e;
  static gsize once;
  if (g_once_init_enter (&once)) {
    if (!OK (dnnl_engine_create (&e, dnnl_cpu, 0)))
      e = NULL;
    g_once_init_leave (&once, 1);
  }
  return e;
}

/* The stage's weights with its BatchNorm folded in where it is inner
 * (bn (v) = (v - mean)·scale + shift per filter), and its bias likewise:
 * fp32, oihw; bias into `bias` (filters floats). */
static float *
folded_weights (const stage *s, bool inner, float *bias)
{
  const int64_t per_filter = s->channels / s->groups * s->p.kernel[0]
      * s->p.kernel[1];
  float *w = g_new (float, s->filters * per_filter);
  for (int64_t f = 0; f < s->filters; f++) {
    float scale = 1.0f, b = s->bias_data ? s->bias_data[f] : 0.0f;
    if (inner && s->bn_data) {
      const float mean = s->bn_data[f], sc = s->bn_data[s->filters + f];
      const float shift = s->bn_data[2 * s->filters + f];
      scale = sc;
      b = (b - mean) * sc + shift;
    }
    for (int64_t k = 0; k < per_filter; k++)
      w[f * per_filter + k] = s->w_data[f * per_filter + k] * scale;
    bias[f] = b;
  }
  return w;
}

static bool
reorder (dnnl_engine_t eng, const dnnl_memory_desc_t *from_md,
    const void *from, const dnnl_memory_desc_t *to_md, void *to)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t r = NULL;
  dnnl_stream_t stream = NULL;
  dnnl_memory_t a = NULL, b = NULL;
  bool ok = OK (dnnl_reorder_primitive_desc_create (&pd, from_md, eng,
          to_md, eng, NULL))
      && OK (dnnl_primitive_create (&r, pd))
      && OK (dnnl_stream_create (&stream, eng, dnnl_stream_default_flags))
      && OK (dnnl_memory_create (&a, from_md, eng, (void *) from))
      && OK (dnnl_memory_create (&b, to_md, eng, to));
  if (ok) {
    const dnnl_exec_arg_t args[] = {
      { DNNL_ARG_FROM, a }, { DNNL_ARG_TO, b },
    };
    ok = OK (dnnl_primitive_execute (r, stream, 2, args))
        && OK (dnnl_stream_wait (stream));
  }
  dnnl_memory_destroy (a);
  dnnl_memory_destroy (b);
  dnnl_stream_destroy (stream);
  dnnl_primitive_destroy (r);
  dnnl_primitive_desc_destroy (pd);
  return ok;
}

/* Stage s of the chain for input rows [ih0, ih1) (before padding: ih0
 * may be < 0, ih1 > in_h) and output rows [o0, o1). */
static bool
make_band_stage (hy_conv_dnnl_chain *c, band_stage *bs, int si, int64_t o0,
    int64_t o1, int64_t ih0, int64_t ih1)
{
  const stage *s = &c->st[si];
  const bool last = si == c->n_stages - 1;
  dnnl_engine_t eng = engine ();
  if (!eng)
    return false;
  const int64_t lo = MAX (ih0, 0), hi = MIN (ih1, s->in_h);
  const int64_t k = s->p.kernel[0];
  const dnnl_dims_t src_dims = { 1, s->channels, hi - lo, s->in_w };
  const dnnl_dims_t dst_dims = { 1, s->filters, o1 - o0, s->out_w };
  const dnnl_dims_t bias_dims = { s->filters };
  const dnnl_dims_t strides = { s->p.stride[0], s->p.stride[1] };
  const dnnl_dims_t pad_l = { lo - ih0, s->p.pad[1] };
  const dnnl_dims_t pad_r = { ih1 - hi, s->p.pad[1] };
  dnnl_memory_desc_t src_md, w_md, user_w_md, bias_md, dst_md;
  bool ok = OK (dnnl_memory_desc_init_by_tag (&src_md, 4, src_dims,
          dnnl_bf16, dnnl_nhwc))
      && OK (dnnl_memory_desc_init_by_tag (&dst_md, 4, dst_dims,
          last ? dnnl_f32 : dnnl_bf16, dnnl_nhwc))
      && OK (dnnl_memory_desc_init_by_tag (&bias_md, 1, bias_dims, dnnl_f32,
          dnnl_x));
  if (s->groups > 1) {
    const dnnl_dims_t wd = { s->groups, 1, 1, k, k };
    ok = ok && OK (dnnl_memory_desc_init_by_tag (&w_md, 5, wd, dnnl_bf16,
            dnnl_format_tag_any))
        && OK (dnnl_memory_desc_init_by_tag (&user_w_md, 5, wd, dnnl_f32,
            dnnl_goihw));
  } else {
    const dnnl_dims_t wd = { s->filters, s->channels, k, k };
    ok = ok && OK (dnnl_memory_desc_init_by_tag (&w_md, 4, wd, dnnl_bf16,
            dnnl_format_tag_any))
        && OK (dnnl_memory_desc_init_by_tag (&user_w_md, 4, wd, dnnl_f32,
            dnnl_oihw));
  }
  dnnl_convolution_desc_t desc;
  const bool has_bias = s->bias_data || (!last && s->bn_data);
  ok = ok && OK (dnnl_convolution_forward_desc_init (&desc,
          dnnl_forward_inference, dnnl_convolution_direct, &src_md, &w_md,
          has_bias ? &bias_md : NULL, &dst_md, strides, pad_l, pad_r));
  if (!ok)
    return false;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t ops = NULL;
  dnnl_primitive_desc_t pd = NULL;
  ok = OK (dnnl_primitive_attr_create (&attr))
      && OK (dnnl_primitive_attr_set_scratchpad_mode (attr,
          dnnl_scratchpad_mode_user))
      && OK (dnnl_post_ops_create (&ops));
  if (ok && !last && s->p.fused.act == HY_FUSED_ACT_RELU)
    ok = OK (dnnl_post_ops_append_eltwise (ops, 1.0f, dnnl_eltwise_relu,
            0.0f, 0.0f));
  /* oneDNN's x·relu6 (x + 3) / 6: MXNet's x · (clip (x + 3, 0, 6) / 6)
   * but for the rounding of one product, far below bf16's. */
  if (ok && !last && s->p.fused.act == HY_FUSED_ACT_HARD_SWISH)
    ok = OK (dnnl_post_ops_append_eltwise (ops, 1.0f,
            dnnl_eltwise_hardswish, 0.0f, 0.0f));
  if (ok && !last && s->p.fused.act == HY_FUSED_ACT_CLIP)
    ok = OK (dnnl_post_ops_append_eltwise (ops, 1.0f, dnnl_eltwise_clip,
            s->p.fused.alpha, s->p.fused.beta));
  ok = ok && OK (dnnl_primitive_attr_set_post_ops (attr, ops))
      && OK (dnnl_primitive_desc_create (&pd, &desc, attr, eng, NULL));
  const char *impl = NULL;
  /* Only a real kernel: oneDNN's reference ones are far slower than the
   * fp32 chain this replaces. */
  ok = ok && OK (dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0,
          &impl)) && impl && !strstr (impl, "ref");
  float *w = NULL;
  if (ok) {
    g_debug ("bf16 chain stage %d (%" G_GINT64_FORMAT "->%" G_GINT64_FORMAT
        ", rows %" G_GINT64_FORMAT "-%" G_GINT64_FORMAT "): %s", si,
        s->channels, s->filters, o0, o1, impl);
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_weights_md, 0);
    bs->bias = g_new (float, s->filters);
    w = folded_weights (s, !last, bs->bias);
    /* oneDNN's execute allocates a node per argument (docs/PRECISION.md,
     * "Allocations"): a layer with no bias and nothing folded into one
     * (a projection, its BatchNorm ours) gets none. */
    if (!has_bias) {
      g_free (bs->bias);
      bs->bias = NULL;
    }
    bs->weights = aligned_alloc (64, round64 (dnnl_memory_desc_get_size (
                wmd)));
    bs->dst_bytes = dnnl_memory_desc_get_size (dnnl_primitive_desc_query_md (
            pd, dnnl_query_dst_md, 0));
    bs->scratch_bytes = dnnl_memory_desc_get_size (
        dnnl_primitive_desc_query_md (pd, dnnl_query_scratchpad_md, 0));
    ok = bs->weights && reorder (eng, &user_w_md, w, wmd, bs->weights)
        && OK (dnnl_primitive_create (&bs->prim, pd));
    bs->threads = g_new0 (stage_thread, c->n_threads);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_scratchpad_md, 0);
    for (int t = 0; ok && t < c->n_threads; t++) {
      stage_thread *th = &bs->threads[t];
      ok = OK (dnnl_stream_create (&th->stream, eng,
              dnnl_stream_default_flags))
          && OK (dnnl_memory_create (&th->src, dnnl_primitive_desc_query_md (
                  pd, dnnl_query_src_md, 0), eng, DNNL_MEMORY_NONE))
          && OK (dnnl_memory_create (&th->weights, wmd, eng, bs->weights))
          && (!bs->bias || OK (dnnl_memory_create (&th->bias, &bias_md,
                  eng, bs->bias)))
          && OK (dnnl_memory_create (&th->dst, dnnl_primitive_desc_query_md (
                  pd, dnnl_query_dst_md, 0), eng, DNNL_MEMORY_NONE))
          && OK (dnnl_memory_create (&th->scratch, smd, eng,
              DNNL_MEMORY_NONE));
    }
  }
  g_free (w);
  dnnl_primitive_desc_destroy (pd);
  dnnl_post_ops_destroy (ops);
  dnnl_primitive_attr_destroy (attr);
  return ok;
}

static void
free_band_stage (band_stage *bs, int n_threads)
{
  for (int t = 0; bs->threads && t < n_threads; t++) {
    stage_thread *th = &bs->threads[t];
    dnnl_memory_destroy (th->src);
    dnnl_memory_destroy (th->weights);
    dnnl_memory_destroy (th->bias);
    dnnl_memory_destroy (th->dst);
    dnnl_memory_destroy (th->scratch);
    dnnl_stream_destroy (th->stream);
  }
  g_free (bs->threads);
  dnnl_primitive_destroy (bs->prim);
  free (bs->weights);
  g_free (bs->bias);
  memset (bs, 0, sizeof *bs);
}

static void
free_bands (hy_conv_dnnl_chain *c)
{
  for (int r = 0; c->bands && r < c->runs; r++)
    for (int s = 0; s < MAX_STAGES; s++)
      free_band_stage (&c->bands[r].st[s], c->n_threads);
  g_free (c->bands);
  c->bands = NULL;
}

/* Every band's primitives for the stages the chain has now. */
static bool
make_bands (hy_conv_dnnl_chain *c)
{
  free_bands (c);
  const stage *dw = &c->st[c->dw];
  const int64_t out_h = dw->out_h, s = dw->p.stride[0], pad = dw->p.pad[0];
  const int64_t k = dw->p.kernel[0];
  /* A band per thread where the batch does not share out.  (Smaller
   * bands, to keep the depthwise layer's input in cache, changed nothing
   * measurable on MobileNetV2's 112×112 and 56×56 blocks.) */
  const int64_t runs = c->batch >= 2 * c->n_threads ? 1 : c->n_threads;
  c->runs = (int) MIN (runs, out_h);
  c->bands = g_new0 (band, c->runs);
  const int omp_threads = omp_get_max_threads ();
  omp_set_num_threads (1);      /* oneDNN's kernels planned for one */
  bool ok = true;
  memset (c->stage_bytes, 0, sizeof c->stage_bytes);
  c->in_bytes = c->scratch_bytes = 0;
  for (int r = 0; ok && r < c->runs; r++) {
    band *b = &c->bands[r];
    b->o0 = out_h * r / c->runs;
    b->o1 = out_h * (r + 1) / c->runs;
    /* The depthwise layer's input rows, padding included. */
    const int64_t ih0 = b->o0 * s - pad, ih1 = (b->o1 - 1) * s - pad + k;
    b->i0 = MAX (ih0, 0);
    b->i1 = MIN (ih1, dw->in_h);
    for (int si = 0; ok && si < c->n_stages; si++) {
      /* Before the depthwise layer: its input rows; after: its output's. */
      ok = si < c->dw ? make_band_stage (c, &b->st[si], si, b->i0, b->i1,
          b->i0, b->i1)
          : si == c->dw ? make_band_stage (c, &b->st[si], si, b->o0, b->o1,
          ih0, ih1)
          : make_band_stage (c, &b->st[si], si, b->o0, b->o1, b->o0, b->o1);
      if (ok) {
        c->stage_bytes[si] = MAX (c->stage_bytes[si], b->st[si].dst_bytes);
        c->scratch_bytes = MAX (c->scratch_bytes, b->st[si].scratch_bytes);
      }
    }
    c->in_bytes = MAX (c->in_bytes, (size_t) ((b->i1 - b->i0)
            * c->st[0].in_w * c->st[0].channels) * sizeof (uint16_t));
  }
  omp_set_num_threads (omp_threads);
  c->thread_bytes = round64 (c->in_bytes) + round64 (c->scratch_bytes);
  for (int si = 0; si < c->n_stages; si++)
    c->thread_bytes += round64 (c->stage_bytes[si]);
  return ok;
}

/* ---- the chain ------------------------------------------------------------ */

hy_conv_dnnl_chain *
hy_conv_dnnl_chain_new (hy_cpu_ctx *ctx, const hy_call *first,
    const hy_call *second)
{
  const hy_conv_params *p1 = first->params;
  hy_conv_dnnl_chain *c = g_new0 (hy_conv_dnnl_chain, 1);
  const bool from_depthwise = p1->num_group > 1;
  c->n_stages = 2;
  c->dw = from_depthwise ? 0 : 1;
  c->batch = first->in[0]->shape.dims[0];
  c->n_threads = hy_cpu_n_threads (ctx);
  /* second's in[k], k >= 1, follows first's arguments. */
  if (!stage_of (&c->st[0], first, 0, from_depthwise)
      || !stage_of (&c->st[1], second, first->n_in - 1, !from_depthwise)
      || !inner_ok (&c->st[0]) || !make_bands (c)) {
    hy_conv_dnnl_chain_free (c);
    return NULL;
  }
  return c;
}

bool
hy_conv_dnnl_chain_take_projection (hy_cpu_ctx *ctx,
    hy_conv_dnnl_chain *c, const hy_call *first, const hy_call *second)
{
  if (c->n_stages == MAX_STAGES || c->dw != 1 || !inner_ok (&c->st[1]))
    return false;
  /* Made on a copy: where oneDNN declines, the chain stays as it was. */
  hy_conv_dnnl_chain *t = g_memdup2 (c, sizeof *c);
  t->bands = NULL;
  t->n_stages = 3;
  if (!stage_of (&t->st[2], second, first->n_in - 1, false)
      || !make_bands (t)) {
    hy_conv_dnnl_chain_free (t);
    return false;
  }
  free_bands (c);
  *c = *t;
  g_free (t);
  return true;
}

const char *
hy_conv_dnnl_chain_kernel_name (const hy_conv_dnnl_chain *c)
{
  return c->n_stages == 3 ? "pw+dw+pw-onednn-bf16"
      : c->dw == 0 ? "dw+pw-onednn-bf16" : "pw+dw-onednn-bf16";
}

void
hy_conv_dnnl_chain_free (hy_conv_dnnl_chain *c)
{
  if (!c)
    return;
  free_bands (c);
  g_free (c);
}

/* ---- a forward ------------------------------------------------------------ */

typedef struct chain_job {
  const hy_conv_dnnl_chain *c;
  const hy_tensor *const *in;
  float *y;
  char *ws;
  size_t ws_stride;
  _Atomic int failed;
} chain_job;

/* Positions [p0, p1) of `channels` planes of hw floats into nhwc bf16, a
 * tile of TILE_C channels × TILE positions at a time: each channel's run
 * rounded in a vectorised loop into the tile, then the tile transposed
 * (a rounding per strided store did not vectorise: 3x slower on
 * MobileNetV2's 112×112 block). */
HY_CPU_VECTOR_CLONES static void
planes_to_nhwc_bf16 (uint16_t *restrict y, const float *restrict x,
    int64_t channels, int64_t hw, int64_t p0, int64_t p1)
{
  uint16_t tile[TILE_C][TILE];
  for (int64_t t0 = p0; t0 < p1; t0 += TILE) {
    const int64_t n = MIN (TILE, p1 - t0);
    for (int64_t c0 = 0; c0 < channels; c0 += TILE_C) {
      const int64_t nc = MIN (TILE_C, channels - c0);
      for (int64_t c = 0; c < nc; c++) {
        const float *xc = x + (c0 + c) * hw + t0;
        for (int64_t i = 0; i < n; i++)
          tile[c][i] = hy_bf16_from_float (xc[i]);
      }
      uint16_t *yt = y + (t0 - p0) * channels + c0;
      if (nc == TILE_C)         /* a constant count gcc unrolls */
        for (int64_t i = 0; i < n; i++)
          for (int64_t c = 0; c < TILE_C; c++)
            yt[i * channels + c] = tile[c][i];
      else
        for (int64_t i = 0; i < n; i++)
          for (int64_t c = 0; c < nc; c++)
            yt[i * channels + c] = tile[c][i];
    }
  }
}

static dnnl_status_t
run_stage (const band_stage *bs, int thread, const void *src, void *dst,
    void *scratch)
{
  const stage_thread *th = &bs->threads[thread];
  dnnl_status_t st = dnnl_memory_set_data_handle (th->src, (void *) src);
  if (st == dnnl_success)
    st = dnnl_memory_set_data_handle (th->dst, dst);
  if (st == dnnl_success)
    st = dnnl_memory_set_data_handle (th->scratch, scratch);
  if (st != dnnl_success)
    return st;
  /* Only the arguments there are: oneDNN's execute allocates a node for
   * each. */
  dnnl_exec_arg_t args[5] = {
    { DNNL_ARG_SRC, th->src }, { DNNL_ARG_WEIGHTS, th->weights },
    { DNNL_ARG_DST, th->dst },
  };
  int n = 3;
  if (bs->bias)
    args[n++] = (dnnl_exec_arg_t) { DNNL_ARG_BIAS, th->bias };
  if (bs->scratch_bytes)
    args[n++] = (dnnl_exec_arg_t) { DNNL_ARG_SCRATCHPAD, th->scratch };
  return dnnl_primitive_execute (bs->prim, th->stream, n, args);
}

/* Items [begin, end): (image, band). */
static void
chain_items (void *arg, int64_t begin, int64_t end, int thread)
{
  chain_job *j = arg;
  const hy_conv_dnnl_chain *c = j->c;
  const stage *first = &c->st[0], *last = &c->st[c->n_stages - 1];
  char *ws = j->ws + (size_t) thread * j->ws_stride;
  uint16_t *in = (uint16_t *) ws;
  void *out[MAX_STAGES];
  char *at = ws + round64 (c->in_bytes);
  for (int s = 0; s < c->n_stages; s++) {
    out[s] = at;
    at += round64 (c->stage_bytes[s]);
  }
  void *scratch = at;
  omp_set_num_threads (1);
  const int64_t in_hw = first->in_h * first->in_w;
  const int64_t out_hw = last->out_h * last->out_w;
  for (int64_t item = begin; item < end; item++) {
    const int64_t image = item / c->runs;
    const band *b = &c->bands[item % c->runs];
    planes_to_nhwc_bf16 (in, j->in[0]->data + image * first->channels
        * in_hw, first->channels, in_hw, b->i0 * first->in_w,
        b->i1 * first->in_w);
    const void *src = in;
    for (int s = 0; s < c->n_stages; s++) {
      dnnl_status_t st = run_stage (&b->st[s], thread, src, out[s],
          scratch);
      if (st != dnnl_success) {
        j->failed = st;
        return;
      }
      src = out[s];
    }
    /* The bias is in; BatchNorm, residual and activation on the way out. */
    const size_t off = (size_t) (image * last->filters * out_hw
        + b->o0 * last->out_w);
    const hy_epilogue_channels ch = {
      NULL, last->bn < 0 ? NULL : j->in[last->bn]->data, last->filters,
    };
    hy_blocked_to_planes_part (j->y + off, src, last->filters,
        (b->o1 - b->o0) * last->out_w, out_hw, last->filters,
        &last->p.fused, last->res < 0 ? NULL : j->in[last->res]->data + off,
        &ch);
  }
}

void
hy_cpu_convolution_dnnl_chain (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_conv_dnnl_chain *c = params;
  chain_job j = {
    .c = c, .in = in, .y = out[0]->data, .failed = dnnl_success,
  };
  j.ws = hy_cpu_workspace_per_thread (ctx, c->thread_bytes, &j.ws_stride);
  const int omp_threads = omp_get_max_threads ();
  const int64_t items = c->batch * c->runs;
  if (MIN (hy_cpu_n_threads (ctx), c->n_threads) > 1)
    hy_cpu_parallel_each (ctx, items, chain_items, &j);
  else
    chain_items (&j, 0, items, 0);
  omp_set_num_threads (omp_threads);
  const int failed = j.failed;
  if (failed != dnnl_success)
    hy_cpu_fail (ctx, "oneDNN bf16 chain %" G_GINT64_FORMAT "->%"
        G_GINT64_FORMAT " failed (%s)", c->st[0].channels,
        c->st[c->n_stages - 1].filters, dnnl_status2str (
            (dnnl_status_t) failed));
}
