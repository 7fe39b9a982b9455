/*
 * qconv-dnnl-fused.c — the quantized convolution writing its bytes from
 * inside oneDNN (see qconv-dnnl-fused.h).
 *
 * One primitive over every filter, run by an OpenMP team of the size
 * it was made with (conv-dnnl-int8.c's run_fused says which, and why);
 * or the output's rows cut into bands, a primitive each, every band run
 * by one thread of our pool.  A band reads the input rows its outputs
 * need (the convolution's own padding where they fall outside) and
 * writes whole rows of the NHWC output, so no two threads write one
 * cache line but at the seam, and every output is the same sum, scaled
 * and rounded alike, as in one primitive.  On small maps (7×7) the bands
 * are slices of the filters instead, each over the whole input, its own
 * weights, scales and bias (by_filters says when, and why).
 */
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "hybrid.h"
#include "kernels/cpu/conv/dnnl-conv-setup.h"
#include "kernels/cpu/quantized/qconv-dnnl-fused.h"
#include "kernels/cpu/quantized/qconv-dnnl-groups.h"

/* One band of output rows: its primitive and what executes it (memory
 * objects are not thread-safe, so each band has its own). */
typedef struct fused_band {
  dnnl_primitive_t primitive;
  dnnl_stream_t stream;
  dnnl_memory_t src, weights, bias, dst, scratch;
  void *weights_data;           /* NULL: band 0's (the same layout) */
  void *scratch_data;
  size_t src_offset, dst_offset;        /* bytes: its first rows */
  /* a band of filters: its dense output, copied into its channels */
  uint8_t *dense;
  int64_t pixels, oc_n, oc_all;
  bool with_sum;
} fused_band;

/* A band's filters: [oc0, oc0 + oc_n), every filter for a band of rows. */
typedef struct band_share {
  int64_t oc0, oc_n;
} band_share;

struct hy_qconv_fused {
  int n_bands;
  bool by_filters;              /* bands of filters, not of rows */
  fused_band *bands;
  void *bias_data;
  int n_threads;
};

static gboolean
ok (dnnl_status_t st, const char *what, GError **error)
{
  const hy_dnnl_setup s = { "int8 convolution with bytes out", error };
  return hy_dnnl_check (&s, st, what);
}

void
hy_qconv_fused_free (hy_qconv_fused *f)
{
  if (!f)
    return;
  for (int b = 0; f->bands && b < f->n_bands; b++) {
    fused_band *band = &f->bands[b];
    dnnl_memory_destroy (band->src);
    dnnl_memory_destroy (band->weights);
    dnnl_memory_destroy (band->bias);
    dnnl_memory_destroy (band->dst);
    dnnl_memory_destroy (band->scratch);
    dnnl_primitive_destroy (band->primitive);
    dnnl_stream_destroy (band->stream);
    free (band->weights_data);
    free (band->scratch_data);
    free (band->dense);
  }
  g_free (f->bands);
  free (f->bias_data);
  g_free (f);
}

/* The user's OIHW weights into the band's primitive's layout, once: a
 * band whose layout is band 0's reads band 0's. */
static gboolean
reorder_weights (hy_qconv_fused *f, int b, dnnl_engine_t engine,
    const dnnl_memory_desc_t *user_md, const dnnl_memory_desc_t *md,
    const int8_t *wq, GError **error)
{
  const hy_dnnl_setup s = { "int8 convolution with bytes out",
    error };
  fused_band *band = &f->bands[b];
  if (b > 0 && !f->by_filters) {
    const dnnl_memory_desc_t *first = NULL;
    if (dnnl_memory_get_memory_desc (f->bands[0].weights, &first)
        == dnnl_success && dnnl_memory_desc_equal (first, md))
      return ok (dnnl_memory_create (&band->weights, md, engine,
              f->bands[0].weights_data), "memory", error);
  }
  band->weights_data = hy_dnnl_aligned_bytes (dnnl_memory_desc_get_size (md));
  return band->weights_data
      && ok (dnnl_memory_create (&band->weights, md, engine,
              band->weights_data), "memory", error)
      && hy_dnnl_reorder_weights (&s, engine, wq, user_md, md, 1,
          band->weights_data, 0);
}

