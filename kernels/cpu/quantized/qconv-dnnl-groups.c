/*
 * qconv-dnnl-groups.c — an int8 convolution's weight descriptions (see
 * qconv-dnnl-groups.h).
 */
#include "kernels/cpu/quantized/qconv-dnnl-groups.h"

dnnl_status_t
hy_qconv_dnnl_weight_mds (const hy_conv_params *cp, int64_t filters,
    int64_t channels, dnnl_memory_desc_t *user, dnnl_memory_desc_t *any)
{
  const int64_t g = cp->num_group;
  if (g == 1) {
    const dnnl_dims_t dims = { filters, channels, cp->kernel[0],
      cp->kernel[1] };
    dnnl_status_t st = dnnl_memory_desc_init_by_tag (user, 4, dims, dnnl_s8,
        dnnl_oihw);
    return st != dnnl_success ? st
        : dnnl_memory_desc_init_by_tag (any, 4, dims, dnnl_s8,
        dnnl_format_tag_any);
  }
  const dnnl_dims_t dims = { g, filters / g, channels / g, cp->kernel[0],
    cp->kernel[1] };
  dnnl_status_t st = dnnl_memory_desc_init_by_tag (user, 5, dims, dnnl_s8,
      dnnl_goihw);
  return st != dnnl_success ? st
      : dnnl_memory_desc_init_by_tag (any, 5, dims, dnnl_s8,
      dnnl_format_tag_any);
}
