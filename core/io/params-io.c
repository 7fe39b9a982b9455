/*
 * params-io.c — MXNet 1.x NDArray-list files (`prefix-NNNN.params`).
 *
 * Files are untrusted, so reading is two passes: the first walks every
 * header with bounds checks and records where each array's data lies
 * without allocating anything, the second converts the data once the whole
 * layout (names included) is known to be sound.  Array names sit at the end
 * of the file, so a problem that does not stop the walk — sparse storage,
 * too many dims — is reported after it, naming the array.
 *
 * A file is read with pread, never mapped: deployments copy new weights
 * over a model in place, and a mapping of a file cut under it raises
 * SIGBUS.  The first pass reads the headers through a small window (it
 * skips the data by arithmetic); the second reads each array's data
 * straight into its tensor (float32) or through the window (the dtypes
 * that convert), so loading takes the tensors' memory and no copy of the
 * file.
 */
#include <string.h>

#include "hybrid.h"
#include "core/io/params-io.h"
#include "core/io/file-read.h"

#define LIST_MAGIC G_GUINT64_CONSTANT (0x112)
#define ARRAY_V1_MAGIC 0xF993FAC8u
#define ARRAY_V2_MAGIC 0xF993FAC9u
#define ARRAY_V3_MAGIC 0xF993FACAu
/* More dims than this is garbage, not a big tensor (numpy stops at 32). */
#define MAX_FILE_DIMS 32
/* Far beyond any model; stops a header from making us track 2^28
 * four-byte arrays. */
#define MAX_ARRAYS (1u << 20)
/* Bytes read at a time from a file for headers and converted data. */
#define WINDOW_BYTES (64 * 1024)

enum { STORAGE_DENSE = 0, STORAGE_ROW_SPARSE = 1, STORAGE_CSR = 2 };

/* ---- bounds-checked reading -------------------------------------------- */

/* Little-endian loads from possibly unaligned bytes. */
static inline guint16
le16 (const guint8 *p)
{
  return (guint16) (p[0] | p[1] << 8);
}

static inline guint32
le32 (const guint8 *p)
{
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16
      | (guint32) p[3] << 24;
}

static inline guint64
le64 (const guint8 *p)
{
  return (guint64) le32 (p + 4) << 32 | le32 (p);
}

/* Reads either bytes in memory (`file` NULL: `data` holds all `size` of
 * them) or a file, through `window`: `data` then holds the file's bytes
 * [base, base + avail). */
typedef struct cursor {
  const guint8 *data;
  gsize base, avail;
  gsize size;
  gsize pos;
  const char *source;
  guint array;                  /* the array being read */
  char where[48];               /* "in array 3", for truncation messages */
  hy_file *file;
  guint8 *window;
  gsize window_size;
} cursor;

static gboolean
need (cursor *c, guint64 n, GError **error)
{
  if (n > c->size - c->pos) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: truncated %s at byte %" G_GSIZE_FORMAT ": needed %"
        G_GUINT64_FORMAT " bytes, %" G_GSIZE_FORMAT " left", c->source,
        c->where, c->pos, n, c->size - c->pos);
    return FALSE;
  }
  return TRUE;
}

/* Room for at least `n` bytes in the window. */
static void
grow_window (cursor *c, gsize n)
{
  if (c->window_size < n) {
    c->window_size = MAX (n, WINDOW_BYTES);
    g_free (c->window);
    c->window = g_malloc (c->window_size);
  }
}

/* Reads `n` bytes of the file at `offset` into the window. */
static gboolean
fill_window (cursor *c, gsize offset, gsize n, GError **error)
{
  grow_window (c, n);
  c->data = c->window;
  c->base = offset;
  c->avail = 0;
  if (!hy_file_read_at (c->file, c->window, n, offset, error))
    return FALSE;
  c->avail = n;
  return TRUE;
}

static gboolean
in_window (const cursor *c, gsize n)
{
  return c->pos >= c->base && c->pos - c->base <= c->avail
      && n <= c->avail - (c->pos - c->base);
}