/* ReLU, the residual, ReLU: MXNet's order of post-ops. */
static gboolean
set_post_ops (dnnl_primitive_attr_t attr, const hy_quantized_conv_params *p,
    float sum_scale, GError **error)
{
  dnnl_post_ops_t po = NULL;
  gboolean good = ok (dnnl_post_ops_create (&po), "post-ops", error);
  if (good && p->with_act)
    good = ok (dnnl_post_ops_append_eltwise (po, 1.0f, dnnl_eltwise_relu,
            0.0f, 0.0f), "ReLU post-op", error);
  if (good && p->with_sum)
    good = ok (dnnl_post_ops_append_sum (po, sum_scale), "sum post-op",
        error);
  if (good && p->with_postsum_act)
    good = ok (dnnl_post_ops_append_eltwise (po, 1.0f, dnnl_eltwise_relu,
            0.0f, 0.0f), "ReLU post-op", error);
  if (good)
    good = ok (dnnl_primitive_attr_set_post_ops (attr, po), "post-ops",
        error);
  if (po)
    dnnl_post_ops_destroy (po);
  return good;
}

/* The rows [o0, o1) of every image's output: the input rows they read,
 * and the padding that stands for the rows outside the input. */
typedef struct band_rows {
  int64_t out_rows, in_first, in_rows, pad_top, pad_bottom;
} band_rows;

static band_rows
rows_of (const hy_conv_params *cp, const hy_qconv_geometry *g, int64_t o0,
    int64_t o1)
{
  const int64_t reach = (cp->kernel[0] - 1) * cp->dilate[0] + 1;
  const int64_t first = o0 * cp->stride[0] - cp->pad[0];
  const int64_t end = (o1 - 1) * cp->stride[0] - cp->pad[0] + reach;
  const int64_t in0 = MAX (first, 0), in1 = MIN (end, g->H);
  return (band_rows) { o1 - o0, in0, in1 - in0, in0 - first, end - in1 };
}

