/*
 * gsthybridinfer-report.c — what hybridinfer tells the application: the
 * core's errors posted in the GStreamer domain that fits, a labels file
 * that does not match the model, a fallback the session took.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

void
gst_hybrid_infer_post_error_at (GstHybridInfer * self, GstMessageType type,
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
  gst_element_message_full (GST_ELEMENT (self), type, domain,
      code, g_strdup (error->message), g_strdup (what), file, function, line);
}

/* A forward that failed: the error, posted (and freed). */
void
gst_hybrid_infer_post_frame_error (GstHybridInfer * self, GError * error,
    guint64 frame)
{
  gchar *what = g_strdup_printf ("forward of frame %" G_GUINT64_FORMAT,
      frame);
  post_error (self, error, what);
  g_free (what);
  g_error_free (error);
}

/* Tells about a labels file that does not match the classes, once. */
void
gst_hybrid_infer_check_labels (GstHybridInfer * self,
    const GstHybridSession * session)
{
  guint n_labels;
  gint64 classes;
  if (gst_hybrid_session_labels_mismatch (session, &n_labels, &classes))
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("The labels file has %u labels but the model has %" G_GINT64_FORMAT
            " classes", n_labels, classes), (NULL));
}

/* A fallback the session took (the GPU frame path could not be made):
 * the frames still run, more slowly; the session says it once. */
void
gst_hybrid_infer_report_session_note (GstHybridInfer * self)
{
  if (!self->session)
    return;                     /* an engine's converts on the CPU */
  char *note = gst_hybrid_session_take_note (self->session);
  if (note)
    GST_WARNING_OBJECT (self, "%s", note);
  g_free (note);
}
