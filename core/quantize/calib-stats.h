/*
 * calib-stats.h — what calibration keeps of one tensor over the batches:
 * its range, and for entropy calibration the histogram MXNet 1.9.1's
 * _LayerHistogramCollector keeps (8001 bins over [-th, th], th the largest
 * magnitude seen, widened batch by batch as its combine_histogram does).
 * Not public.
 */
#ifndef HY_CALIB_STATS_H
#define HY_CALIB_STATS_H

#include <glib.h>

#define HY_CALIB_HIST_BINS 8001
/* Past this many bins a histogram is started again over the new range
 * (calib-stats.c, regrid): MXNet's would grow without bound. */
#define HY_CALIB_MAX_BINS (1 << 24)

typedef struct hy_calib_stats {
  gboolean seen;
  float min, max;
  /* entropy only: hist[n_bins] over [-th, th] */
  gint64 *hist;
  guint n_bins;
  double th;                    /* the histogram's range: ±th */
  float *edges;                 /* n_bins + 1, as numpy's (float32) */
} hy_calib_stats;

/* Adds one batch's values.  `histogram` also bins them. */
void hy_calib_stats_add (hy_calib_stats *s, const float *x, gint64 n,
    gboolean histogram);
void hy_calib_stats_clear (hy_calib_stats *s);

/* MXNet's calibrate_entropy over the histogram: the threshold of least KL
 * divergence between the fp32 distribution and its quantized form with
 * `num_quantized_bins` levels (255; 511 for a non-negative tensor made
 * uint8). */
float hy_calib_entropy_threshold (const hy_calib_stats *s,
    int num_quantized_bins);

#endif /* HY_CALIB_STATS_H */
