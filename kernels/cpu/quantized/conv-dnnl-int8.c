/*
 * conv-dnnl-int8.c — the quantized convolution through oneDNN's int8
 * kernels (see conv-dnnl-int8.h).
 *
 * oneDNN computes the int32 sums alone (u8/s8 × s8 → s32, NHWC): oneDNN
 * 2.6's direct kernels take no output scales given at run time, and the
 * scales follow the data's range, a runtime input.  The pass back to the
 * plain output adds the bias and scales as the reference does, then
 * applies hy_qconv_finish, the reference's own epilogue.  So the products
 * are oneDNN's (VNNI / AMX where the CPU has them) and every rounding is
 * the reference's.
 *
 * In a plan, a value every reader of which is one of these convolutions
 * (as data or residual) is held as bytes, NHWC, in the arena (the
 * backend's private-value hooks at the end): the data is then read as
 * it lies, and the output, from every slice's sums, is finished in a
 * pass over pixels of its own, so that no two threads write one pixel's
 * cache lines.  The bytes hold the same integers as the floats would:
 * the results are the same bits.  HYBRIDINFER_INT8_BYTES=0 keeps planes.
 *
 * Where the plan holds the data, the residual and the output as bytes,
 * oneDNN writes the output's bytes itself instead (run_fused below).
 *
 * Threads: like conv-dnnl.c, the filters are cut into equal slices, each
 * one execution of the same primitive on one thread of the kernels' pool
 * with one OpenMP thread (oneDNN's Debian build threads with OpenMP),
 * its output slice finished by the same thread while it is in cache.
 *
 * Grouped and depthwise convolutions run here too, as one slice (a slice
 * of their filters would read a slice of the data's channels), their
 * weights described as groups (qconv-dnnl-groups.h); oneDNN 2.6 has
 * int8 kernels for them (brdgmm_dw, jit depthwise).  Why: on the
 * reference they took most of a MobileNet's time, and the values around
 * them went back to float planes.  Medians per forward, hybridinfer bench
 * -t 2 -n 40 on the bench's exports, old and new alternated twice on an
 * Intel Xeon, 2 vCPUs loaded by other builds (CPU time): MobileNetV2 1.0
 * batch 1 30.7-38.7 ms before, 9.0-13.4 after; batch 8 263-267 before,
 * 42-48 after; MobileNetV3-Large batch 1 38.1-44.5 before, 16.3-25.2
 * after; batch 8 256 before, 116 after.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "hybrid.h"
#include "kernels/cpu/conv/conv-dnnl.h"
#include "kernels/cpu/conv/dnnl-conv-setup.h"
#include "kernels/cpu/quantized/conv-dnnl-int8.h"
#include "kernels/cpu/quantized/qconv-dnnl-fused.h"
#include "kernels/cpu/quantized/qconv-dnnl-groups.h"
#include "kernels/cpu/quantized/qconv-finish.h"
#include "kernels/cpu/quantized/qconv.h"
#include "kernels/params/quantized.h"

/* What one thread executes with (memory objects are not thread-safe). */
typedef struct qconv_thread {
  dnnl_stream_t stream;
  dnnl_memory_t src, weights, dst, scratch;
} qconv_thread;

typedef struct hy_qconv_dnnl {
  hy_quantized_conv_params p;
  int64_t N, C, H, W, OC, OH, OW;
  int64_t slice, n_slices;      /* filters per slice, slices */
  int n_threads;
  qconv_thread *threads;
  size_t weight_slice_bytes;
  size_t thread_stride;         /* one thread's dst slice + scratchpad */
  float *s_w, *bias;            /* per output channel, from set-up */
  int32_t *bias_q;              /* per forward */
  float *scales;                /* per forward */
  dnnl_engine_t engine;
  dnnl_stream_t stream;         /* set-up's */
  dnnl_primitive_t primitive;
  char *weights_data;           /* n_slices × weight_slice_bytes */
  /* held as bytes NHWC in the plan's arena (the call's private bits):
   * the data, the residual, the output */
  bool src_bytes_in, sum_bytes_in, dst_bytes_out;
  float *planes;                /* run_capped's, made when first needed */
  /* bytes out: oneDNN writing them itself (qconv-dnnl-fused.h), made on
   * the first forward for its ranges (data min/max, residual min/max) */
  int8_t *wq;                   /* the quantized weights, OIHW */
  /* a data range the set-up's weights would have been capped for (a
   * layer dead on the calibration images before this one): the weights
   * quantized again for it, once, on the first forward that reads it */
  float capped_for;             /* that data scale; 0 before */
  float *s_w_capped;
  int8_t *wq_capped;            /* until the fused primitive is made */
  char *weights_capped;         /* n_slices × weight_slice_bytes */
  bool fused_tried;
  float fused_ranges[4];
  hy_qconv_fused *fused;
  size_t src_bytes, dst_bytes, scratch_bytes;
} hy_qconv_dnnl;

