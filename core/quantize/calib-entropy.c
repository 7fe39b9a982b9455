/*
 * calib-entropy.c — the KL-divergence threshold search of MXNet 1.9.1's
 * calibrate_entropy operator, step for step and in its float32 arithmetic:
 * for every candidate threshold (a symmetric slice of the histogram, the
 * outliers folded into its end bins), merge the slice into the quantized
 * bins, expand them back over the slice's non-empty bins, smooth both
 * distributions and measure their divergence; the least wins.
 */
#include <math.h>
#include <string.h>

#include "core/quantize/calib-stats.h"

/* MXNet's SmoothDistribution: eps moved onto the empty bins, taken evenly
 * from the others.  FALSE where it cannot be (all empty, or eps too big). */
static gboolean
smooth (float *p, guint n)
{
  const float eps = 0.0001f;
  guint n_zeros = 0;
  for (guint i = 0; i < n; i++)
    n_zeros += p[i] == 0;
  guint n_nonzeros = n - n_zeros;
  if (!n_nonzeros)
    return FALSE;
  float eps1 = eps * (float) n_zeros / (float) n_nonzeros;
  if (eps1 >= 1.0f)
    return FALSE;
  for (guint i = 0; i < n; i++)
    p[i] += p[i] == 0 ? eps : -eps1;
  return TRUE;
}

static float
divergence_of (float *p, float *q, guint n)
{
  float p_sum = 0, q_sum = 0;
  for (guint i = 0; i < n; i++) {
    p_sum += p[i];
    q_sum += q[i];
  }
  float ret = 0;
  for (guint i = 0; i < n; i++) {
    float pi = p[i] / p_sum, qi = q[i] / q_sum;
    if (pi > 0 && qi > 0)
      ret += pi * logf (pi / qi);
  }
  return ret;
}

float
hy_calib_entropy_threshold (const hy_calib_stats *s, int num_quantized_bins)
{
  guint num_bins = s->n_bins;
  int zero_bin = (int) num_bins / 2;
  int half_q = num_quantized_bins / 2;
  if (!s->hist || zero_bin < half_q)
    return s->hist ? s->edges[num_bins] : 0;
  float *hist = g_new (float, num_bins);
  for (guint j = 0; j < num_bins; j++)
    hist[j] = (float) s->hist[j];     /* MXNet reads the counts as float32 */
  guint width_max = num_bins;
  float *p = g_new (float, width_max);
  float *q = g_new (float, width_max);
  gint64 *sliced = g_new (gint64, width_max);
  float *merged = g_new (float, num_quantized_bins);
  float best = INFINITY, best_th = s->edges[num_bins];
  gboolean any = FALSE;

  for (int i = half_q; i <= zero_bin; i++) {
    guint start = (guint) (zero_bin - i), stop = (guint) (zero_bin + i + 1);
    guint width = stop - start;
    float th = s->edges[stop];
    memset (p, 0, width * sizeof *p);
    memset (sliced, 0, width * sizeof *sliced);
    for (guint j = 0; j < num_bins; j++) {
      if (j <= start)
        p[0] += hist[j];
      else if (j >= stop)
        p[width - 1] += hist[j];
      else {
        sliced[j - start] = (gint64) hist[j];
        p[j - start] = hist[j];
      }
    }
    guint per = width / (guint) num_quantized_bins;
    for (int j = 0; j < num_quantized_bins; j++) {
      gint64 sum = 0;
      for (guint k = j * per; k < (j + 1) * per; k++)
        sum += sliced[k];
      merged[j] = (float) sum;
    }
    gint64 rest = 0;
    for (guint k = num_quantized_bins * per; k < width; k++)
      rest += sliced[k];
    merged[num_quantized_bins - 1] += (float) rest;
    memset (q, 0, width * sizeof *q);
    for (int j = 0; j < num_quantized_bins; j++) {
      guint k0 = j * per;
      guint k1 = j == num_quantized_bins - 1 ? width : (j + 1) * per;
      int norm = 0;
      for (guint k = k0; k < k1; k++)
        norm += sliced[k] != 0;
      if (norm)
        for (guint k = k0; k < k1; k++)
          if (p[k] != 0)
            q[k] = merged[j] / (float) norm;
    }
    float d;
    if (!smooth (p, width) || !smooth (q, width))
      d = INFINITY;
    else
      d = divergence_of (p, q, width);
    /* the first least one wins, as MXNet's strict < keeps it */
    if (!any || d < best) {
      best = d;
      best_th = th;
      any = TRUE;
    }
  }
  g_free (hist);
  g_free (p);
  g_free (q);
  g_free (sliced);
  g_free (merged);
  return best_th;
}
