/*
 * infer-runner-report.c — what the runner tells the element: the
 * statistics its read-only properties show, the core's errors in the
 * GStreamer domain that fits, a labels file that does not match the
 * model, a fallback the session took.  Every message goes out through the
 * element's post callback.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "infer-runner-private.h"

/* The statistics of an inferred frame: the one lock a frame takes for
 * them. */
void
gst_hybrid_runner_count_inferred (GstHybridRunner * r, gdouble latency_us)
{
  g_mutex_lock (&r->stats_lock);
  r->stats.frames_inferred++;
  r->stats.total_latency_us += latency_us;
  r->stats.last_latency_us = latency_us;
  r->window.frames_inferred++;
  gst_hybrid_stats_window_add_latency (&r->window, latency_us);
  g_mutex_unlock (&r->stats_lock);
}

void
gst_hybrid_runner_count_skipped (GstHybridRunner * r)
{
  g_mutex_lock (&r->stats_lock);
  r->stats.frames_skipped++;
  r->window.frames_skipped++;
  g_mutex_unlock (&r->stats_lock);
}

/* A frame came in (streaming thread): counted in the stats-interval's
 * window, and once the interval has passed the window is posted as a
 * "hybridinfer-stats" element message and starts again.  With
 * stats-interval 0 the window stays unstarted and nothing is counted. */
void
gst_hybrid_runner_count_frame_in (GstHybridRunner * r,
    const GstHybridFrameSettings * fs)
{
  GstStructure *report = NULL;
  gint64 now = g_get_monotonic_time ();
  g_mutex_lock (&r->stats_lock);
  if (!fs->stats_interval_ms) {
    r->window.start_us = 0;
  } else if (!r->window.start_us) {
    gst_hybrid_stats_window_reset (&r->window, now);
  } else if (now - r->window.start_us
      >= (gint64) fs->stats_interval_ms * 1000) {
    report = gst_hybrid_stats_window_to_structure (&r->window, now);
    gst_hybrid_stats_window_reset (&r->window, now);
  }
  if (fs->stats_interval_ms)
    r->window.frames_in++;
  g_mutex_unlock (&r->stats_lock);
  /* posted with no lock held: a bus sync handler may call back in */
  if (report)
    r->cb.post_message (r->cb.owner,
        gst_message_new_element (r->cb.owner, report));
}

/* The arena of the model that runs: it changes with the mode, the caps
 * and a swap only, so the lock is taken only when it did.  model_lock
 * held (or on an engine, whose arena the streaming thread alone reads). */
void
gst_hybrid_runner_set_arena (GstHybridRunner * r, gint64 bytes)
{
  if (bytes == r->arena_seen)
    return;
  r->arena_seen = bytes;
  g_mutex_lock (&r->stats_lock);
  r->stats.arena_bytes = bytes;
  g_mutex_unlock (&r->stats_lock);
}

void
gst_hybrid_runner_read_stats (GstHybridRunner * r,
    GstHybridRunnerStats * stats)
{
  g_mutex_lock (&r->stats_lock);
  *stats = r->stats;
  g_mutex_unlock (&r->stats_lock);
}

void
gst_hybrid_runner_post_error_at (GstHybridRunner * r, GstMessageType type,
    const GError * error, const gchar * what, const gchar * file,
    const gchar * function, gint line)
{
  GQuark domain = GST_RESOURCE_ERROR;
  gint code = GST_RESOURCE_ERROR_SETTINGS;
  if (error->domain == HY_ERROR) {
    switch (error->code) {
      case HY_ERROR_IO:
        code = GST_RESOURCE_ERROR_OPEN_READ;
        break;
      case HY_ERROR_FORMAT:
      case HY_ERROR_MISSING:
        code = GST_RESOURCE_ERROR_READ;
        break;
      case HY_ERROR_UNSUPPORTED:
        domain = GST_LIBRARY_ERROR;
        code = GST_LIBRARY_ERROR_FAILED;
        break;
      case HY_ERROR_SHAPE:
        domain = GST_STREAM_ERROR;
        code = GST_STREAM_ERROR_FORMAT;
        break;
      case HY_ERROR_NO_MEMORY:
        code = GST_RESOURCE_ERROR_NO_SPACE_LEFT;
        break;
      default:
        break;
    }
  }
  r->cb.post (r->cb.owner, type, domain, code, g_strdup (error->message),
      g_strdup (what), file, function, line);
}

/* A forward that failed: the error, posted (and freed). */
void
gst_hybrid_runner_post_frame_error (GstHybridRunner * r, GError * error,
    guint64 frame)
{
  gchar *what = g_strdup_printf ("forward of frame %" G_GUINT64_FORMAT,
      frame);
  runner_post_error (r, error, what);
  g_free (what);
  g_error_free (error);
}

/* Tells about a labels file that does not match the classes, once. */
void
gst_hybrid_runner_check_labels (GstHybridRunner * r,
    const GstHybridSession * session)
{
  guint n_labels;
  gint64 classes;
  if (gst_hybrid_session_labels_mismatch (session, &n_labels, &classes))
    RUNNER_MESSAGE (r, WARNING, RESOURCE, SETTINGS,
        ("The labels file has %u labels but the model has %" G_GINT64_FORMAT
            " classes", n_labels, classes), (NULL));
}

/* A fallback the session took (the GPU frame path could not be made):
 * the frames still run, more slowly; the session says it once. */
void
gst_hybrid_runner_report_session_note (GstHybridRunner * r)
{
  if (!r->session)
    return;                     /* an engine's converts on the CPU */
  char *note = gst_hybrid_session_take_note (r->session);
  if (note)
    GST_WARNING_OBJECT (r->cb.owner, "%s", note);
  g_free (note);
}
