/*
 * npy.c — NumPy .npy files, float32 C-order only.
 *
 * The header is a Python dict literal.  Rather than trusting any layout we
 * parse it as a tiny grammar (any key order, any spacing, trailing commas,
 * Python 2's "3L" integers) and insist on exactly the three keys numpy
 * writes, as numpy itself does.
 */
#include <string.h>

#include "hybrid.h"
#include "hybrid-npy.h"
#include "core/io/file-read.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Magic, version and header length: 10 bytes in version 1, 12 after. */
#define NPY_PREFIX_MAX 12
/* numpy aligns the data to this many bytes (format.ARRAY_ALIGN). */
#define NPY_ALIGN 64
/* Longer descr strings are garbage, not dtypes; keep messages short. */
#define NPY_MAX_DESCR 32

typedef struct header_parser {
  const char *p;
  const char *end;
  const char *source;
} header_parser;

typedef struct npy_header {
  char descr[NPY_MAX_DESCR + 1];
  gboolean fortran_order;
  hy_shape shape;
  guint seen;                   /* bit per key: descr, fortran_order, shape */
} npy_header;

enum { SEEN_DESCR = 1, SEEN_FORTRAN = 2, SEEN_SHAPE = 4 };

static void
skip_space (header_parser *hp)
{
  while (hp->p < hp->end && (*hp->p == ' ' || *hp->p == '\t'
          || *hp->p == '\n' || *hp->p == '\r'))
    hp->p++;
}

static gboolean
header_error (header_parser *hp, GError **error, const char *what)
{
  g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
      "%s: malformed .npy header: %s", hp->source, what);
  return FALSE;
}

static gboolean
expect_char (header_parser *hp, char c, const char *what, GError **error)
{
  skip_space (hp);
  if (hp->p >= hp->end || *hp->p != c)
    return header_error (hp, error, what);
  hp->p++;
  return TRUE;
}

/* A Python string literal without escapes, quoted '…' or "…". */
static gboolean
parse_string (header_parser *hp, char *out, gsize out_size, GError **error)
{
  skip_space (hp);
  if (hp->p >= hp->end || (*hp->p != '\'' && *hp->p != '"'))
    return header_error (hp, error, "expected a quoted string");
  char quote = *hp->p++;
  const char *start = hp->p;
  while (hp->p < hp->end && *hp->p != quote) {
    if (*hp->p == '\\' || *hp->p == '\n')
      return header_error (hp, error, "unsupported character in a string");
    hp->p++;
  }
  if (hp->p >= hp->end)
    return header_error (hp, error, "unterminated string");
  gsize len = (gsize) (hp->p - start);
  hp->p++;
  if (len >= out_size)
    return header_error (hp, error, "string too long");
  memcpy (out, start, len);
  out[len] = '\0';
  return TRUE;
}

static gboolean
parse_bool (header_parser *hp, gboolean *out, GError **error)
{
  skip_space (hp);
  gsize left = (gsize) (hp->end - hp->p);
  if (left >= 4 && !strncmp (hp->p, "True", 4)) {
    *out = TRUE;
    hp->p += 4;
  } else if (left >= 5 && !strncmp (hp->p, "False", 5)) {
    *out = FALSE;
    hp->p += 5;
  } else {
    return header_error (hp, error, "fortran_order must be True or False");
  }
  return TRUE;
}

/* A non-negative integer, optionally with Python 2's long suffix. */
static gboolean
parse_dim (header_parser *hp, int64_t *out, GError **error)
{
  skip_space (hp);
  if (hp->p >= hp->end || !g_ascii_isdigit (*hp->p))
    return header_error (hp, error, "shape entries must be non-negative "
        "integers");
  int64_t v = 0;
  while (hp->p < hp->end && g_ascii_isdigit (*hp->p)) {
    if (v > (G_MAXINT64 - 9) / 10)
      return header_error (hp, error, "shape entry too large");
    v = v * 10 + (*hp->p++ - '0');
  }
  if (hp->p < hp->end && (*hp->p == 'L' || *hp->p == 'l'))
    hp->p++;
  *out = v;
  return TRUE;
}

/* "()", "(3,)", "(2, 3)", "(2, 3,)" — a bare "(3)" is an int, not a tuple,
 * and numpy refuses it, so do we. */
