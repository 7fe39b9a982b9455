/*
 * test-params-io.c — MXNet NDArray-list files.
 *
 * The fixtures in tests/fixtures/params/ were saved by MXNet 1.9.1 (or, for
 * the layouts it no longer writes, assembled by make_params_fixtures.py and
 * checked by loading them in MXNet); the values every array must load as
 * were saved beside them as .npy by MXNet/numpy.  Malformed files are made
 * here by cutting and patching valid ones.
 *
 * Files are read with pread, never mapped, so that one cut or rewritten
 * while it is read (`cp` over a model) gives an error, not SIGBUS: the
 * read hook of file-read.h changes a file at each read in turn, and a
 * thread rewrites one while it is loaded again and again.
 *
 * Run with `--write-roundtrip DIR` it instead reads dtypes.params and
 * writes it back with our writer as DIR/ours.params, for
 * tests/conformance/check_params_roundtrip.py to load with real MXNet.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "hybrid.h"
#include "hybrid-npy.h"
#include "core/io/file-read.h"
#include "core/io/params-io.h"

static char *
fixture (const char *name)
{
  const char *root = g_getenv ("HY_SOURCE_DIR");
  return g_build_filename (root ? root : ".", "tests", "fixtures", "params",
      name, NULL);
}

static GBytes *
read_fixture (const char *name)
{
  g_autofree char *path = fixture (name);
  char *data;
  gsize len;
  GError *error = NULL;
  if (!g_file_get_contents (path, &data, &len, &error))
    g_error ("%s", error->message);
  return g_bytes_new_take (data, len);
}

static hy_param_list *
parse_bytes (GBytes *bytes, GError **error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  return hy_params_parse (data, size, "t.params", error);
}

static void
assert_fails (GBytes *bytes, int code, const char *substring)
{
  GError *error = NULL;
  hy_param_list *list = parse_bytes (bytes, &error);
  if (list || !error || error->code != code || error->domain != HY_ERROR
      || !strstr (error->message, substring))
    g_error ("expected error %d containing \"%s\", got %s", code, substring,
        error ? error->message : "success");
  g_error_free (error);
}

/* Bit-for-bit: NaN payloads and signed zeros must survive too. */
static void
assert_same_floats (const hy_tensor *got, const hy_tensor *want,
    const char *what)
{
  char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
  if (!hy_shape_equal (&got->shape, &want->shape))
    g_error ("%s: shape %s, expected %s", what,
        hy_shape_format (&got->shape, a, sizeof a),
        hy_shape_format (&want->shape, b, sizeof b));
  for (int64_t i = 0; i < hy_shape_numel (&want->shape); i++) {
    guint32 x, y;
    memcpy (&x, &got->data[i], 4);
    memcpy (&y, &want->data[i], 4);
    if (x != y)
      g_error ("%s[%" G_GINT64_FORMAT "]: %.9g (0x%08x), expected %.9g "
          "(0x%08x)", what, (gint64) i, got->data[i], x, want->data[i], y);
  }
}

static const char *
kind_tag (hy_param_kind kind)
{
  return kind == HY_PARAM_ARG ? "arg" : kind == HY_PARAM_AUX ? "aux" : "plain";
}

/* Loads `file` and checks every array against expected/<stem>/; returns
 * the list for further checks. */
static hy_param_list *
check_against_expected (const char *file, guint n_expected)
{
  g_autofree char *path = fixture (file);
  GError *error = NULL;
  hy_param_list *list = hy_params_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->n, ==, n_expected);
  g_autofree char *stem = g_strndup (file, strlen (file) - strlen (".params"));
  for (guint i = 0; i < list->n; i++) {
    const hy_param *p = &list->items[i];
    g_autofree char *npy = g_strdup_printf ("%s_%s.npy", kind_tag (p->kind),
        p->name);
    g_autofree char *sub = g_build_filename ("expected", stem, npy, NULL);
    g_autofree char *want_path = fixture (sub);
    hy_tensor *want = hy_npy_load (want_path, &error);
    g_assert_no_error (error);
    g_autofree char *what = g_strdup_printf ("%s: %s", file, npy);
    assert_same_floats (p->tensor, want, what);
    hy_tensor_free (want);
  }
  return list;
}