/* *out: the `n` bytes at the cursor, which need() has admitted. */
static gboolean
peek (cursor *c, gsize n, const guint8 **out, GError **error)
{
  if (n == 0) {
    *out = (const guint8 *) "";
    return TRUE;
  }
  if (!in_window (c, n)) {
    g_assert (c->file);         /* in memory, `data` holds everything */
    gsize want = MAX (n, MIN ((gsize) WINDOW_BYTES, c->size - c->pos));
    if (!fill_window (c, c->pos, want, error))
      return FALSE;
  }
  *out = c->data + (c->pos - c->base);
  return TRUE;
}

static gboolean
read_u32 (cursor *c, guint32 *out, GError **error)
{
  const guint8 *p;
  if (!need (c, 4, error) || !peek (c, 4, &p, error))
    return FALSE;
  *out = le32 (p);
  c->pos += 4;
  return TRUE;
}

static gboolean
read_i32 (cursor *c, gint32 *out, GError **error)
{
  guint32 v;
  if (!read_u32 (c, &v, error))
    return FALSE;
  *out = (gint32) v;
  return TRUE;
}

static gboolean
read_u64 (cursor *c, guint64 *out, GError **error)
{
  const guint8 *p;
  if (!need (c, 8, error) || !peek (c, 8, &p, error))
    return FALSE;
  *out = le64 (p);
  c->pos += 8;
  return TRUE;
}

static gboolean
skip (cursor *c, guint64 n, GError **error)
{
  if (!need (c, n, error))
    return FALSE;
  c->pos += (gsize) n;
  return TRUE;
}

/* ---- the first pass: array headers -------------------------------------- */

typedef struct array_info {
  hy_shape shape;               /* ndim -1: an empty ("none") array */
  int dtype;                    /* -1 for an empty array */
  gsize data_offset;
  /* A problem found while walking, reported once the name is known. */
  int problem_code;
  char *problem;
} array_info;

typedef struct file_dims {
  int ndim;
  int64_t dims[MAX_FILE_DIMS];
} file_dims;

static gboolean
array_error (cursor *c, GError **error, int code, const char *msg)
{
  g_set_error (error, HY_ERROR, code, "%s: array %u: %s", c->source,
      c->array, msg);
  return FALSE;
}

/* Reads `ndim` dims, as u32 (pre-V1 files) or i64. */
static gboolean
read_dims (cursor *c, gint64 ndim, gboolean wide, file_dims *out,
    GError **error)
{
  if (ndim < 0 || ndim > MAX_FILE_DIMS) {
    g_autofree char *msg = g_strdup_printf ("implausible number of "
        "dimensions %" G_GINT64_FORMAT " at byte %" G_GSIZE_FORMAT, ndim,
        c->pos);
    return array_error (c, error, HY_ERROR_FORMAT, msg);
  }
  out->ndim = (int) ndim;
  for (int i = 0; i < out->ndim; i++) {
    if (wide) {
      guint64 v;
      if (!read_u64 (c, &v, error))
        return FALSE;
      out->dims[i] = (int64_t) v;
    } else {
      guint32 v;
      if (!read_u32 (c, &v, error))
        return FALSE;
      out->dims[i] = v;
    }
  }
  return TRUE;
}

/* An i32 ndim then i64 dims, as TShape::Save writes them. */
static gboolean
read_shape (cursor *c, file_dims *out, GError **error)
{
  gint32 ndim;
  if (!read_i32 (c, &ndim, error))
    return FALSE;
  if (ndim == -1) {             /* unknown shape (numpy semantics) */
    out->ndim = -1;
    return TRUE;
  }
  return read_dims (c, ndim, TRUE, out, error);
}

/* Bytes of `d` elements of `elem` bytes, refusing negative dims and
 * products that overflow even when another dim is 0. */
