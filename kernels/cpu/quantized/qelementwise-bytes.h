/*
 * qelementwise-bytes.h — _contrib_quantize_v2, _contrib_dequantize and
 * _contrib_quantized_elemwise_mul on int8 values held as bytes NHWC in
 * the plan's arena, where oneDNN's int8 convolutions hold them
 * (conv-dnnl-int8.h): quantize writes them, dequantize reads them,
 * elemwise_mul reads and writes them.
 *
 * Why: MobileNetV3's hard swishes (x · quantize (relu6 (dequantize (x) +
 * 3) / 6)) and squeeze-excitation blocks sit between its convolutions.
 * Read as planes only, each made its convolution write float planes
 * through our epilogue and the convolution after it lay them out as
 * bytes again: 21 conversions in and 21 out a forward (figures in
 * qelementwise-bytes.c).
 */
#ifndef HY_CPU_QUANTIZED_QELEMENTWISE_BYTES_H
#define HY_CPU_QUANTIZED_QELEMENTWISE_BYTES_H

#include <glib.h>

#include "kernels/backend-impl.h"

/* The backend's private-value hooks for these three ops on 4-D values,
 * when int8 bytes are on at all: quantize_v2 and a calibrated
 * elemwise_mul write bytes; dequantize reads its data, elemwise_mul
 * either operand, as bytes. */
size_t hy_qelementwise_bytes_output (const hy_call_shape *call);
gboolean hy_qelementwise_bytes_reads (const hy_call_shape *call, int input);
/* A call of these ops whose private bits are set runs on this file's
 * kernels; TRUE leaves any other as it was.  FALSE with an error for a
 * call it cannot honour. */
gboolean hy_qelementwise_bytes_prepare_call (hy_call *call, GError **error);
void hy_qelementwise_bytes_release_call (hy_call *call);
/* "int8-bytes" for a call it set up, else NULL. */
const char *hy_qelementwise_bytes_kernel_name (const hy_call *call);

#endif /* HY_CPU_QUANTIZED_QELEMENTWISE_BYTES_H */
