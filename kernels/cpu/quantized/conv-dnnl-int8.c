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
 * Threads: like conv-dnnl.c, the filters are cut into equal slices, each
 * one execution of the same primitive on one thread of the kernels' pool
 * with one OpenMP thread (oneDNN's Debian build threads with OpenMP),
 * its output slice finished by the same thread while it is in cache.
 */
#include <math.h>
#include <string.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "hybrid.h"
#include "kernels/cpu/conv/conv-dnnl.h"
#include "kernels/cpu/quantized/conv-dnnl-int8.h"
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
  g_free (c->s_w);
  g_free (c->bias);
  g_free (c->bias_q);
  g_free (c->scales);
  g_free (c);
}

/* The quantized weights (OIHW int8) into the primitive's own layout. */
static gboolean
reorder_weights (hy_qconv_dnnl *c, const int8_t *wq,
    const dnnl_memory_desc_t *user_md, const dnnl_memory_desc_t *md,
    GError **error)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t reorder = NULL;
  dnnl_memory_t from = NULL, to = NULL;
  c->weight_slice_bytes = dnnl_memory_desc_get_size (md);
  size_t user_bytes = dnnl_memory_desc_get_size (user_md);
  c->weights_data = g_malloc (c->weight_slice_bytes * c->n_slices);
  gboolean good = ok (dnnl_reorder_primitive_desc_create (&pd, user_md,
          c->engine, md, c->engine, NULL), "weight reorder set-up", error)
      && ok (dnnl_primitive_create (&reorder, pd), "weight reorder", error)
      && ok (dnnl_memory_create (&from, user_md, c->engine,
              DNNL_MEMORY_NONE), "memory", error)
      && ok (dnnl_memory_create (&to, md, c->engine, DNNL_MEMORY_NONE),
          "memory", error);
  for (int64_t i = 0; good && i < c->n_slices; i++) {
    dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } };
    good = ok (dnnl_memory_set_data_handle (from,
            (void *) (wq + i * user_bytes)), "weight reorder", error)
        && ok (dnnl_memory_set_data_handle (to,
                c->weights_data + i * c->weight_slice_bytes),
            "weight reorder", error)
        && ok (dnnl_primitive_execute (reorder, c->stream, 2, args),
        "weight reorder", error)
        && ok (dnnl_stream_wait (c->stream), "weight reorder", error);
  }
  dnnl_memory_destroy (to);
  dnnl_memory_destroy (from);
  dnnl_primitive_destroy (reorder);
  dnnl_primitive_desc_destroy (pd);
  return good;
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
  c->n_slices = slices_for (c->OC, n_threads);
  c->slice = c->OC / c->n_slices;
  c->s_w = g_new (float, c->OC);
  c->bias = g_new (float, c->OC);
  c->bias_q = g_new (int32_t, c->OC);
  c->scales = g_new (float, c->OC);
  g_autofree int8_t *wq = g_new (int8_t, c->OC * K);
  hy_qconv_quantize_weights (p, in, 0.0f, wq, c->s_w, c->bias);

  const hy_conv_params *cp = &p->conv;
  dnnl_dims_t src_dims = { c->N, c->C, c->H, c->W };
  dnnl_dims_t wei_dims = { c->slice, c->C, cp->kernel[0], cp->kernel[1] };
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
      && ok (dnnl_memory_desc_init_by_tag (&wei_md, 4, wei_dims, dnnl_s8,
              dnnl_format_tag_any), "weights", error)
      && ok (dnnl_memory_desc_init_by_tag (&wei_user_md, 4, wei_dims,
              dnnl_s8, dnnl_oihw), "weights", error)
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
    dnnl_status_t st = dnnl_primitive_desc_create (&pd, &desc, attr,
        c->engine, NULL);
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