static gboolean
dims_nbytes (cursor *c, const file_dims *d, gsize elem, guint64 *out,
    GError **error)
{
  guint64 n = elem;
  gboolean empty = FALSE;
  for (int i = 0; i < d->ndim; i++) {
    if (d->dims[i] < 0) {
      g_autofree char *msg = g_strdup_printf ("dimension %d is negative "
          "(%" G_GINT64_FORMAT ")", i, (gint64) d->dims[i]);
      return array_error (c, error, HY_ERROR_FORMAT, msg);
    }
    if (d->dims[i] == 0)
      empty = TRUE;
    else if (__builtin_mul_overflow (n, (guint64) d->dims[i], &n)
        || n > G_MAXINT64)
      return array_error (c, error, HY_ERROR_FORMAT,
          "its shape is too large to be real");
  }
  *out = empty ? 0 : n;
  return TRUE;
}

static gboolean
read_dtype (cursor *c, gint32 *dtype, GError **error)
{
  if (!read_i32 (c, dtype, error))
    return FALSE;
  if (hy_dtype_size (*dtype) == 0) {
    /* Without an element size we cannot find the next array. */
    g_autofree char *msg = g_strdup_printf ("unknown dtype code %d at byte %"
        G_GSIZE_FORMAT, *dtype, c->pos - 4);
    return array_error (c, error, HY_ERROR_UNSUPPORTED, msg);
  }
  return TRUE;
}

static void
defer_problem (array_info *info, int code, char *msg)
{
  if (!info->problem) {
    info->problem_code = code;
    info->problem = msg;
  } else {
    g_free (msg);
  }
}

/* Context (dev_type, dev_id), dtype and data of a dense array whose shape
 * has been read. */
static gboolean
read_dense_body (cursor *c, const file_dims *d, array_info *info,
    GError **error)
{
  gint32 dtype;
  guint64 nbytes;
  if (!skip (c, 8, error) || !read_dtype (c, &dtype, error)
      || !dims_nbytes (c, d, hy_dtype_size (dtype), &nbytes, error))
    return FALSE;
  info->dtype = dtype;
  info->data_offset = c->pos;
  if (!skip (c, nbytes, error))
    return FALSE;
  if (d->ndim > HY_MAX_DIMS) {
    defer_problem (info, HY_ERROR_UNSUPPORTED, g_strdup_printf ("it has %d "
            "dimensions; hybridinfer supports up to %d", d->ndim,
            HY_MAX_DIMS));
  } else {
    info->shape = hy_shape_make (d->ndim, d->dims);
  }
  return TRUE;
}

/* A row_sparse or CSR array: walked over so that the arrays after it and
 * the names can still be read.  After the context and dtype come the aux
 * (index) arrays' types and shapes, the values, then the aux data.  As in
 * MXNet, the number of values follows from the aux shapes (the storage
 * shape in the file can be stale): CSR holds one value per column index,
 * row_sparse one row of `shape` per row index. */
static gboolean
skip_sparse_body (cursor *c, int stype, const file_dims *shape,
    array_info *info, GError **error)
{
  int n_aux = stype == STORAGE_CSR ? 2 : 1;
  gint32 dtype;
  if (!skip (c, 8, error) || !read_dtype (c, &dtype, error))
    return FALSE;
  gint32 aux_type[2];
  file_dims aux_shape[2];
  for (int i = 0; i < n_aux; i++) {
    if (!read_dtype (c, &aux_type[i], error)
        || !read_shape (c, &aux_shape[i], error))
      return FALSE;
    if (aux_shape[i].ndim < 1)
      return array_error (c, error, HY_ERROR_FORMAT,
          "a sparse index array has no dimensions");
  }
  file_dims values = *shape;
  if (stype == STORAGE_CSR)
    values = aux_shape[1];
  else
    values.dims[0] = aux_shape[0].dims[0];
  guint64 nbytes;
  if (!dims_nbytes (c, &values, hy_dtype_size (dtype), &nbytes, error)
      || !skip (c, nbytes, error))
    return FALSE;
  for (int i = 0; i < n_aux; i++) {
    if (!dims_nbytes (c, &aux_shape[i], hy_dtype_size (aux_type[i]), &nbytes,
            error) || !skip (c, nbytes, error))
      return FALSE;
  }
  defer_problem (info, HY_ERROR_UNSUPPORTED, g_strdup_printf ("it is stored "
          "as %s, and only dense arrays are supported; save it after "
          ".tostype('default')", stype == STORAGE_CSR ? "csr" : "row_sparse"));
  return TRUE;
}

