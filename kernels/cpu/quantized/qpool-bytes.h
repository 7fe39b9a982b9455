/*
 * qpool-bytes.h — _contrib_quantized_pooling's max pooling on int8/uint8
 * values held as bytes NHWC in the plan's arena, where oneDNN's int8
 * convolutions hold them (conv-dnnl-int8.h).
 *
 * Why: ResNet's first max pooling sits between its first two
 * convolutions.  Read as planes only, it made its convolution write a
 * 64 × 112 × 112 float map and the convolutions after it convert the
 * pooled map back to bytes; held as bytes, the first convolution writes
 * a quarter of that through oneDNN's own bytes output, and the pooling
 * and its readers stay in bytes (figures in qpool-bytes.c).
 */
#ifndef HY_CPU_QUANTIZED_QPOOL_BYTES_H
#define HY_CPU_QUANTIZED_QPOOL_BYTES_H

#include <glib.h>

#include "kernels/backend-impl.h"
#include "kernels/cpu/cpu-kernel.h"

/* The backend's private-value hooks for quantized pooling: a 2-D max
 * pooling or a global average reads its data as bytes, and writes bytes
 * where it reads them so (it keeps the layout it is given), when int8
 * bytes are on at all. */
size_t hy_qpool_bytes_output (const hy_call_shape *call,
    gboolean in0_private);
gboolean hy_qpool_bytes_reads (const hy_call_shape *call, int input);
/* A quantized pooling call whose private bits are set runs on this
 * file's kernel; TRUE leaves any other as it was.  FALSE with an error
 * for a call it cannot honour. */
gboolean hy_qpool_bytes_prepare_call (hy_call *call, GError **error);
void hy_qpool_bytes_release_call (hy_call *call);
/* "int8-bytes" for a call it set up, else NULL. */
const char *hy_qpool_bytes_kernel_name (const hy_call *call);

#endif /* HY_CPU_QUANTIZED_QPOOL_BYTES_H */
