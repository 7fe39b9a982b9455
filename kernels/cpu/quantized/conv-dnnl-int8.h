/*
 * conv-dnnl-int8.h — the quantized _sg_mkldnn_conv through oneDNN's int8
 * convolution (u8/s8 × s8 → s32, per-channel output scales), set up once
 * per plan call by the CPU backend's prepare_call when oneDNN is on
 * (HYBRIDINFER_DNNL=1, conv-dnnl.h says why it is not by default).
 *
 * Once, at set-up: the BatchNorm folded and the weights quantized per
 * output channel (the reference kernel's arithmetic, conv.c), reordered
 * into the primitive's layout.  Per forward: the bias to int32 and the
 * output scales from the data's range (a runtime input), the integers
 * laid out as bytes (NHWC), one execution, and the residual, ReLUs,
 * rounding and saturation in the pass back to plain planes, exactly as
 * the reference does them: the two compute the same bits.
 */
#ifndef HY_CPU_QUANTIZED_CONV_DNNL_INT8_H
#define HY_CPU_QUANTIZED_CONV_DNNL_INT8_H

#include <glib.h>

#include "kernels/backend-impl.h"
#include "kernels/cpu/cpu-kernel.h"

/* Sets the call, whose weights are constant (qconv-setup.c checks), up
 * to run through oneDNN when it is on and takes it; TRUE leaves the call
 * as it was otherwise.  FALSE with an error when
 * setting up failed. */
gboolean hy_qconv_dnnl_prepare_call (hy_cpu_ctx *ctx, hy_call *call,
    GError **error);
/* The backend's private-value hooks (backend-impl.h) for int8 values:
 * a quantized convolution's output held as bytes (int8 or uint8, NHWC)
 * in the plan's arena, a quarter of its floats, where every reader is
 * one of these convolutions reading it as data or residual; so a chain
 * of them converts only where it starts and ends. */
/* Whether int8 values may be held as bytes at all: oneDNN's int8 on and
 * HYBRIDINFER_INT8_BYTES not 0 (read once). */
bool hy_int8_bytes_on (void);
size_t hy_qconv_dnnl_private_bytes (const hy_call_shape *call);
gboolean hy_qconv_dnnl_reads_private (const hy_call_shape *call, int input);
/* Frees what prepare set up (nothing for a call it left alone). */
void hy_qconv_dnnl_release_call (hy_call *call);
/* "onednn-int8" for a call it set up, else NULL. */
const char *hy_qconv_dnnl_kernel_name (const hy_call *call);

#endif /* HY_CPU_QUANTIZED_CONV_DNNL_INT8_H */