static gboolean
parse_shape (header_parser *hp, hy_shape *shape, GError **error)
{
  if (!expect_char (hp, '(', "shape must be a tuple", error))
    return FALSE;
  shape->ndim = 0;
  gboolean trailing_comma = FALSE;
  for (;;) {
    skip_space (hp);
    if (hp->p >= hp->end)
      return header_error (hp, error, "unterminated shape tuple");
    if (*hp->p == ')') {
      hp->p++;
      break;
    }
    if (shape->ndim == HY_MAX_DIMS) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "%s: the array has more than %d dimensions", hp->source,
          HY_MAX_DIMS);
      return FALSE;
    }
    if (!parse_dim (hp, &shape->dims[shape->ndim++], error))
      return FALSE;
    skip_space (hp);
    trailing_comma = FALSE;
    if (hp->p < hp->end && *hp->p == ',') {
      hp->p++;
      trailing_comma = TRUE;
    } else if (hp->p >= hp->end || *hp->p != ')') {
      return header_error (hp, error, "expected ',' or ')' in shape");
    }
  }
  if (shape->ndim == 1 && !trailing_comma)
    return header_error (hp, error, "shape (n) is not a tuple; "
        "expected (n,)");
  return TRUE;
}

static gboolean
parse_entry (header_parser *hp, npy_header *h, GError **error)
{
  char key[32];
  if (!parse_string (hp, key, sizeof key, error))
    return FALSE;
  if (!expect_char (hp, ':', "expected ':' after a key", error))
    return FALSE;
  guint bit;
  gboolean ok;
  if (!strcmp (key, "descr")) {
    bit = SEEN_DESCR;
    ok = parse_string (hp, h->descr, sizeof h->descr, error);
  } else if (!strcmp (key, "fortran_order")) {
    bit = SEEN_FORTRAN;
    ok = parse_bool (hp, &h->fortran_order, error);
  } else if (!strcmp (key, "shape")) {
    bit = SEEN_SHAPE;
    ok = parse_shape (hp, &h->shape, error);
  } else {
    g_autofree char *k = g_strescape (key, NULL);
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: malformed .npy header: unexpected key '%s'", hp->source, k);
    return FALSE;
  }
  if (!ok)
    return FALSE;
  if (h->seen & bit) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: malformed .npy header: key '%s' appears twice", hp->source, key);
    return FALSE;
  }
  h->seen |= bit;
  return TRUE;
}

static gboolean
parse_header_dict (const char *text, gsize len, const char *source,
    npy_header *h, GError **error)
{
  header_parser hp = { text, text + len, source };
  if (!expect_char (&hp, '{', "expected a '{'", error))
    return FALSE;
  for (;;) {
    skip_space (&hp);
    if (hp.p < hp.end && *hp.p == '}') {
      hp.p++;
      break;
    }
    if (!parse_entry (&hp, h, error))
      return FALSE;
    skip_space (&hp);
    if (hp.p < hp.end && *hp.p == ',')
      hp.p++;
    else if (hp.p >= hp.end || *hp.p != '}')
      return header_error (&hp, error, "expected ',' or '}'");
  }
  skip_space (&hp);
  if (hp.p != hp.end)
    return header_error (&hp, error, "unexpected text after the dict");
  if (h->seen != (SEEN_DESCR | SEEN_FORTRAN | SEEN_SHAPE))
    return header_error (&hp, error, !(h->seen & SEEN_DESCR)
        ? "missing key 'descr'" : !(h->seen & SEEN_FORTRAN)
        ? "missing key 'fortran_order'" : "missing key 'shape'");
  return TRUE;
}

static gboolean
check_header (const npy_header *h, const char *source, GError **error)
{
  if (strcmp (h->descr, "<f4") != 0) {
    g_autofree char *d = g_strescape (h->descr, NULL);
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: dtype '%s' is not float32 ('<f4'); save the array with "
        "astype(numpy.float32)", source, d);
    return FALSE;
  }
  if (h->fortran_order) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: the array is in Fortran order; save it with "
        "numpy.ascontiguousarray()", source);
    return FALSE;
  }
  return TRUE;
}

