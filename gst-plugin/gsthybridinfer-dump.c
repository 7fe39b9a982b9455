/*
 * gsthybridinfer-dump.c — layer dumps (dump-dir and dump-frames, in
 * imperative mode) that failed, as the runner reports them: the first
 * posted and the rest counted.
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

/* dump-frames does not parse: no dumps, said once per setting. */
static void
report_bad_frames (GstHybridInfer * self)
{
  GST_OBJECT_LOCK (self);
  gboolean first = !self->warned_dump_frames;
  self->warned_dump_frames = TRUE;
  GST_OBJECT_UNLOCK (self);
  if (first)
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("dump-frames is not a list of frames and ranges: no dumps"), (NULL));
}

/* The first dump failure of a setting is a warning; later ones are
 * counted, for the dump-failures property and a summary.  NULL
 * dump_error: dump-frames does not parse. */
void
gst_hybrid_infer_report_dump_failure (GstHybridInfer * self,
    const GError * dump_error, guint64 frame)
{
  gboolean first;
  if (!dump_error) {
    report_bad_frames (self);
    return;
  }
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