static void
test_all_dtypes (void)
{
  hy_param_list *list = check_against_expected ("dtypes.params", 11);
  static const struct {
    const char *name;
    hy_param_kind kind;
    int dtype;
  } want[] = {
    { "f32", HY_PARAM_ARG, HY_DTYPE_FLOAT32 },
    { "f16", HY_PARAM_ARG, HY_DTYPE_FLOAT16 },
    { "f64", HY_PARAM_AUX, HY_DTYPE_FLOAT64 },
    { "bf16", HY_PARAM_ARG, HY_DTYPE_BFLOAT16 },
    { "u8", HY_PARAM_ARG, HY_DTYPE_UINT8 },
    { "i8", HY_PARAM_ARG, HY_DTYPE_INT8 },
    { "i32", HY_PARAM_AUX, HY_DTYPE_INT32 },
    { "i64", HY_PARAM_ARG, HY_DTYPE_INT64 },
    { "b", HY_PARAM_ARG, HY_DTYPE_BOOL },
    { "six", HY_PARAM_ARG, HY_DTYPE_FLOAT32 },
    { "features.0.weight", HY_PARAM_PLAIN, HY_DTYPE_FLOAT32 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (want); i++) {
    const hy_param *p = hy_param_list_find (list, want[i].name);
    g_assert_nonnull (p);
    g_assert_cmpint (p->kind, ==, want[i].kind);
    g_assert_cmpint (p->stored_dtype, ==, want[i].dtype);
  }
  g_assert_cmpint (hy_param_list_find (list, "six")->tensor->shape.ndim, ==, 6);
  g_assert_null (hy_param_list_find (list, "arg:f32"));
  g_assert_null (hy_param_list_find (list, "nope"));

  /* float16 specials, by bits: subnormals, ±0, ±inf, NaN, max. */
  const float *h = hy_param_list_find (list, "f16")->tensor->data;
  g_assert_cmpfloat (h[2], ==, 0x1p-24f);
  g_assert_true (signbit (h[1]) && h[1] == 0.0f);
  g_assert_cmpfloat (h[8], ==, 65504.0f);
  g_assert_true (isinf (h[10]) && h[10] > 0);
  g_assert_true (isnan (h[12]));
  hy_param_list_free (list);
}

static void
test_v3_and_legacy_layouts (void)
{
  hy_param_list *v3 = check_against_expected ("v3.params", 3);
  g_assert_cmpint (hy_param_list_find (v3, "scalar")->tensor->shape.ndim, ==,
      0);
  g_assert_cmpfloat (hy_param_list_find (v3, "scalar")->tensor->data[0], ==,
      2.5f);
  g_assert_cmpint (hy_shape_numel (&hy_param_list_find (v3,
              "empty")->tensor->shape), ==, 0);
  hy_param_list_free (v3);
  hy_param_list_free (check_against_expected ("legacy_v1.params", 3));
  hy_param_list_free (check_against_expected ("legacy_v0.params", 3));
  hy_param_list_free (check_against_expected ("wide_ints.params", 4));
}

static void
test_unnamed_list (void)
{
  g_autofree char *path = fixture ("unnamed.params");
  GError *error = NULL;
  hy_param_list *list = hy_params_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->n, ==, 2);
  for (guint i = 0; i < 2; i++) {
    g_assert_cmpstr (list->items[i].name, ==, "");
    g_assert_cmpint (list->items[i].kind, ==, HY_PARAM_PLAIN);
    g_autofree char *sub = g_strdup_printf ("expected/unnamed/%u.npy", i);
    g_autofree char *want_path = fixture (sub);
    hy_tensor *want = hy_npy_load (want_path, &error);
    g_assert_no_error (error);
    assert_same_floats (list->items[i].tensor, want, sub);
    hy_tensor_free (want);
  }
  /* Written back, it stays unnamed. */
  g_autoptr (GBytes) out = hy_params_write (list);
  gsize size;
  const guint8 *data = g_bytes_get_data (out, &size);
  guint64 n_names;
  memcpy (&n_names, data + size - 8, 8);
  g_assert_cmpuint (GUINT64_FROM_LE (n_names), ==, 0);
  hy_param_list_free (list);
}

static void
test_sparse_is_named (void)
{
  g_autoptr (GBytes) rs = read_fixture ("row_sparse.params");
  assert_fails (rs, HY_ERROR_UNSUPPORTED,
      "t.params: array 1 ('arg:emb'): it is stored as row_sparse, and only "
      "dense arrays are supported");
  g_autoptr (GBytes) csr = read_fixture ("csr.params");
  assert_fails (csr, HY_ERROR_UNSUPPORTED,
      "t.params: array 0 ('arg:c'): it is stored as csr");
}

/* Our writer's output for float32 arrays is what MXNet writes; every
 * dtype comes back as float32 with names and kinds intact. */
static void
test_write_read_back (void)
{
  g_autoptr (GBytes) original = read_fixture ("dtypes.params");
  GError *error = NULL;
  hy_param_list *list = parse_bytes (original, &error);
  g_assert_no_error (error);
  g_autoptr (GBytes) written = hy_params_write (list);
  hy_param_list *back = parse_bytes (written, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->n, ==, list->n);
  for (guint i = 0; i < list->n; i++) {
    g_assert_cmpstr (back->items[i].name, ==, list->items[i].name);
    g_assert_cmpint (back->items[i].kind, ==, list->items[i].kind);
    g_assert_cmpint (back->items[i].stored_dtype, ==, HY_DTYPE_FLOAT32);
    assert_same_floats (back->items[i].tensor, list->items[i].tensor,
        list->items[i].name);
  }
  hy_param_list_free (back);
  hy_param_list_free (list);

  /* The unnamed fixture holds only float32 arrays: byte-identical. */
  g_autoptr (GBytes) f32 = read_fixture ("unnamed.params");
  list = parse_bytes (f32, &error);
  g_autoptr (GBytes) again = hy_params_write (list);
  g_assert_true (g_bytes_equal (again, f32));
  hy_param_list_free (list);
}