void hy_cpu_quantized_conv_dnnl (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_quantized_conv (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static gboolean
ok (dnnl_status_t st, const char *what, GError **error)
{
  if (st == dnnl_success)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_BACKEND,
      "oneDNN int8 convolution: %s failed (%s)", what, dnnl_status2str (st));
  return FALSE;
}

static void
qconv_dnnl_free (hy_qconv_dnnl *c)
{
  if (!c)
    return;
  for (int t = 0; c->threads && t < c->n_threads; t++) {
    qconv_thread *th = &c->threads[t];
    dnnl_memory_destroy (th->src);
    dnnl_memory_destroy (th->weights);
    dnnl_memory_destroy (th->dst);
    dnnl_memory_destroy (th->scratch);
    dnnl_stream_destroy (th->stream);
  }
  g_free (c->threads);
  dnnl_primitive_destroy (c->primitive);
  dnnl_stream_destroy (c->stream);
  if (c->engine)
    dnnl_engine_destroy (c->engine);
  g_free (c->weights_data);
  g_free (c->planes);
  hy_qconv_fused_free (c->fused);
  g_free (c->wq);
  g_free (c->wq_capped);
  g_free (c->s_w_capped);
  g_free (c->weights_capped);
  g_free (c->s_w);
  g_free (c->bias);
  g_free (c->bias_q);
  g_free (c->scales);
  g_free (c);
}

/* The quantized weights (OIHW int8) into the primitive's own layout,
 * slice after slice. */
static gboolean
reorder_weights (hy_qconv_dnnl *c, const int8_t *wq,
    const dnnl_memory_desc_t *user_md, const dnnl_memory_desc_t *md,
    GError **error)
{
  c->weight_slice_bytes = dnnl_memory_desc_get_size (md);
  c->weights_data = g_malloc (c->weight_slice_bytes * c->n_slices);
  const hy_dnnl_setup s = { "oneDNN int8 convolution", error };
  return hy_dnnl_reorder_weights (&s, c->engine, wq, user_md, md,
      c->n_slices, c->weights_data, c->weight_slice_bytes);
}

/* Equal slices of whole 16-filter blocks, about two per thread, so that
 * a thread that starts late holds up only half its share. */
static int64_t
slices_for (int64_t filters, int threads)
{
  for (int64_t n = 2 * (int64_t) threads; n > 1; n--)
    if (filters % n == 0 && (filters / n) % 16 == 0)
      return n;
  return 1;
}

static hy_qconv_dnnl *
qconv_dnnl_new (const hy_quantized_conv_params *p, const hy_tensor *const *in,
    const hy_tensor *out, int n_threads, GError **error)
{
  hy_qconv_dnnl *c = g_new0 (hy_qconv_dnnl, 1);
  c->p = *p;
  const hy_shape *ds = &in[0]->shape, *os = &out->shape;
  c->N = ds->dims[0];
  c->C = ds->dims[1];
  c->H = ds->dims[2];
  c->W = ds->dims[3];
  c->OC = os->dims[1];
  c->OH = os->dims[2];
  c->OW = os->dims[3];
  int64_t K = hy_shape_numel (&in[1]->shape) / c->OC;
  c->n_threads = n_threads;
  /* a slice of a grouped convolution's filters would read a slice of
   * its channels: one slice, the whole convolution */
  c->n_slices = p->conv.num_group == 1 ? slices_for (c->OC, n_threads) : 1;
  c->slice = c->OC / c->n_slices;
  c->s_w = g_new (float, c->OC);
  c->bias = g_new (float, c->OC);
  c->bias_q = g_new (int32_t, c->OC);
  c->scales = g_new (float, c->OC);
  int8_t *wq = c->wq = g_new (int8_t, c->OC * K);
  hy_qconv_quantize_weights (p, in, 0.0f, wq, c->s_w, c->bias);

  const hy_conv_params *cp = &p->conv;
  dnnl_dims_t src_dims = { c->N, c->C, c->H, c->W };
  dnnl_dims_t dst_dims = { c->N, c->slice, c->OH, c->OW };
  dnnl_dims_t strides = { cp->stride[0], cp->stride[1] };
  /* oneDNN counts dilation from 0 */
  dnnl_dims_t dilates = { cp->dilate[0] - 1, cp->dilate[1] - 1 };
  dnnl_dims_t pad = { cp->pad[0], cp->pad[1] };
  dnnl_memory_desc_t src_md, wei_md, wei_user_md, dst_md;
  dnnl_convolution_desc_t desc;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  gboolean good = ok (dnnl_engine_create (&c->engine, dnnl_cpu, 0), "engine",
          error)
      && ok (dnnl_stream_create (&c->stream, c->engine,
              dnnl_stream_default_flags), "stream", error)
      && ok (dnnl_memory_desc_init_by_tag (&src_md, 4, src_dims,
              p->data_uint8 ? dnnl_u8 : dnnl_s8, dnnl_nhwc), "src", error)
      && ok (hy_qconv_dnnl_weight_mds (cp, c->slice, c->C, &wei_user_md,
              &wei_md), "weights", error)
      && ok (dnnl_memory_desc_init_by_tag (&dst_md, 4, dst_dims, dnnl_s32,
              dnnl_nhwc), "dst", error)
      && ok (dnnl_dilated_convolution_forward_desc_init (&desc,
              dnnl_forward_inference, dnnl_convolution_direct, &src_md,
              &wei_md, NULL, &dst_md, strides, dilates, pad, pad),
          "descriptor", error)
      && ok (dnnl_primitive_attr_create (&attr), "attributes", error)
      && ok (dnnl_primitive_attr_set_scratchpad_mode (attr,
              dnnl_scratchpad_mode_user), "attributes", error);
  if (good) {
    /* A batch of one: made for one OpenMP thread, as run_slices runs
     * it.  oneDNN's kernels fix their team when made, and one made for
     * the default count started a team of its own from each of our
     * pool's threads (omp_set_num_threads does not undo a count oneDNN
     * asks for by name), whose workers then spun against the pool's for
     * the two cores: MobileNetV3-Large batch 1, its hard swishes'
     * convolutions writing planes (PERFORMANCE.md, "int8 update: no
     * OpenMP team at batch 1; ...").  A batch keeps the default: there the
     * fused path's convolutions run on oneDNN's team (run_fused), which
     * once these no longer wake it sleeps between its calls and wakes
     * late on a busy machine (MobileNetV3-Large batch 8, CPU time 206-532
     * ms a forward against 106-120, Intel Xeon, 2 vCPUs, load 9-10). */
    const int omp_threads = omp_get_max_threads ();
    omp_set_num_threads (c->N == 1 ? 1 : omp_threads);
    dnnl_status_t st = dnnl_primitive_desc_create (&pd, &desc, attr,
        c->engine, NULL);
    omp_set_num_threads (omp_threads);
    if (st == dnnl_unimplemented) {
      /* oneDNN has no kernel for this one: the reference runs it */
      dnnl_primitive_attr_destroy (attr);
      qconv_dnnl_free (c);
      return NULL;
    }
    good = ok (st, "primitive descriptor", error)
        && ok (dnnl_primitive_create (&c->primitive, pd), "primitive",
            error);
  }
  if (good) {
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_scratchpad_md, 0);
    c->src_bytes = dnnl_memory_desc_get_size (&src_md);
    c->dst_bytes = dnnl_memory_desc_get_size (&dst_md);
    c->scratch_bytes = dnnl_memory_desc_get_size (smd);
    c->thread_stride = ((c->dst_bytes + 63) & ~(size_t) 63)
        + ((c->scratch_bytes + 63) & ~(size_t) 63);
    good = reorder_weights (c, wq, &wei_user_md, wmd, error);
    c->threads = g_new0 (qconv_thread, c->n_threads);
    for (int t = 0; good && t < c->n_threads; t++) {
      qconv_thread *th = &c->threads[t];
      good = ok (dnnl_stream_create (&th->stream, c->engine,
              dnnl_stream_default_flags), "stream", error)
          && ok (dnnl_memory_create (&th->weights, wmd, c->engine,
                  DNNL_MEMORY_NONE), "memory", error)
          && ok (dnnl_memory_create (&th->src, &src_md, c->engine,
                  DNNL_MEMORY_NONE), "memory", error)
          && ok (dnnl_memory_create (&th->dst, &dst_md, c->engine,
                  DNNL_MEMORY_NONE), "memory", error)
          && ok (dnnl_memory_create (&th->scratch, smd, c->engine,
                  DNNL_MEMORY_NONE), "memory", error);
    }
  }
  dnnl_primitive_desc_destroy (pd);
  dnnl_primitive_attr_destroy (attr);
  if (!good) {
    qconv_dnnl_free (c);
    return NULL;
  }
  return c;
}

