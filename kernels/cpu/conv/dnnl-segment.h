/*
 * dnnl-segment.h — precision bf16, hybrid mode: the calls of a "bf16
 * segment", a connected run of convolutions (BatchNorm folded into their
 * weights and bias, the residual add and the activation as oneDNN
 * post-ops) and max or global average pooling, whose activations stay
 * bf16 nhwc from one call to the next in the plan's arena
 * (core/plan-segment.c decides which values, asking the two hooks
 * below).  Only the calls at a segment's edges convert: fp32 planes into
 * bf16 nhwc on entry, back to planes on exit.
 *
 * Why nhwc and not nChw16c: oneDNN 2.6.3's AMX and AVX512_BF16 kernels
 * for bf16 (brgconv, brgconv_1x1) are its nhwc ones, the layout
 * format_tag::any picks for them on this CPU, and the one the bf16
 * chains (conv-dnnl-chain.c) already keep between their layers.
 *
 * HYBRIDINFER_BF16_SEGMENT=0 keeps every value fp32 planes (each bf16
 * convolution alone, as conv-dnnl.c runs it).
 */
#ifndef HY_CPU_DNNL_SEGMENT_H
#define HY_CPU_DNNL_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

#include "kernels/backend-impl.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/cpu-kernel.h"

/* The backend hooks (backend-impl.h): the bytes of `call`'s output held
 * as bf16 nhwc, 0 where it writes planes; whether it reads input `input`
 * so (bf16, or fp32 nhwc for a residual).  Both say no outside
 * precision bf16. */
size_t hy_dnnl_segment_output_bytes (const hy_cpu_ctx *ctx,
    const hy_call_shape *call, gboolean in0_private,
    gboolean read_as_operand);
gboolean hy_dnnl_segment_reads (const hy_cpu_ctx *ctx,
    const hy_call_shape *call, int input);

/* Sets up a convolution or pooling call with private_inputs or
 * private_outputs set: fills call->fn and call->params; FALSE with an
 * error where it cannot (weights that are not constant, no oneDNN kernel
 * for the shape), which fails the plan. */
gboolean hy_dnnl_segment_prepare_call (hy_cpu_ctx *ctx, hy_call *call,
    GError **error);
/* Whether the call runs a segment kernel; then its release and name. */
bool hy_dnnl_segment_runs (const hy_call *call);
void hy_dnnl_segment_release_call (hy_call *call);
const char *hy_dnnl_segment_kernel_name (const hy_call *call);


/* The pooling half (dnnl-segment-pool.c): max pooling and global average
 * pooling reading bf16 nhwc, writing bf16 nhwc or fp32 planes. */
void *hy_segment_pool_new (const hy_call *call, GError **error);
void hy_segment_pool_free (void *pool);
void hy_cpu_segment_pool (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
bool hy_segment_pool_takes (const hy_call_shape *call);

#endif /* HY_CPU_DNNL_SEGMENT_H */