/* A scalar has no V2 form: it is written as (1,). */
static void
test_write_scalar (void)
{
  hy_shape s = { .ndim = 0 };
  hy_param p = { "s", HY_PARAM_ARG, HY_DTYPE_FLOAT32, hy_tensor_new (&s) };
  p.tensor->data[0] = 4.0f;
  hy_param_list list = { &p, 1 };
  g_autoptr (GBytes) b = hy_params_write (&list);
  GError *error = NULL;
  hy_param_list *back = parse_bytes (b, &error);
  g_assert_no_error (error);
  g_assert_cmpint (back->items[0].tensor->shape.ndim, ==, 1);
  g_assert_cmpint (back->items[0].tensor->shape.dims[0], ==, 1);
  g_assert_cmpfloat (back->items[0].tensor->data[0], ==, 4.0f);
  g_assert_cmpstr (back->items[0].name, ==, "s");
  hy_param_list_free (back);
  hy_tensor_free (p.tensor);
}

/* ---- malformed files ---------------------------------------------------- */

/* Builds files byte by byte. */
static void
put32 (GByteArray *b, guint32 v)
{
  guint8 x[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
  g_byte_array_append (b, x, 4);
}

static void
put64 (GByteArray *b, guint64 v)
{
  put32 (b, (guint32) v);
  put32 (b, (guint32) (v >> 32));
}

static void
put_name (GByteArray *b, const char *name)
{
  put64 (b, strlen (name));
  g_byte_array_append (b, (const guint8 *) name, (guint) strlen (name));
}

static GByteArray *
list_start (guint64 count)
{
  GByteArray *b = g_byte_array_new ();
  put64 (b, 0x112);
  put64 (b, 0);
  put64 (b, count);
  return b;
}

/* A V2 dense float32 array of `ndim` dims, all `dim`, filled with 1s. */
static void
put_v2 (GByteArray *b, int ndim, guint64 dim)
{
  put32 (b, 0xF993FAC9);
  put32 (b, 0);
  put32 (b, (guint32) ndim);
  guint64 n = 1;
  for (int i = 0; i < ndim; i++) {
    put64 (b, dim);
    n *= dim;
  }
  put32 (b, 1);
  put32 (b, 0);
  put32 (b, 0);
  for (guint64 i = 0; i < n && ndim > 0; i++)
    put32 (b, 0x3f800000);
}

static GBytes *
finish (GByteArray *b)
{
  return g_byte_array_free_to_bytes (b);
}

/* Offsets into the first array of a one-array list: magic 24, stype 28,
 * ndim 32, dim0 36. */
static GBytes *
one_array_with (void (*patch) (GByteArray *b))
{
  GByteArray *b = list_start (1);
  put_v2 (b, 2, 2);
  put64 (b, 1);
  put_name (b, "arg:w");
  patch (b);
  return finish (b);
}

static void
patch_magic (GByteArray *b)
{
  b->data[24] = 0x78;
  b->data[25] = 0x56;
  b->data[26] = 0x34;
  b->data[27] = 0x12;
}

static void
patch_stype_5 (GByteArray *b)
{
  b->data[28] = 5;
}

static void
patch_huge_dim (GByteArray *b)
{
  b->data[43] = 0x01;           /* dim0 = 2^56 + 2 */
}

static void
patch_overflowing_dims (GByteArray *b)
{
  b->data[43] = 0x40;           /* dim0 = dim1 = 2^62 */
  b->data[51] = 0x40;
}

static void
patch_negative_dim (GByteArray *b)
{
  b->data[43] = 0xff;
}

static void
patch_ndim_40 (GByteArray *b)
{
  b->data[32] = 40;
}

static void
patch_dtype_42 (GByteArray *b)
{
  b->data[60] = 42;
}

static void
patch_list_magic (GByteArray *b)
{
  b->data[0] = 0x13;
}

static void
patch_count (GByteArray *b)
{
  b->data[20] = 1;              /* 2^32 + 1 arrays */
}

static void
patch_name_count (GByteArray *b)
{
  b->data[b->len - 13 - 8] = 3;
}

static void
patch_name_len (GByteArray *b)
{
  b->data[b->len - 5 - 1] = 0xff;
}

static void
patch_nul_in_name (GByteArray *b)
{
  b->data[b->len - 2] = 0;
}

static void
patch_garbage_after (GByteArray *b)
{
  g_byte_array_append (b, (const guint8 *) "garbage", 7);
}

static void
test_malformed (void)
{
  static const struct {
    void (*patch) (GByteArray *b);
    int code;
    const char *message;
  } cases[] = {
    { patch_magic, HY_ERROR_FORMAT, "t.params: array 0: starts with "
      "0x12345678 at byte 24, which is no array header" },
    { patch_stype_5, HY_ERROR_FORMAT, "array 0: unknown storage type 5" },
    { patch_huge_dim, HY_ERROR_FORMAT, "t.params: truncated in array 0 at "
      "byte 64: needed 576460752303423504 bytes, 37 left" },
    { patch_overflowing_dims, HY_ERROR_FORMAT,
      "array 0: its shape is too large to be real" },
    { patch_negative_dim, HY_ERROR_FORMAT, "array 0: dimension 0 is negative" },
    { patch_ndim_40, HY_ERROR_FORMAT,
      "array 0: implausible number of dimensions 40" },
    { patch_dtype_42, HY_ERROR_UNSUPPORTED, "array 0: unknown dtype code 42" },
    { patch_list_magic, HY_ERROR_FORMAT,
      "t.params: not an MXNet parameter file (magic 0x113" },
    { patch_count, HY_ERROR_FORMAT, "t.params: truncated or corrupt: claims 4294967297 arrays" },
    { patch_name_count, HY_ERROR_FORMAT, "holds 1 arrays but 3 names" },
    { patch_name_len, HY_ERROR_FORMAT, "truncated in name 0" },
    { patch_nul_in_name, HY_ERROR_FORMAT, "name 0 contains a NUL byte" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GBytes) b = one_array_with (cases[i].patch);
    assert_fails (b, cases[i].code, cases[i].message);
  }

  /* Trailing bytes after the names are ignored, as MXNet ignores them. */
  g_autoptr (GBytes) tail = one_array_with (patch_garbage_after);
  GError *error = NULL;
  hy_param_list *list = parse_bytes (tail, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (list->items[0].name, ==, "w");
  hy_param_list_free (list);
}

static void
test_foreign_formats (void)
{
  g_autoptr (GBytes) zip = g_bytes_new_static ("PK\x03\x04rest", 8);
  assert_fails (zip, HY_ERROR_UNSUPPORTED,
      "t.params: this is a ZIP archive, the parameter format of MXNet 2.x");
  g_autoptr (GBytes) npy = g_bytes_new_static ("\x93NUMPY\x01\x00", 8);
  assert_fails (npy, HY_ERROR_FORMAT, "this is a .npy file");
  g_autoptr (GBytes) empty = g_bytes_new_static ("", 0);
  assert_fails (empty, HY_ERROR_FORMAT,
      "t.params: truncated in the file header at byte 0: needed 8 bytes, 0 "
      "left");
}

/* Seven dims can be walked over, so the error names the array. */
static void
test_too_many_dims_is_named (void)
{
  GByteArray *b = list_start (2);
  put_v2 (b, 2, 1);
  put_v2 (b, 7, 1);
  put64 (b, 2);
  put_name (b, "arg:ok");
  put_name (b, "arg:deep");
  g_autoptr (GBytes) bytes = finish (b);
  assert_fails (bytes, HY_ERROR_UNSUPPORTED, "t.params: array 1 ('arg:deep'): "
      "it has 7 dimensions; hybridinfer supports up to 6");
}

static void
test_duplicate_names (void)
{
  GByteArray *b = list_start (2);
  put_v2 (b, 1, 2);
  put_v2 (b, 1, 2);
  put64 (b, 2);
  put_name (b, "arg:x");
  put_name (b, "aux:x");
  g_autoptr (GBytes) bytes = finish (b);
  assert_fails (bytes, HY_ERROR_FORMAT,
      "t.params: arrays 0 ('arg:x') and 1 ('aux:x') have the same name");
}

/* Empty arrays: V2 ndim 0, V3 unknown shape, pre-V1 ndim 0.  They load as
 * tensors of unknown shape (ndim -1) holding nothing. */
static void
test_empty_arrays (void)
{
  GByteArray *b = list_start (4);
  put32 (b, 0xF993FAC9);        /* V2, dense, ndim 0 */
  put32 (b, 0);
  put32 (b, 0);
  put32 (b, 0xF993FACA);        /* V3, dense, ndim -1 */
  put32 (b, 0);
  put32 (b, 0xffffffff);
  put32 (b, 0);                 /* pre-V1, ndim 0 */
  put_v2 (b, 1, 3);
  put64 (b, 4);
  put_name (b, "a");
  put_name (b, "b");
  put_name (b, "c");
  put_name (b, "d");
  g_autoptr (GBytes) bytes = finish (b);
  GError *error = NULL;
  hy_param_list *list = parse_bytes (bytes, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 3; i++) {
    g_assert_cmpint (list->items[i].tensor->shape.ndim, ==, -1);
    g_assert_cmpint (list->items[i].stored_dtype, ==, -1);
  }
  g_assert_cmpint (list->items[3].tensor->shape.dims[0], ==, 3);
  g_assert_cmpfloat (list->items[3].tensor->data[2], ==, 1.0f);
  hy_param_list_free (list);
}

/* Every cut of a valid file is a clean "truncated" error, never a crash
 * or an allocation sized by the missing bytes. */
static void
test_every_truncation (void)
{
  static const char *const files[] = {
    "dtypes.params", "v3.params", "legacy_v0.params", "legacy_v1.params",
    "row_sparse.params", "csr.params", "wide_ints.params",
  };
  for (guint f = 0; f < G_N_ELEMENTS (files); f++) {
    g_autoptr (GBytes) bytes = read_fixture (files[f]);
    gsize size;
    const guint8 *data = g_bytes_get_data (bytes, &size);
    for (gsize cut = 0; cut < size; cut++) {
      /* A private copy so that reading past `cut` would be caught. */
      guint8 *copy = g_memdup2 (data, cut);
      GError *error = NULL;
      hy_param_list *list = hy_params_parse (copy, cut, "cut.params", &error);
      if (list || !strstr (error->message, "truncated"))
        g_error ("%s cut at %" G_GSIZE_FORMAT ": %s", files[f], cut,
            list ? "parsed" : error->message);
      g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
      g_error_free (error);
      g_free (copy);
    }
  }

  /* One message in full: the data of array 1 of dtypes.params is cut. */
  g_autoptr (GBytes) bytes = read_fixture ("dtypes.params");
  const guint8 *data = g_bytes_get_data (bytes, NULL);
  /* Array 0 (3x4 float32): 24 + 4+4+4+16+8+4 + 48 = 112; array 1 (4x4
   * float16) starts there and its data at 112 + 40 = 152. */
  GError *error = NULL;
  g_assert_null (hy_params_parse (data, 160, "d.params", &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_assert_cmpstr (error->message, ==, "d.params: truncated in array 1 at "
      "byte 152: needed 32 bytes, 8 left");
  g_error_free (error);
}

static void
test_save_and_load_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hy-params-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "m-0000.params", NULL);
  g_autofree char *src = fixture ("v3.params");
  GError *error = NULL;
  hy_param_list *list = hy_params_load (src, &error);
  g_assert_no_error (error);
  g_assert_true (hy_params_save (list, path, &error));
  hy_param_list *back = hy_params_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->n, ==, 3);
  g_assert_cmpfloat (hy_param_list_find (back, "scalar")->tensor->data[0],
      ==, 2.5f);
  hy_param_list_free (back);

  g_autofree char *bad = g_build_filename (dir, "nodir", "x.params", NULL);
  g_assert_false (hy_params_save (list, bad, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, bad));
  g_clear_error (&error);
  hy_param_list_free (list);

  g_assert_null (hy_params_load ("/nonexistent/m.params", &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "/nonexistent/m.params"));
  g_clear_error (&error);
  g_unlink (path);
  g_rmdir (dir);
}

/* ---- files that change while they are read ------------------------------ */

/* A V2 dense 1-D array header of `n` elements of dtype `dtype`; its data
 * follows. */
static void
put_v2_header (GByteArray *b, guint64 n, int dtype)
{
  put32 (b, 0xF993FAC9);
  put32 (b, 0);                 /* dense */
  put32 (b, 1);
  put64 (b, n);
  put32 (b, 1);                 /* cpu(0) */
  put32 (b, 0);
  put32 (b, (guint32) dtype);
}

/* Four halves and the floats they are: 1, -2, 0.5 and the largest. */
static const guint16 halves[4] = { 0x3C00, 0xC000, 0x3800, 0x7BFF };
static const float halves_as_float[4] = { 1.0f, -2.0f, 0.5f, 65504.0f };

#define BIG16_N 40000           /* 80000 bytes: two windows' worth */
#define BIG64_N 10000           /* 80000 bytes */

/* The value the test writes at element i of each array; `salt` makes a
 * second version with other values. */
static float
small_value (guint i, guint salt)
{
  return (float) i + 0.25f * (float) salt;
}

static float
big32_value (guint i, guint salt)
{
  return (float) i - 0.5f * (float) salt;     /* exact below 2^23 */
}

static double
big64_value (guint i, guint salt)
{
  return -(double) i - (double) salt;
}

/* float16 BIG16_N elements, float32 `n_big32`, then `n_small` float32
 * scalars-as-(1,), then float64 BIG64_N elements, then names: headers that
 * cross the reader's 64 KiB windows and data of each kind of read
 * (converted through the window, read straight into the tensor). */
static GBytes *
windows_file (guint n_big32, guint n_small, guint salt)
{
  GByteArray *b = list_start (n_small + 3);
  put_v2_header (b, BIG16_N, HY_DTYPE_FLOAT16);
  for (guint i = 0; i < BIG16_N; i++) {
    guint8 x[2] = { halves[(i + salt) % 4] & 0xff,
      halves[(i + salt) % 4] >> 8 };
    g_byte_array_append (b, x, 2);
  }
  put_v2_header (b, n_big32, HY_DTYPE_FLOAT32);
  for (guint i = 0; i < n_big32; i++) {
    float f = big32_value (i, salt);
    guint32 bits;
    memcpy (&bits, &f, 4);
    put32 (b, bits);
  }
  for (guint i = 0; i < n_small; i++) {
    put_v2_header (b, 1, HY_DTYPE_FLOAT32);
    float f = small_value (i, salt);
    guint32 bits;
    memcpy (&bits, &f, 4);
    put32 (b, bits);
  }
  put_v2_header (b, BIG64_N, HY_DTYPE_FLOAT64);
  for (guint i = 0; i < BIG64_N; i++) {
    double d = big64_value (i, salt);
    guint64 bits;
    memcpy (&bits, &d, 8);
    put64 (b, bits);
  }
  put64 (b, n_small + 3);
  put_name (b, "arg:big16");
  put_name (b, "arg:big32");
  for (guint i = 0; i < n_small; i++) {
    g_autofree char *name = g_strdup_printf ("arg:s%u", i);
    put_name (b, name);
  }
  put_name (b, "aux:big64");
  return finish (b);
}

/* Every value as windows_file (n_big32, n_small, salt) wrote it; FALSE
 * (with why in *why) at the first that differs. */
static gboolean
is_windows_file (const hy_param_list *list, guint n_big32, guint n_small,
    guint salt, char **why)
{
  if (list->n != n_small + 3) {
    *why = g_strdup_printf ("%u arrays, expected %u", list->n, n_small + 3);
    return FALSE;
  }
  const hy_tensor *t = list->items[0].tensor;
  if (strcmp (list->items[0].name, "big16") || t->shape.ndim != 1
      || t->shape.dims[0] != BIG16_N) {
    *why = g_strdup ("array 0 is not big16 of (40000)");
    return FALSE;
  }
  for (guint i = 0; i < BIG16_N; i++)
    if (t->data[i] != halves_as_float[(i + salt) % 4]) {
      *why = g_strdup_printf ("big16[%u] = %g", i, t->data[i]);
      return FALSE;
    }
  t = list->items[1].tensor;
  if (strcmp (list->items[1].name, "big32") || t->shape.ndim != 1
      || t->shape.dims[0] != n_big32) {
    *why = g_strdup ("array 1 is not big32 of its length");
    return FALSE;
  }
  for (guint i = 0; i < n_big32; i++)
    if (t->data[i] != big32_value (i, salt)) {
      *why = g_strdup_printf ("big32[%u] = %g", i, t->data[i]);
      return FALSE;
    }
  for (guint i = 0; i < n_small; i++) {
    const hy_param *p = &list->items[2 + i];
    g_autofree char *name = g_strdup_printf ("s%u", i);
    if (strcmp (p->name, name) || p->tensor->shape.dims[0] != 1
        || p->tensor->data[0] != small_value (i, salt)) {
      *why = g_strdup_printf ("array %u: %s = %g", 2 + i, p->name,
          p->tensor->data[0]);
      return FALSE;
    }
  }
  t = list->items[n_small + 2].tensor;
  if (strcmp (list->items[n_small + 2].name, "big64")
      || list->items[n_small + 2].kind != HY_PARAM_AUX
      || t->shape.dims[0] != BIG64_N) {
    *why = g_strdup ("the last array is not aux:big64 of (10000)");
    return FALSE;
  }
  for (guint i = 0; i < BIG64_N; i++)
    if (t->data[i] != (float) big64_value (i, salt)) {
      *why = g_strdup_printf ("big64[%u] = %g", i, t->data[i]);
      return FALSE;
    }
  return TRUE;
}

static void
write_bytes (const char *path, GBytes *bytes)
{
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);
  GError *error = NULL;
  if (!g_file_set_contents (path, data, (gssize) len, &error))
    g_error ("%s", error->message);
}

