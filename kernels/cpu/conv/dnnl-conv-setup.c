/*
 * dnnl-conv-setup.c — the oneDNN convolutions' shared set-up
 * (dnnl-conv-setup.h).
 */
#include <stdlib.h>

#include <oneapi/dnnl/dnnl_debug.h>

#include "hybrid.h"
#include "kernels/cpu/conv/dnnl-conv-setup.h"

bool
hy_dnnl_check (const hy_dnnl_setup *s, dnnl_status_t status,
    const char *call)
{
  if (status == dnnl_success)
    return true;
  g_set_error (s->error, HY_ERROR,
      status == dnnl_out_of_memory ? HY_ERROR_NO_MEMORY : HY_ERROR_BACKEND,
      "%s: oneDNN %s failed (%s)", s->what, call, dnnl_status2str (status));
  return false;
}

void *
hy_dnnl_aligned_bytes (size_t n)
{
  void *p = NULL;
  if (posix_memalign (&p, 64, (n + 63) & ~(size_t) 63) != 0)
    return NULL;
  return p;
}

bool
hy_dnnl_conv_user_weights_md (const hy_dnnl_setup *s,
    const hy_dnnl_conv_spec *spec, dnnl_memory_desc_t *md)
{
  const dnnl_dims_t dims = { spec->filters, spec->channels,
    spec->p->kernel[0], spec->p->kernel[1] };
  return hy_dnnl_check (s, dnnl_memory_desc_init_by_tag (md, 4, dims,
          dnnl_f32, dnnl_oihw), "memory description");
}

bool
hy_dnnl_conv_pd_create (const hy_dnnl_setup *s, dnnl_engine_t engine,
    const hy_dnnl_conv_spec *spec, dnnl_primitive_desc_t *pd)
{
  const hy_conv_params *p = spec->p;
  const dnnl_dims_t src_dims = { 1, spec->channels, spec->in_h, spec->in_w };
  const dnnl_dims_t weight_dims = { spec->filters, spec->channels,
    p->kernel[0], p->kernel[1] };
  const dnnl_dims_t bias_dims = { spec->filters };
  const dnnl_dims_t dst_dims = { 1, spec->filters, spec->out_h,
    spec->out_w };
  const dnnl_dims_t strides = { p->stride[0], p->stride[1] };
  /* oneDNN counts dilation from 0 (MXNet's 1 is its 0). */
  const dnnl_dims_t dilates = { p->dilate[0] - 1, p->dilate[1] - 1 };
  const dnnl_dims_t pad = { p->pad[0], p->pad[1] };
  dnnl_memory_desc_t src_md, weights_md, bias_md, dst_md;
  dnnl_convolution_desc_t desc;
  dnnl_primitive_attr_t attr = NULL;
  *pd = NULL;
  bool ok = hy_dnnl_check (s, dnnl_memory_desc_init_by_tag (&src_md, 4,
          src_dims, spec->compute, spec->src_tag), "memory description")
      && hy_dnnl_check (s, dnnl_memory_desc_init_by_tag (&weights_md, 4,
          weight_dims, spec->compute, dnnl_format_tag_any),
      "memory description")
      && hy_dnnl_check (s, dnnl_memory_desc_init_by_tag (&bias_md, 1,
          bias_dims, dnnl_f32, dnnl_x), "memory description")
      && hy_dnnl_check (s, dnnl_memory_desc_init_by_tag (&dst_md, 4,
          dst_dims, spec->dst_type, spec->dst_tag), "memory description")
      && hy_dnnl_check (s, dnnl_dilated_convolution_forward_desc_init (&desc,
          dnnl_forward_inference, dnnl_convolution_direct, &src_md,
          &weights_md, spec->has_bias ? &bias_md : NULL, &dst_md, strides,
          dilates, pad, pad), "convolution description")
      && hy_dnnl_check (s, dnnl_primitive_attr_create (&attr), "attributes")
      && hy_dnnl_check (s, dnnl_primitive_attr_set_scratchpad_mode (attr,
          dnnl_scratchpad_mode_user), "attributes")
      && (!spec->post_ops || hy_dnnl_check (s,
          dnnl_primitive_attr_set_post_ops (attr, spec->post_ops),
          "post-ops"));
  if (ok) {
    const dnnl_status_t st = dnnl_primitive_desc_create (pd, &desc, attr,
        engine, NULL);
    ok = st != dnnl_unimplemented
        && hy_dnnl_check (s, st, "convolution set-up");
  }
  dnnl_primitive_attr_destroy (attr);
  return ok;
}

bool
hy_dnnl_reorder_weights (const hy_dnnl_setup *s, dnnl_engine_t engine,
    const void *weights, const dnnl_memory_desc_t *user_md,
    const dnnl_memory_desc_t *md, int64_t n_slices, char *out,
    size_t out_stride)
{
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t reorder = NULL;
  dnnl_stream_t stream = NULL;
  dnnl_memory_t from = NULL, to = NULL;
  /* One slice's weights, plain (the model's own layout). */
  const size_t user_bytes = dnnl_memory_desc_get_size (user_md);
  bool ok = hy_dnnl_check (s, dnnl_reorder_primitive_desc_create (&pd,
          user_md, engine, md, engine, NULL), "weight reorder set-up")
      && hy_dnnl_check (s, dnnl_primitive_create (&reorder, pd),
          "weight reorder")
      && hy_dnnl_check (s, dnnl_stream_create (&stream, engine,
          dnnl_stream_default_flags), "stream creation")
      && hy_dnnl_check (s, dnnl_memory_create (&from, user_md, engine,
          DNNL_MEMORY_NONE), "memory creation")
      && hy_dnnl_check (s, dnnl_memory_create (&to, md, engine,
          DNNL_MEMORY_NONE), "memory creation");
  for (int64_t i = 0; ok && i < n_slices; i++) {
    const dnnl_exec_arg_t args[] = {
      { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to },
    };
    ok = hy_dnnl_check (s, dnnl_memory_set_data_handle (from,
            (void *) ((const char *) weights + i * user_bytes)),
            "weight reorder")
        && hy_dnnl_check (s, dnnl_memory_set_data_handle (to,
            out + i * out_stride), "weight reorder")
        && hy_dnnl_check (s, dnnl_primitive_execute (reorder, stream, 2,
            args), "weight reorder")
        && hy_dnnl_check (s, dnnl_stream_wait (stream), "weight reorder");
  }
  dnnl_memory_destroy (to);
  dnnl_memory_destroy (from);
  dnnl_stream_destroy (stream);
  dnnl_primitive_destroy (reorder);
  dnnl_primitive_desc_destroy (pd);
  return ok;
}

int64_t
hy_dnnl_filter_slices (int64_t filters, int64_t batch, int threads,
    int items_per_thread)
{
  if (filters % 16 != 0)
    return 1;
  const int64_t blocks = filters / 16;
  const int64_t want = (items_per_thread * threads + batch - 1) / batch;
  for (int64_t s = want > 1 ? want : 1; s <= blocks; s++)
    if (blocks % s == 0)
      return s;
  return blocks;
}