/* One forward's shared values. */
typedef struct qconv_job {
  const hy_qconv_dnnl *c;
  const void *src;              /* the data as bytes, NHWC */
  char *per_thread;
  const float *sum;
  float sum_scale;
  float *y;
  dnnl_status_t failed;
} qconv_job;

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
  /* this thread runs oneDNN's loops alone (a worker of ours is no
   * OpenMP thread: it would start a team of its own) */
  omp_set_num_threads (1);
  int64_t ohw = c->OH * c->OW;
  for (int64_t slice = begin; slice < end; slice++) {
    dnnl_exec_arg_t args[] = {
      { DNNL_ARG_SRC, th->src }, { DNNL_ARG_WEIGHTS, th->weights },
      { DNNL_ARG_DST, th->dst }, { DNNL_ARG_SCRATCHPAD, th->scratch },
    };
    dnnl_status_t st = dnnl_memory_set_data_handle (th->src,
        (void *) j->src);
    if (st == dnnl_success)
      st = dnnl_memory_set_data_handle (th->weights,
          c->weights_data + slice * c->weight_slice_bytes);
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
    /* back to plain planes through the reference's epilogue */
    for (int64_t n = 0; n < c->N; n++) {
      for (int64_t f = 0; f < c->slice; f++) {
        int64_t oc = slice * c->slice + f;
        const int32_t *acc = dst + n * ohw * c->slice + f;
        float *yo = j->y + (n * c->OC + oc) * ohw;
        const float *so = j->sum ? j->sum + (n * c->OC + oc) * ohw : NULL;
        float bias = (float) c->bias_q[oc], rs = c->scales[oc];
        for (int64_t i = 0; i < ohw; i++)
          yo[i] = hy_qconv_finish (((float) acc[i * c->slice] + bias) * rs,
              so ? so[i] : 0.0f, j->sum_scale, p);
      }
    }
  }
}

void
hy_cpu_quantized_conv_dnnl (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  hy_qconv_dnnl *c = (hy_qconv_dnnl *) params;
  const hy_quantized_conv_params *p = &c->p;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  float s_d = hy_q_scale (p->data_uint8, in[at.min_data]->data[0],
      in[at.max_data]->data[0]);
  /* weights MXNet would have quantized with a capped scale for this
   * data (a range of [0, 0]): the reference quantizes them again */
  if (hy_qconv_needs_cap (c->s_w, c->bias, c->OC, s_d)) {
    hy_cpu_quantized_conv (ctx, p, in, n_in, out, n_out);
    return;
  }
  float s_out = hy_q_scale (p->out_uint8, p->min_calib, p->max_calib);
  for (int64_t oc = 0; oc < c->OC; oc++) {
    c->bias_q[oc] = hy_q_round_int32 (c->s_w[oc] * s_d * c->bias[oc]);
    c->scales[oc] = s_out / s_d / c->s_w[oc];
  }
  size_t src_room = (c->src_bytes + 63) & ~(size_t) 63;
  /* scratch for the set-up's thread count (a plan's pool keeps it) */
  char *ws = hy_cpu_workspace (ctx, src_room
      + c->thread_stride * (size_t) c->n_threads);
  /* the integers as bytes, NHWC */
  int64_t hw = c->H * c->W;
  const float *x = in[0]->data;
  for (int64_t n = 0; n < c->N; n++) {
    for (int64_t ch = 0; ch < c->C; ch++) {
      const float *plane = x + (n * c->C + ch) * hw;
      if (p->data_uint8) {
        uint8_t *d = (uint8_t *) ws + n * hw * c->C + ch;
        for (int64_t i = 0; i < hw; i++)
          d[i * c->C] = (uint8_t) plane[i];
      } else {
        int8_t *d = (int8_t *) ws + n * hw * c->C + ch;
        for (int64_t i = 0; i < hw; i++)
          d[i * c->C] = (int8_t) plane[i];
      }
    }
  }
  qconv_job j = {
    .c = c, .src = ws, .per_thread = ws + src_room,
    .sum = p->with_sum ? in[at.sum]->data : NULL,
    .sum_scale = p->with_sum ? hy_qconv_sum_scale (p, in, s_out) : 0.0f,
    .y = out[0]->data, .failed = dnnl_success,
  };
  const int omp_threads = omp_get_max_threads ();
  if (hy_cpu_n_threads (ctx) <= c->n_threads)
    hy_cpu_parallel_each (ctx, c->n_slices, run_slices, &j);
  else                          /* more threads than set up for: one */
    run_slices (&j, 0, c->n_slices, 0);
  omp_set_num_threads (omp_threads);
  if (j.failed != dnnl_success)
    hy_cpu_fail (ctx, "oneDNN int8 convolution failed (%s)",
        dnnl_status2str (j.failed));
  out[1]->data[0] = p->min_calib;
  out[2]->data[0] = p->max_calib;
}

gboolean
hy_qconv_dnnl_prepare_call (hy_cpu_ctx *ctx, hy_call *call, GError **error)
{
  const hy_quantized_conv_params *p = call->params;
  if (!hy_conv_dnnl_enabled () || p->conv.num_group != 1)
    return TRUE;
  GError *local = NULL;
  hy_qconv_dnnl *c = qconv_dnnl_new (p, call->in, call->out[0],
      hy_cpu_n_threads (ctx), &local);
  if (!c) {
    if (!local)
      return TRUE;              /* declined: the reference runs it */
    g_propagate_error (error, local);
    return FALSE;
  }
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
