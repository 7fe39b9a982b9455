/*
 * onnx-tensor.c — the values of an ONNX TensorProto (an initializer or a
 * Constant node's `value`): inline or in an external data file beside the
 * model, of any type the importer reads, as floats (and exact ints).
 *
 * Used by onnx-load.c and onnx-ops.c and using neither, so that the
 * importer's files depend one way: load -> ops -> tensor.
 */
#include <string.h>

#include "core/io/onnx-tensor.h"

#ifdef HY_HAVE_ONNX

#include "core/io/file-read.h"

int
hy_onnx_elem_size (int dtype)
{
  switch (dtype) {
    case ONNX_FLOAT: case ONNX_INT32: return 4;
    case ONNX_INT64: case ONNX_DOUBLE: return 8;
    case ONNX_UINT8: case ONNX_INT8: case ONNX_BOOL: return 1;
    default: return 0;
  }
}

const char *
hy_onnx_dtype_name (int dtype)
{
  static const char *const names[] = { "undefined", "float", "uint8", "int8",
    "uint16", "int16", "int32", "int64", "string", "bool", "float16",
    "double", "uint32", "uint64", "complex64", "complex128", "bfloat16",
    "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
    "uint4", "int4" };
  return dtype >= 0 && dtype < (int) G_N_ELEMENTS (names) ? names[dtype]
      : "unknown";
}

/* Reads an external data file's range: `location` relative to the model's
 * folder and inside it (no absolute path, no ".."). */
static guint8 *
read_external (const hy_onnx_importer *imp, const Onnx__TensorProto *t,
    const char *dir, gsize want, GError **error)
{
  const char *location = NULL;
  guint64 offset = 0, length = want;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    if (!e->key || !e->value)
      continue;
    if (!strcmp (e->key, "location"))
      location = e->value;
    else if (!strcmp (e->key, "offset"))
      offset = g_ascii_strtoull (e->value, NULL, 10);
    else if (!strcmp (e->key, "length"))
      length = g_ascii_strtoull (e->value, NULL, 10);
  }
  if (!location || !dir) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: initializer '%s' keeps its data in %s", imp->source, t->name,
        location ? "an external file, and this model was given from "
        "memory" : "an external file it does not name ('location')");
    return NULL;
  }
  if (g_path_is_absolute (location) || strstr (location, "..")) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: initializer '%s': external data location '%s' is not a file "
        "beside the model", imp->source, t->name, location);
    return NULL;
  }
  if (length != want) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: initializer '%s': external data length %" G_GUINT64_FORMAT
        " bytes, its shape needs %" G_GSIZE_FORMAT, imp->source, t->name,
        length, want);
    return NULL;
  }
  g_autofree char *path = g_build_filename (dir, location, NULL);
  g_autoptr (hy_file) file = hy_file_open (path, "ONNX external data", error);
  if (!file)
    return NULL;
  if (offset > hy_file_size (file) || want > hy_file_size (file) - offset) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: initializer '%s': %s holds %" G_GSIZE_FORMAT " bytes, the "
        "data would end at %" G_GUINT64_FORMAT, imp->source, t->name, path,
        hy_file_size (file), offset + want);
    return NULL;
  }
  guint8 *buf = g_malloc (MAX (want, 1));
  if (!hy_file_read_at (file, buf, want, offset, error)) {
    g_free (buf);
    return NULL;
  }
  return buf;
}

gboolean
hy_onnx_tensor_value (const hy_onnx_importer *imp, const Onnx__TensorProto *t,
    hy_onnx_value *out, GError **error)
{
  const char *name = t->name ? t->name : "";
  int dtype = t->has_data_type ? t->data_type : 0;
  if (t->n_dims > HY_MAX_DIMS) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: tensor '%s' has %zu dimensions, at most %d are supported",
        imp->source, name, t->n_dims, HY_MAX_DIMS);
    return FALSE;
  }
  hy_shape shape = { .ndim = (int) t->n_dims };
  gint64 numel = 1;
  for (size_t d = 0; d < t->n_dims; d++) {
    if (t->dims[d] < 0 || (t->dims[d] > 0
            && numel > (gint64) (ONNX_MAX_BYTES / 8) / t->dims[d])) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: tensor '%s': dimension %zu = %" G_GINT64_FORMAT " is "
          "negative or too large", imp->source, name, d,
          (gint64) t->dims[d]);
      return FALSE;
    }
    shape.dims[d] = t->dims[d];
    numel *= t->dims[d];
  }
  int esize = hy_onnx_elem_size (dtype);
  if (!esize) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: tensor '%s' is of type %s (%d); float32, double, int64, "
        "int32, int8, uint8 and bool are supported", imp->source, name,
        hy_onnx_dtype_name (dtype), dtype);
    return FALSE;
  }
  gboolean is_int = dtype != ONNX_FLOAT && dtype != ONNX_DOUBLE;
  gsize bytes = (gsize) numel * esize;
  g_autofree guint8 *external = NULL;
  const guint8 *raw = NULL;
  gsize n_typed = 0;
  if (t->has_data_location
      && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    external = read_external (imp, t, imp->dir, bytes, error);
    if (!external)
      return FALSE;
    raw = external;
  } else if (t->has_raw_data) {
    if (t->raw_data.len != bytes) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: tensor '%s': raw_data holds %zu bytes, its shape and type "
          "need %" G_GSIZE_FORMAT, imp->source, name, t->raw_data.len, bytes);
      return FALSE;
    }
    raw = t->raw_data.data;
  } else {
    n_typed = dtype == ONNX_FLOAT ? t->n_float_data
        : dtype == ONNX_DOUBLE ? t->n_double_data
        : dtype == ONNX_INT64 ? t->n_int64_data : t->n_int32_data;
    if (n_typed != (gsize) numel) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: tensor '%s' holds %" G_GSIZE_FORMAT " values, its shape "
          "needs %" G_GINT64_FORMAT, imp->source, name, n_typed, numel);
      return FALSE;
    }
  }
  /* Zeroed: an empty tensor still has one readable value. */
  float *f = g_new0 (float, MAX (numel, 1));
  gint64 *ints = is_int ? g_new0 (gint64, MAX (numel, 1)) : NULL;
  for (gint64 i = 0; i < numel; i++) {
    double v = 0;
    gint64 iv = 0;
    if (raw) {
      const guint8 *p = raw + i * esize;
      switch (dtype) {
        case ONNX_FLOAT: { float x; memcpy (&x, p, 4); v = x; break; }
        case ONNX_DOUBLE: memcpy (&v, p, 8); break;
        case ONNX_INT64: { gint64 x; memcpy (&x, p, 8); iv = x; break; }
        case ONNX_INT32: { gint32 x; memcpy (&x, p, 4); iv = x; break; }
        case ONNX_INT8: iv = (gint8) p[0]; break;
        default: iv = p[0]; break;      /* uint8, bool */
      }
    } else {
      switch (dtype) {
        case ONNX_FLOAT: v = t->float_data[i]; break;
        case ONNX_DOUBLE: v = t->double_data[i]; break;
        case ONNX_INT64: iv = t->int64_data[i]; break;
        case ONNX_INT8: iv = (gint8) t->int32_data[i]; break;
        default: iv = t->int32_data[i]; break;
      }
    }
    if (is_int) {
      ints[i] = iv;
      v = (double) iv;
    }
    f[i] = (float) v;
  }
  out->is_const = TRUE;
  out->is_int = is_int;
  out->dtype = dtype;
  out->shape = shape;
  out->f = f;
  out->ints = ints;
  return TRUE;
}

#endif /* HY_HAVE_ONNX */