/* As `cp` writes a file that exists: cut to nothing, then written in
 * chunks, in place. */
static void
rewrite_in_place (const char *path, GBytes *bytes)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);
  int fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    g_error ("%s: %s", path, g_strerror (errno));
  for (gsize done = 0; done < len;) {
    ssize_t n = write (fd, data + done, MIN (len - done, 128 * 1024));
    if (n < 0 && errno != EINTR)
      g_error ("%s: %s", path, g_strerror (errno));
    done += n > 0 ? (gsize) n : 0;
  }
  close (fd);
}

/* Headers across window edges, every kind of data read: a file loads as
 * it was written. */
static void
test_file_reads_in_windows (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hy-params-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "w-0000.params", NULL);
  /* 3000 one-element arrays of 36 bytes (header and data) after 160 KB of
   * big16 and big32: headers across two window edges. */
  g_autoptr (GBytes) bytes = windows_file (20000, 3000, 0);
  write_bytes (path, bytes);
  GError *error = NULL;
  hy_param_list *list = hy_params_load (path, &error);
  g_assert_no_error (error);
  g_autofree char *why = NULL;
  if (!is_windows_file (list, 20000, 3000, 0, &why))
    g_error ("%s", why);
  hy_param_list_free (list);
  g_unlink (path);
  g_rmdir (dir);
}