static gboolean
dims_unknown (const file_dims *d)
{
  if (d->ndim < 0)
    return TRUE;
  for (int i = 0; i < d->ndim; i++)
    if (d->dims[i] == -1)
      return TRUE;
  return FALSE;
}

/* V2 and V3: storage type, [storage shape], shape, then the body.  V2
 * marks an empty array with ndim 0; V3 (numpy semantics, where ndim 0 is a
 * scalar) with an unknown shape. */
static gboolean
read_v2_v3 (cursor *c, gboolean v3, array_info *info, GError **error)
{
  gint32 stype;
  if (!read_i32 (c, &stype, error))
    return FALSE;
  if (stype != STORAGE_DENSE && stype != STORAGE_ROW_SPARSE
      && stype != STORAGE_CSR) {
    g_autofree char *msg = g_strdup_printf ("unknown storage type %d at "
        "byte %" G_GSIZE_FORMAT, stype, c->pos - 4);
    return array_error (c, error, HY_ERROR_FORMAT, msg);
  }
  /* The storage shape only matters to MXNet's allocator. */
  file_dims storage, shape;
  if (stype != STORAGE_DENSE && !read_shape (c, &storage, error))
    return FALSE;
  if (!read_shape (c, &shape, error))
    return FALSE;
  if (v3 ? dims_unknown (&shape) : shape.ndim == 0)
    return TRUE;
  if (shape.ndim < 0)
    return array_error (c, error, HY_ERROR_FORMAT,
        "a V2 array cannot have an unknown number of dimensions");
  if (stype != STORAGE_DENSE)
    return skip_sparse_body (c, stype, &shape, info, error);
  return read_dense_body (c, &shape, info, error);
}

/* V1 (i32 ndim, i64 dims) and pre-V1 (the first u32 is ndim, u32 dims):
 * dense only, ndim 0 marks an empty array. */
static gboolean
read_legacy (cursor *c, guint32 first, array_info *info, GError **error)
{
  file_dims shape;
  if (first == ARRAY_V1_MAGIC) {
    if (!read_shape (c, &shape, error))
      return FALSE;
    if (shape.ndim < 0)
      return array_error (c, error, HY_ERROR_FORMAT,
          "a V1 array cannot have an unknown number of dimensions");
  } else {
    if (first > MAX_FILE_DIMS) {
      g_autofree char *msg = g_strdup_printf ("starts with 0x%08x at byte %"
          G_GSIZE_FORMAT ", which is no array header (V1 0x%08X, V2 0x%08X, "
          "V3 0x%08X, or a pre-V1 dimension count)", first, c->pos - 4,
          ARRAY_V1_MAGIC, ARRAY_V2_MAGIC, ARRAY_V3_MAGIC);
      return array_error (c, error, HY_ERROR_FORMAT, msg);
    }
    if (!read_dims (c, first, FALSE, &shape, error))
      return FALSE;
  }
  if (shape.ndim == 0)
    return TRUE;
  return read_dense_body (c, &shape, info, error);
}

static gboolean
read_array_header (cursor *c, array_info *info, GError **error)
{
  info->shape.ndim = -1;
  info->dtype = -1;
  guint32 magic;
  if (!read_u32 (c, &magic, error))
    return FALSE;
  if (magic == ARRAY_V2_MAGIC || magic == ARRAY_V3_MAGIC)
    return read_v2_v3 (c, magic == ARRAY_V3_MAGIC, info, error);
  return read_legacy (c, magic, info, error);
}

/* ---- the second pass: conversion to float32 ----------------------------- */

static inline float
bits_to_float (guint32 bits)
{
  float f;
  memcpy (&f, &bits, sizeof f);
  return f;
}

/* IEEE half to single, exactly: every half value, subnormals, infinities
 * and NaN payloads included, is representable as a float. */
