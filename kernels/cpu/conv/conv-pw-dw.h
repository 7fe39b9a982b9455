/*
 * conv-pw-dw.h — a pointwise convolution and the depthwise one that reads
 * its output, run as one kernel: MobileNet's expansion (1×1, C → tC
 * channels, BatchNorm, ReLU6 or hard swish) and the 3×3 or 5×5 depthwise
 * layer after it.
 *
 * Run one after the other, the expansion writes tC planes (4.8 MB for
 * MobileNetV2's 96 × 112 × 112) that the depthwise layer reads back: both
 * layers wait on memory, at a fraction of the FMA ceiling.  Here each
 * thread takes a run of the depthwise layer's output rows of one image
 * and goes down it a band at a time: the expansion's rows that the band
 * reads, all tC channels, go into a buffer of the thread's that stays in
 * its cache (sgemm-packed.h's product on those columns only), and the
 * depthwise kernel (depthwise-avx512.h) reads them from there.  The rows
 * two bands share (K − stride of them) are kept, not computed again; only
 * where a thread's run starts are they computed twice.
 *
 * The same bands run a depthwise layer and the pointwise one after it
 * (MobileNetV1's pairs, MobileNetV3's first block): the depthwise layer
 * then reads the call's input rows where they lie.
 *
 * Each output is the sum the two calls compute, bit for bit: the product
 * sums every output over the input channels in order whatever columns it
 * is given, and the depthwise kernel sums each output alone (so calls are
 * fused only where each alone would run on those kernels:
 * conv-strategy.c).
 */
#ifndef HY_CPU_CONV_PW_DW_H
#define HY_CPU_CONV_PW_DW_H

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/backend-impl.h"
#include "kernels/params/nn.h"

typedef struct hy_conv_pw_dw hy_conv_pw_dw;

/* Which calls the kernel can run as one (whether they pay so is
 * conv-strategy.c's question, which the planner asks first: only pairs
 * it said yes to are offered), from their params and shapes alone,
 * before their tensors exist:
 *  - a pair: `pw` a Convolution the packed kernel runs as a pointwise
 *    product (1×1, stride 1, no padding, one group, no residual, more
 *    than four input channels; x its data, mid its output) and `dw` a
 *    depthwise Convolution the AVX-512 depthwise kernel runs with its
 *    epilogue in registers, reading mid (y its output);
 *  - a chain without an expansion: `dw` such a depthwise Convolution
 *    (x into mid) and `proj` a projection reading its output;
 *  - a pair's depthwise layer `dw` (x into mid) taking in the projection
 *    `proj` after it (hy_conv_pw_dw_take_projection).
 * A projection is such a pointwise Convolution, a residual allowed.  All
 * on an AVX-512 CPU with the packed and depthwise kernels on. */
bool hy_conv_pw_dw_pair_runs (const hy_conv_params *pw, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *dw, const hy_shape *y);
bool hy_conv_pw_dw_chain_runs (const hy_conv_params *dw, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *proj);
bool hy_conv_pw_dw_can_take (const hy_conv_params *dw, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *proj);
bool hy_conv_pw_dw_is_projection (const hy_conv_params *p,
    const hy_shape *x);

/* The depthwise layer dw's output rows (x into y) that one band holds:
 * as many as the expansion rows they read, all its channels, fit in a
 * thread's 512 KiB buffer (conv-pw-dw.c, BAND_BUFFER_BYTES). */
int64_t hy_conv_pw_dw_band_rows (const hy_conv_params *dw,
    const hy_shape *x, const hy_shape *y);

/* The two calls as one, or NULL where the kernel cannot run them so (a
 * pair or a chain, as above, with constant weights).  `in` is the fused
 * call's argument list: first's, then second's less its data; the kernel
 * reads only that and writes second's output. */
hy_conv_pw_dw *hy_conv_pw_dw_new (const hy_call *first,
    const hy_call *second);

void hy_conv_pw_dw_free (hy_conv_pw_dw *conv);

/* The pair's call (`first`, made by hy_conv_pw_dw_new) takes the next
 * call in too: `second`, a projection reading the depthwise layer's
 * output, the block's.  Each band's depthwise output then goes to a
 * buffer of the thread's instead of memory, and the projection's product
 * reads it from there and writes those columns of its output; the fused
 * call's `in` is first's, then second's less its data.  Returns false,
 * changing nothing, where it cannot; the pair still runs as it was. */
bool hy_conv_pw_dw_take_projection (hy_conv_pw_dw *conv,
    const hy_call *first, const hy_call *second);

/* "pointwise+depthwise", "pointwise+depthwise+pointwise" with a
 * projection, or "depthwise+pointwise", for profiles. */
const char *hy_conv_pw_dw_kernel_name (const hy_conv_pw_dw *conv);

/* The kernel (hy_cpu_kernel_fn) for the fused call: params is the
 * hy_conv_pw_dw, `in` as hy_conv_pw_dw_new says, out second's output. */
void hy_cpu_convolution_pw_dw (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

#endif /* HY_CPU_CONV_PW_DW_H */
