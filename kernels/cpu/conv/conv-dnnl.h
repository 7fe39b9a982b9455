/*
 * conv-dnnl.h — 2-D convolutions through oneDNN (built when the library
 * is found: HY_HAVE_DNNL), set up once per plan call by the CPU backend's
 * prepare_call and run in place of conv.c's kernel.
 *
 * What is done once, at set-up: the primitive (its kernel chosen and
 * JIT-compiled for this shape), and the weights reordered into the
 * layout that kernel wants.  What a forward does: the input into
 * 16-channel blocks (layout-blocked.h), one primitive execution per
 * (image, slice of the filters) on the kernels' own threads, each slice's
 * output back to plain planes with the fused epilogue while it is in
 * cache.  Scratch (the blocked input, each thread's output slice and
 * oneDNN's scratchpad, in user mode) lives in the context's workspace.
 *
 * Which convolutions: 2-D, ungrouped, weights constant for the call's
 * life (hy_call.const_inputs), and a primitive that is one of oneDNN's
 * direct JIT kernels (its gemm and reference fallbacks are no faster than
 * conv.c); everything else stays with conv.c, depthwise included (see
 * docs/PERFORMANCE.md for the measurements behind the rule).
 *
 * Threads: oneDNN's Debian build threads with OpenMP; here every
 * primitive is made and run with one OpenMP thread, inside the kernels'
 * pool, so the process never has more busy compute threads than the
 * backend's count and no OpenMP team is ever started.
 *
 * Precision bf16 (ctx->bf16 at set-up): every 2-D ungrouped convolution
 * with constant weights, whatever HYBRIDINFER_DNNL says, computed from a
 * bf16 input and bf16 weights with fp32 sums, bias and output.
 */
#ifndef HY_CPU_CONV_DNNL_H
#define HY_CPU_CONV_DNNL_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

typedef struct hy_conv_dnnl hy_conv_dnnl;

/* Whether convolutions go to oneDNN in this process: when
 * HYBRIDINFER_DNNL is 1 (read once).  Off by default for now: each
 * execution of a oneDNN primitive allocates (its arguments go into a
 * std::unordered_map), and hybrid mode promises no allocation per
 * forward. */
bool hy_conv_dnnl_enabled (void);

/* Whether int8 convolutions go to oneDNN: yes unless HYBRIDINFER_DNNL is 0
 * (read once).  int8, like bf16, is a speed mode: our reference int8
 * kernels are some fifty times slower than oneDNN's VNNI/AMX ones, so the
 * allocations inside oneDNN's execute are taken there, counted and
 * documented (docs/PERFORMANCE.md), as for bf16.  The fp32 default stays
 * on our own kernels, with none. */
bool hy_int8_dnnl_enabled (void);

/* Sets up the convolution `p` over the call's tensors (in: data, weight,
 * then bias and the epilogue's operands as nn.h orders them; out: the
 * output), whose shapes are final, and whose weights hold their values
 * for good where weights_const.  Returns NULL
 * without an error when oneDNN does not take this convolution (conv.c
 * runs it), and NULL with one (HY_ERROR_BACKEND, HY_ERROR_NO_MEMORY) when
 * setting it up failed.  The result keeps no pointer to the tensors. */
hy_conv_dnnl *hy_conv_dnnl_new (hy_cpu_ctx *ctx, const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const, GError **error);
void hy_conv_dnnl_free (hy_conv_dnnl *conv);
/* Whether it computes in bf16 (set up with ctx->bf16). */
bool hy_conv_dnnl_is_bf16 (const hy_conv_dnnl *conv);

/* The kernel (hy_cpu_kernel_fn) for a call set up by hy_conv_dnnl_new:
 * params is the hy_conv_dnnl, in and out the call's tensors, with the
 * shapes they had then. */
void hy_cpu_convolution_dnnl (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

#endif /* HY_CPU_CONV_DNNL_H */