static inline float
half_to_float (guint16 h)
{
  guint32 sign = (guint32) (h & 0x8000) << 16;
  guint32 exponent = (h >> 10) & 0x1f;
  guint32 mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return bits_to_float (sign | 0x7f800000u | mantissa << 13);
  if (exponent != 0)
    return bits_to_float (sign | (exponent + 112) << 23 | mantissa << 13);
  /* Zero or subnormal: mantissa · 2^-24, exact in float. */
  float magnitude = (float) mantissa * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

static void
convert_to_float (float *restrict dst, const guint8 *restrict src, gsize n,
    int dtype)
{
  switch (dtype) {
    case HY_DTYPE_FLOAT32:
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
      memcpy (dst, src, n * sizeof (float));
#else
      for (gsize i = 0; i < n; i++)
        dst[i] = bits_to_float (le32 (src + 4 * i));
#endif
      break;
    case HY_DTYPE_FLOAT64:
      for (gsize i = 0; i < n; i++) {
        guint64 bits = le64 (src + 8 * i);
        double d;
        memcpy (&d, &bits, sizeof d);
        dst[i] = (float) d;
      }
      break;
    case HY_DTYPE_FLOAT16:
      for (gsize i = 0; i < n; i++)
        dst[i] = half_to_float (le16 (src + 2 * i));
      break;
    case HY_DTYPE_BFLOAT16:
      for (gsize i = 0; i < n; i++)
        dst[i] = bits_to_float ((guint32) le16 (src + 2 * i) << 16);
      break;
    case HY_DTYPE_UINT8:
      for (gsize i = 0; i < n; i++)
        dst[i] = src[i];
      break;
    case HY_DTYPE_INT8:
      for (gsize i = 0; i < n; i++)
        dst[i] = (gint8) src[i];
      break;
    case HY_DTYPE_BOOL:
      for (gsize i = 0; i < n; i++)
        dst[i] = src[i] != 0;
      break;
    case HY_DTYPE_INT16:
      for (gsize i = 0; i < n; i++)
        dst[i] = (gint16) le16 (src + 2 * i);
      break;
    case HY_DTYPE_UINT16:
      for (gsize i = 0; i < n; i++)
        dst[i] = le16 (src + 2 * i);
      break;
    case HY_DTYPE_INT32:
      for (gsize i = 0; i < n; i++)
        dst[i] = (float) (gint32) le32 (src + 4 * i);
      break;
    case HY_DTYPE_UINT32:
      for (gsize i = 0; i < n; i++)
        dst[i] = (float) le32 (src + 4 * i);
      break;
    case HY_DTYPE_INT64:
      for (gsize i = 0; i < n; i++)
        dst[i] = (float) (gint64) le64 (src + 8 * i);
      break;
    case HY_DTYPE_UINT64:
      for (gsize i = 0; i < n; i++)
        dst[i] = (float) le64 (src + 8 * i);
      break;
    default:
      g_assert_not_reached ();  /* read_dtype() admitted only these */
  }
}

/* ---- names ----------------------------------------------------------------- */

static void
split_name (const char *full, hy_param *p)
{
  if (g_str_has_prefix (full, "arg:")) {
    p->kind = HY_PARAM_ARG;
    p->name = g_strdup (full + 4);
  } else if (g_str_has_prefix (full, "aux:")) {
    p->kind = HY_PARAM_AUX;
    p->name = g_strdup (full + 4);
  } else {
    p->kind = HY_PARAM_PLAIN;
    p->name = g_strdup (full);
  }
}

/* Reads the name list into `names` (full names, prefixes kept). */
static gboolean
read_names (cursor *c, guint64 n_arrays, GPtrArray *names, GError **error)
{
  g_snprintf (c->where, sizeof c->where, "in the name count");
  guint64 n;
  if (!read_u64 (c, &n, error))
    return FALSE;
  if (n != 0 && n != n_arrays) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: holds %" G_GUINT64_FORMAT " arrays but %" G_GUINT64_FORMAT
        " names", c->source, n_arrays, n);
    return FALSE;
  }
  for (guint64 i = 0; i < n; i++) {
    g_snprintf (c->where, sizeof c->where, "in name %" G_GUINT64_FORMAT, i);
    guint64 len;
    const guint8 *p;
    if (!read_u64 (c, &len, error) || !need (c, len, error)
        || !peek (c, (gsize) len, &p, error))
      return FALSE;
    const char *start = (const char *) p;
    if (memchr (start, '\0', (gsize) len)) {
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: name %" G_GUINT64_FORMAT " contains a NUL byte", c->source, i);
      return FALSE;
    }
    g_ptr_array_add (names, g_strndup (start, (gsize) len));
    c->pos += (gsize) len;
  }
  return TRUE;
}

