/*
 * qconv-setup.h — how the CPU backend sets up a quantized convolution
 * call once per plan: on oneDNN's int8 kernels when oneDNN is on and
 * takes it (conv-dnnl-int8.h), else on the reference kernel with its
 * weights quantized once (qconv.h); a call whose weights are not
 * constant stays the reference kernel that quantizes them every time.
 */
#ifndef HY_CPU_QUANTIZED_QCONV_SETUP_H
#define HY_CPU_QUANTIZED_QCONV_SETUP_H

#include <glib.h>

#include "kernels/backend-impl.h"
#include "kernels/cpu/cpu-kernel.h"

gboolean hy_qconv_prepare_call (hy_cpu_ctx *ctx, hy_call *call,
    GError **error);
void hy_qconv_release_call (hy_call *call);
/* "onednn-int8", "reference-prepared" or "reference". */
const char *hy_qconv_kernel_name (const hy_call *call);

#endif /* HY_CPU_QUANTIZED_QCONV_SETUP_H */