/* Number of data bytes the shape needs; FALSE if the product of its
 * non-zero dims overflows, which also keeps hy_shape_numel() defined for a
 * zero-size shape with huge other dims. */
static gboolean
shape_nbytes (const hy_shape *shape, guint64 *out)
{
  guint64 n = sizeof (float);
  gboolean empty = FALSE;
  for (int i = 0; i < shape->ndim; i++) {
    if (shape->dims[i] == 0)
      empty = TRUE;
    else if (__builtin_mul_overflow (n, (guint64) shape->dims[i], &n)
        || n > G_MAXINT64)
      return FALSE;
  }
  *out = empty ? 0 : n;
  return TRUE;
}

static void
copy_le_floats (float *dst, const guint8 *src, gsize count)
{
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  memcpy (dst, src, count * sizeof (float));
#else
  for (gsize i = 0; i < count; i++) {
    guint32 bits;
    memcpy (&bits, src + 4 * i, 4);
    bits = GUINT32_FROM_LE (bits);
    memcpy (dst + i, &bits, 4);
  }
#endif
}

/* The magic, the version and the header's length, from the first
 * MIN (size, NPY_PREFIX_MAX) of a file's `size` bytes: *prefix gets where
 * the header dict starts, *header_len its length, which the file holds. */
static gboolean
read_prefix (const guint8 *data, gsize size, const char *source,
    gsize *prefix, gsize *header_len, GError **error)
{
  if (size < NPY_MAGIC_LEN + 2 || memcmp (data, NPY_MAGIC, NPY_MAGIC_LEN)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: not a .npy file (no \\x93NUMPY magic)", source);
    return FALSE;
  }
  guint major = data[6], minor = data[7];
  *prefix = major == 1 ? 10 : NPY_PREFIX_MAX;
  if ((major < 1 || major > 3) || minor != 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "%s: .npy format version %u.%u is not 1.0, 2.0 or 3.0", source,
        major, minor);
    return FALSE;
  }
  if (size < *prefix) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: truncated .npy header", source);
    return FALSE;
  }
  guint64 len = major == 1
      ? (guint64) data[8] | (guint64) data[9] << 8
      : (guint64) data[8] | (guint64) data[9] << 8
      | (guint64) data[10] << 16 | (guint64) data[11] << 24;
  if (len > size - *prefix) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: truncated .npy header: it declares %" G_GUINT64_FORMAT
        " bytes, %" G_GSIZE_FORMAT " are left", source, len, size - *prefix);
    return FALSE;
  }
  *header_len = (gsize) len;
  return TRUE;
}

/* The header dict, `header_len` bytes that end at `offset` in a file of
 * `size` bytes; *shape gets the shape, whose data must fill the rest. */
static gboolean
read_header (const char *dict, gsize header_len, gsize offset, gsize size,
    const char *source, hy_shape *shape, GError **error)
{
  npy_header h = { .seen = 0 };
  if (!parse_header_dict (dict, header_len, source, &h, error)
      || !check_header (&h, source, error))
    return FALSE;

  guint64 need;
  gsize have = size - offset;
  if (!shape_nbytes (&h.shape, &need)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s: the shape's size overflows", source);
    return FALSE;
  }
  if (need != have) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        need > have ? "%s: truncated: shape %s needs %" G_GUINT64_FORMAT
        " bytes of data, the file holds %" G_GSIZE_FORMAT
        : "%s: shape %s needs %" G_GUINT64_FORMAT " bytes of data, but the "
        "file holds %" G_GSIZE_FORMAT, source,
        hy_shape_format (&h.shape, buf, sizeof buf), need, have);
    return FALSE;
  }
  *shape = h.shape;
  return TRUE;
}

hy_tensor *
hy_npy_parse (const guint8 *data, gsize size, const char *source,
    GError **error)
{
  gsize prefix, header_len;
  hy_shape shape;
  if (!read_prefix (data, size, source, &prefix, &header_len, error)
      || !read_header ((const char *) data + prefix, header_len,
          prefix + header_len, size, source, &shape, error))
    return NULL;
  hy_tensor *t = hy_tensor_new (&shape);
  copy_le_floats (t->data, data + prefix + header_len,
      (gsize) hy_shape_numel (&shape));
  return t;
}

