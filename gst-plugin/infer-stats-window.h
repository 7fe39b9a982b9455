/*
 * infer-stats-window.h — the frame rates and latency percentiles of one
 * stats-interval, for the "hybridinfer-stats" element message.
 *
 * Everything lives in the struct: a latency histogram of fixed buckets
 * (an eighth of an octave each, about 9 % apart) instead of a list of
 * samples, so that a frame costs a few additions and no allocation.
 */
#ifndef GST_HYBRID_STATS_WINDOW_H
#define GST_HYBRID_STATS_WINDOW_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* 8 buckets an octave from 1 µs: the last one starts at 2^23 µs (8.4 s) */
#define GST_HYBRID_STATS_BUCKETS 192

typedef struct
{
  gint64 start_us;              /* monotonic; 0: not started */
  guint64 frames_in, frames_inferred, frames_skipped;
  guint32 latency[GST_HYBRID_STATS_BUCKETS];
} GstHybridStatsWindow;

/* Starts a new interval at `now_us`. */
void gst_hybrid_stats_window_reset (GstHybridStatsWindow * w, gint64 now_us);
void gst_hybrid_stats_window_add_latency (GstHybridStatsWindow * w,
    gdouble latency_us);
/* The latency below which `fraction` of the interval's inferred frames
 * fall, to the bucket's resolution (its upper edge); 0 with none. */
gdouble gst_hybrid_stats_window_percentile (const GstHybridStatsWindow * w,
    gdouble fraction);
/* The "hybridinfer-stats" structure of the interval ending at `now_us`:
 * fps-in, fps-inferred (doubles), latency-p50-us, latency-p99-us
 * (doubles), skipped, frames-in, frames-inferred (guint64) and
 * interval-ms (the time measured, guint). */
GstStructure *gst_hybrid_stats_window_to_structure (const GstHybridStatsWindow
    * w, gint64 now_us);

G_END_DECLS
#endif /* GST_HYBRID_STATS_WINDOW_H */