/* Parameters are found by bare name, so "arg:x" and "aux:x" cannot both
 * be there. */
static gboolean
check_unique (const hy_param_list *list, GPtrArray *names,
    const char *source, GError **error)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < list->n; i++) {
    gpointer other;
    if (g_hash_table_lookup_extended (seen, list->items[i].name, NULL,
            &other)) {
      guint j = GPOINTER_TO_UINT (other);
      g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
          "%s: arrays %u ('%s') and %u ('%s') have the same name", source,
          j, (const char *) g_ptr_array_index (names, j), i,
          (const char *) g_ptr_array_index (names, i));
      return FALSE;
    }
    g_hash_table_insert (seen, list->items[i].name, GUINT_TO_POINTER (i));
  }
  return TRUE;
}

/* ---- the list ---------------------------------------------------------- */

/* Other formats people hand us by mistake, named rather than misread. */
static gboolean
reject_foreign (const guint8 *data, gsize size, const char *source,
    GError **error)
{
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: this is a ZIP archive, the parameter format of MXNet 2.x; "
        "hybridinfer reads MXNet 1.x parameter files", source);
    return FALSE;
  }
  if (size >= 6 && !memcmp (data, "\x93NUMPY", 6)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: this is a .npy file, not an MXNet parameter file", source);
    return FALSE;
  }
  return TRUE;
}

static void
free_infos (array_info *infos, guint n)
{
  for (guint i = 0; i < n; i++)
    g_free (infos[i].problem);
  g_free (infos);
}

/* The data of a dense array, converted to float32 into `dst`. */
static gboolean
read_array_data (cursor *c, const array_info *info, float *dst,
    GError **error)
{
  gsize n = (gsize) hy_shape_numel (&info->shape);
  gsize elem = hy_dtype_size (info->dtype);
  if (!c->file) {
    convert_to_float (dst, c->data + info->data_offset, n, info->dtype);
    return TRUE;
  }
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  /* No conversion: straight into the tensor, no copy in between. */
  if (info->dtype == HY_DTYPE_FLOAT32)
    return hy_file_read_at (c->file, dst, n * sizeof (float),
        info->data_offset, error);
#endif
  gsize per_window = WINDOW_BYTES / elem;
  for (gsize done = 0; done < n;) {
    gsize count = MIN (per_window, n - done);
    if (!fill_window (c, info->data_offset + done * elem, count * elem,
            error))
      return FALSE;
    convert_to_float (dst + done, c->window, count, info->dtype);
    done += count;
  }
  return TRUE;
}

/* The first pass over every header and the names, then, once all is
 * known to be sound, the second over the data. */
