/*
 * onnx-tensor.h — reading an ONNX TensorProto's values (onnx-tensor.c).
 *
 * Private to core/io/onnx-*.c.  The bottom of the importer's layers:
 * onnx-load.c and onnx-ops.c include it, it includes neither's code.
 */
#ifndef HY_ONNX_TENSOR_H
#define HY_ONNX_TENSOR_H

#include "core/io/onnx-import.h"

/* Larger than any model we run, small enough that a corrupt size field
 * cannot make us allocate the machine away. */
#define ONNX_MAX_BYTES ((gsize) 4 << 30)

#ifdef HY_HAVE_ONNX

/* ONNX TensorProto.DataType values we read. */
enum {
  ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_INT32 = 6,
  ONNX_INT64 = 7, ONNX_BOOL = 9, ONNX_FLOAT16 = 10, ONNX_DOUBLE = 11,
};

/* Bytes per element of a type we read; 0 for any other. */
int hy_onnx_elem_size (int dtype);
/* The type's name in onnx.proto, for errors. */
const char *hy_onnx_dtype_name (int dtype);

/* A constant from a TensorProto (inline, or external data in imp->dir):
 * floats, and exact ints for integer types.  Errors name the file and
 * the tensor. */
gboolean hy_onnx_tensor_value (const hy_onnx_importer *imp,
    const Onnx__TensorProto *t, hy_onnx_value *out, GError **error);

#endif /* HY_HAVE_ONNX */
#endif /* HY_ONNX_TENSOR_H */
