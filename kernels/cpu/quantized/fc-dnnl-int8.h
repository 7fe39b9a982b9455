/*
 * fc-dnnl-int8.h — the quantized _sg_mkldnn_fully_connected (float out)
 * through oneDNN's int8 inner product, as MXNet's SgMKLDNNFCOp runs it:
 * u8/s8 data × s8 weights → s32 sums, the int32 bias added and the one
 * output scale, 1 / s_d / s_w, applied by oneDNN itself.
 *
 * Once, at set-up: the weights (int8 values held as floats) as bytes.
 * On the first forward, whose ranges fix the bias's int32 values and the
 * scale: the primitive, the weights reordered into its layout.  Every
 * forward after it with the same ranges (all of them, for a calibrated
 * export) converts the data to bytes and executes it; a forward with
 * other ranges runs the reference kernel (dense.c), which computes
 * MXNet's result for any.
 */
#ifndef HY_CPU_QUANTIZED_FC_DNNL_INT8_H
#define HY_CPU_QUANTIZED_FC_DNNL_INT8_H

#include <glib.h>

#include "kernels/backend-impl.h"
#include "kernels/cpu/cpu-kernel.h"

/* Sets the call up for oneDNN when oneDNN's int8 is on and its weight
 * and bias are constant; TRUE leaves any other call as it was.  FALSE
 * with an error when setting up failed. */
gboolean hy_qfc_dnnl_prepare_call (hy_cpu_ctx *ctx, hy_call *call,
    GError **error);
/* Frees what prepare set up (nothing for a call it left alone). */
void hy_qfc_dnnl_release_call (hy_call *call);
/* "onednn-int8" for a call it set up, else NULL. */
const char *hy_qfc_dnnl_kernel_name (const hy_call *call);

#endif /* HY_CPU_QUANTIZED_FC_DNNL_INT8_H */