/* More inputs than a quantized convolution has (data, weight, bias,
 * four of BatchNorm, residual, four ranges). */
#define HY_QCONV_MAX_INPUTS 16

/* Pixels per block of the layout passes: a block of 64 pixels × 512
 * channels of bytes, or × 32 filters of int32 sums, is L1-sized. */
#define PIXEL_BLOCK 64

/* The data's integers (float planes) as bytes, NHWC. */
typedef struct to_bytes_job {
  const float *x;
  char *bytes;
  int64_t C, hw, blocks;        /* blocks of PIXEL_BLOCK pixels per image */
  bool u8;
} to_bytes_job;

/* Items: (image, block of pixels); each channel's run of the block read in
 * order, written at a stride of C within an L1-sized block. */
static void
to_bytes (void *arg, int64_t begin, int64_t end, int thread)
{
  const to_bytes_job *b = arg;
  for (int64_t item = begin; item < end; item++) {
    const int64_t n = item / b->blocks;
    const int64_t i0 = item % b->blocks * PIXEL_BLOCK;
    const int64_t i1 = MIN (i0 + PIXEL_BLOCK, b->hw);
    char *d = b->bytes + (n * b->hw + i0) * b->C;
    for (int64_t ch = 0; ch < b->C; ch++) {
      const float *plane = b->x + (n * b->C + ch) * b->hw;
      if (b->u8) {
        for (int64_t i = i0; i < i1; i++)
          ((uint8_t *) d)[(i - i0) * b->C + ch] = (uint8_t) plane[i];
      } else {
        for (int64_t i = i0; i < i1; i++)
          ((int8_t *) d)[(i - i0) * b->C + ch] = (int8_t) plane[i];
      }
    }
  }
}

/* One forward's shared values. */
typedef struct qconv_job {
  const hy_qconv_dnnl *c;
  const char *weights;          /* n_slices × weight_slice_bytes */
  const void *src;              /* the data as bytes, NHWC */
  char *per_thread;
  const float *sum;
  const void *sum_bytes;        /* the residual held as bytes NHWC */
  float sum_scale;
  float *y;
  void *y_bytes;                /* the output held as bytes NHWC */
  char *acc_all;                /* with y_bytes: every slice's sums */
  hy_qconv_epilogue epilogue;   /* when the vector epilogue can take it */
  bool by_runs;
  dnnl_status_t failed;
} qconv_job;

/* One output element's integer into the output's dtype as a byte. */
static inline void
store_byte (void *y, int64_t at, float v, bool u8)
{
  if (u8)
    ((uint8_t *) y)[at] = (uint8_t) v;
  else
    ((int8_t *) y)[at] = (int8_t) v;
}

static inline float
load_byte (const void *x, int64_t at, bool u8)
{
  return u8 ? (float) ((const uint8_t *) x)[at]
      : (float) ((const int8_t *) x)[at];
}