/* Band b's primitive, its memories and its weights. */
static gboolean
make_band (hy_qconv_fused *f, int b, dnnl_engine_t engine,
    const hy_quantized_conv_params *p, const hy_qconv_geometry *g,
    const band_rows *r, const band_share *share, const int8_t *wq,
    const float *scales, float sum_scale, GError **error)
{
  fused_band *band = &f->bands[b];
  const hy_conv_params *cp = &p->conv;
  dnnl_dims_t src_dims = { g->N, g->C, r->in_rows, g->W };
  const int64_t oc0 = share->oc0, oc_n = share->oc_n;
  dnnl_dims_t bias_dims = { oc_n };
  dnnl_dims_t dst_dims = { g->N, oc_n, r->out_rows, g->OW };
  dnnl_dims_t strides = { cp->stride[0], cp->stride[1] };
  dnnl_dims_t dilates = { cp->dilate[0] - 1, cp->dilate[1] - 1 };
  dnnl_dims_t pad_l = { r->pad_top, cp->pad[1] };
  dnnl_dims_t pad_r = { r->pad_bottom, cp->pad[1] };
  /* with a residual oneDNN saturates to the residual's dtype (MXNet runs
   * in place on it; hy_qconv_store) and the output reads those bytes */
  bool dst_u8 = p->with_sum ? p->sum_uint8 : p->out_uint8;
  dnnl_memory_desc_t src_md, wei_md, wei_user_md, bias_md, dst_md;
  dnnl_convolution_desc_t desc;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  band->src_offset = (size_t) (r->in_first * g->W * g->C);
  band->dst_offset = f->by_filters ? (size_t) oc0
      : (size_t) ((g->OH * b / f->n_bands) * g->OW * g->OC);
  gboolean good = ok (dnnl_stream_create (&band->stream, engine,
          dnnl_stream_default_flags), "stream", error)
      && ok (dnnl_memory_desc_init_by_tag (&src_md, 4, src_dims,
              p->data_uint8 ? dnnl_u8 : dnnl_s8, dnnl_nhwc), "src", error)
      && ok (hy_qconv_dnnl_weight_mds (cp, oc_n, g->C, &wei_user_md,
              &wei_md), "weights", error)
      && ok (dnnl_memory_desc_init_by_tag (&bias_md, 1, bias_dims, dnnl_s32,
              dnnl_a), "bias", error)
      && ok (dnnl_memory_desc_init_by_tag (&dst_md, 4, dst_dims,
              dst_u8 ? dnnl_u8 : dnnl_s8, dnnl_nhwc), "dst", error)
      && ok (dnnl_dilated_convolution_forward_desc_init (&desc,
              dnnl_forward_inference, dnnl_convolution_direct, &src_md,
              &wei_md, &bias_md, &dst_md, strides, dilates, pad_l, pad_r),
          "descriptor", error)
      && ok (dnnl_primitive_attr_create (&attr), "attributes", error)
      && ok (dnnl_primitive_attr_set_scratchpad_mode (attr,
              dnnl_scratchpad_mode_user), "attributes", error)
      && ok (dnnl_primitive_attr_set_output_scales (attr, oc_n, 1 << 1,
              scales + oc0), "output scales", error)
      && set_post_ops (attr, p, sum_scale, error);
  if (good) {
    /* oneDNN's kernels fix their thread count when made, from OpenMP's:
     * the backend's, whatever the calling thread had */
    const int omp_threads = omp_get_max_threads ();
    omp_set_num_threads (f->n_threads);
    dnnl_status_t st = dnnl_primitive_desc_create (&pd, &desc, attr, engine,
        NULL);
    omp_set_num_threads (omp_threads);
    if (st == dnnl_unimplemented) {
      dnnl_primitive_attr_destroy (attr);
      return FALSE;             /* no error: today's path runs it */
    }
    good = ok (st, "primitive descriptor", error)
        && ok (dnnl_primitive_create (&band->primitive, pd), "primitive",
            error);
  }
  if (good) {
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_scratchpad_md, 0);
    band->scratch_data =
        hy_dnnl_aligned_bytes (dnnl_memory_desc_get_size (smd));
    good = band->scratch_data
        && reorder_weights (f, b, engine, &wei_user_md, wmd,
            wq + oc0 * g->C * cp->kernel[0] * cp->kernel[1], error)
        && ok (dnnl_memory_create (&band->bias, &bias_md, engine,
                (int32_t *) f->bias_data + oc0), "memory", error)
        && ok (dnnl_memory_create (&band->scratch, smd, engine,
                band->scratch_data), "memory", error)
        && ok (dnnl_memory_create (&band->src, &src_md, engine,
                DNNL_MEMORY_NONE), "memory", error)
        && ok (dnnl_memory_create (&band->dst, &dst_md, engine,
                DNNL_MEMORY_NONE), "memory", error);
    if (good && f->by_filters) {
      band->pixels = g->OH * g->OW;
      band->oc_n = oc_n;
      band->oc_all = g->OC;
      band->with_sum = p->with_sum;
      band->dense = hy_dnnl_aligned_bytes ((size_t) (band->pixels * oc_n));
      good = band->dense
          && ok (dnnl_memory_set_data_handle (band->dst, band->dense),
          "memory", error);
    }
  }
  dnnl_primitive_desc_destroy (pd);
  dnnl_primitive_attr_destroy (attr);
  return good;
}

/* Maps of at most this many pixels are cut into slices of filters: 7×7,
 * a ResNet's last stage.  Bands of 3 and 4 of its rows leave oneDNN's AMX
 * kernels (brgconv, blocking on rows × width of pixels) tiles of a few
 * pixels each; a slice of filters keeps all 49.  Medians of hybridinfer
 * bench -t 2 -n 40, batch 1, old and new alternated 8 times on a loaded
 * 2-vCPU Xeon (median of the medians): ResNet-18 2.05 -> 1.93 ms,
 * ResNet-50 5.26 -> 4.94 ms, the outputs the same bits.  14×14 (196)
 * cut so too was slower: ResNet-50 5.07-5.35 ms against 4.94-5.09 with
 * 7×7 alone. */
#define FILTER_SLICES_MAX_PIXELS 49

/* Whether a batch of one is cut into slices of filters rather than bands
 * of rows: on small maps, where every slice is whole blocks of 64
 * filters (brgconv's int8 block on AMX); where a slice would end inside
 * a block (MobileNetV2's 160, 320, 960 filters) the rows stay. */
static bool
by_filters (const hy_quantized_conv_params *p, const hy_qconv_geometry *g,
    int n_bands)
{
  return p->conv.num_group == 1 && g->OC % (64 * (int64_t) n_bands) == 0
      && g->OH * g->OW <= FILTER_SLICES_MAX_PIXELS;
}

