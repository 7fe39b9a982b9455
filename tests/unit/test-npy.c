/*
 * test-npy.c — NumPy .npy reading and writing.
 *
 * Files numpy wrote (tests/fixtures/params/expected/) read back and are
 * rewritten byte for byte; headers in every legal spelling parse; every
 * malformed or non-float32 file is refused with a message saying why.
 * Files are read, not mapped: one cut or rewritten while it is read gives
 * an error saying so, never SIGBUS or a tensor of old values and new.
 *
 * Run with `--write-roundtrip DIR` it writes DIR/ours.npy (shape (2, 3, 4),
 * values i * 0.5 - 3) for tests/conformance/check_params_roundtrip.py to
 * load with numpy.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "hybrid.h"
#include "hybrid-npy.h"
#include "core/io/file-read.h"

static const char *
source_dir (void)
{
  const char *d = g_getenv ("HY_SOURCE_DIR");
  return d ? d : ".";
}

/* A .npy file with the given version, header text and `n_data` floats
 * 0, 1, 2, … (the header is used as is: no padding added). */
static GBytes *
make_npy (int major, const char *header, gsize n_data)
{
  GByteArray *b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) "\x93NUMPY", 6);
  guint8 ver[2] = { (guint8) major, 0 };
  g_byte_array_append (b, ver, 2);
  guint32 hlen = (guint32) strlen (header);
  guint8 len[4] = { hlen & 0xff, (hlen >> 8) & 0xff, (hlen >> 16) & 0xff,
    hlen >> 24 };
  g_byte_array_append (b, len, major == 1 ? 2 : 4);
  g_byte_array_append (b, (const guint8 *) header, hlen);
  for (gsize i = 0; i < n_data; i++) {
    float f = (float) i;
    g_byte_array_append (b, (const guint8 *) &f, 4);
  }
  return g_byte_array_free_to_bytes (b);
}

static hy_tensor *
parse_bytes (GBytes *bytes, GError **error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  return hy_npy_parse (data, size, "t.npy", error);
}

static void
assert_fails_bytes (GBytes *bytes, int code, const char *substring)
{
  GError *error = NULL;
  hy_tensor *t = parse_bytes (bytes, &error);
  if (t || !error || error->code != code
      || !strstr (error->message, substring))
    g_error ("expected error %d containing \"%s\", got %s", code, substring,
        error ? error->message : "success");
  g_error_free (error);
}

static void
assert_header_fails (int major, const char *header, gsize n_data, int code,
    const char *substring)
{
  g_autoptr (GBytes) b = make_npy (major, header, n_data);
  assert_fails_bytes (b, code, substring);
}

static void
test_header_spellings (void)
{
  static const struct {
    int major;
    const char *header;
    int ndim;
    int64_t dims[3];
  } ok[] = {
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }  \n",
      2, { 2, 3 } },
    { 1, "{'shape':(2,3),'fortran_order':False,'descr':'<f4'}", 2, { 2, 3 } },
    { 1, "{ \"descr\" : \"<f4\" , \"shape\" : ( 6 , ) ,"
      " \"fortran_order\" : False }\n", 1, { 6 } },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, { 0 } },
    { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1L, 6L), }", 2,
      { 1, 6 } },
    { 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2, 1), }\n", 3,
      { 3, 2, 1 } },
    { 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }\n", 1,
      { 6 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ok); i++) {
    hy_shape shape = hy_shape_make (ok[i].ndim, ok[i].dims);
    g_autoptr (GBytes) b = make_npy (ok[i].major, ok[i].header,
        (gsize) hy_shape_numel (&shape));
    GError *error = NULL;
    hy_tensor *t = parse_bytes (b, &error);
    if (!t)
      g_error ("%s: %s", ok[i].header, error->message);
    g_assert_cmpint (t->shape.ndim, ==, ok[i].ndim);
    for (int d = 0; d < ok[i].ndim; d++)
      g_assert_cmpint (t->shape.dims[d], ==, ok[i].dims[d]);
    for (int k = 0; k < 6 && k < hy_shape_numel (&t->shape); k++)
      g_assert_cmpfloat (t->data[k], ==, (float) k);
    hy_tensor_free (t);
  }
}

