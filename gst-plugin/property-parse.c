/*
 * property-parse.c — parsing hybridinfer's text property values.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid.h"
#include "hybrid-sidecar.h"
#include "property-parse.h"

/* the bound a sidecar's input_size checks too */
#define MAX_SIDE HY_MAX_INPUT_SIDE

static gboolean
parse_side (const char *s, char **end, int *out)
{
  while (g_ascii_isspace (*s))
    s++;
  if (!g_ascii_isdigit (*s))
    return FALSE;
  errno = 0;
  guint64 v = g_ascii_strtoull (s, end, 10);
  if (errno || v < 1 || v > MAX_SIDE)
    return FALSE;
  *out = (int) v;
  return TRUE;
}

gboolean
hyg_parse_size (const char *text, int *width, int *height, GError **error)
{
  char *end = NULL;
  int w, h;
  const char *s = text ? text : "";
  if (!parse_side (s, &end, &w))
    goto bad;
  s = end;
  while (g_ascii_isspace (*s))
    s++;
  if (*s == 'x' || *s == 'X')
    s++;
  else if (g_str_has_prefix (s, "\xc3\x97"))      /* U+00D7 × */
    s += 2;
  else
    goto bad;
  if (!parse_side (s, &end, &h))
    goto bad;
  s = end;
  while (g_ascii_isspace (*s))
    s++;
  if (*s)
    goto bad;
  *width = w;
  *height = h;
  return TRUE;

bad:
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "input-size '%s' is not WxH with W and H from 1 to %d (e.g. 224x224)",
      text ? text : "", MAX_SIDE);
  return FALSE;
}

typedef struct frame_range {
  guint64 first, last;          /* inclusive */
} frame_range;

struct hyg_frame_set {
  GArray *ranges;               /* empty: every frame */
};

static gboolean
parse_number (const char **s, guint64 *out)
{
  char *end = NULL;
  while (g_ascii_isspace (**s))
    (*s)++;
  if (!g_ascii_isdigit (**s))
    return FALSE;
  errno = 0;
  *out = g_ascii_strtoull (*s, &end, 10);
  if (errno)
    return FALSE;
  *s = end;
  while (g_ascii_isspace (**s))
    (*s)++;
  return TRUE;
}

hyg_frame_set *
hyg_frame_set_parse (const char *text, GError **error)
{
  hyg_frame_set *set = g_new0 (hyg_frame_set, 1);
  set->ranges = g_array_new (FALSE, FALSE, sizeof (frame_range));
  if (!text || !*text)
    return set;
  const char *s = text;
  for (;;) {
    frame_range r;
    if (!parse_number (&s, &r.first))
      goto bad;
    r.last = r.first;
    if (*s == '-') {
      s++;
      while (g_ascii_isspace (*s))
        s++;
      if (*s == ',' || !*s)
        r.last = G_MAXUINT64;
      else if (!parse_number (&s, &r.last) || r.last < r.first)
        goto bad;
    }
    g_array_append_val (set->ranges, r);
    if (!*s)
      return set;
    if (*s != ',')
      goto bad;
    s++;
  }

bad:
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "dump-frames '%s' is not a list of frame numbers and ranges "
      "(e.g. 0-9,100,250-)", text);
  hyg_frame_set_free (set);
  return NULL;
}

gboolean
hyg_frame_set_contains (const hyg_frame_set *set, guint64 frame)
{
  if (set->ranges->len == 0)
    return TRUE;
  for (guint i = 0; i < set->ranges->len; i++) {
    const frame_range *r = &g_array_index (set->ranges, frame_range, i);
    if (frame >= r->first && frame <= r->last)
      return TRUE;
  }
  return FALSE;
}

void
hyg_frame_set_free (hyg_frame_set *set)
{
  if (!set)
    return;
  g_array_unref (set->ranges);
  g_free (set);
}

char **
hyg_strv_pack (const char *const *strv, gssize n)
{
  gsize count = n >= 0 ? (gsize) n : g_strv_length ((gchar **) strv);
  gsize text = 0;
  for (gsize i = 0; i < count; i++)
    text += strlen (strv[i]) + 1;
  gsize table = (count + 1) * sizeof (char *);
  char **out = g_malloc (table + MAX (text, 1));
  char *at = (char *) out + table;
  for (gsize i = 0; i < count; i++) {
    gsize len = strlen (strv[i]) + 1;
    memcpy (at, strv[i], len);
    out[i] = at;
    at += len;
  }
  out[count] = NULL;
  return out;
}