/* Items [begin, end): filter slices, the whole batch each. */
static void
run_slices (void *arg, int64_t begin, int64_t end, int thread)
{
  qconv_job *j = arg;
  const hy_qconv_dnnl *c = j->c;
  const hy_quantized_conv_params *p = &c->p;
  const qconv_thread *th = &c->threads[thread];
  char *mine = j->per_thread + (size_t) thread * c->thread_stride;
  int32_t *dst = (int32_t *) mine;
  void *scratch = mine + ((c->dst_bytes + 63) & ~(size_t) 63);
  const size_t slice_room = (c->dst_bytes + 63) & ~(size_t) 63;
  /* this thread runs oneDNN's loops alone (a worker of ours is no
   * OpenMP thread: it would start a team of its own) */
  omp_set_num_threads (1);
  int64_t ohw = c->OH * c->OW;
  for (int64_t slice = begin; slice < end; slice++) {
    /* bytes out: every slice's sums kept for the pass over pixels */
    if (j->acc_all)
      dst = (int32_t *) (j->acc_all + (size_t) slice * slice_room);
    dnnl_exec_arg_t args[] = {
      { DNNL_ARG_SRC, th->src }, { DNNL_ARG_WEIGHTS, th->weights },
      { DNNL_ARG_DST, th->dst }, { DNNL_ARG_SCRATCHPAD, th->scratch },
    };
    dnnl_status_t st = dnnl_memory_set_data_handle (th->src,
        (void *) j->src);
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->weights,
          (void *) (j->weights + slice * c->weight_slice_bytes));
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->dst, dst);
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->scratch, scratch);
    if (st == dnnl_success)
      st = dnnl_primitive_execute (c->primitive, th->stream,
          G_N_ELEMENTS (args), args);
    if (st == dnnl_success)
      st = dnnl_stream_wait (th->stream);
    if (st != dnnl_success) {
      j->failed = st;
      return;
    }
    if (j->acc_all)
      continue;                 /* finish_bytes does the rest */
    /* back to plain planes through the reference's epilogue, a block
     * of pixels at a time: the block's sums (pixels × filters) stay in
     * L1 while each filter's plane is written in order */
    for (int64_t n = 0; n < c->N; n++) {
      for (int64_t i0 = 0; i0 < ohw; i0 += PIXEL_BLOCK) {
        const int64_t i1 = MIN (i0 + PIXEL_BLOCK, ohw);
        for (int64_t f = 0; f < c->slice; f++) {
          int64_t oc = slice * c->slice + f;
          const int32_t *acc = dst + n * ohw * c->slice + f;
          if (j->by_runs) {
            hy_qconv_finish_plane (&j->epilogue, oc, acc + i0 * c->slice,
                c->slice, j->sum ? j->sum + (n * c->OC + oc) * ohw + i0
                    : NULL, j->sum_bytes ? (const char *) j->sum_bytes
                    + (n * ohw + i0) * c->OC + oc : NULL, c->OC,
                j->y + (n * c->OC + oc) * ohw + i0, i1 - i0);
            continue;
          }
          float bias = (float) c->bias_q[oc], rs = c->scales[oc];
          if (j->sum_bytes) {
            /* the residual held as bytes: (n, i, oc) at (n·ohw + i)·OC
             * + oc */
            const int64_t base = n * ohw * c->OC + oc;
            float *yo = j->y + (n * c->OC + oc) * ohw;
            for (int64_t i = i0; i < i1; i++)
              yo[i] = hy_qconv_finish (((float) acc[i * c->slice] + bias)
                  * rs, load_byte (j->sum_bytes, base + i * c->OC,
                      p->sum_uint8), j->sum_scale, p);
            continue;
          }
          float *yo = j->y + (n * c->OC + oc) * ohw;
          const float *so = j->sum ? j->sum + (n * c->OC + oc) * ohw
              : NULL;
          for (int64_t i = i0; i < i1; i++)
            yo[i] = hy_qconv_finish (((float) acc[i * c->slice] + bias)
                * rs, so ? so[i] : 0.0f, j->sum_scale, p);
        }
      }
    }
  }
}

/* The output held as bytes: items (image, block of pixels), each pixel's
 * channels from every slice's sums, written in order.  A pass of its
 * own, after all slices: slices of one pixel written by two threads
 * would share its cache lines. */
static void
finish_bytes (void *arg, int64_t begin, int64_t end, int thread)
{
  const qconv_job *j = arg;
  const hy_qconv_dnnl *c = j->c;
  const hy_quantized_conv_params *p = &c->p;
  const int64_t ohw = c->OH * c->OW;
  const int64_t blocks = (ohw + PIXEL_BLOCK - 1) / PIXEL_BLOCK;
  const size_t slice_room = (c->dst_bytes + 63) & ~(size_t) 63;
  for (int64_t item = begin; item < end; item++) {
    const int64_t n = item / blocks;
    const int64_t i0 = item % blocks * PIXEL_BLOCK;
    const int64_t i1 = MIN (i0 + PIXEL_BLOCK, ohw);
    for (int64_t i = i0; i < i1; i++) {
      const int64_t px = n * ohw + i;
      for (int64_t s = 0; s < c->n_slices; s++) {
        const int32_t *acc = (const int32_t *) (j->acc_all
            + (size_t) s * slice_room) + px * c->slice;
        const int64_t at = px * c->OC + s * c->slice;   /* bytes */
        if (j->by_runs) {
          hy_qconv_finish_run (&j->epilogue, s * c->slice, acc,
              j->sum_bytes ? (const char *) j->sum_bytes + at : NULL,
              (char *) j->y_bytes + at, c->slice);
          continue;
        }
        for (int64_t f = 0; f < c->slice; f++) {
          const int64_t oc = s * c->slice + f;
          float sum = j->sum_bytes ? load_byte (j->sum_bytes,
              px * c->OC + oc, p->sum_uint8)
              : j->sum ? j->sum[(n * c->OC + oc) * ohw + i] : 0.0f;
          float v = hy_qconv_finish (((float) acc[f]
                  + (float) c->bias_q[oc]) * c->scales[oc], sum,
              j->sum_scale, p);
          store_byte (j->y_bytes, px * c->OC + oc, v, p->out_uint8);
        }
      }
    }
  }
}

