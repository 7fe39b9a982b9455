/*
 * registry.c — the op table: ids, names and aliases from ops.def joined with
 * the op definitions in core/ops/.
 *
 * Every HY_OP family's definition is a strong reference (a missing one
 * fails the link); HY_OP_KNOWN ops have none: "known but not implemented"
 * (def == NULL), which the loader reports by node name.
 */
#include <stdio.h>
#include <string.h>

#include "hybrid.h"
#include "core/op.h"

#define HY_OP(id, family, name, aliases) \
  extern const hy_op_def hy_opdef_##family;
#define HY_OP_KNOWN(id, family, name, aliases)
#include "kernels/ops.def"
#undef HY_OP_KNOWN
#undef HY_OP

static const hy_op_info op_table[HY_OP_COUNT] = {
#define HY_OP(id, family, name, aliases) \
  [HY_OP_##id] = {HY_OP_##id, name, aliases, #family, &hy_opdef_##family},
#define HY_OP_KNOWN(id, family, name, aliases) \
  [HY_OP_##id] = {HY_OP_##id, name, aliases, #family, NULL},
#include "kernels/ops.def"
#undef HY_OP_KNOWN
#undef HY_OP
};

static GHashTable *
name_index (void)
{
  static gsize once = 0;
  static GHashTable *index;
  if (g_once_init_enter (&once)) {
    GHashTable *t = g_hash_table_new (g_str_hash, g_str_equal);
    for (int i = 0; i < HY_OP_COUNT; i++) {
      const hy_op_info *info = &op_table[i];
      g_hash_table_insert (t, (char *) info->name, (gpointer) info);
      g_auto (GStrv) aliases = g_strsplit (info->aliases, ",", -1);
      for (int a = 0; aliases[a]; a++) {
        if (aliases[a][0] == '\0')
          continue;
        /* Keys must outlive the table: intern them. */
        g_hash_table_insert (t, (char *) g_intern_string (aliases[a]),
            (gpointer) info);
      }
    }
    index = t;
    g_once_init_leave (&once, 1);
  }
  return index;
}

const hy_op_info *
hy_op_lookup (const char *name)
{
  return g_hash_table_lookup (name_index (), name);
}

const hy_op_info *
hy_op_info_get (hy_op_id id)
{
  if ((int) id < 0 || id >= HY_OP_COUNT)
    return NULL;
  return &op_table[id];
}

int
hy_op_num_inputs (const hy_op_info *op, const void *params)
{
  const hy_op_def *def = op->def;
  if (def->num_inputs)
    return def->num_inputs (params);
  int n = 0;
  while (def->input_names && def->input_names[n])
    n++;
  return n;
}

int
hy_op_num_outputs (const hy_op_info *op, const void *params)
{
  return op->def->num_outputs ? op->def->num_outputs (params) : 1;
}

const char *
hy_op_input_name (const hy_op_info *op, const void *params, int i,
    char *buf, size_t size)
{
  const hy_op_def *def = op->def;
  const char *named = def->input_name && params ? def->input_name (params, i)
      : NULL;
  if (named)
    return named;
  if (def->input_names) {
    for (int k = 0; def->input_names[k]; k++)
      if (k == i)
        return def->input_names[k];
  }
  snprintf (buf, size, "arg%d", i);
  return buf;
}

void *
hy_op_params_new (const hy_op_info *op, GHashTable *attrs, GError **error)
{
  g_assert (op->def && op->def->params_size >= sizeof (hy_op_id));
  void *params = g_malloc0 (op->def->params_size);
  *(hy_op_id *) params = op->id;
  if (op->def->parse && !op->def->parse (attrs, params, error)) {
    g_free (params);
    return NULL;
  }
  return params;
}

gboolean
hy_shape_expect_rank (const hy_shape *s, int ndim, const char *what,
    GError **error)
{
  if (s->ndim == ndim)
    return TRUE;
  char buf[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "%s must have %d dimensions, got shape %s", what, ndim,
      hy_shape_format (s, buf, sizeof buf));
  return FALSE;
}

gboolean
hy_broadcast_shapes (const hy_shape *a, const hy_shape *b, hy_shape *out,
    GError **error)
{
  int nd = MAX (a->ndim, b->ndim);
  hy_shape r = { .ndim = nd };
  for (int i = 0; i < nd; i++) {
    int ia = a->ndim - nd + i, ib = b->ndim - nd + i;
    int64_t da = ia >= 0 ? a->dims[ia] : 1;
    int64_t db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char sa[HY_SHAPE_STRLEN], sb[HY_SHAPE_STRLEN];
      g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
          "shapes %s and %s do not broadcast (axis %d: %" G_GINT64_FORMAT
          " vs %" G_GINT64_FORMAT ")", hy_shape_format (a, sa, sizeof sa),
          hy_shape_format (b, sb, sizeof sb), i, (gint64) da, (gint64) db);
      return FALSE;
    }
    r.dims[i] = da == 1 ? db : da;
  }
  *out = r;
  return TRUE;
}

gboolean
hy_axis_normalize (int64_t axis, int ndim, int *out)
{
  if (axis < -ndim || axis >= ndim)
    return FALSE;
  *out = (int) (axis < 0 ? axis + ndim : axis);
  return TRUE;
}
