/*
 * qconv-dnnl-groups.h — the weights of an int8 convolution as oneDNN
 * describes them, with or without groups.
 *
 * MXNet keeps a grouped convolution's weights as (OC, C / G, kh, kw):
 * group after group, which is oneDNN's goihw with dimensions (G, OC / G,
 * C / G, kh, kw), byte for byte.  So the quantized OIHW weights reorder
 * into oneDNN's grouped layouts (its depthwise kernels' Goihw16g and the
 * like) as they are, and the primitives that read them are the
 * ungrouped ones' with five-dimensional weights.
 */
#ifndef HY_CPU_QUANTIZED_QCONV_DNNL_GROUPS_H
#define HY_CPU_QUANTIZED_QCONV_DNNL_GROUPS_H

#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "kernels/params/nn.h"

/* filters, channels: the convolution's whole output and input channels.
 * user: the quantized weights as they lie (s8, OIHW, i.e. goihw); any:
 * the same for the primitive to choose its layout. */
dnnl_status_t hy_qconv_dnnl_weight_mds (const hy_conv_params *cp,
    int64_t filters, int64_t channels, dnnl_memory_desc_t *user,
    dnnl_memory_desc_t *any);

#endif /* HY_CPU_QUANTIZED_QCONV_DNNL_GROUPS_H */