typedef enum {
  CUT,                          /* to the middle of the read asked for */
  REWRITE_SAME_SIZE,            /* other values, the same layout */
  REWRITE_LONGER,               /* another layout, longer */
} file_change;

typedef struct {
  const char *path;
  file_change change;
  guint at;                     /* the read that changes the file */
  guint reads;                  /* reads so far */
  GBytes *other;                /* what a rewrite writes */
  guint64 offset;               /* the read that found the change */
  gsize length;
} change_plan;

static void
change_at_read (const char *path, guint64 offset, gsize length,
    gpointer user_data)
{
  change_plan *plan = user_data;
  if (strcmp (path, plan->path) || plan->reads++ != plan->at)
    return;
  plan->offset = offset;
  plan->length = length;
  if (plan->change == CUT) {
    g_assert_cmpint (truncate (path, (off_t) (offset + length / 2)), ==, 0);
  } else {
    /* Past the timestamp granularity of kernels without fine-grained
     * timestamps (a jiffy: at most 10 ms), so the write moves the mtime
     * even there. */
    g_usleep (20 * 1000);
    rewrite_in_place (path, plan->other);
  }
}

/* The file changes at each of the reads of a load in turn — the header
 * window, the names past the first array's data, each array's data: the
 * load fails naming the file and saying that it changed, never a signal,
 * never a list of old values and new.  (Through the mapping the reader
 * used before, a cut gave SIGBUS, or zeros where the cut bytes had been,
 * loaded as an unnamed list.) */
