/*
 * conv-few-channels.h — direct AVX-512 convolutions of inputs with few
 * channels: a network's first layer (3 colour channels, 7×7 or 3×3,
 * stride 2), which the packed GEMM runs far below the FMA ceiling.
 *
 * Such a layer's GEMM has K = channels·k² = 27 or 147: its column
 * matrix (built panel by panel, im2col-panel.h) is a stride-2 gather per
 * tap that costs about as much as the few FMAs each gathered value feeds
 * (perf, conv-bench: 29 % of the packed kernel's time on ResNet's 7×7
 * layer, 43 % and 59 % on MobileNetV2's and V3's 3×3 ones, while its GEMM
 * tiles ran at about the FMA ceiling).  Here instead each vector holds 16
 * consecutive output columns of one filter, and a register tile of 4
 * filters × 6 such vectors is summed over the taps: per tap 4 weight
 * broadcasts and 6 input loads feed 24 FMAs.  The input is copied, a band
 * of rows at a time, into a zero-padded buffer split into the stride's
 * column phases (even and odd columns apart), so that a tap's inputs for
 * 16 outputs are 16 consecutive floats.  The fused epilogue (bias,
 * BatchNorm, residual, activation) is applied in the registers before the
 * one store of each output.
 *
 * Results do not depend on the thread count (every output is summed in
 * the same order by the same instructions); they are not conv.c's bit for
 * bit (a direct sum in tap order, not the GEMM's).
 */
#ifndef HY_CPU_CONV_FEW_CHANNELS_H
#define HY_CPU_CONV_FEW_CHANNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

typedef struct hy_conv_few_channels hy_conv_few_channels;

/* Whether the kernel can run the convolution p over the call's tensors
 * (as hy_conv_packed_new takes them): 2-D, one group, no dilation,
 * stride 1 or 2, kernels up to 11×11 and 1024 taps, constant weights,
 * an AVX-512 CPU.  Where it pays (up to 4 input channels) is
 * conv-strategy.c's question. */
bool hy_conv_few_channels_runs (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const);

/* The direct form of that convolution, or NULL where it cannot run. */
hy_conv_few_channels *hy_conv_few_channels_new (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const);
void hy_conv_few_channels_free (hy_conv_few_channels *conv);

/* The kernel (hy_cpu_kernel_fn) for a call set up by
 * hy_conv_few_channels_new: params is the hy_conv_few_channels. */
void hy_cpu_convolution_few_channels (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

#endif /* HY_CPU_CONV_FEW_CHANNELS_H */
