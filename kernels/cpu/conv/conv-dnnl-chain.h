/*
 * conv-dnnl-chain.h — in precision bf16, a pointwise-depthwise chain
 * (MobileNet's expansion, depthwise layer and projection, or a depthwise
 * layer and its projection) as oneDNN bf16 convolutions on nhwc
 * activations that stay in bf16 from one of the chain's layers to the
 * next, instead of the fp32 fused chain of conv-pw-dw.c.
 *
 * The chains are the ones the fp32 rules fuse (conv-strategy.c): the
 * strategy offers a pair, then the projection, as it does to conv-pw-dw.c,
 * where its rule says this pays (maps of 28×28 or less), and runs this
 * where it is made, conv-pw-dw.c's chain where it declines.
 * Each image is split into bands of output rows (one per thread where the
 * batch does not share out), each band's layers three oneDNN primitives
 * made for its rows (the depthwise layer's padding on the image's edges
 * only), run on the pool's threads.  Inside a chain: the expansion's and
 * the depthwise layer's BatchNorm folded into their weights and bias, and
 * their ReLU, clip or hard swish as oneDNN post-ops; their outputs bf16.
 * The last layer's output is fp32, its bias oneDNN's, its BatchNorm,
 * residual and activation ours on the way back to planes (as
 * conv-dnnl.c).  Declined (NULL): any other activation inside the chain
 * (hard sigmoid, leaky ReLU, ...), a residual inside it, operands that
 * are not constant, strides on a pointwise layer.
 */
#ifndef HY_CPU_CONV_DNNL_CHAIN_H
#define HY_CPU_CONV_DNNL_CHAIN_H

#include <stdbool.h>

#include "kernels/backend-impl.h"
#include "kernels/cpu/cpu-kernel.h"

typedef struct hy_conv_dnnl_chain hy_conv_dnnl_chain;

/* first then second (an expansion and its depthwise layer, or a
 * depthwise layer and its projection) as one call whose inputs are
 * first's, then second's after its data; NULL where declined. */
hy_conv_dnnl_chain *hy_conv_dnnl_chain_new (hy_cpu_ctx *ctx,
    const hy_call *first, const hy_call *second);

/* Takes second (the projection) into the chain `first` runs; false, the
 * chain unchanged, where declined. */
bool hy_conv_dnnl_chain_take_projection (hy_cpu_ctx *ctx,
    hy_conv_dnnl_chain *chain, const hy_call *first, const hy_call *second);

const char *hy_conv_dnnl_chain_kernel_name (const hy_conv_dnnl_chain *chain);

void hy_conv_dnnl_chain_free (hy_conv_dnnl_chain *chain);

void hy_cpu_convolution_dnnl_chain (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

#endif /* HY_CPU_CONV_DNNL_CHAIN_H */