/* Bytes NHWC back to float planes (n images of C channels of hw). */
static void
bytes_to_planes (const void *x, float *y, int64_t n, int64_t C, int64_t hw,
    bool u8)
{
  for (int64_t b = 0; b < n; b++)
    for (int64_t i = 0; i < hw; i++)
      for (int64_t ch = 0; ch < C; ch++)
        y[(b * C + ch) * hw + i] = load_byte (x, (b * hw + i) * C + ch, u8);
}

/* Data of a range of [0, 0] (a layer dead on the calibration images):
 * the weights MXNet quantizes with a capped scale (hy_qconv_needs_cap),
 * which only the reference does.  Values the plan holds as bytes go to
 * it as planes, in buffers made the first time only. */
static void
run_capped (hy_cpu_ctx *ctx, hy_qconv_dnnl *c, const hy_tensor *const *in,
    int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantized_conv_params *p = &c->p;
  if (!c->src_bytes_in && !c->sum_bytes_in && !c->dst_bytes_out) {
    hy_cpu_quantized_conv (ctx, p, in, n_in, out, n_out);
    return;
  }
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  const int64_t in_n = c->N * c->C * c->H * c->W;
  const int64_t out_n = c->N * c->OC * c->OH * c->OW;
  if (!c->planes)
    c->planes = g_new (float, in_n + 2 * out_n);
  const hy_tensor *vin[HY_QCONV_MAX_INPUTS];
  hy_tensor *vout[3];
  if (n_in > HY_QCONV_MAX_INPUTS || n_out > 3) {
    hy_cpu_fail (ctx, "int8 convolution: %d inputs", n_in);
    return;
  }
  for (int k = 0; k < n_in; k++)
    vin[k] = in[k];
  for (int k = 0; k < n_out; k++)
    vout[k] = out[k];
  hy_tensor src = *in[0], dst = *out[0], sum;
  if (c->src_bytes_in) {
    src.data = c->planes;
    bytes_to_planes (in[0]->data, src.data, c->N, c->C, c->H * c->W,
        p->data_uint8);
    vin[0] = &src;
  }
  if (c->sum_bytes_in) {
    sum = *in[at.sum];
    sum.data = c->planes + in_n + out_n;
    bytes_to_planes (in[at.sum]->data, sum.data, c->N, c->OC,
        c->OH * c->OW, p->sum_uint8);
    vin[at.sum] = &sum;
  }
  if (c->dst_bytes_out) {
    dst.data = c->planes + in_n;
    vout[0] = &dst;
  }
  hy_cpu_quantized_conv (ctx, p, vin, n_in, vout, n_out);
  if (c->dst_bytes_out) {
    to_bytes_job b = {
      .x = dst.data, .bytes = (char *) out[0]->data, .C = c->OC,
      .hw = c->OH * c->OW, .u8 = p->out_uint8,
    };
    b.blocks = (b.hw + PIXEL_BLOCK - 1) / PIXEL_BLOCK;
    to_bytes (&b, 0, c->N * b.blocks, 0);
  }
}

/* The weights quantized with the scales capped for data of scale s_d, as
 * the reference does every forward, here once, into the primitive's
 * layout: the products are then oneDNN's, the same integers.  FALSE
 * where that cannot be (a second capped range, or the reorder failed):
 * the reference runs the call.
 *
 * Why: a layer dead on the calibration images gives its readers a data
 * range of [0, 0]; an export of a network that is not trained has many
 * (the bench's MobileNetV2 from its fifth block on: 24 of its 54
 * convolutions), and on the reference their readers took two thirds of
 * the forward.  Medians per forward, bench -t 2 -n 40, before and after
 * alternated twice, Intel Xeon, 2 vCPUs loaded by other builds (CPU
 * time): MobileNetV2 batch 1 8.0-9.4 ms before, 3.0-3.3 after; batch 8
 * 47.5-49.3, 21.9; MobileNetV3-Large batch 1 19.4-23.6, 12.3; batch 8
 * 111-117, 110-112.  Their outputs are held as bytes too, now that no
 * reader needs them as planes. */
static bool
quantize_capped (hy_qconv_dnnl *c, const hy_tensor *const *in, float s_d)
{
  if (c->capped_for != 0.0f)
    return c->capped_for == s_d;
  c->capped_for = -1.0f;        /* until it is done: never again */
  const_dnnl_primitive_desc_t pd = NULL;
  dnnl_memory_desc_t user_md, any_md;
  if (dnnl_primitive_get_primitive_desc (c->primitive, &pd) != dnnl_success
      || hy_qconv_dnnl_weight_mds (&c->p.conv, c->slice, c->C, &user_md,
          &any_md) != dnnl_success)
    return false;
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md (pd,
      dnnl_query_weights_md, 0);
  const int64_t K = hy_shape_numel (&in[1]->shape) / c->OC;
  int8_t *wq = g_new (int8_t, c->OC * K);
  float *bias = g_new (float, c->OC);
  c->s_w_capped = g_new (float, c->OC);
  hy_qconv_quantize_weights (&c->p, in, s_d, wq, c->s_w_capped, bias);
  g_free (bias);
  c->weights_capped = g_malloc (c->weight_slice_bytes * c->n_slices);
  GError *error = NULL;
  const hy_dnnl_setup s = { "oneDNN int8 convolution", &error };
  if (!hy_dnnl_reorder_weights (&s, c->engine, wq, &user_md, md,
          c->n_slices, c->weights_capped, c->weight_slice_bytes)) {
    g_debug ("%s", error->message);
    g_error_free (error);
    g_free (wq);
    return false;
  }
  c->capped_for = s_d;
  if (c->fused_tried)
    g_free (wq);                /* only the epilogue's path reads them */
  else
    c->wq_capped = wq;
  return true;
}

