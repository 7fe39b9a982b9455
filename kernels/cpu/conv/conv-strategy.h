/*
 * conv-strategy.h — which algorithm runs each convolution on the CPU,
 * and which consecutive convolutions run as one: the CPU backend's
 * convolution hooks (kernels/backend-impl.h).  The order and every rule
 * are in conv-strategy.c.
 */
#ifndef HY_CPU_CONV_STRATEGY_H
#define HY_CPU_CONV_STRATEGY_H

#include <stdbool.h>

#include <glib.h>

#include "kernels/backend-impl.h"
#include "kernels/cpu/cpu-kernel.h"

/* Sets up a Convolution call (prepare_call): its kernel and params become
 * those of the algorithm that takes it, which may transform its constant
 * weights once here; a call no algorithm takes keeps conv.c's own
 * kernel.  False, with an error, where setting one up failed. */
gboolean hy_conv_prepare_call (hy_cpu_ctx *ctx, hy_call *call,
    GError **error);

/* Frees what hy_conv_prepare_call or hy_conv_fuse_calls made for `call`
 * (release_call); nothing for any other call. */
void hy_conv_release_call (hy_call *call);

/* Which kernel runs a prepared Convolution call, for profiles
 * ("winograd-4x4", "packed-implicit", "pointwise+depthwise", ...). */
const char *hy_conv_kernel_name (const hy_call *call);

/* The planner's question (may_fuse): whether `second` may run fused with
 * `first`, from their params and shapes alone. */
bool hy_conv_may_fuse (const hy_call_shape *first,
    const hy_call_shape *second);

/* Two calls as one (fuse_calls), for a pair the planner was told may
 * fuse: fills fused's kernel and params, or returns false.  ctx: the
 * backend's (its precision picks the chain's kernel). */
bool hy_conv_fuse_calls (hy_cpu_ctx *ctx, const hy_call *first,
    const hy_call *second, hy_call *fused);

#endif /* HY_CPU_CONV_STRATEGY_H */
