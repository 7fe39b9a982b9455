/*
 * attrs.c — parsing MXNet attribute strings (see attrs.h for the forms).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid.h"
#include "core/attrs.h"

static const char *
skip_space (const char *s)
{
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
    s++;
  return s;
}

/* Copies s without surrounding blanks into a new string. */
static char *
strip_dup (const char *s)
{
  return g_strstrip (g_strdup (s));
}

gboolean
hy_parse_int (const char *s, int64_t *out)
{
  g_autofree char *t = strip_dup (s);
  size_t len = strlen (t);
  if (len == 0)
    return FALSE;
  /* Python 2 wrote longs as "3L". */
  if (len > 1 && (t[len - 1] == 'L' || t[len - 1] == 'l'))
    t[--len] = '\0';
  char *end = NULL;
  errno = 0;
  long long v = strtoll (t, &end, 10);
  if (errno == 0 && end && *end == '\0') {
    *out = v;
    return TRUE;
  }
  /* "2.0" for an integer attribute: accept only exact integers. */
  double d;
  if (hy_parse_float (t, &d) && d > -9.2e18 && d < 9.2e18
      && d == (double) (int64_t) d) {
    *out = (int64_t) d;
    return TRUE;
  }
  return FALSE;
}

gboolean
hy_parse_float (const char *s, double *out)
{
  g_autofree char *t = strip_dup (s);
  if (*t == '\0')
    return FALSE;
  char *end = NULL;
  /* g_ascii_strtod is locale-independent and reads inf/nan/1e-05. */
  double v = g_ascii_strtod (t, &end);
  if (!end || *end != '\0')
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean
hy_parse_bool (const char *s, gboolean *out)
{
  g_autofree char *t = strip_dup (s);
  if (!strcmp (t, "True") || !strcmp (t, "true") || !strcmp (t, "1")) {
    *out = TRUE;
    return TRUE;
  }
  if (!strcmp (t, "False") || !strcmp (t, "false") || !strcmp (t, "0")) {
    *out = FALSE;
    return TRUE;
  }
  return FALSE;
}

/* The entries of "(a, b)", "[a,b]", "(a,)", "()" or a bare "a", each
 * stripped of blanks; an empty vector for "()"; NULL when the text is
 * empty or an entry is missing ("(,)", "(1,,2)"). */
static GStrv
tuple_entries (const char *s)
{
  g_autofree char *body = strip_dup (s);
  size_t len = strlen (body);
  char *p = body;
  if (len >= 2 && ((body[0] == '(' && body[len - 1] == ')')
          || (body[0] == '[' && body[len - 1] == ']'))) {
    body[len - 1] = '\0';
    p = body + 1;
  } else if (len == 0) {
    return NULL;
  }
  p = (char *) skip_space (p);
  if (*p == '\0')
    return g_new0 (char *, 1);  /* "()" */
  GStrv parts = g_strsplit (p, ",", -1);
  guint n = g_strv_length (parts);
  for (guint i = 0; i < n; i++) {
    g_strstrip (parts[i]);
    if (parts[i][0] != '\0')
      continue;
    /* Only a trailing comma may leave an empty entry: "(6,)". */
    if (i == n - 1 && i > 0) {
      g_free (parts[i]);
      parts[i] = NULL;
      break;
    }
    g_strfreev (parts);
    return NULL;
  }
  return parts;
}

gboolean
hy_parse_tuple (const char *s, hy_tuple *out, gboolean allow_none)
{
  hy_tuple t = { 0 };
  g_auto (GStrv) parts = tuple_entries (s);
  if (!parts)
    return FALSE;
  for (guint i = 0; parts[i]; i++) {
    if (t.n >= HY_MAX_TUPLE)
      return FALSE;
    if (!strcmp (parts[i], "None")) {
      if (!allow_none)
        return FALSE;
      t.none_mask |= 1u << t.n;
      t.v[t.n++] = 0;
      continue;
    }
    if (!hy_parse_int (parts[i], &t.v[t.n]))
      return FALSE;
    t.n++;
  }
  *out = t;
  return TRUE;
}

gboolean
hy_parse_float_tuple (const char *s, hy_float_tuple *out)
{
  hy_float_tuple t = { 0 };
  g_auto (GStrv) parts = tuple_entries (s);
  if (!parts)
    return FALSE;
  for (guint i = 0; parts[i]; i++) {
    if (t.n >= HY_MAX_TUPLE || !hy_parse_float (parts[i], &t.v[t.n]))
      return FALSE;
    t.n++;
  }
  *out = t;
  return TRUE;
}

const char *
hy_attr_string (GHashTable *attrs, const char *key)
{
  return attrs ? g_hash_table_lookup (attrs, key) : NULL;
}

gboolean
hy_attr_has (GHashTable *attrs, const char *key)
{
  return hy_attr_string (attrs, key) != NULL;
}

gboolean
hy_attr_require (GHashTable *attrs, const char *key, GError **error)
{
  if (hy_attr_has (attrs, key))
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "attribute '%s' is required", key);
  return FALSE;
}

gboolean
hy_attr_is_none (GHashTable *attrs, const char *key)
{
  const char *v = hy_attr_string (attrs, key);
  if (!v)
    return FALSE;
  g_autofree char *t = strip_dup (v);
  return strcmp (t, "None") == 0;
}

