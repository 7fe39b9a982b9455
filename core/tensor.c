/*
 * tensor.c — shapes and float32 tensors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "hybrid.h"

int64_t
hy_shape_numel (const hy_shape *shape)
{
  if (shape->ndim < 0)
    return 0;
  /* A zero dimension first: the others alone may overflow (a file can
   * declare (1778384896, 4187224777, 0)). */
  for (int i = 0; i < shape->ndim; i++)
    if (shape->dims[i] == 0)
      return 0;
  int64_t n = 1;
  for (int i = 0; i < shape->ndim; i++)
    n *= shape->dims[i];
  return n;
}

bool
hy_shape_equal (const hy_shape *a, const hy_shape *b)
{
  if (a->ndim != b->ndim)
    return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->dims[i] != b->dims[i])
      return false;
  return true;
}

hy_shape
hy_shape_make (int ndim, const int64_t *dims)
{
  hy_shape s = { .ndim = ndim };
  for (int i = 0; i < ndim && i < HY_MAX_DIMS; i++)
    s.dims[i] = dims[i];
  return s;
}

char *
hy_shape_format (const hy_shape *shape, char *buf, size_t size)
{
  if (size == 0)
    return buf;
  if (shape->ndim < 0) {
    snprintf (buf, size, "(unknown)");
    return buf;
  }
  size_t pos = 0;
  pos += snprintf (buf + pos, size - pos, "(");
  for (int i = 0; i < shape->ndim && pos < size; i++)
    pos += snprintf (buf + pos, size - pos, "%s%" G_GINT64_FORMAT,
        i ? ", " : "", (gint64) shape->dims[i]);
  if (pos < size)
    snprintf (buf + pos, size - pos, shape->ndim == 1 ? ",)" : ")");
  return buf;
}

/* The bytes of a tensor's storage (rounded to 64), or 0 when the element
 * count overflows: no allocation could hold it. */
static size_t
storage_bytes (const hy_shape *shape)
{
  gint64 n = 1;
  for (int d = 0; d < shape->ndim; d++) {
    if (shape->dims[d] < 0)
      return 0;
    if (shape->dims[d] == 0)    /* empty, whatever the other dims say */
      return 64;
  }
  for (int d = 0; d < shape->ndim; d++) {
    if (shape->dims[d] > 0 && n > G_MAXINT64 / 4 / shape->dims[d])
      return 0;
    n *= shape->dims[d];
  }
  guint64 bytes = (guint64) MAX (n, 1) * sizeof (float);
  if (bytes > G_MAXSIZE - 63)
    return 0;
  return ((size_t) bytes + 63) & ~(size_t) 63;
}

hy_tensor *
hy_tensor_try_new (const hy_shape *shape, const char *what, GError **error)
{
  size_t bytes = storage_bytes (shape);
  /* 64-byte alignment keeps SIMD loads and BLAS on their fast paths. */
  float *data = bytes ? aligned_alloc (64, bytes) : NULL;
  if (!data) {
    /* In doubles: the element count may not fit in 64 bits. */
    double mib = sizeof (float) / (1024.0 * 1024);
    for (int d = 0; d < shape->ndim; d++)
      mib *= (double) shape->dims[d];
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_NO_MEMORY,
        "out of memory: %s of shape %s needs %.1f MiB", what,
        hy_shape_format (shape, buf, sizeof buf), mib);
    return NULL;
  }
  memset (data, 0, bytes);
  hy_tensor *t = g_new0 (hy_tensor, 1);
  t->shape = *shape;
  t->data = data;
  t->owns_data = true;
  return t;
}

hy_tensor *
hy_tensor_new (const hy_shape *shape)
{
  GError *error = NULL;
  hy_tensor *t = hy_tensor_try_new (shape, "a tensor", &error);
  if (!t)
    g_error ("%s", error->message);
  return t;
}

hy_tensor *
hy_tensor_new_view (const hy_shape *shape, float *data)
{
  hy_tensor *t = g_new0 (hy_tensor, 1);
  t->shape = *shape;
  t->data = data;
  t->owns_data = false;
  return t;
}

hy_tensor *
hy_tensor_copy (const hy_tensor *src)
{
  hy_tensor *t = hy_tensor_new (&src->shape);
  memcpy (t->data, src->data, hy_tensor_nbytes (src));
  return t;
}

void
hy_tensor_free (hy_tensor *tensor)
{
  if (!tensor)
    return;
  if (tensor->owns_data)
    free (tensor->data);
  g_free (tensor);
}

size_t
hy_tensor_nbytes (const hy_tensor *tensor)
{
  return (size_t) hy_shape_numel (&tensor->shape) * sizeof (float);
}

static const struct {
  const char *name;
  size_t size;
} dtype_table[] = {
  [HY_DTYPE_FLOAT32] = {"float32", 4},
  [HY_DTYPE_FLOAT64] = {"float64", 8},
  [HY_DTYPE_FLOAT16] = {"float16", 2},
  [HY_DTYPE_UINT8] = {"uint8", 1},
  [HY_DTYPE_INT32] = {"int32", 4},
  [HY_DTYPE_INT8] = {"int8", 1},
  [HY_DTYPE_INT64] = {"int64", 8},
  [HY_DTYPE_BOOL] = {"bool", 1},
  [HY_DTYPE_INT16] = {"int16", 2},
  [HY_DTYPE_UINT16] = {"uint16", 2},
  [HY_DTYPE_UINT32] = {"uint32", 4},
  [HY_DTYPE_UINT64] = {"uint64", 8},
  [HY_DTYPE_BFLOAT16] = {"bfloat16", 2},
};

const char *
hy_dtype_name (int dtype)
{
  if (dtype < 0 || dtype >= (int) G_N_ELEMENTS (dtype_table))
    return "unknown";
  return dtype_table[dtype].name;
}

size_t
hy_dtype_size (int dtype)
{
  if (dtype < 0 || dtype >= (int) G_N_ELEMENTS (dtype_table))
    return 0;
  return dtype_table[dtype].size;
}