/* Lines of `text` (len bytes, NUL after them) as a packed string vector
 * made from the text's own buffer (taken): the table of pointers is put
 * in front of the text, so a labels file costs its size plus a pointer
 * per line, and one allocation. */
static char **
lines_pack (char *text, gsize len, guint *n_lines)
{
  gsize n = len ? 1 : 0;
  for (gsize i = 0; i < len; i++)
    n += text[i] == '\n';
  gsize table = (n + 1) * sizeof (char *);
  char **lines = g_realloc (text, table + len + 1);
  char *at = memmove ((char *) lines + table, lines, len + 1);
  for (gsize i = 0; i < n; i++) {
    char *end = strchr (at, '\n');
    if (end)
      *end = '\0';
    lines[i] = g_strchomp (at);   /* also drops the \r of CRLF files */
    at = end ? end + 1 : at;
  }
  lines[n] = NULL;
  *n_lines = (guint) n;
  return lines;
}

char **
hyg_labels_load (const char *path, guint *n_labels, GError **error)
{
  char *text = NULL;
  gsize len = 0;
  /* labels=/dev/zero or a FIFO must fail the start, not grow without end
   * or block it. */
  if (!hy_file_read_bounded (path, "labels file", HYG_LABELS_MAX_BYTES, &text,
          &len, error))
    return NULL;
  if (!g_utf8_validate (text, (gssize) len, NULL)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "labels file %s is not UTF-8 text", path);
    g_free (text);
    return NULL;
  }
  /* A final newline ends the last label rather than starting one more. */
  if (len && text[len - 1] == '\n')
    text[--len] = '\0';
  return lines_pack (text, len, n_labels);
}

/* The class an entry's key names: the label it equals (the first, as
 * lines of the labels file), else the id it spells; -1 when neither. */
static int
class_of (const char *key, const char *const *labels, guint n_labels)
{
  for (guint i = 0; labels && i < n_labels; i++)
    if (labels[i] && strcmp (labels[i], key) == 0)
      return (int) i;
  if (!*key)
    return -1;
  for (const char *c = key; *c; c++)
    if (!g_ascii_isdigit (*c))
      return -1;
  errno = 0;
  guint64 id = g_ascii_strtoull (key, NULL, 10);
  return errno || id > G_MAXINT ? -1 : (int) id;
}

static gboolean
parse_entry (const char *text, char *entry, const char *const *labels,
    guint n_labels, hyg_class_thresholds *out, GError **error)
{
  char *eq = strrchr (entry, '=');
  if (!eq) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "class-thresholds "
        "'%s': entry '%s' is not CLASS=SCORE (e.g. person=0.6,car=0.4)",
        text, g_strstrip (entry));
    return FALSE;
  }
  *eq = '\0';
  char *key = g_strstrip (entry), *value = g_strstrip (eq + 1), *end = NULL;
  errno = 0;
  double score = *value ? g_ascii_strtod (value, &end) : NAN;
  if (!end || *end || errno || !isfinite (score) || fabs (score) > G_MAXFLOAT) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "class-thresholds "
        "'%s': the score of '%s', '%s', is not a number within float "
        "range", text, key, value);
    return FALSE;
  }
  int id = class_of (key, labels, n_labels);
  if (id < 0) {
    if (labels)
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "class-thresholds "
          "'%s': '%s' is none of the model's %u labels, nor a class id",
          text, key, n_labels);
    else
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "class-thresholds "
          "'%s': '%s' is not a class id, and the model has no labels to "
          "look it up in (labels)", text, key);
    return FALSE;
  }
  for (guint i = 0; i < out->n; i++)
    if (out->class_ids[i] == id) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "class-thresholds "
          "'%s': class %d ('%s') is given twice", text, id, key);
      return FALSE;
    }
  if (out->n == HYG_CLASS_THRESHOLDS_MAX) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "class-thresholds "
        "'%s': more than %d classes", text, HYG_CLASS_THRESHOLDS_MAX);
    return FALSE;
  }
  out->class_ids[out->n] = id;
  out->thresholds[out->n] = (float) score;
  out->n++;
  return TRUE;
}

gboolean
hyg_class_thresholds_parse (const char *text, const char *const *labels,
    guint n_labels, hyg_class_thresholds *out, GError **error)
{
  out->n = 0;
  if (!text || !*text)
    return TRUE;
  char **entries = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;
  for (char **e = entries; ok && *e; e++)
    ok = parse_entry (text, *e, labels, n_labels, out, error);
  g_strfreev (entries);
  if (!ok)
    out->n = 0;
  return ok;
}