static void
test_rejects_dtypes_and_order (void)
{
  assert_header_fails (1, "{'descr': '<i8', 'fortran_order': False, "
      "'shape': (3,), }", 6, HY_ERROR_UNSUPPORTED,
      "t.npy: dtype '<i8' is not float32 ('<f4')");
  assert_header_fails (1, "{'descr': '<f8', 'fortran_order': False, "
      "'shape': (3,), }", 6, HY_ERROR_UNSUPPORTED, "dtype '<f8' is not float32");
  assert_header_fails (1, "{'descr': '>f4', 'fortran_order': False, "
      "'shape': (6,), }", 6, HY_ERROR_UNSUPPORTED, "dtype '>f4' is not float32");
  assert_header_fails (1, "{'descr': '|f4', 'fortran_order': False, "
      "'shape': (6,), }", 6, HY_ERROR_UNSUPPORTED, "dtype '|f4'");
  assert_header_fails (1, "{'descr': '<f4', 'fortran_order': True, "
      "'shape': (2, 3), }", 6, HY_ERROR_UNSUPPORTED,
      "t.npy: the array is in Fortran order");
  assert_header_fails (1, "{'descr': '<f4', 'fortran_order': False, "
      "'shape': (1, 1, 1, 1, 1, 1, 1), }", 1, HY_ERROR_UNSUPPORTED,
      "t.npy: the array has more than 6 dimensions");
  assert_header_fails (1, "{'descr': [('a', '<f4')], 'fortran_order': False, "
      "'shape': (1,), }", 1, HY_ERROR_FORMAT, "expected a quoted string");
}

static void
test_rejects_malformed_headers (void)
{
  static const struct {
    const char *header;
    const char *message;
  } bad[] = {
    { "", "expected a '{'" },
    { "{'descr': '<f4', 'fortran_order': False", "expected ',' or '}'" },
    { "{'descr': '<f4', 'fortran_order': False, }", "missing key 'shape'" },
    { "{'fortran_order': False, 'shape': (6,)}", "missing key 'descr'" },
    { "{'descr': '<f4', 'shape': (6,)}", "missing key 'fortran_order'" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}",
      "unexpected key 'x'" },
    { "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
      "'shape': (6,)}", "key 'descr' appears twice" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': (6)}",
      "shape (n) is not a tuple" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': [6]}",
      "shape must be a tuple" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': (-6,)}",
      "shape entries must be non-negative integers" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': (6.0,)}",
      "expected ',' or ')' in shape" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': "
      "(99999999999999999999,)}", "shape entry too large" },
    { "{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}",
      "fortran_order must be True or False" },
    { "{'descr' '<f4', 'fortran_order': False, 'shape': (6,)}",
      "expected ':' after a key" },
    { "{'descr': 'a\\'b', 'fortran_order': False, 'shape': (6,)}",
      "unsupported character in a string" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} x",
      "unexpected text after the dict" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)", "expected ',' "
      "or '}'" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': (6,",
      "unterminated shape tuple" },
    { "{'descr': '<f4', 'fortran_order': False, 'shape': (6",
      "expected ',' or ')' in shape" },
    { "{'descr': '<f4xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', "
      "'fortran_order': False, 'shape': (6,)}", "string too long" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    assert_header_fails (1, bad[i].header, 6, HY_ERROR_FORMAT, bad[i].message);
}