static hy_param_list *
parse_list (cursor *c, GError **error)
{
  const char *source = c->source;
  gsize size = c->size;
  const guint8 *head;
  if (!peek (c, MIN (size, (gsize) 8), &head, error)
      || !reject_foreign (head, size, source, error))
    return NULL;
  guint64 magic, reserved, count;
  if (!read_u64 (c, &magic, error))
    return NULL;
  if (magic != LIST_MAGIC) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: not an MXNet parameter file (magic 0x%" G_GINT64_MODIFIER
        "x, expected 0x112)", source, magic);
    return NULL;
  }
  if (!read_u64 (c, &reserved, error) || !read_u64 (c, &count, error))
    return NULL;
  /* The smallest array (pre-V1, empty) takes 4 bytes. */
  if (count > MAX_ARRAYS || count > (size - c->pos) / 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: truncated or corrupt: claims %" G_GUINT64_FORMAT " arrays, "
        "which the %" G_GSIZE_FORMAT " bytes left cannot hold", source, count,
        size - c->pos);
    return NULL;
  }

  guint n = (guint) count;
  array_info *infos = g_new0 (array_info, MAX (n, 1));
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  hy_param_list *list = NULL;
  for (guint i = 0; i < n; i++) {
    c->array = i;
    g_snprintf (c->where, sizeof c->where, "in array %u", i);
    if (!read_array_header (c, &infos[i], error))
      goto out;
  }
  if (!read_names (c, count, names, error))
    goto out;
  /* Trailing bytes after the names are ignored, as MXNet ignores them. */

  for (guint i = 0; i < n; i++) {
    if (infos[i].problem) {
      if (names->len)
        g_set_error (error, HY_ERROR, infos[i].problem_code,
            "%s: array %u ('%s'): %s", source, i,
            (const char *) g_ptr_array_index (names, i), infos[i].problem);
      else
        g_set_error (error, HY_ERROR, infos[i].problem_code,
            "%s: array %u: %s", source, i, infos[i].problem);
      goto out;
    }
  }

  list = g_new0 (hy_param_list, 1);
  list->items = g_new0 (hy_param, MAX (n, 1));
  list->n = n;
  for (guint i = 0; i < n; i++) {
    hy_param *p = &list->items[i];
    split_name (names->len ? g_ptr_array_index (names, i) : "", p);
    p->stored_dtype = infos[i].dtype;
    p->tensor = hy_tensor_new (&infos[i].shape);
    if (infos[i].dtype >= 0
        && !read_array_data (c, &infos[i], p->tensor->data, error)) {
      g_clear_pointer (&list, hy_param_list_free);
      goto out;
    }
  }
  if (names->len && !check_unique (list, names, source, error))
    g_clear_pointer (&list, hy_param_list_free);

out:
  free_infos (infos, n);
  return list;
}

hy_param_list *
hy_params_parse (const guint8 *data, gsize size, const char *source,
    GError **error)
{
  cursor c = {
    .data = data, .avail = size, .size = size,
    .source = source ? source : "<params>", .where = "in the file header",
  };
  return parse_list (&c, error);
}

hy_param_list *
hy_params_load (const char *path, GError **error)
{
  /* A directory, FIFO or device is refused by name (GLib would block on
   * a FIFO, and say "mmap() failed: No such device" for a directory). */
  g_autoptr (hy_file) file = hy_file_open (path, "params file", error);
  if (!file)
    return NULL;
  cursor c = {
    .size = hy_file_size (file), .source = path,
    .where = "in the file header", .file = file,
  };
  GError *parse_error = NULL;
  hy_param_list *list = parse_list (&c, &parse_error);
  g_free (c.window);
  /* Keep no list read from a file that changed meanwhile: it may hold old
   * values and new. */
  if (!hy_file_end_read (file, parse_error, error))
    g_clear_pointer (&list, hy_param_list_free);
  return list;
}

void
hy_param_list_free (hy_param_list *list)
{
  if (!list)
    return;
  for (guint i = 0; i < list->n; i++) {
    g_free (list->items[i].name);
    hy_tensor_free (list->items[i].tensor);
  }
  g_free (list->items);
  g_free (list);
}

const hy_param *
hy_param_list_find (const hy_param_list *list, const char *name)
{
  for (guint i = 0; i < list->n; i++)
    if (!strcmp (list->items[i].name, name))
      return &list->items[i];
  return NULL;
}

/* ---- writing ------------------------------------------------------------ */

/* Writing goes into a buffer sized up front: no GByteArray, whose guint
 * length would cap a file at 4 GiB. */
typedef struct writer {
  guint8 *p;
} writer;

static void
put_u32 (writer *w, guint32 v)
{
  w->p[0] = v & 0xff;
  w->p[1] = (v >> 8) & 0xff;
  w->p[2] = (v >> 16) & 0xff;
  w->p[3] = v >> 24;
  w->p += 4;
}

static void
put_u64 (writer *w, guint64 v)
{
  put_u32 (w, (guint32) v);
  put_u32 (w, (guint32) (v >> 32));
}

static void
put_bytes (writer *w, const void *data, gsize n)
{
  if (n)
    memcpy (w->p, data, n);
  w->p += n;
}

