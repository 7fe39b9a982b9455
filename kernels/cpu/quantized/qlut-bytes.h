/*
 * qlut-bytes.h — a float chain between int8 layers, run on bytes as one
 * table look-up: _contrib_dequantize of a value held as bytes, a few
 * elementwise float ops on it, then a calibrated _contrib_quantize_v2
 * whose output is held as bytes again.
 *
 * Why: MXNet's int8 MobileNetV3 keeps each hard sigmoid as such a chain
 * (dequantize → _plus_scalar 3 → clip [0, 6] → _div_scalar 6 →
 * quantize_v2), 27 of them; run op by op, each makes four float planes
 * of the value and reads them back.  The output byte depends on the
 * input byte alone (the ranges are one per forward), so 256 entries,
 * computed by the very kernels the chain would run, give every byte.
 */
#ifndef HY_CPU_QUANTIZED_QLUT_BYTES_H
#define HY_CPU_QUANTIZED_QLUT_BYTES_H

#include <glib.h>

#include "kernels/backend-impl.h"
#include "kernels/cpu/cpu-kernel.h"

/* Links a chain may have between its dequantize and its quantize_v2. */
#define HY_QLUT_MAX_LINKS 8

/* Whether `link` may be a chain's float op: an op on data alone whose
 * kernel gives each element by one correctly rounded operation (+, −,
 * ·, ÷, min, max, clip, relu), so that the same element gives the same
 * bits wherever it lies in the tensor — not one through libm, whose
 * vector and scalar loops may differ in the last bit. */
gboolean hy_qlut_bytes_link (const hy_call_shape *link);

/* Makes calls[0..n) — a dequantize reading bytes, n − 2 links of
 * hy_qlut_bytes_link, a calibrated quantize_v2 writing bytes, each
 * reading the one before as its data, all prepared — into `fused`,
 * whose in (the dequantize's), out (the quantize_v2's) and bookkeeping
 * the caller has set.  node_params: each call's node params (the
 * prepared dequantize and quantize_v2 hold params of their own).  FALSE,
 * having changed nothing, where it cannot. */
gboolean hy_qlut_bytes_fuse (hy_cpu_ctx *ctx, const hy_call *calls, int n,
    const void *const *node_params, hy_call *fused);
void hy_qlut_bytes_release_call (hy_call *call);
/* "int8-bytes-lut" for a call it made, else NULL. */
const char *hy_qlut_bytes_kernel_name (const hy_call *call);

#endif /* HY_CPU_QUANTIZED_QLUT_BYTES_H */