static void
test_rejects_bad_framing (void)
{
  const char *h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  /* Data: too little, too much. */
  assert_header_fails (1, h, 5, HY_ERROR_FORMAT,
      "t.npy: truncated: shape (2, 3) needs 24 bytes of data, the file "
      "holds 20");
  assert_header_fails (1, h, 7, HY_ERROR_FORMAT,
      "shape (2, 3) needs 24 bytes of data, but the file holds 28");
  /* Sizes whose product overflows, even beside a zero. */
  assert_header_fails (1, "{'descr': '<f4', 'fortran_order': False, 'shape': "
      "(4611686018427387904, 4611686018427387904), }", 0, HY_ERROR_FORMAT,
      "the shape's size overflows");
  assert_header_fails (1, "{'descr': '<f4', 'fortran_order': False, 'shape': "
      "(4611686018427387904, 4611686018427387904, 0), }", 0, HY_ERROR_FORMAT,
      "the shape's size overflows");
  assert_header_fails (1, "{'descr': '<f4', 'fortran_order': False, 'shape': "
      "(1152921504606846976,), }", 0, HY_ERROR_FORMAT, "truncated");

  g_autoptr (GBytes) good = make_npy (1, h, 6);
  gsize size;
  const guint8 *data = g_bytes_get_data (good, &size);

  /* Every prefix fails cleanly. */
  for (gsize cut = 0; cut < size; cut++) {
    GError *error = NULL;
    g_assert_null (hy_npy_parse (data, cut, "t.npy", &error));
    g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
    g_assert_nonnull (strstr (error->message, "t.npy: "));
    g_error_free (error);
  }

  guint8 *copy = g_memdup2 (data, size);
  GError *error = NULL;
  copy[0] = 'x';
  g_assert_null (hy_npy_parse (copy, size, "t.npy", &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message, "not a .npy file"));
  g_clear_error (&error);
  copy[0] = 0x93;

  copy[6] = 4;
  g_assert_null (hy_npy_parse (copy, size, "t.npy", &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "version 4.0"));
  g_clear_error (&error);
  copy[6] = 1;

  copy[7] = 1;
  g_assert_null (hy_npy_parse (copy, size, "t.npy", &error));
  g_assert_nonnull (strstr (error->message, "version 1.1"));
  g_clear_error (&error);
  copy[7] = 0;

  /* A header length reaching past the end. */
  copy[8] = 0xff;
  copy[9] = 0xff;
  g_assert_null (hy_npy_parse (copy, size, "t.npy", &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message, "truncated .npy header: it "
          "declares 65535 bytes"));
  g_clear_error (&error);
  g_free (copy);

  g_autoptr (GBytes) v2 = make_npy (2, h, 6);
  data = g_bytes_get_data (v2, &size);
  copy = g_memdup2 (data, size);
  memset (copy + 8, 0xff, 4);
  g_assert_null (hy_npy_parse (copy, size, "t.npy", &error));
  g_assert_nonnull (strstr (error->message, "declares 4294967295 bytes"));
  g_clear_error (&error);
  g_free (copy);
}

static hy_tensor *
make_tensor (int ndim, const int64_t *dims)
{
  hy_shape s = hy_shape_make (ndim, dims);
  hy_tensor *t = hy_tensor_new (&s);
  for (int64_t i = 0; i < hy_shape_numel (&s); i++)
    t->data[i] = (float) i * 0.5f - 3.0f;
  return t;
}

