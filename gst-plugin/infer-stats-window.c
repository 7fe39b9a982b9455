/*
 * infer-stats-window.c — a stats-interval's counts and latency histogram.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "infer-stats-window.h"

#define BUCKETS_PER_OCTAVE 8

void
gst_hybrid_stats_window_reset (GstHybridStatsWindow * w, gint64 now_us)
{
  memset (w, 0, sizeof *w);
  w->start_us = now_us;
}

void
gst_hybrid_stats_window_add_latency (GstHybridStatsWindow * w,
    gdouble latency_us)
{
  /* below 1 µs counts as 1 µs: no frame is that fast, and log2 needs it */
  gdouble octaves = log2 (MAX (latency_us, 1.0));
  gint bucket = (gint) (octaves * BUCKETS_PER_OCTAVE);
  w->latency[CLAMP (bucket, 0, GST_HYBRID_STATS_BUCKETS - 1)]++;
}

gdouble
gst_hybrid_stats_window_percentile (const GstHybridStatsWindow * w,
    gdouble fraction)
{
  guint64 total = 0, seen = 0;
  for (guint i = 0; i < GST_HYBRID_STATS_BUCKETS; i++)
    total += w->latency[i];
  if (!total)
    return 0;
  /* the rank of the frame asked for, 1-based: p50 of 2 frames is the
   * first, p99 of 100 the 99th */
  guint64 rank = (guint64) ceil (fraction * (gdouble) total);
  rank = CLAMP (rank, 1, total);
  for (guint i = 0; i < GST_HYBRID_STATS_BUCKETS; i++) {
    seen += w->latency[i];
    if (seen >= rank)
      return exp2 ((gdouble) (i + 1) / BUCKETS_PER_OCTAVE);
  }
  return exp2 ((gdouble) GST_HYBRID_STATS_BUCKETS / BUCKETS_PER_OCTAVE);
}

GstStructure *
gst_hybrid_stats_window_to_structure (const GstHybridStatsWindow * w,
    gint64 now_us)
{
  gdouble seconds = MAX (now_us - w->start_us, 1) / 1e6;
  return gst_structure_new ("hybridinfer-stats",
      "fps-in", G_TYPE_DOUBLE, (gdouble) w->frames_in / seconds,
      "fps-inferred", G_TYPE_DOUBLE, (gdouble) w->frames_inferred / seconds,
      "latency-p50-us", G_TYPE_DOUBLE,
      gst_hybrid_stats_window_percentile (w, 0.50),
      "latency-p99-us", G_TYPE_DOUBLE,
      gst_hybrid_stats_window_percentile (w, 0.99),
      "skipped", G_TYPE_UINT64, w->frames_skipped,
      "frames-in", G_TYPE_UINT64, w->frames_in,
      "frames-inferred", G_TYPE_UINT64, w->frames_inferred,
      "interval-ms", G_TYPE_UINT, (guint) ((now_us - w->start_us) / 1000),
      NULL);
}