static void
test_changed_at_each_read (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hy-params-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "c-0000.params", NULL);
  g_autoptr (GBytes) original = windows_file (100, 3, 0);
  g_autoptr (GBytes) same_size = windows_file (100, 3, 1);
  g_autoptr (GBytes) longer = windows_file (100, 5, 1);
  g_assert_cmpuint (g_bytes_get_size (same_size), ==,
      g_bytes_get_size (original));
  GError *error = NULL;

  /* How many reads a load takes. */
  change_plan count = { .path = path, .at = G_MAXUINT };
  write_bytes (path, original);
  hy_file_set_read_hook (change_at_read, &count);
  hy_param_list *list = hy_params_load (path, &error);
  g_assert_no_error (error);
  hy_param_list_free (list);
  /* The header window, the names, big16 in two windows, big32, three
   * scalars, big64 in two windows. */
  g_assert_cmpuint (count.reads, >=, 9);

  static const char *const change_names[] = {
    "cut", "rewritten to the same size", "rewritten longer",
  };
  for (file_change change = CUT; change <= REWRITE_LONGER; change++) {
    for (guint at = 0; at < count.reads; at++) {
      write_bytes (path, original);
      change_plan plan = { .path = path, .change = change, .at = at,
        .other = change == REWRITE_LONGER ? longer : same_size,
      };
      hy_file_set_read_hook (change_at_read, &plan);
      list = hy_params_load (path, &error);
      if (list || !error)
        g_error ("%s at read %u: loaded", change_names[change], at);
      g_assert_error (error, HY_ERROR, HY_ERROR_IO);
      g_autofree char *want = NULL;
      if (change == CUT)
        want = g_strdup_printf ("%s: the params file changed while it was "
            "read: %" G_GSIZE_FORMAT " bytes expected at byte %"
            G_GUINT64_FORMAT ", %" G_GSIZE_FORMAT " read", path,
            plan.length, plan.offset, plan.length / 2);
      else if (change == REWRITE_SAME_SIZE)
        want = g_strdup_printf ("%s: the params file changed while it was "
            "read (it was modified; its size is still %" G_GSIZE_FORMAT
            " bytes)", path, g_bytes_get_size (original));
      else
        want = g_strdup_printf ("%s: the params file changed while it was "
            "read: it was %" G_GSIZE_FORMAT " bytes, it is now %"
            G_GSIZE_FORMAT, path, g_bytes_get_size (original),
            g_bytes_get_size (longer));
      if (strcmp (error->message, want))
        g_error ("%s at read %u (byte %" G_GUINT64_FORMAT "): \"%s\", "
            "expected \"%s\"", change_names[change], at, plan.offset,
            error->message, want);
      g_clear_error (&error);
    }
  }
  hy_file_set_read_hook (NULL, NULL);

  /* Unchanged again, it loads. */
  write_bytes (path, original);
  list = hy_params_load (path, &error);
  g_assert_no_error (error);
  g_autofree char *why = NULL;
  if (!is_windows_file (list, 100, 3, 0, &why))
    g_error ("%s", why);
  hy_param_list_free (list);
  g_unlink (path);
  g_rmdir (dir);
}