static void
test_write_and_read_back (void)
{
  static const struct {
    int ndim;
    int64_t dims[6];
    const char *shape_text;
  } cases[] = {
    { 0, { 0 }, "'shape': (), }" },
    { 1, { 5 }, "'shape': (5,), }" },
    { 2, { 2, 3 }, "'shape': (2, 3), }" },
    { 6, { 1, 2, 1, 3, 2, 2 }, "'shape': (1, 2, 1, 3, 2, 2), }" },
    { 2, { 0, 3 }, "'shape': (0, 3), }" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    hy_tensor *t = make_tensor (cases[i].ndim, cases[i].dims);
    g_autoptr (GBytes) b = hy_npy_write (t);
    gsize size;
    const guint8 *data = g_bytes_get_data (b, &size);
    /* numpy's layout: v1.0, the data 64-byte aligned, '\n' before it. */
    g_assert_cmpmem (data, 8, "\x93NUMPY\x01\x00", 8);
    gsize header_end = 10 + (data[8] | data[9] << 8);
    g_assert_cmpuint (header_end % 64, ==, 0);
    g_assert_cmpint (data[header_end - 1], ==, '\n');
    g_autofree char *header = g_strndup ((const char *) data + 10,
        header_end - 10);
    g_assert_true (g_str_has_prefix (header, "{'descr': '<f4', "
            "'fortran_order': False, "));
    g_assert_nonnull (strstr (header, cases[i].shape_text));

    GError *error = NULL;
    hy_tensor *back = hy_npy_parse (data, size, "w.npy", &error);
    g_assert_no_error (error);
    g_assert_true (hy_shape_equal (&back->shape, &t->shape));
    g_assert_cmpmem (back->data, hy_tensor_nbytes (back), t->data,
        hy_tensor_nbytes (t));
    hy_tensor_free (back);
    hy_tensor_free (t);
  }
}

/* Files numpy 1.23 wrote: we read them and write the same bytes back. */
static void
test_numpy_files (void)
{
  g_autofree char *root = g_build_filename (source_dir (), "tests", "fixtures",
      "params", "expected", NULL);
  GDir *dir = g_dir_open (root, 0, NULL);
  if (!dir) {
    g_test_skip ("tests/fixtures/params/expected is missing");
    return;
  }
  guint n = 0;
  const char *sub;
  while ((sub = g_dir_read_name (dir))) {
    g_autofree char *subdir = g_build_filename (root, sub, NULL);
    GDir *d = g_dir_open (subdir, 0, NULL);
    if (!d)
      continue;
    const char *name;
    while ((name = g_dir_read_name (d))) {
      g_autofree char *path = g_build_filename (subdir, name, NULL);
      g_autofree char *contents = NULL;
      gsize len;
      g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
      GError *error = NULL;
      hy_tensor *t = hy_npy_load (path, &error);
      g_assert_no_error (error);
      g_autoptr (GBytes) out = hy_npy_write (t);
      gsize out_len;
      const void *out_data = g_bytes_get_data (out, &out_len);
      g_assert_cmpmem (out_data, out_len, contents, len);
      hy_tensor_free (t);
      n++;
    }
    g_dir_close (d);
  }
  g_dir_close (dir);
  g_assert_cmpuint (n, >, 0);
  g_test_message ("%u numpy files read and rewritten identically", n);
}

static void
test_save_and_load (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hy-npy-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "x.npy", NULL);
  int64_t dims[] = { 3, 4 };
  hy_tensor *t = make_tensor (2, dims);
  GError *error = NULL;
  g_assert_true (hy_npy_save (t, path, &error));
  hy_tensor *back = hy_npy_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (back->data, 48, t->data, 48);
  hy_tensor_free (back);

  g_assert_null (hy_npy_load ("/nonexistent/x.npy", &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "/nonexistent/x.npy"));
  g_clear_error (&error);

  g_autofree char *bad = g_build_filename (dir, "nodir", "x.npy", NULL);
  g_assert_false (hy_npy_save (t, bad, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, bad));
  g_clear_error (&error);

  /* An empty file is not a .npy file. */
  g_autofree char *empty = g_build_filename (dir, "empty.npy", NULL);
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  g_assert_null (hy_npy_load (empty, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_clear_error (&error);

  hy_tensor_free (t);
  g_unlink (path);
  g_unlink (empty);
  g_rmdir (dir);
}

/* Every cut of a file on disk is refused, naming the file: the reader
 * asks for no byte the file does not hold. */
static void
test_load_every_cut (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hy-npy-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "cut.npy", NULL);
  g_autoptr (GBytes) bytes = make_npy (2, "{'descr': '<f4', 'fortran_order': "
      "False, 'shape': (4,), }\n", 4);
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);
  for (gsize cut = 0; cut < size; cut++) {
    g_assert_true (g_file_set_contents (path, data, (gssize) cut, NULL));
    GError *error = NULL;
    g_assert_null (hy_npy_load (path, &error));
    g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
    g_assert_true (g_str_has_prefix (error->message, path));
    g_clear_error (&error);
  }
  g_unlink (path);
  g_rmdir (dir);
}

