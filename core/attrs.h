/*
 * attrs.h — reading MXNet attribute strings.
 *
 * Attributes arrive as a string → string map (GHashTable) exactly as the
 * symbol file wrote them.  MXNet writes only the keyword arguments that
 * were passed, so every getter takes the op's own default.  Values use
 * Python's spellings: tuples "(3, 3)", "[3,3]", "(6,)", "()", a bare "3";
 * optional entries "None"; booleans True/False/true/false/1/0; floats as
 * Python prints them ("1e-05", "inf").
 *
 * Errors name the attribute and the bad value; the caller prefixes the
 * node and op (see op.h).
 */
#ifndef HY_ATTRS_H
#define HY_ATTRS_H

#include <glib.h>
#include <stdint.h>

#define HY_MAX_TUPLE 16

typedef struct hy_tuple {
  int n;
  int64_t v[HY_MAX_TUPLE];
  guint32 none_mask;            /* bit i set: entry i was "None" */
} hy_tuple;

typedef struct hy_float_tuple {
  int n;
  double v[HY_MAX_TUPLE];
} hy_float_tuple;

gboolean hy_attr_int (GHashTable *attrs, const char *key, int64_t def,
    int64_t *out, GError **error);
/* "None" (or absent) sets *is_none and leaves *out = def. */
gboolean hy_attr_opt_int (GHashTable *attrs, const char *key, int64_t def,
    int64_t *out, gboolean *is_none, GError **error);
gboolean hy_attr_float (GHashTable *attrs, const char *key, double def,
    double *out, GError **error);
gboolean hy_attr_bool (GHashTable *attrs, const char *key, gboolean def,
    gboolean *out, GError **error);
/* Absent leaves *out as given (callers pre-fill the default). Entries may be
 * "None" only if allow_none. */
gboolean hy_attr_tuple (GHashTable *attrs, const char *key, hy_tuple *out,
    gboolean allow_none, GError **error);
/* A tuple of numbers ("(0.1, 0.1, 0.2, 0.2)", "[1]", a bare "0.5"), at
 * most HY_MAX_TUPLE of them; absent: `def`, written the same way (MXNet's
 * default as its docs print it). */
gboolean hy_attr_float_tuple (GHashTable *attrs, const char *key,
    const char *def, hy_float_tuple *out, GError **error);
/* One of `choices` (NULL-terminated); *out is its index. */
gboolean hy_attr_enum (GHashTable *attrs, const char *key,
    const char *const *choices, int def, int *out, GError **error);
/* A dtype name ("float32", "int32", …) as an hy_dtype code. */
gboolean hy_attr_dtype (GHashTable *attrs, const char *key, int def,
    int *out, GError **error);
const char *hy_attr_string (GHashTable *attrs, const char *key);
gboolean hy_attr_has (GHashTable *attrs, const char *key);
/* FALSE + "attribute 'key' is required" when the key is absent. */
gboolean hy_attr_require (GHashTable *attrs, const char *key, GError **error);
/* The value is MXNet's "None" (an empty optional). */
gboolean hy_attr_is_none (GHashTable *attrs, const char *key);
/* An integer attribute that must lie in [lo, hi]. */
gboolean hy_attr_int_in (GHashTable *attrs, const char *key, int64_t def,
    int64_t lo, int64_t hi, int *out, GError **error);

/* The parsers behind the getters, for callers holding a bare string. */
gboolean hy_parse_int (const char *s, int64_t *out);
gboolean hy_parse_float (const char *s, double *out);
gboolean hy_parse_bool (const char *s, gboolean *out);
gboolean hy_parse_tuple (const char *s, hy_tuple *out, gboolean allow_none);
gboolean hy_parse_float_tuple (const char *s, hy_float_tuple *out);

#endif /* HY_ATTRS_H */
