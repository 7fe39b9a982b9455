/*
 * qconv-dnnl-fused.c — the quantized convolution writing its bytes from
 * inside oneDNN (see qconv-dnnl-fused.h).
 *
 * One primitive over every filter, run by an OpenMP team of the size
 * it was made with (conv-dnnl-int8.c's run_fused says which, and why).
 */
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "hybrid.h"
#include "kernels/cpu/conv/dnnl-conv-setup.h"
#include "kernels/cpu/quantized/qconv-dnnl-fused.h"
#include "kernels/cpu/quantized/qconv-dnnl-groups.h"

struct hy_qconv_fused {
  dnnl_primitive_t primitive;
  dnnl_stream_t stream;
  dnnl_memory_t src, weights, bias, dst, scratch;
  void *weights_data, *bias_data, *scratch_data;
  int n_threads;
};

static gboolean
ok (dnnl_status_t st, const char *what, GError **error)
{
  if (st == dnnl_success)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_BACKEND,
      "oneDNN int8 convolution with bytes out: %s failed (%s)", what,
      dnnl_status2str (st));
  return FALSE;
}

void
hy_qconv_fused_free (hy_qconv_fused *f)
{
  if (!f)
    return;
  dnnl_memory_destroy (f->src);
  dnnl_memory_destroy (f->weights);
  dnnl_memory_destroy (f->bias);
  dnnl_memory_destroy (f->dst);
  dnnl_memory_destroy (f->scratch);
  dnnl_primitive_destroy (f->primitive);
  dnnl_stream_destroy (f->stream);
  free (f->weights_data);
  free (f->bias_data);
  free (f->scratch_data);
  g_free (f);
}

/* 64-byte aligned, at least one line (a size of 0 is legal here). */
static void *
aligned_bytes (size_t n)
{
  void *p = NULL;
  if (posix_memalign (&p, 64, (n + 63) & ~(size_t) 63) != 0)
    return NULL;
  return p;
}

