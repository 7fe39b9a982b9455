/*
 * conv-winograd.h — 3×3 stride-1 convolutions by Winograd's minimal
 * filtering algorithm F(4×4, 3×3) (Lavin & Gray, 2016), on AVX-512.
 *
 * Each 4×4 block of outputs ("tile") is computed from the 6×6 block of
 * input it reads: both the input block and the 3×3 filter are taken into
 * a 6×6 transform domain (the filter once, when the plan is set up), where
 * the convolution is an elementwise product summed over the input
 * channels — 36 multiply-adds per tile and channel pair instead of 144.
 * Summed over channels, those products are 36 independent GEMMs (filters
 * × channels by channels × tiles), which run on the packed kernel
 * (sgemm-packed.h); then each tile's 6×6 result goes back to its 4×4
 * outputs.
 *
 * The transforms cost a few dozen vector operations per tile and channel,
 * against 36 × filters multiply-adds of the products, so they pay on
 * layers with enough channels and tiles: ResNet's 3×3 layers on 56×56 to
 * 14×14 maps.  The rule (conv-winograd.c) is measured there.
 *
 * The results are not conv.c's bit for bit: the transforms' arithmetic
 * rounds differently from a direct sum (the error grows with the
 * transform's size; F(4×4) stays within ~1e-6 of the outputs' scale on a
 * network's layers, where F(6×6) would lose another digit).  They do not
 * depend on the thread count, and both modes run the same kernel.
 */
#ifndef HY_CPU_CONV_WINOGRAD_H
#define HY_CPU_CONV_WINOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu-kernel.h"
#include "kernels/params/nn.h"

typedef struct hy_conv_winograd hy_conv_winograd;

/* The Winograd form of the convolution p over the call's tensors (as
 * hy_conv_packed_new takes them), or NULL where it does not run or does
 * not pay: 2-D, 3×3, stride 1, no dilation, one group, padding up to 2,
 * constant weights, an AVX-512 CPU, and the rule's sizes.
 * HYBRIDINFER_WINOGRAD=0 turns it off (for comparisons), =1 takes every
 * convolution it can run, whatever the rule says (for tests). */
hy_conv_winograd *hy_conv_winograd_new (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    uint32_t const_inputs);
void hy_conv_winograd_free (hy_conv_winograd *conv);

/* The kernel (hy_cpu_kernel_fn) for a call set up by hy_conv_winograd_new:
 * params is the hy_conv_winograd. */
void hy_cpu_convolution_winograd (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

#endif /* HY_CPU_CONV_WINOGRAD_H */