static void
put_floats (writer *w, const float *data, gsize n)
{
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  put_bytes (w, data, n * sizeof (float));
#else
  for (gsize i = 0; i < n; i++) {
    guint32 bits;
    memcpy (&bits, data + i, 4);
    put_u32 (w, bits);
  }
#endif
}

/* The shape written for a tensor: V2 has no scalars (ndim 0 means empty
 * there), so a scalar becomes (1,); ndim -1 (empty) stays as it is. */
static hy_shape
written_shape (const hy_tensor *t)
{
  if (t->shape.ndim == 0)
    return (hy_shape) { .ndim = 1, .dims = { 1 } };
  return t->shape;
}

/* Everything is written float32 but an int8 one (the integers it holds),
 * as MXNet keeps a quantized layer's weights. */
static gboolean
written_int8 (const hy_param *p)
{
  return p->write_int8;
}

static gsize
array_bytes (const hy_param *p)
{
  hy_shape shape = written_shape (p->tensor);
  if (shape.ndim < 0)
    return 12;
  return 12 + 8 * (gsize) shape.ndim + 12 + (gsize) hy_shape_numel (&shape)
      * (written_int8 (p) ? 1 : sizeof (float));
}

/* V2 dense float32 (or int8) on cpu(0). */
static void
put_array (writer *w, const hy_param *p)
{
  const hy_tensor *t = p->tensor;
  hy_shape shape = written_shape (t);
  put_u32 (w, ARRAY_V2_MAGIC);
  put_u32 (w, STORAGE_DENSE);
  if (shape.ndim < 0) {
    put_u32 (w, 0);
    return;
  }
  put_u32 (w, (guint32) shape.ndim);
  for (int i = 0; i < shape.ndim; i++)
    put_u64 (w, (guint64) shape.dims[i]);
  put_u32 (w, 1);               /* dev_type: cpu */
  put_u32 (w, 0);               /* dev_id */
  gsize n = (gsize) hy_shape_numel (&shape);
  if (written_int8 (p)) {
    put_u32 (w, HY_DTYPE_INT8);
    for (gsize i = 0; i < n; i++)
      *w->p++ = (guint8) (gint8) t->data[i];
    return;
  }
  put_u32 (w, HY_DTYPE_FLOAT32);
  put_floats (w, t->data, n);
}

static const char *
kind_prefix (hy_param_kind kind)
{
  return kind == HY_PARAM_ARG ? "arg:" : kind == HY_PARAM_AUX ? "aux:" : "";
}

GBytes *
hy_params_write (const hy_param_list *list)
{
  /* A list read from a file without names is written without names. */
  gboolean named = FALSE;
  for (guint i = 0; i < list->n; i++)
    named |= list->items[i].kind != HY_PARAM_PLAIN || list->items[i].name[0];

  gsize total = 32;
  for (guint i = 0; i < list->n; i++) {
    total += array_bytes (&list->items[i]);
    if (named)
      total += 8 + strlen (kind_prefix (list->items[i].kind))
          + strlen (list->items[i].name);
  }

  guint8 *buf = g_malloc (total);
  writer w = { buf };
  put_u64 (&w, LIST_MAGIC);
  put_u64 (&w, 0);
  put_u64 (&w, list->n);
  for (guint i = 0; i < list->n; i++)
    put_array (&w, &list->items[i]);
  put_u64 (&w, named ? list->n : 0);
  for (guint i = 0; named && i < list->n; i++) {
    const char *prefix = kind_prefix (list->items[i].kind);
    const char *name = list->items[i].name;
    put_u64 (&w, strlen (prefix) + strlen (name));
    put_bytes (&w, prefix, strlen (prefix));
    put_bytes (&w, name, strlen (name));
  }
  g_assert ((gsize) (w.p - buf) == total);
  return g_bytes_new_take (buf, total);
}

gboolean
hy_params_save (const hy_param_list *list, const char *path, GError **error)
{
  g_autoptr (GBytes) bytes = hy_params_write (list);
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);
  GError *local = NULL;
  if (!g_file_set_contents (path, data, (gssize) len, &local)) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot write: %s", path,
        local->message);
    g_error_free (local);
    return FALSE;
  }
  return TRUE;
}