/* The user's OIHW weights into the primitive's layout, once. */
static gboolean
reorder_weights (hy_qconv_fused *f, dnnl_engine_t engine,
    const dnnl_memory_desc_t *user_md, const dnnl_memory_desc_t *md,
    const int8_t *wq, GError **error)
{
  const hy_dnnl_setup s = { "oneDNN int8 convolution with bytes out",
    error };
  f->weights_data = aligned_bytes (dnnl_memory_desc_get_size (md));
  return f->weights_data
      && ok (dnnl_memory_create (&f->weights, md, engine, f->weights_data),
          "memory", error)
      && hy_dnnl_reorder_weights (&s, engine, wq, user_md, md, 1,
          f->weights_data, 0);
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

hy_qconv_fused *
hy_qconv_fused_new (dnnl_engine_t engine, const hy_quantized_conv_params *p,
    const hy_qconv_geometry *g, const int8_t *wq, const int32_t *bias_q,
    const float *scales, float sum_scale, int n_threads, GError **error)
{
  hy_qconv_fused *f = g_new0 (hy_qconv_fused, 1);
  f->n_threads = n_threads;
  const hy_conv_params *cp = &p->conv;
  dnnl_dims_t src_dims = { g->N, g->C, g->H, g->W };
  dnnl_dims_t bias_dims = { g->OC };
  dnnl_dims_t dst_dims = { g->N, g->OC, g->OH, g->OW };
  dnnl_dims_t strides = { cp->stride[0], cp->stride[1] };
  dnnl_dims_t dilates = { cp->dilate[0] - 1, cp->dilate[1] - 1 };
  dnnl_dims_t pad = { cp->pad[0], cp->pad[1] };
  /* with a residual oneDNN saturates to the residual's dtype (MXNet runs
   * in place on it; hy_qconv_store) and the output reads those bytes */
  bool dst_u8 = p->with_sum ? p->sum_uint8 : p->out_uint8;
  dnnl_memory_desc_t src_md, wei_md, wei_user_md, bias_md, dst_md;
  dnnl_convolution_desc_t desc;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  gboolean good = ok (dnnl_stream_create (&f->stream, engine,
          dnnl_stream_default_flags), "stream", error)
      && ok (dnnl_memory_desc_init_by_tag (&src_md, 4, src_dims,
              p->data_uint8 ? dnnl_u8 : dnnl_s8, dnnl_nhwc), "src", error)
      && ok (hy_qconv_dnnl_weight_mds (cp, g->OC, g->C, &wei_user_md,
              &wei_md), "weights", error)
      && ok (dnnl_memory_desc_init_by_tag (&bias_md, 1, bias_dims, dnnl_s32,
              dnnl_a), "bias", error)
      && ok (dnnl_memory_desc_init_by_tag (&dst_md, 4, dst_dims,
              dst_u8 ? dnnl_u8 : dnnl_s8, dnnl_nhwc), "dst", error)
      && ok (dnnl_dilated_convolution_forward_desc_init (&desc,
              dnnl_forward_inference, dnnl_convolution_direct, &src_md,
              &wei_md, &bias_md, &dst_md, strides, dilates, pad, pad),
          "descriptor", error)
      && ok (dnnl_primitive_attr_create (&attr), "attributes", error)
      && ok (dnnl_primitive_attr_set_scratchpad_mode (attr,
              dnnl_scratchpad_mode_user), "attributes", error)
      && ok (dnnl_primitive_attr_set_output_scales (attr, g->OC, 1 << 1,
              scales), "output scales", error)
      && set_post_ops (attr, p, sum_scale, error);
  if (good) {
    /* oneDNN's kernels fix their thread count when made, from OpenMP's:
     * the backend's, whatever the calling thread had */
    const int omp_threads = omp_get_max_threads ();
    omp_set_num_threads (n_threads);
    dnnl_status_t st = dnnl_primitive_desc_create (&pd, &desc, attr, engine,
        NULL);
    omp_set_num_threads (omp_threads);
    if (st == dnnl_unimplemented) {
      dnnl_primitive_attr_destroy (attr);
      hy_qconv_fused_free (f);
      return NULL;              /* today's path runs it */
    }
    good = ok (st, "primitive descriptor", error)
        && ok (dnnl_primitive_create (&f->primitive, pd), "primitive",
            error);
  }
  if (good) {
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md (pd,
        dnnl_query_scratchpad_md, 0);
    f->bias_data = aligned_bytes (g->OC * sizeof (int32_t));
    f->scratch_data = aligned_bytes (dnnl_memory_desc_get_size (smd));
    good = f->bias_data && f->scratch_data
        && reorder_weights (f, engine, &wei_user_md, wmd, wq, error)
        && ok (dnnl_memory_create (&f->bias, &bias_md, engine,
                f->bias_data), "memory", error)
        && ok (dnnl_memory_create (&f->scratch, smd, engine,
                f->scratch_data), "memory", error)
        && ok (dnnl_memory_create (&f->src, &src_md, engine,
                DNNL_MEMORY_NONE), "memory", error)
        && ok (dnnl_memory_create (&f->dst, &dst_md, engine,
                DNNL_MEMORY_NONE), "memory", error);
    if (good)
      memcpy (f->bias_data, bias_q, g->OC * sizeof (int32_t));
  }
  dnnl_primitive_desc_destroy (pd);
  dnnl_primitive_attr_destroy (attr);
  if (!good) {
    hy_qconv_fused_free (f);
    return NULL;
  }
  return f;
}

dnnl_status_t
hy_qconv_fused_run (hy_qconv_fused *f, const void *src, void *dst)
{
  dnnl_exec_arg_t args[] = {
    { DNNL_ARG_SRC, f->src }, { DNNL_ARG_WEIGHTS, f->weights },
    { DNNL_ARG_BIAS, f->bias }, { DNNL_ARG_DST, f->dst },
    { DNNL_ARG_SCRATCHPAD, f->scratch },
  };
  dnnl_status_t st = dnnl_memory_set_data_handle (f->src, (void *) src);
  if (st == dnnl_success)
    st = dnnl_memory_set_data_handle (f->dst, dst);
  if (st != dnnl_success)
    return st;
  /* oneDNN's own team over every filter and pixel */
  const int omp_threads = omp_get_max_threads ();
  omp_set_num_threads (f->n_threads);
  st = dnnl_primitive_execute (f->primitive, f->stream, G_N_ELEMENTS (args),
      args);
  if (st == dnnl_success)
    st = dnnl_stream_wait (f->stream);
  omp_set_num_threads (omp_threads);
  return st;
}
