/*
 * hybrid-tensor.h — the plain data types shared by every layer of hybridinfer.
 *
 * A tensor is a dense, C-order (row-major) float32 array of up to six
 * dimensions.  Compute is float32 everywhere; parameters stored in other
 * dtypes are converted when they are loaded.  The struct is transparent on
 * purpose: kernels read it directly and callers fill inputs in place.
 */
#ifndef HYBRID_TENSOR_H
#define HYBRID_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HY_MAX_DIMS 6

typedef struct hy_shape {
  int ndim;                     /* 0 = scalar; -1 = not known yet */
  int64_t dims[HY_MAX_DIMS];
} hy_shape;

/* MXNet's dtype codes (the numbers stored in .params and __dtype__). */
typedef enum hy_dtype {
  HY_DTYPE_FLOAT32 = 0,
  HY_DTYPE_FLOAT64 = 1,
  HY_DTYPE_FLOAT16 = 2,
  HY_DTYPE_UINT8 = 3,
  HY_DTYPE_INT32 = 4,
  HY_DTYPE_INT8 = 5,
  HY_DTYPE_INT64 = 6,
  HY_DTYPE_BOOL = 7,
  HY_DTYPE_INT16 = 8,
  HY_DTYPE_UINT16 = 9,
  HY_DTYPE_UINT32 = 10,
  HY_DTYPE_UINT64 = 11,
  HY_DTYPE_BFLOAT16 = 12,
} hy_dtype;

typedef struct hy_tensor {
  hy_shape shape;
  float *data;                  /* numel floats, C order */
  bool owns_data;               /* data is freed with the tensor */
} hy_tensor;

/* Number of elements; 1 for a scalar, 0 for an unknown shape. */
int64_t hy_shape_numel (const hy_shape *shape);
bool hy_shape_equal (const hy_shape *a, const hy_shape *b);
hy_shape hy_shape_make (int ndim, const int64_t *dims);
/* Writes "(2, 3, 224, 224)" into buf (always NUL-terminated); returns buf. */
char *hy_shape_format (const hy_shape *shape, char *buf, size_t size);
#define HY_SHAPE_STRLEN 160

/* A tensor owning zero-initialised storage for `shape`.  Aborts when the
 * memory cannot be had: for small, fixed sizes only.  Anything sized by
 * input (a frame, a model's shapes, a file) uses hy_tensor_try_new
 * (hybrid.h). */
hy_tensor *hy_tensor_new (const hy_shape *shape);
/* A tensor viewing `data` (not owned, not freed). */
hy_tensor *hy_tensor_new_view (const hy_shape *shape, float *data);
hy_tensor *hy_tensor_copy (const hy_tensor *src);
void hy_tensor_free (hy_tensor *tensor);
size_t hy_tensor_nbytes (const hy_tensor *tensor);

const char *hy_dtype_name (int dtype);      /* "float32", …; "unknown" */
size_t hy_dtype_size (int dtype);           /* 0 for unknown codes */

#ifdef __cplusplus
}
#endif
#endif /* HYBRID_TENSOR_H */