hy_qconv_fused *
hy_qconv_fused_new (dnnl_engine_t engine, const hy_quantized_conv_params *p,
    const hy_qconv_geometry *g, const int8_t *wq, const int32_t *bias_q,
    const float *scales, float sum_scale, int n_threads, int n_bands,
    GError **error)
{
  hy_qconv_fused *f = g_new0 (hy_qconv_fused, 1);
  /* a band a thread, at least one output row each */
  /* a band a thread, at least one output row each; of one image (a
   * band's rows of the next image lie elsewhere) */
  f->n_bands = g->N > 1 ? 1 : (int) CLAMP ((int64_t) n_bands, 1, g->OH);
  f->by_filters = f->n_bands > 1 && by_filters (p, g, f->n_bands);
  f->n_threads = f->n_bands > 1 ? 1 : n_threads;
  f->bands = g_new0 (fused_band, f->n_bands);
  f->bias_data = hy_dnnl_aligned_bytes (g->OC * sizeof (int32_t));
  gboolean good = f->bias_data != NULL;
  if (good)
    memcpy (f->bias_data, bias_q, g->OC * sizeof (int32_t));
  for (int b = 0; good && b < f->n_bands; b++) {
    /* one band: the whole input, whose images lie H rows apart */
    const band_rows whole = { g->OH, 0, g->H, p->conv.pad[0],
      p->conv.pad[0]
    };
    const band_rows r = f->n_bands == 1 || f->by_filters ? whole
        : rows_of (&p->conv, g, g->OH * b / f->n_bands,
        g->OH * (b + 1) / f->n_bands);
    band_share share = { 0, g->OC };
    if (f->by_filters) {
      share.oc_n = g->OC / f->n_bands;
      share.oc0 = share.oc_n * b;
    }
    good = make_band (f, b, engine, p, g, &r, &share, wq, scales, sum_scale,
        error);
  }
  if (!good) {
    hy_qconv_fused_free (f);
    return NULL;
  }
  return f;
}

int
hy_qconv_fused_bands (const hy_qconv_fused *f)
{
  return f->n_bands;
}

dnnl_status_t
hy_qconv_fused_run (hy_qconv_fused *f, int b, const void *src, void *dst)
{
  fused_band *band = &f->bands[b];
  dnnl_exec_arg_t args[] = {
    { DNNL_ARG_SRC, band->src }, { DNNL_ARG_WEIGHTS, band->weights },
    { DNNL_ARG_BIAS, band->bias }, { DNNL_ARG_DST, band->dst },
    { DNNL_ARG_SCRATCHPAD, band->scratch },
  };
  dnnl_status_t st = dnnl_memory_set_data_handle (band->src,
      (void *) ((const char *) src + band->src_offset));
  uint8_t *slice = (uint8_t *) dst + band->dst_offset;
  if (st == dnnl_success && !band->dense)
    st = dnnl_memory_set_data_handle (band->dst, slice);
  if (st != dnnl_success)
    return st;
  /* a slice of filters writes every pixel's channels [oc0, oc0 + oc_n):
   * oneDNN 2.6 runs an output with the whole tensor's strides on its
   * reference kernel only, so the slice goes through dense bytes of its
   * own (7×7×256: 12 KiB, in cache), the residual copied in first */
  for (int64_t px = 0; band->dense && band->with_sum && px < band->pixels;
      px++)
    memcpy (band->dense + px * band->oc_n, slice + px * band->oc_all,
        (size_t) band->oc_n);
  /* the team it was made with: oneDNN's own over every filter and pixel,
   * or this thread alone for a band of rows or filters */
  const int omp_threads = omp_get_max_threads ();
  omp_set_num_threads (f->n_threads);
  st = dnnl_primitive_execute (band->primitive, band->stream,
      G_N_ELEMENTS (args), args);
  if (st == dnnl_success)
    st = dnnl_stream_wait (band->stream);
  omp_set_num_threads (omp_threads);
  for (int64_t px = 0; band->dense && st == dnnl_success
      && px < band->pixels; px++)
    memcpy (slice + px * band->oc_all, band->dense + px * band->oc_n,
        (size_t) band->oc_n);
  return st;
}
