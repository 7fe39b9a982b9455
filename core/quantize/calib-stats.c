/*
 * calib-stats.c — a tensor's range and histogram over calibration batches,
 * binned exactly as numpy.histogram bins MXNet's collector's arrays, so
 * that the entropy threshold is found on the same counts MXNet finds it on.
 */
#include <math.h>
#include <string.h>

#include "core/quantize/calib-stats.h"

void
hy_calib_stats_clear (hy_calib_stats *s)
{
  g_free (s->hist);
  g_free (s->edges);
  memset (s, 0, sizeof *s);
}

/* numpy.linspace(-th, th, n + 1) computed in float64 and stored as float32
 * (the histogram's dtype is the array's, float32), the last edge exact. */
static float *
make_edges (double th, guint n_bins)
{
  float *e = g_new (float, n_bins + 1);
  double lo = -th, step = (th - lo) / n_bins;
  for (guint k = 0; k <= n_bins; k++)
    e[k] = (float) (k * step + lo);
  e[n_bins] = (float) th;
  return e;
}

/* numpy.histogram's uniform-bin path: an index from float32 arithmetic,
 * then moved by one where the float32 edges say otherwise. */
static void
bin_values (gint64 *hist, const float *edges, guint n_bins, const float *x,
    gint64 n)
{
  float lo = edges[0], hi = edges[n_bins];
  float norm = (float) ((double) n_bins / (double) (hi - lo));
  for (gint64 i = 0; i < n; i++) {
    float v = x[i];
    if (!(v >= lo && v <= hi))  /* NaN too */
      continue;
    float offset = v - lo;
    float f = offset * norm;
    /* a range of denormals makes norm infinite: never convert a NaN or
     * an infinity to an integer */
    gint64 k = !(f >= 0) ? 0 : f >= (float) n_bins ? (gint64) n_bins - 1
        : (gint64) f;
    if (k > 0 && v < edges[k])
      k--;
    if (k < (gint64) n_bins - 1 && v >= edges[k + 1])
      k++;
    hist[k]++;
  }
}

/* A batch far wider than the histogram (a first batch of zeros, then
 * real data) would widen it by whole old bins into billions of them,
 * which MXNet would try to allocate: start a histogram of the usual size
 * over the new range instead, each old bin's count moved to the new bin
 * of its centre. */
static void
regrid (hy_calib_stats *s, double th)
{
  guint n_bins = HY_CALIB_HIST_BINS;
  gint64 *hist = g_new0 (gint64, n_bins);
  double old_step = 2.0 * s->th / s->n_bins, step = 2.0 * th / n_bins;
  for (guint k = 0; k < s->n_bins; k++) {
    double centre = -s->th + (k + 0.5) * old_step;
    double j = floor ((centre + th) / step);
    hist[j < 0 ? 0 : j >= n_bins ? n_bins - 1 : (guint) j] += s->hist[k];
  }
  g_free (s->hist);
  g_free (s->edges);
  s->hist = hist;
  s->n_bins = n_bins;
  s->th = th;
  s->edges = make_edges (th, n_bins);
}

static void
add_histogram (hy_calib_stats *s, const float *x, gint64 n, float bmin,
    float bmax)
{
  double th = MAX (fabsf (bmin), fabsf (bmax));
  if (th == 0)
    th = 0.5;                   /* numpy widens an empty range by ±0.5 */
  if (!s->hist) {
    s->n_bins = HY_CALIB_HIST_BINS;
    s->hist = g_new0 (gint64, s->n_bins);
    s->th = th;
    s->edges = make_edges (th, s->n_bins);
    bin_values (s->hist, s->edges, s->n_bins, x, n);
    return;
  }
  if (th <= s->th) {
    bin_values (s->hist, s->edges, s->n_bins, x, n);
    return;
  }
  /* combine_histogram: widen by whole old bins on each side, re-bin this
   * batch over the wider range and add the old counts in the middle. */
  double old_step = 2.0 * s->th / s->n_bins;
  double half_d = floor ((th - s->th) / old_step) + 1;
  if (!(half_d <= HY_CALIB_MAX_BINS / 2)) {
    regrid (s, th);
    bin_values (s->hist, s->edges, s->n_bins, x, n);
    return;
  }
  gint64 half = (gint64) half_d;
  guint n_bins = (guint) (half * 2 + s->n_bins);
  double new_th = half * old_step + s->th;
  gint64 *hist = g_new0 (gint64, n_bins);
  float *edges = make_edges (new_th, n_bins);
  bin_values (hist, edges, n_bins, x, n);
  for (guint k = 0; k < s->n_bins; k++)
    hist[half + k] += s->hist[k];
  g_free (s->hist);
  g_free (s->edges);
  s->hist = hist;
  s->edges = edges;
  s->n_bins = n_bins;
  s->th = new_th;
}

void
hy_calib_stats_add (hy_calib_stats *s, const float *x, gint64 n,
    gboolean histogram)
{
  float bmin = INFINITY, bmax = -INFINITY;
  for (gint64 i = 0; i < n; i++) {
    if (!isfinite (x[i]))
      continue;
    bmin = MIN (bmin, x[i]);
    bmax = MAX (bmax, x[i]);
  }
  if (bmin > bmax)
    return;                     /* nothing finite in this batch */
  if (!s->seen) {
    s->min = bmin;
    s->max = bmax;
    s->seen = TRUE;
  } else {
    s->min = MIN (s->min, bmin);
    s->max = MAX (s->max, bmax);
  }
  if (histogram)
    add_histogram (s, x, n, bmin, bmax);
}