typedef struct {
  const char *path;
  gboolean cut;                 /* or rewrite to the same size */
  guint at;
  guint reads;
  GBytes *other;
  guint64 offset;
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
  if (plan->cut) {
    g_assert_cmpint (truncate (path, (off_t) (offset + length / 2)), ==, 0);
    return;
  }
  /* Past the timestamp granularity of kernels without fine-grained
   * timestamps (a jiffy: at most 10 ms), so the write moves the mtime. */
  g_usleep (20 * 1000);
  FILE *f = fopen (path, "r+");
  g_assert_nonnull (f);
  gsize len;
  const void *data = g_bytes_get_data (plan->other, &len);
  g_assert_cmpuint (fwrite (data, 1, len, f), ==, len);
  g_assert_cmpint (fclose (f), ==, 0);
}

/* Cut or rewritten at each of the reads of a load (the prefix, the
 * header, the data): an error naming the file, saying that it changed. */
static void
test_changed_while_read (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hy-npy-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "c.npy", NULL);
  int64_t dims[] = { 100, 10 };
  hy_tensor *t = make_tensor (2, dims);
  g_autoptr (GBytes) original = hy_npy_write (t);
  t->data[500] = 1e6f;
  g_autoptr (GBytes) other = hy_npy_write (t);
  gsize size = g_bytes_get_size (original);
  GError *error = NULL;

  change_plan count = { .path = path, .at = G_MAXUINT };
  g_assert_true (g_file_set_contents (path, g_bytes_get_data (original,
              NULL), (gssize) size, NULL));
  hy_file_set_read_hook (change_at_read, &count);
  hy_tensor *back = hy_npy_load (path, &error);
  g_assert_no_error (error);
  hy_tensor_free (back);
  g_assert_cmpuint (count.reads, ==, 3);

  for (int cut = 0; cut < 2; cut++) {
    for (guint at = 0; at < count.reads; at++) {
      g_assert_true (g_file_set_contents (path, g_bytes_get_data (original,
                  NULL), (gssize) size, NULL));
      change_plan plan = { .path = path, .cut = cut, .at = at,
        .other = other };
      hy_file_set_read_hook (change_at_read, &plan);
      g_assert_null (hy_npy_load (path, &error));
      g_assert_error (error, HY_ERROR, HY_ERROR_IO);
      g_autofree char *want = cut
          ? g_strdup_printf ("%s: the .npy file changed while it was read: %"
          G_GSIZE_FORMAT " bytes expected at byte %" G_GUINT64_FORMAT ", %"
          G_GSIZE_FORMAT " read", path, plan.length, plan.offset,
          plan.length / 2)
          : g_strdup_printf ("%s: the .npy file changed while it was read "
          "(it was modified; its size is still %" G_GSIZE_FORMAT " bytes)",
          path, size);
      g_assert_cmpstr (error->message, ==, want);
      g_clear_error (&error);
    }
  }
  hy_file_set_read_hook (NULL, NULL);
  hy_tensor_free (t);
  g_unlink (path);
  g_rmdir (dir);
}

static int
write_roundtrip (const char *dir)
{
  g_mkdir_with_parents (dir, 0755);
  int64_t dims[] = { 2, 3, 4 };
  hy_tensor *t = make_tensor (3, dims);
  g_autofree char *path = g_build_filename (dir, "ours.npy", NULL);
  GError *error = NULL;
  gboolean ok = hy_npy_save (t, path, &error);
  if (!ok)
    g_printerr ("%s\n", error->message);
  hy_tensor_free (t);
  return ok ? 0 : 1;
}

int
main (int argc, char **argv)
{
  if (argc == 3 && !strcmp (argv[1], "--write-roundtrip"))
    return write_roundtrip (argv[2]);

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/npy/header-spellings", test_header_spellings);
  g_test_add_func ("/npy/rejects-dtypes-and-order",
      test_rejects_dtypes_and_order);
  g_test_add_func ("/npy/rejects-malformed-headers",
      test_rejects_malformed_headers);
  g_test_add_func ("/npy/rejects-bad-framing", test_rejects_bad_framing);
  g_test_add_func ("/npy/write-and-read-back", test_write_and_read_back);
  g_test_add_func ("/npy/numpy-files", test_numpy_files);
  g_test_add_func ("/npy/save-and-load", test_save_and_load);
  g_test_add_func ("/npy/load-every-cut", test_load_every_cut);
  g_test_add_func ("/npy/changed-while-read", test_changed_while_read);
  return g_test_run ();
}
