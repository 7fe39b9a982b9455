/*
 * gst/hybrid/hybridregion.c — a region of interest's secondary result
 * (hybridinfer inference-region=roi) read by index from the buffer, in a
 * form GObject introspection binds: the regions are
 * GstVideoRegionOfInterestMeta, whose parameter list bindings reach only
 * through GstVideo, and python3-gi reads the typed lists in it badly.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include <gst/video/video.h>

#include "hybridmeta.h"

/* The index-th region of interest of buffer, in the buffer's order. */
static GstVideoRegionOfInterestMeta *
nth_region (GstBuffer * buffer, guint index)
{
  gpointer state = NULL;
  GstMeta *meta;
  guint i = 0;
  while ((meta = gst_buffer_iterate_meta_filtered (buffer, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    if (i++ == index)
      return (GstVideoRegionOfInterestMeta *) meta;
  return NULL;
}

/**
 * gst_buffer_get_n_hybrid_regions:
 * @buffer: a #GstBuffer
 *
 * Returns: how many regions of interest (GstVideoRegionOfInterestMeta,
 *   any element's) @buffer carries
 */
guint
gst_buffer_get_n_hybrid_regions (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), 0);
  gpointer state = NULL;
  guint n = 0;
  while (gst_buffer_iterate_meta_filtered (buffer, &state,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    n++;
  return n;
}

/**
 * gst_buffer_get_hybrid_region_result:
 * @buffer: a #GstBuffer
 * @index: the region, 0 for the first of the buffer's regions of interest
 *
 * Returns: (transfer none) (nullable): the "hybridinfer" structure a
 *   secondary hybridinfer (inference-region=roi) gave the @index-th region
 *   (the fields of its bus message: type, label, class-id, score…), or
 *   %NULL when there is no such region or no model ran on it.  Valid while
 *   @buffer keeps the region.
 */
const GstStructure *
gst_buffer_get_hybrid_region_result (GstBuffer * buffer, guint index)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  GstVideoRegionOfInterestMeta *roi = nth_region (buffer, index);
  return roi ? gst_video_region_of_interest_meta_get_param (roi,
      "hybridinfer") : NULL;
}

/**
 * gst_buffer_get_hybrid_region_label:
 * @buffer: a #GstBuffer
 * @index: the region, as gst_buffer_get_hybrid_region_result()
 * @score: (out) (optional): the label's score, NaN when there is none
 *
 * A classification's best class on the @index-th region.
 *
 * Returns: (transfer none) (nullable): the label, or %NULL when the
 *   region has no classification result
 */
const gchar *
gst_buffer_get_hybrid_region_label (GstBuffer * buffer, guint index,
    gfloat * score)
{
  const GstStructure *s = gst_buffer_get_hybrid_region_result (buffer,
      index);
  const GValue *v = s ? gst_structure_get_value (s, "score") : NULL;
  if (score)
    *score = v && G_VALUE_HOLDS_FLOAT (v) ? g_value_get_float (v) : NAN;
  if (!s || g_strcmp0 (gst_structure_get_string (s, "type"),
          "classification") != 0)
    return NULL;
  return gst_structure_get_string (s, "label");
}
