/*
 * quantize-range.c — the range a calibrated tensor is quantized to: its
 * min/max (naive), or the KL threshold of its histogram (entropy).  Apart
 * from the quantizer that collects the statistics, so that the writer can
 * ask for ranges without reaching back into the quantizer that calls it.
 */
#include "core/quantize/calib-stats.h"
#include "core/quantize/quantize-impl.h"

void
hy_quantize_range (const hy_quantizer *q, guint node, float *min, float *max)
{
  const hy_calib_stats *s = &q->stats[node];
  gboolean unsigned_ok = q->options.dtype != HY_QUANTIZED_INT8;
  if (q->options.calib_mode == HY_CALIB_NAIVE || !s->hist) {
    *min = s->min;
    *max = s->max;
    return;
  }
  /* _get_optimal_thresholds: twice the levels for a tensor that is never
   * negative and may be made uint8; its range then starts at 0 */
  gboolean positive = s->min >= 0 && unsigned_ok;
  float th = hy_calib_entropy_threshold (s, positive ? 511 : 255);
  *min = positive ? 0 : -th;
  *max = th;
}