/* Whether oneDNN may write the bytes itself: unless
 * HYBRIDINFER_INT8_FUSED=0 (read once; today's epilogue, to compare). */
static bool
fused_on (void)
{
  static gsize once;
  static bool on;
  if (g_once_init_enter (&once)) {
    const char *v = g_getenv ("HYBRIDINFER_INT8_FUSED");
    on = !(v && strcmp (v, "0") == 0);
    g_once_init_leave (&once, 1);
  }
  return on;
}

/* One forward of the fused primitive, band by band. */
typedef struct fused_job {
  hy_qconv_fused *fused;
  const void *src;
  void *dst;
  dnnl_status_t failed;         /* written by a failing band only */
} fused_job;

static void
run_bands (void *arg, int64_t begin, int64_t end, int thread)
{
  fused_job *j = arg;
  for (int64_t b = begin; b < end; b++) {
    dnnl_status_t st = hy_qconv_fused_run (j->fused, (int) b, j->src,
        j->dst);
    if (st != dnnl_success)
      j->failed = st;
  }
}

/* The ranges a fused primitive is made for: the data's, the residual's. */
static void
fused_ranges_of (const hy_qconv_dnnl *c, const hy_tensor *const *in,
    float ranges[4])
{
  const hy_quantized_conv_params *p = &c->p;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  ranges[0] = in[at.min_data]->data[0];
  ranges[1] = in[at.max_data]->data[0];
  ranges[2] = p->with_sum ? in[at.min_sum]->data[0] : 0.0f;
  ranges[3] = p->with_sum ? in[at.max_sum]->data[0] : 0.0f;
}

/* Whether the fused primitive was made for this forward's ranges: then
 * nothing per channel is computed again (it holds its scales and bias,
 * and the weights quantized as these ranges ask, capped or not). */
static bool
fused_fits (const hy_qconv_dnnl *c, const hy_tensor *const *in)
{
  if (!c->fused)
    return false;
  float ranges[4];
  fused_ranges_of (c, in, ranges);
  for (int k = 0; k < 4; k++)
    if (!(ranges[k] == c->fused_ranges[k]))
      return false;
  return true;
}

/* Bytes in the plan from the data (and residual) to the output: oneDNN
 * rounds them itself, with this forward's scales baked into a primitive
 * made the first time (the warm-up forward) and used while the ranges
 * are the same, as they are every forward of a calibrated export; any
 * other range takes the epilogue's path.  TRUE when it ran the call.
 *
 * Why: the epilogue's way writes 4 bytes of int32 per output, reads them
 * back and makes a pass of its own.  Medians per forward, hybridinfer
 * bench -t 2 -n 40, old and new alternated 4 times on an Intel Xeon,
 * 2 vCPUs loaded by other builds (CPU time, then latency; ranges over
 * the runs): resnet18_v1 batch 1 9.9-10.0 ms CPU before, 6.7-6.9 after,
 * 5.2 ms latency before, 4.5-4.6 after; resnet50_v1 batch 1 22.4-22.8
 * before, 11.7-12.0 after (12.0-12.2 ms latency, 10.1-10.5); resnet18_v1
 * batch 8 64-66 before, 50-53 after (34-43 ms, 31-50); resnet50_v1
 * batch 8 139-143 before, 83-84 after (75-78 ms, 55-58).
 *
 * One primitive over every filter.  A primitive per filter slice on our
 * threads (scales baked into each, bytes through a dense buffer into the
 * output's channels) took more CPU time: resnet50_v1 batch 1 23.2-23.7
 * ms, batch 8 131-134.  A batch of one runs its output's rows in bands,
 * one on each thread of our pool (qconv-dnnl-fused.c): oneDNN's team of
 * two there, beside our pool's workers, took 13.3-14.4 ms (resnet50_v1)
 * where one thread takes 10.4, and one thread left the second core
 * idle.  With the bands, best of 6 alternated runs, hybridinfer bench -t
 * 2 -n 40 on an Intel Xeon, 2 vCPUs loaded by other builds (median
 * latency; median CPU time): resnet18_v1 4.38 -> 3.55 ms (5.95 -> 6.74),
 * resnet50_v1 9.05 -> 6.26 ms (10.8 -> 11.3); the outputs the same bits.
 * From batch 8 on oneDNN's team is the faster (56 ms against 67-68).
 * Bands of whole images on our pool instead were measured again: CPU
 * time MobileNetV3-Large batch 8 85-88 ms a forward against 115,
 * ResNet-18 batch 8 30-35 against 23-30 (each thread reads all the
 * weights; slices of filters over the batch did no better), so the
 * team stays (Intel Xeon, 2 vCPUs, load 7-12, bench -t 2 -n 10). */
