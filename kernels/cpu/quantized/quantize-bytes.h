/*
 * quantize-bytes.h — _contrib_quantize_v2's output held as int8/uint8
 * bytes NHWC in the plan's arena, the layout oneDNN's int8 convolutions
 * read (conv-dnnl-int8.h), where every reader of it is one of them.
 *
 * Why: the first convolution of an int8 export reads the quantized
 * image.  Held as planes of floats, the quantize wrote four bytes a value
 * and the convolution laid them out as bytes again; held as bytes, the
 * quantize writes them once, and a caller that converts a frame straight
 * to them (hybrid.h, hy_input_quantization) skips the call altogether.
 */
#ifndef HY_CPU_QUANTIZED_QUANTIZE_BYTES_H
#define HY_CPU_QUANTIZED_QUANTIZE_BYTES_H

#include <glib.h>

#include "kernels/backend-impl.h"

/* The backend's private-value hook for quantize_v2: the output's bytes
 * when its data is 4-D and int8 values may be held as bytes at all
 * (hy_int8_bytes_on), else 0. */
size_t hy_quantize_bytes_output (const hy_call_shape *call);
/* A quantize_v2 call whose output is held as bytes runs on the bytes
 * kernel; TRUE leaves any other call as it was.  FALSE with an error for
 * a call it cannot honour. */
gboolean hy_quantize_bytes_prepare_call (hy_call *call, GError **error);

#endif /* HY_CPU_QUANTIZED_QUANTIZE_BYTES_H */