typedef struct {
  const char *path;
  GBytes *versions[2];
  gint stop;
  guint rewrites;
} rewriter;

static gpointer
rewrite_loop (gpointer data)
{
  rewriter *r = data;
  while (!g_atomic_int_get (&r->stop)) {
    rewrite_in_place (r->path, r->versions[r->rewrites++ % 2]);
    /* About as long as a load: some find the file whole, some not. */
    g_usleep (2000);
  }
  return NULL;
}

/* `cp` over a params file, again and again, while it is loaded 200
 * times: each load gives one version or the other, value for value, or an
 * error naming the file.  Before the file was read rather than mapped,
 * this died of SIGBUS within a few loads, or loaded a mix of the two. */
static void
test_rewritten_while_loading (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hy-params-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "r-0000.params", NULL);
  /* About 4 MB, so that loads and rewrites overlap; the two versions
   * differ in size and in every value. */
  static const guint n_small[2] = { 10, 11 };
  rewriter r = { .path = path };
  for (int v = 0; v < 2; v++)
    r.versions[v] = windows_file (1 << 20, n_small[v], v);
  write_bytes (path, r.versions[0]);
  GThread *thread = g_thread_new ("rewriter", rewrite_loop, &r);

  guint loaded[2] = { 0, 0 }, changed = 0, other_errors = 0;
  for (int i = 0; i < 200; i++) {
    GError *error = NULL;
    hy_param_list *list = hy_params_load (path, &error);
    if (list) {
      g_autofree char *why0 = NULL, *why1 = NULL;
      if (is_windows_file (list, 1 << 20, n_small[0], 0, &why0))
        loaded[0]++;
      else if (is_windows_file (list, 1 << 20, n_small[1], 1, &why1))
        loaded[1]++;
      else
        g_error ("load %d gave neither version: %s; %s", i, why0, why1);
      hy_param_list_free (list);
      continue;
    }
    /* Read just after `cp` cut it, the file may be a clean but short one:
     * any error will do as long as it names the file. */
    g_assert_nonnull (error);
    if (error->domain != HY_ERROR || !g_str_has_prefix (error->message, path))
      g_error ("load %d: %s", i, error->message);
    if (strstr (error->message, "changed while it was read"))
      changed++;
    else if (other_errors++ == 0)
      g_test_message ("for example: %s", error->message);
    g_error_free (error);
    /* A failed load takes microseconds: without a pause, most would see
     * the same cut. */
    g_usleep (500 + 1000 * (i % 3));
  }
  g_atomic_int_set (&r.stop, 1);
  g_thread_join (thread);
  g_test_message ("200 loads during %u rewrites: %u of the first version, "
      "%u of the second, %u saw the file change, %u found it cut short",
      r.rewrites, loaded[0], loaded[1], changed, other_errors);
  for (int v = 0; v < 2; v++)
    g_bytes_unref (r.versions[v]);
  g_unlink (path);
  g_rmdir (dir);
}