/* Reads the file with pread into memory of its own, never mapped: a
 * mapping of a file cut while it is read raises SIGBUS.  The header goes
 * through a small buffer, the data straight into the tensor. */
static hy_tensor *
load_npy (hy_file *file, GError **error)
{
  const char *path = hy_file_path (file);
  gsize size = hy_file_size (file);
  guint8 head[NPY_PREFIX_MAX];
  gsize prefix, header_len;
  if (!hy_file_read_at (file, head, MIN (size, sizeof head), 0, error)
      || !read_prefix (head, size, path, &prefix, &header_len, error))
    return NULL;
  g_autofree char *dict = g_malloc (MAX (header_len, 1));
  hy_shape shape;
  if (!hy_file_read_at (file, dict, header_len, prefix, error)
      || !read_header (dict, header_len, prefix + header_len, size, path,
          &shape, error))
    return NULL;
  hy_tensor *t = hy_tensor_new (&shape);
  gsize n = (gsize) hy_shape_numel (&shape);
  if (!hy_file_read_at (file, t->data, n * sizeof (float),
          prefix + header_len, error)) {
    hy_tensor_free (t);
    return NULL;
  }
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  copy_le_floats (t->data, (const guint8 *) t->data, n);
#endif
  return t;
}

hy_tensor *
hy_npy_load (const char *path, GError **error)
{
  /* A directory, FIFO or device is refused by name (GLib would block on
   * a FIFO, and say "mmap() failed: No such device" for a directory). */
  g_autoptr (hy_file) file = hy_file_open (path, ".npy file", error);
  if (!file)
    return NULL;
  GError *load_error = NULL;
  hy_tensor *t = load_npy (file, &load_error);
  /* Keep no tensor read from a file that changed meanwhile: it may hold
   * old values and new. */
  if (!hy_file_end_read (file, load_error, error))
    g_clear_pointer (&t, hy_tensor_free);
  return t;
}

/* The header dict exactly as numpy 1.x writes it (keys sorted). */
static char *
header_dict (const hy_shape *shape)
{
  GString *s = g_string_new ("{'descr': '<f4', 'fortran_order': False, "
      "'shape': (");
  for (int i = 0; i < shape->ndim; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "",
        (gint64) shape->dims[i]);
  g_string_append (s, shape->ndim == 1 ? ",), }" : "), }");
  return g_string_free (s, FALSE);
}

GBytes *
hy_npy_write (const hy_tensor *tensor)
{
  /* An unknown shape has no data to write; it becomes an empty vector. */
  hy_shape shape = tensor->shape;
  if (shape.ndim < 0)
    shape = (hy_shape) { .ndim = 1, .dims = { 0 } };
  g_autofree char *dict = header_dict (&shape);
  gsize dict_len = strlen (dict);
  /* numpy pads with spaces then '\n' so the data starts on a 64-byte
   * boundary, and always adds at least one space. */
  gsize pad = NPY_ALIGN - (10 + dict_len + 1) % NPY_ALIGN;
  gsize header_len = dict_len + pad + 1;
  gsize numel = (gsize) hy_shape_numel (&shape);
  gsize total = 10 + header_len + numel * sizeof (float);

  guint8 *out = g_malloc (total);
  memcpy (out, NPY_MAGIC, NPY_MAGIC_LEN);
  out[6] = 1;
  out[7] = 0;
  out[8] = (guint8) (header_len & 0xff);
  out[9] = (guint8) (header_len >> 8);
  memcpy (out + 10, dict, dict_len);
  memset (out + 10 + dict_len, ' ', pad);
  out[10 + dict_len + pad] = '\n';
  guint8 *dst = out + 10 + header_len;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  if (numel)
    memcpy (dst, tensor->data, numel * sizeof (float));
#else
  for (gsize i = 0; i < numel; i++) {
    guint32 bits;
    memcpy (&bits, tensor->data + i, 4);
    bits = GUINT32_TO_LE (bits);
    memcpy (dst + 4 * i, &bits, 4);
  }
#endif
  return g_bytes_new_take (out, total);
}

gboolean
hy_npy_save (const hy_tensor *tensor, const char *path, GError **error)
{
  g_autoptr (GBytes) bytes = hy_npy_write (tensor);
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
