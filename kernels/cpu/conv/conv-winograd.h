/*
 * conv-winograd.h — 3×3 stride-1 convolutions by Winograd's minimal
 * filtering algorithm (Lavin & Gray, 2016), F(4×4, 3×3) or F(2×2, 3×3),
 * on AVX-512.
 *
 * In F(4×4, 3×3) each 4×4 block of outputs ("tile") is computed from the
 * 6×6 block of input it reads: both the input block and the 3×3 filter
 * are taken into a 6×6 transform domain (the filter once, when the plan
 * is set up), where the convolution is an elementwise product summed over
 * the input channels — 36 multiply-adds per tile and channel pair instead
 * of 144.  Summed over channels, those products are 36 independent GEMMs
 * (filters × channels by channels × tiles), which run on the packed
 * kernel (sgemm-packed.h); then each tile's 6×6 result goes back to its
 * 4×4 outputs.  F(2×2, 3×3) is the same with 2×2 tiles from 4×4 blocks:
 * 16 multiply-adds instead of 36, a smaller gain (2.25× against 4×) but
 * tiles that fit small maps.
 *
 * The transforms cost a few dozen vector operations per tile and channel,
 * against alpha² × filters multiply-adds of the products, so they pay on
 * layers with enough channels and tiles: ResNet's 3×3 layers, F(4×4) on
 * 56×56 and 28×28 maps, F(2×2) on 14×14 and 7×7.  The rule that picks
 * them (conv-strategy.c) is measured there.
 *
 * The results are not conv.c's bit for bit: the transforms' arithmetic
 * rounds differently from a direct sum (the error grows with the
 * transform's size: F(4×4) stays within ~1e-6 of the outputs' scale on a
 * network's layers, F(2×2) ten times closer, where F(6×6) would lose
 * another digit).  They do not depend on the thread count, and both
 * modes run the same kernel.
 */
#ifndef HY_CPU_CONV_WINOGRAD_H
#define HY_CPU_CONV_WINOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

typedef struct hy_conv_winograd hy_conv_winograd;

/* Whether the kernel can run the convolution p over the call's tensors
 * (as hy_conv_packed_new takes them): 2-D, 3×3, stride 1, no dilation,
 * one group, padding up to 2, constant weights, an AVX-512 CPU with the
 * packed kernel on.  Where it pays is conv-strategy.c's question. */
bool hy_conv_winograd_runs (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const);

/* The Winograd form of the convolution in the form given (tile 4 for
 * F(4×4, 3×3), 2 for F(2×2, 3×3)), or NULL where it cannot run. */
hy_conv_winograd *hy_conv_winograd_new_tile (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const, int tile);
/* The same in F(4×4, 3×3). */
hy_conv_winograd *hy_conv_winograd_new (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const);
void hy_conv_winograd_free (hy_conv_winograd *conv);

/* "winograd-4x4" or "winograd-2x2": the form, for the profile. */
const char *hy_conv_winograd_kernel_name (const hy_conv_winograd *conv);

/* The kernel (hy_cpu_kernel_fn) for a call set up by hy_conv_winograd_new:
 * params is the hy_conv_winograd. */
void hy_cpu_convolution_winograd (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

#endif /* HY_CPU_CONV_WINOGRAD_H */