gboolean
hy_attr_int_in (GHashTable *attrs, const char *key, int64_t def, int64_t lo,
    int64_t hi, int *out, GError **error)
{
  int64_t v;
  if (!hy_attr_int (attrs, key, def, &v, error))
    return FALSE;
  if (v < lo || v > hi) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute '%s' = %" G_GINT64_FORMAT " is not in [%" G_GINT64_FORMAT
        ", %" G_GINT64_FORMAT "]", key, (gint64) v, (gint64) lo, (gint64) hi);
    return FALSE;
  }
  *out = (int) v;
  return TRUE;
}

static gboolean
bad_value (GError **error, const char *key, const char *value,
    const char *expected)
{
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "attribute '%s' = '%s' is not %s", key, value, expected);
  return FALSE;
}

gboolean
hy_attr_int (GHashTable *attrs, const char *key, int64_t def, int64_t *out,
    GError **error)
{
  const char *v = hy_attr_string (attrs, key);
  *out = def;
  if (!v)
    return TRUE;
  if (!hy_parse_int (v, out))
    return bad_value (error, key, v, "an integer");
  return TRUE;
}

gboolean
hy_attr_opt_int (GHashTable *attrs, const char *key, int64_t def,
    int64_t *out, gboolean *is_none, GError **error)
{
  const char *v = hy_attr_string (attrs, key);
  *out = def;
  *is_none = FALSE;
  if (!v)
    return TRUE;
  g_autofree char *t = strip_dup (v);
  if (!strcmp (t, "None")) {
    *is_none = TRUE;
    return TRUE;
  }
  if (!hy_parse_int (t, out))
    return bad_value (error, key, v, "an integer or None");
  return TRUE;
}

gboolean
hy_attr_float (GHashTable *attrs, const char *key, double def, double *out,
    GError **error)
{
  const char *v = hy_attr_string (attrs, key);
  *out = def;
  if (!v)
    return TRUE;
  if (!hy_parse_float (v, out))
    return bad_value (error, key, v, "a number");
  return TRUE;
}

gboolean
hy_attr_bool (GHashTable *attrs, const char *key, gboolean def,
    gboolean *out, GError **error)
{
  const char *v = hy_attr_string (attrs, key);
  *out = def;
  if (!v)
    return TRUE;
  if (!hy_parse_bool (v, out))
    return bad_value (error, key, v, "a boolean (True/False/1/0)");
  return TRUE;
}

gboolean
hy_attr_tuple (GHashTable *attrs, const char *key, hy_tuple *out,
    gboolean allow_none, GError **error)
{
  const char *v = hy_attr_string (attrs, key);
  if (!v)
    return TRUE;
  if (!hy_parse_tuple (v, out, allow_none))
    return bad_value (error, key, v, allow_none
        ? "a tuple of integers or None" : "a tuple of integers");
  return TRUE;
}

gboolean
hy_attr_float_tuple (GHashTable *attrs, const char *key, const char *def,
    hy_float_tuple *out, GError **error)
{
  const char *v = hy_attr_string (attrs, key);
  if (!v)
    v = def;
  if (!hy_parse_float_tuple (v, out))
    return bad_value (error, key, v, "a tuple of numbers");
  return TRUE;
}

gboolean
hy_attr_enum (GHashTable *attrs, const char *key, const char *const *choices,
    int def, int *out, GError **error)
{
  const char *v = hy_attr_string (attrs, key);
  *out = def;
  if (!v)
    return TRUE;
  g_autofree char *t = strip_dup (v);
  /* Python writes string attributes bare, but be lenient about quotes. */
  size_t len = strlen (t);
  if (len >= 2 && (t[0] == '\'' || t[0] == '"') && t[len - 1] == t[0]) {
    t[len - 1] = '\0';
    memmove (t, t + 1, len - 1);
  }
  for (int i = 0; choices[i]; i++) {
    if (!strcmp (t, choices[i])) {
      *out = i;
      return TRUE;
    }
  }
  g_autofree char *list = g_strjoinv ("|", (char **) choices);
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "attribute '%s' = '%s' is not one of %s", key, v, list);
  return FALSE;
}

static const char *const dtype_names[] = {
  [HY_DTYPE_FLOAT32] = "float32",
  [HY_DTYPE_FLOAT64] = "float64",
  [HY_DTYPE_FLOAT16] = "float16",
  [HY_DTYPE_UINT8] = "uint8",
  [HY_DTYPE_INT32] = "int32",
  [HY_DTYPE_INT8] = "int8",
  [HY_DTYPE_INT64] = "int64",
  [HY_DTYPE_BOOL] = "bool",
  [HY_DTYPE_INT16] = "int16",
  [HY_DTYPE_UINT16] = "uint16",
  [HY_DTYPE_UINT32] = "uint32",
  [HY_DTYPE_UINT64] = "uint64",
  [HY_DTYPE_BFLOAT16] = "bfloat16",
  NULL,
};

gboolean
hy_attr_dtype (GHashTable *attrs, const char *key, int def, int *out,
    GError **error)
{
  return hy_attr_enum (attrs, key, dtype_names, def, out, error);
}