static int
write_roundtrip (const char *dir)
{
  g_mkdir_with_parents (dir, 0755);
  g_autofree char *src = fixture ("dtypes.params");
  g_autofree char *out = g_build_filename (dir, "ours.params", NULL);
  GError *error = NULL;
  hy_param_list *list = hy_params_load (src, &error);
  if (!list || !hy_params_save (list, out, &error)) {
    g_printerr ("%s\n", error->message);
    return 1;
  }
  hy_param_list_free (list);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 3 && !strcmp (argv[1], "--write-roundtrip"))
    return write_roundtrip (argv[2]);

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/params-io/all-dtypes", test_all_dtypes);
  g_test_add_func ("/params-io/v3-and-legacy-layouts",
      test_v3_and_legacy_layouts);
  g_test_add_func ("/params-io/unnamed-list", test_unnamed_list);
  g_test_add_func ("/params-io/sparse-is-named", test_sparse_is_named);
  g_test_add_func ("/params-io/write-read-back", test_write_read_back);
  g_test_add_func ("/params-io/write-scalar", test_write_scalar);
  g_test_add_func ("/params-io/malformed", test_malformed);
  g_test_add_func ("/params-io/foreign-formats", test_foreign_formats);
  g_test_add_func ("/params-io/too-many-dims-is-named",
      test_too_many_dims_is_named);
  g_test_add_func ("/params-io/duplicate-names", test_duplicate_names);
  g_test_add_func ("/params-io/empty-arrays", test_empty_arrays);
  g_test_add_func ("/params-io/every-truncation", test_every_truncation);
  g_test_add_func ("/params-io/save-and-load-files",
      test_save_and_load_files);
  g_test_add_func ("/params-io/file-reads-in-windows",
      test_file_reads_in_windows);
  g_test_add_func ("/params-io/changed-at-each-read",
      test_changed_at_each_read);
  g_test_add_func ("/params-io/rewritten-while-loading",
      test_rewritten_while_loading);
  return g_test_run ();
}