static bool
run_fused (hy_cpu_ctx *ctx, hy_qconv_dnnl *c, const hy_tensor *const *in,
    hy_tensor *const *out, const void *src, float sum_scale, bool capped)
{
  const hy_quantized_conv_params *p = &c->p;
  if (!c->dst_bytes_out || !fused_on ())
    return false;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  /* a residual held as planes is laid out as bytes in the output first,
   * which it cannot be where the two share memory */
  if (p->with_sum && !c->sum_bytes_in
      && out[0]->data == in[at.sum]->data)
    return false;
  if (!c->fused_tried) {
    c->fused_tried = true;
    fused_ranges_of (c, in, c->fused_ranges);
    hy_qconv_geometry g = {
      .N = c->N, .C = c->C, .H = c->H, .W = c->W,
      .OC = c->OC, .OH = c->OH, .OW = c->OW,
    };
    GError *error = NULL;
    c->fused = hy_qconv_fused_new (c->engine, p, &g,
        capped ? c->wq_capped : c->wq, c->bias_q, c->scales, sum_scale,
        c->N == 1 ? 1 : c->n_threads, c->N == 1 ? c->n_threads : 1, &error);
    if (error) {
      /* not the data's fault: today's path runs it */
      g_debug ("%s", error->message);
      g_error_free (error);
    }
    /* made once: the weights are in the primitive now */
    g_clear_pointer (&c->wq, g_free);
    g_clear_pointer (&c->wq_capped, g_free);
  }
  if (!fused_fits (c, in))
    return false;
  if (p->with_sum && !c->sum_bytes_in) {
    /* the residual's integers as bytes where oneDNN's sum reads them:
     * the same bytes the plan would have held.  MobileNetV3's first
     * block adds the hard swish's output, which is planes: its 1×1 of
     * 16 filters on 112×112 then ran on the epilogue's path as one
     * slice on one thread, 0.61-0.88 ms of CPU time a forward, and
     * takes 0.25-0.30 this way (bench --profile, batch 1, 2 threads,
     * loaded 2-vCPU Xeon, alternated twice). */
    to_bytes_job b = {
      .x = in[at.sum]->data, .bytes = (char *) out[0]->data, .C = c->OC,
      .hw = c->OH * c->OW, .u8 = p->sum_uint8,
    };
    b.blocks = (b.hw + PIXEL_BLOCK - 1) / PIXEL_BLOCK;
    hy_cpu_parallel_for (ctx, c->N * b.blocks,
        hy_cpu_grain (PIXEL_BLOCK * c->OC), to_bytes, &b);
  } else if (p->with_sum && out[0]->data != in[at.sum]->data)
    memcpy (out[0]->data, in[at.sum]->data,
        (size_t) (c->N * c->OC * c->OH * c->OW));
  fused_job j = { c->fused, src, out[0]->data, dnnl_success };
  const int bands = hy_qconv_fused_bands (c->fused);
  if (bands > 1)
    hy_cpu_parallel_each (ctx, bands, run_bands, &j);
  else
    run_bands (&j, 0, 1, 0);
  if (j.failed != dnnl_success)
    hy_cpu_fail (ctx, "oneDNN int8 convolution failed (%s)",
        dnnl_status2str (j.failed));
  out[1]->data[0] = p->min_calib;
  out[2]->data[0] = p->max_calib;
  return true;
}

