/*
 * nn-common.h — checks the nn op families share: (y, x)-style tuples that
 * must match the kernel's length, sliding windows that must fit their
 * input, and weight shapes that must be exactly what the attributes say.
 */
#ifndef HY_NN_COMMON_H
#define HY_NN_COMMON_H

#include <glib.h>

#include "hybrid.h"
#include "core/attrs.h"
#include "kernels/params/nn.h"
#include "core/shape-learn.h"

/* Bound on kernel, stride, dilate and pad entries: far beyond any real
 * layer, and small enough that window arithmetic cannot overflow. */
#define HY_NN_MAX_WINDOW (1 << 30)

/* Reads tuple attribute `key` into out[0..n).  Absent: every entry is
 * `def`.  Present: it must have exactly n entries, each >= min (MXNet
 * indexes these tuples by the kernel's axes, so a shorter one is an
 * error there too). */
static inline gboolean
hy_nn_spatial_attr (GHashTable *attrs, const char *key, int n, int64_t min,
    int64_t def, int64_t *out, GError **error)
{
  for (int i = 0; i < n; i++)
    out[i] = def;
  if (!hy_attr_has (attrs, key))
    return TRUE;
  hy_tuple t = { 0 };
  if (!hy_attr_tuple (attrs, key, &t, FALSE, error))
    return FALSE;
  if (t.n != n) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute '%s' = '%s' has %d entries; expected %d like 'kernel'",
        key, hy_attr_string (attrs, key), t.n, n);
    return FALSE;
  }
  for (int i = 0; i < n; i++) {
    if (t.v[i] < min || t.v[i] > HY_NN_MAX_WINDOW) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute '%s' = '%s': entries must be in [%" G_GINT64_FORMAT
          ", %d]", key, hy_attr_string (attrs, key), (gint64) min,
          HY_NN_MAX_WINDOW);
      return FALSE;
    }
    out[i] = t.v[i];
  }
  return TRUE;
}

/* Reads the required `kernel` tuple: 1 to HY_NN_MAX_SPATIAL positive
 * entries.  Returns the entry count, 0 when absent (the caller decides
 * whether that is an error), -1 on a bad value. */
static inline int
hy_nn_kernel_attr (GHashTable *attrs, int64_t *kernel, GError **error)
{
  if (!hy_attr_has (attrs, "kernel"))
    return 0;
  hy_tuple t = { 0 };
  if (!hy_attr_tuple (attrs, "kernel", &t, FALSE, error))
    return -1;
  if (t.n < 1 || t.n > HY_NN_MAX_SPATIAL) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "attribute 'kernel' = '%s' has %d entries; expected 1 to %d "
        "(x), (y, x) or (d, y, x)", hy_attr_string (attrs, "kernel"), t.n,
        HY_NN_MAX_SPATIAL);
    return -1;
  }
  for (int i = 0; i < t.n; i++) {
    if (t.v[i] < 1 || t.v[i] > HY_NN_MAX_WINDOW) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "attribute 'kernel' = '%s': entries must be in [1, %d]",
          hy_attr_string (attrs, "kernel"), HY_NN_MAX_WINDOW);
      return -1;
    }
    kernel[i] = t.v[i];
  }
  return t.n;
}

/* Checks that a window of `extent` (the dilated kernel size) fits in
 * `size` padded by `pad` on both sides. */
static inline gboolean
hy_nn_window_fits (int64_t size, int64_t pad, int64_t extent, int axis,
    GError **error)
{
  if (extent <= size + 2 * pad)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "kernel extent %" G_GINT64_FORMAT " exceeds input size %"
      G_GINT64_FORMAT " (padded to %" G_GINT64_FORMAT ") on spatial axis %d",
      (gint64) extent, (gint64) size, (gint64) (size + 2 * pad), axis);
  return FALSE;
}

/* Count attribute `key` (default `def`; num_group, num_deformable_group…)
 * in [1, max]: the bound keeps the kernels' int arithmetic from
 * overflowing on a hostile file. */
static inline gboolean
hy_nn_count_attr (GHashTable *attrs, const char *key, int64_t def,
    int64_t max, int64_t *out, GError **error)
{
  if (!hy_attr_int (attrs, key, def, out, error))
    return FALSE;
  if (*out >= 1 && *out <= max)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "attribute '%s' = '%s' must be in [1, %" G_GINT64_FORMAT "]", key,
      hy_attr_string (attrs, key), (gint64) max);
  return FALSE;
}

/* num_filter (required) and num_group (default 1), each in [1, max], the
 * filters split evenly over the groups. */
static inline gboolean
hy_nn_filters_attr (GHashTable *attrs, int64_t max, int64_t *num_filter,
    int64_t *num_group, GError **error)
{
  if (!hy_attr_require (attrs, "num_filter", error)
      || !hy_nn_count_attr (attrs, "num_filter", 0, max, num_filter, error)
      || !hy_nn_count_attr (attrs, "num_group", 1, max, num_group, error))
    return FALSE;
  if (*num_filter % *num_group == 0)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "attribute 'num_filter' = %" G_GINT64_FORMAT " is not divisible by "
      "'num_group' = %" G_GINT64_FORMAT, (gint64) *num_filter,
      (gint64) *num_group);
  return FALSE;
}

/* `what` ("weight", "bias", …) must have exactly shape `want`.  A weight
 * whose shape is not known yet (a model loaded without its weights) takes
 * `want`, as MXNet infers weight shapes backwards from the op. */
static inline gboolean
hy_nn_expect_shape (const hy_shape *got, const hy_shape *want,
    const char *what, GError **error)
{
  if (hy_shape_equal (got, want) || hy_shape_learn (got, want))
    return TRUE;
  char g[HY_SHAPE_STRLEN], w[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE, "%s has shape %s; expected %s",
      what, hy_shape_format (got, g, sizeof g),
      hy_shape_format (want, w, sizeof w));
  return FALSE;
}

#endif /* HY_NN_COMMON_H */
