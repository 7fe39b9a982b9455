/*
 * conv-packed.h — a convolution whose weights are packed once, when its
 * plan call is set up (the CPU backend's prepare_call), for the packed
 * AVX-512 GEMM (sgemm-packed.h); conv.c runs it as any other GEMM
 * convolution (im2col, or none for a pointwise one; the same threads and
 * epilogue), only the products differ.
 *
 * Which convolutions: those conv.c lowers to GEMMs (not its depthwise
 * loop), weights constant for the call's life (hy_call.const_inputs),
 * on a CPU with AVX-512F, where conv-strategy.c's rule says the kernel
 * pays.  The rest run conv.c's OpenBLAS products as before.
 */
#ifndef HY_CPU_CONV_PACKED_H
#define HY_CPU_CONV_PACKED_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

typedef struct hy_conv_packed hy_conv_packed;

/* Whether the packed kernel can run the convolution p over the call's
 * tensors (in: data, weight, then the rest as nn.h orders them; shapes
 * final; weights_const: in[1] holds its value for good): one
 * conv.c lowers to GEMMs, constant weights, the packed kernel on.  Where
 * it pays is conv-strategy.c's question. */
bool hy_conv_packed_runs (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const);

/* The packed form of that convolution, or NULL where it cannot run (or
 * its weights' copy cannot be had: conv.c's plain kernel then runs it).
 * Keeps no pointer to the tensors. */
hy_conv_packed *hy_conv_packed_new (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const);
void hy_conv_packed_free (hy_conv_packed *conv);

/* Whether a k×k convolution's column matrix is built panel by panel
 * inside the product (im2col-panel.h) or lowered first: chosen when it is
 * set up, by the rule in conv.c; tests and benchmarks switch it to compare
 * the two (the results are the same bit for bit).  Returns false, and
 * changes nothing, where the panels cannot be built. */
bool hy_conv_packed_set_implicit (hy_conv_packed *conv, bool on);

/* "packed-implicit" or "packed", for profiles. */
const char *hy_conv_packed_kernel_name (const hy_conv_packed *conv);

/* A 1×1, stride-1, unpadded 2-D convolution of one group (the caller
 * has checked) on `cols` positions of one image only, on the calling
 * thread: y (num_filter rows, ldy floats apart) from x (its channels'
 * rows, ldx floats apart), with the call's fused epilogue (bias and bn as
 * the call's own tensors hold them, or NULL; res, laid out as y, where
 * the call adds a residual).  Each output is the same sum, bit for bit,
 * as the whole call computes. */
void hy_conv_packed_pointwise_cols (const hy_conv_packed *conv,
    const float *x, int64_t ldx, int64_t cols, const float *bias,
    const float *bn, const float *res, float *y, int64_t ldy);

/* The kernel (hy_cpu_kernel_fn) for a call set up by hy_conv_packed_new:
 * params is the hy_conv_packed. */
void hy_cpu_convolution_packed (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* Whether conv.c's own kernel runs p (over x, into y) with its depthwise
 * loop rather than as GEMMs (for profiles: which kernel ran). */
bool hy_cpu_convolution_is_depthwise (const hy_conv_params *p,
    const hy_tensor *x, const hy_tensor *y);

#endif /* HY_CPU_CONV_PACKED_H */