void
hy_cpu_quantized_conv_dnnl (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  hy_qconv_dnnl *c = (hy_qconv_dnnl *) params;
  const hy_quantized_conv_params *p = &c->p;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  float s_out = hy_q_scale (p->out_uint8, p->min_calib, p->max_calib);
  /* with the fused primitive made for these ranges nothing per channel is
   * computed again: it holds its scales, bias and (capped or not) weights */
  bool capped = false;
  if (!fused_fits (c, in)) {
    float s_d = hy_q_scale (p->data_uint8, in[at.min_data]->data[0],
        in[at.max_data]->data[0]);
    /* weights MXNet would have quantized with a capped scale for this
     * data (a range of [0, 0]): quantized again for it */
    capped = hy_qconv_needs_cap (c->s_w, c->bias, c->OC, s_d);
    if (capped && !quantize_capped (c, in, s_d)) {
      run_capped (ctx, c, in, n_in, out, n_out);
      return;
    }
    const float *s_w = capped ? c->s_w_capped : c->s_w;
    for (int64_t oc = 0; oc < c->OC; oc++) {
      c->bias_q[oc] = hy_q_round_int32 (s_w[oc] * s_d * c->bias[oc]);
      c->scales[oc] = s_out / s_d / s_w[oc];
    }
  }
  size_t src_room = (c->src_bytes + 63) & ~(size_t) 63;
  /* scratch for the set-up's thread count (a plan's pool keeps it) */
  const size_t slice_room = (c->dst_bytes + 63) & ~(size_t) 63;
  char *ws = hy_cpu_workspace (ctx, src_room
      + c->thread_stride * (size_t) c->n_threads
      + (c->dst_bytes_out ? slice_room * (size_t) c->n_slices : 0));
  /* the integers as bytes, NHWC, on every thread, unless the plan holds
   * them so already */
  int64_t hw = c->H * c->W;
  if (!c->src_bytes_in) {
    to_bytes_job b = {
      .x = in[0]->data, .bytes = ws, .C = c->C, .hw = hw,
      .blocks = (hw + PIXEL_BLOCK - 1) / PIXEL_BLOCK, .u8 = p->data_uint8,
    };
    hy_cpu_parallel_for (ctx, c->N * b.blocks,
        hy_cpu_grain (PIXEL_BLOCK * c->C), to_bytes, &b);
  }
  float sum_scale = p->with_sum ? hy_qconv_sum_scale (p, in, s_out) : 0.0f;
  if (run_fused (ctx, c, in, out, c->src_bytes_in ? (const void *) in[0]->data
          : ws, sum_scale, capped))
    return;
  qconv_job j = {
    .c = c, .weights = capped ? c->weights_capped : c->weights_data,
    .src = c->src_bytes_in ? (const void *) in[0]->data : ws,
    .per_thread = ws + src_room,
    .sum = p->with_sum && !c->sum_bytes_in ? in[at.sum]->data : NULL,
    .sum_bytes = p->with_sum && c->sum_bytes_in ? in[at.sum]->data : NULL,
    .sum_scale = sum_scale,
    .y = c->dst_bytes_out ? NULL : out[0]->data,
    .y_bytes = c->dst_bytes_out ? (void *) out[0]->data : NULL,
    .acc_all = c->dst_bytes_out ? ws + src_room
        + c->thread_stride * (size_t) c->n_threads : NULL,
    .failed = dnnl_success,
  };
  /* runs to bytes read a residual only as bytes (planes lie
   * channel-major); to planes, either */
  j.by_runs = (!c->dst_bytes_out || !j.sum)
      && hy_qconv_epilogue_init (&j.epilogue, p, c->bias_q, c->scales,
          j.sum_scale);
  const int omp_threads = omp_get_max_threads ();
  if (hy_cpu_n_threads (ctx) <= c->n_threads)
    hy_cpu_parallel_each (ctx, c->n_slices, run_slices, &j);
  else                          /* more threads than set up for: one */
    run_slices (&j, 0, c->n_slices, 0);
  omp_set_num_threads (omp_threads);
  if (j.failed != dnnl_success) {
    hy_cpu_fail (ctx, "oneDNN int8 convolution failed (%s)",
        dnnl_status2str (j.failed));
    return;
  }
  if (c->dst_bytes_out) {
    const int64_t ohw = c->OH * c->OW;
    hy_cpu_parallel_for (ctx, c->N * ((ohw + PIXEL_BLOCK - 1) / PIXEL_BLOCK),
        hy_cpu_grain (PIXEL_BLOCK * c->OC), finish_bytes, &j);
  }
  out[1]->data[0] = p->min_calib;
  out[2]->data[0] = p->max_calib;
}

gboolean
hy_qconv_dnnl_prepare_call (hy_cpu_ctx *ctx, hy_call *call, GError **error)
{
  const hy_quantized_conv_params *p = call->params;
  const bool held = call->private_inputs || call->private_outputs;
  if (!hy_int8_dnnl_enabled ())
    return TRUE;
  GError *local = NULL;
  hy_qconv_dnnl *c = qconv_dnnl_new (p, call->in, call->out[0],
      hy_cpu_n_threads (ctx), &local);
  if (!c) {
    if (!local && !held)
      return TRUE;              /* declined: the reference runs it */
    if (!local)
      g_set_error (&local, HY_ERROR, HY_ERROR_BACKEND, "oneDNN has no int8 "
          "kernel for a convolution whose values the plan holds as bytes");
    g_propagate_error (error, local);
    return FALSE;
  }
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  c->src_bytes_in = call->private_inputs & 1u;
  c->sum_bytes_in = p->with_sum && at.sum < 32
      && (call->private_inputs & ((uint32_t) 1 << at.sum));
  c->dst_bytes_out = call->private_outputs & 1u;
  call->fn = (hy_kernel_ptr) hy_cpu_quantized_conv_dnnl;
  call->params = c;
  return TRUE;
}

void
hy_qconv_dnnl_release_call (hy_call *call)
{
  if (call->fn == (hy_kernel_ptr) hy_cpu_quantized_conv_dnnl)
    qconv_dnnl_free ((hy_qconv_dnnl *) call->params);
}

const char *
hy_qconv_dnnl_kernel_name (const hy_call *call)
{
  return call->fn == (hy_kernel_ptr) hy_cpu_quantized_conv_dnnl
      ? "onednn-int8" : NULL;
}

/* Whether int8 values may be held as bytes between oneDNN's int8
 * convolutions: with oneDNN's int8 on, unless HYBRIDINFER_INT8_BYTES=0 (read
 * once; keeps them float planes, to compare). */
bool
hy_int8_bytes_on (void)
{
  static gsize once;
  static bool on;
  if (g_once_init_enter (&once)) {
    const char *v = g_getenv ("HYBRIDINFER_INT8_BYTES");
    on = hy_int8_dnnl_enabled () && !(v && strcmp (v, "0") == 0);
    g_once_init_leave (&once, 1);
  }
  return on;
}

/* The calls this file runs: grouped or not, of 2-D data.  A layer dead on
 * the calibration images (a range of [0, 0]) included: its readers
 * quantize their weights again for it (quantize_capped), on oneDNN too. */
static bool
takes_bytes (const hy_call_shape *call)
{
  if (call->op != HY_OP_QUANTIZED_CONV || !hy_int8_bytes_on ())
    return false;
  return call->in0 && call->in0->ndim == 4;
}

size_t
hy_qconv_dnnl_private_bytes (const hy_call_shape *call)
{
  return takes_bytes (call) ? (size_t) hy_shape_numel (call->out0) : 0;
}

gboolean
hy_qconv_dnnl_reads_private (const hy_call_shape *call, int input)
{
  if (!takes_bytes (call))
    return FALSE;
  const hy_quantized_conv_params *p = call->params;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  return input == 0 || (p->with_sum && input == at.sum);
}
