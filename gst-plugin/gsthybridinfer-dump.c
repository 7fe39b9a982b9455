/*
 * gsthybridinfer-dump.c — layer dumps (dump-dir and dump-frames, in
 * imperative mode): which forward is dumped where, and the dumps that
 * failed, the first posted and the rest counted.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

/* Posts the count of dump failures not posted yet, if any, as one
 * warning. */
void
gst_hybrid_infer_sum_up_dump_failures (GstHybridInfer * self)
{
  guint64 unposted, all;
  gchar *dir;
  GST_OBJECT_LOCK (self);
  unposted = self->dump_failures_unposted;
  all = self->dump_failures;
  dir = self->dump_failed_dir;
  self->dump_failures_unposted = 0;
  self->dump_failed_dir = NULL;
  GST_OBJECT_UNLOCK (self);
  if (unposted)
    GST_ELEMENT_WARNING (self, RESOURCE, WRITE,
        ("%" G_GUINT64_FORMAT " more dumps to %s failed after the first "
            "(%" G_GUINT64_FORMAT " since the element started)", unposted,
            dir ? dir : "dump-dir", all), (NULL));
  g_free (dir);
}

/* The first dump failure of a setting is a warning; later ones are
 * counted, for the dump-failures property and a summary. */
void
gst_hybrid_infer_report_dump_failure (GstHybridInfer * self,
    const GError * dump_error, guint64 frame)
{
  gboolean first;
  GST_OBJECT_LOCK (self);
  self->dump_failures++;
  first = self->dump_failed_dir == NULL;
  if (first)
    self->dump_failed_dir = g_strdup (self->settings.dump_dir);
  else
    self->dump_failures_unposted++;
  GST_OBJECT_UNLOCK (self);
  if (first)
    GST_ELEMENT_WARNING (self, RESOURCE, WRITE, ("%s", dump_error->message),
        ("dump of frame %" G_GUINT64_FORMAT "; later dump failures are "
            "counted in the dump-failures property, not posted, until "
            "dump-dir or dump-frames changes or the element stops, which "
            "posts their count", frame));
  else
    GST_DEBUG_OBJECT (self, "dump of frame %" G_GUINT64_FORMAT " failed: %s",
        frame, dump_error->message);
}

/* The directory for this forward's dump, or NULL for none.  The object
 * lock is taken only when dump-frames does not parse (warned once). */
gchar *
gst_hybrid_infer_dump_dir_for (GstHybridInfer * self,
    const GstHybridFrameSettings * fs, hy_mode mode, guint64 first,
    guint64 last)
{
  gchar *dir = NULL;
  gboolean bad_frames = FALSE;
  if (mode != HY_MODE_IMPERATIVE || !fs->dump_dir)
    return NULL;
  if (!fs->dump_set) {
    GST_OBJECT_LOCK (self);
    bad_frames = !self->warned_dump_frames;
    self->warned_dump_frames = TRUE;
    GST_OBJECT_UNLOCK (self);
  } else {
    for (guint64 f = first; f <= last && !dir; f++)
      if (hyg_frame_set_contains (fs->dump_set, f)) {
        gchar *name = g_strdup_printf ("frame-%06" G_GUINT64_FORMAT, f);
        dir = g_build_filename (fs->dump_dir, name, NULL);
        g_free (name);
      }
  }
  if (bad_frames)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("dump-frames is not a list of frames and ranges: no dumps"), (NULL));
  return dir;
}
