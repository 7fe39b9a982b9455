/*
 * gsthybridinfer-callbacks.c — what the runner asks of the element
 * (GstHybridRunnerCallbacks): what only an element can do, push
 * downstream, take its sink pad's stream lock, post, read and change its
 * properties.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridinfer-private.h"

static GstFlowReturn
push (GstObject * owner, GstBuffer * buf)
{
  return gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (owner), buf);
}

static void
lock_stream (GstObject * owner)
{
  GST_PAD_STREAM_LOCK (GST_BASE_TRANSFORM_SINK_PAD (owner));
}

static void
unlock_stream (GstObject * owner)
{
  GST_PAD_STREAM_UNLOCK (GST_BASE_TRANSFORM_SINK_PAD (owner));
}

static void
post (GstObject * owner, GstMessageType type, GQuark domain, gint code,
    gchar * text, gchar * debug, const gchar * file, const gchar * function,
    gint line)
{
  gst_element_message_full (GST_ELEMENT (owner), type, domain, code, text,
      debug, file, function, line);
}

static void
post_message (GstObject * owner, GstMessage * message)
{
  gst_element_post_message (GST_ELEMENT (owner), message);
}

static void
take_settings (GstObject * owner, GstHybridFrameSettings * fs)
{
  gst_hybrid_infer_take_frame_settings (GST_HYBRID_INFER (owner), fs);
}

static void
snapshot_settings (GstObject * owner, GstHybridInferSettings * copy)
{
  GstHybridInfer *self = GST_HYBRID_INFER (owner);
  GST_OBJECT_LOCK (self);
  gst_hybrid_infer_settings_snapshot (&self->settings, copy);
  GST_OBJECT_UNLOCK (self);
}

/* mode=imperative found no room: the property goes back to hybrid. */
static void
mode_refused (GstObject * owner)
{
  GstHybridInfer *self = GST_HYBRID_INFER (owner);
  GST_OBJECT_LOCK (self);
  if (self->settings.mode == HY_MODE_IMPERATIVE)
    self->settings.mode = HY_MODE_HYBRID;
  GST_OBJECT_UNLOCK (self);
  g_object_notify (G_OBJECT (self), "mode");
}

static void
dump_failed (GstObject * owner, const GError * error, guint64 frame)
{
  gst_hybrid_infer_report_dump_failure (GST_HYBRID_INFER (owner), error,
      frame);
}

static void
replace_string (gchar ** s, const gchar * value, gboolean * changed)
{
  *changed = g_strcmp0 (*s, value) != 0;
  g_free (*s);
  *s = g_strdup (value);
}

/* A reload took over: the properties say the model that runs, then each
 * of model, params and labels whose value changed notifies (at the swap,
 * so that a handler reads the value that runs, and a load that fails
 * notifies nothing), then the reloaded message, so that an application
 * waiting for it has seen the notifications. */
static void
model_swapped (GstObject * owner, const gchar * model, const gchar * params,
    const gchar * labels, guint set_mask)
{
  GstHybridInfer *self = GST_HYBRID_INFER (owner);
  GstHybridInferSettings *s = &self->settings;
  gboolean model_changed, params_changed, labels_changed;

  GST_OBJECT_LOCK (self);
  replace_string (&s->model, model, &model_changed);
  replace_string (&s->params, params, &params_changed);
  replace_string (&s->labels, labels, &labels_changed);
  s->set_mask |= set_mask;
  GST_OBJECT_UNLOCK (self);
  if (model_changed)
    g_object_notify (G_OBJECT (self), "model");
  if (params_changed)
    g_object_notify (G_OBJECT (self), "params");
  if (labels_changed)
    g_object_notify (G_OBJECT (self), "labels");
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self),
          gst_structure_new ("hybridinfer-model-reloaded",
              "model", G_TYPE_STRING, model,
              "params", G_TYPE_STRING, params,
              "labels", G_TYPE_STRING, labels, NULL)));
}

void
gst_hybrid_infer_runner_callbacks (GstHybridInfer * self,
    GstHybridRunnerCallbacks * cb)
{
  *cb = (GstHybridRunnerCallbacks) {
    .owner = GST_OBJECT (self),
    .push = push,
    .lock_stream = lock_stream,
    .unlock_stream = unlock_stream,
    .post = post,
    .post_message = post_message,
    .take_settings = take_settings,
    .snapshot_settings = snapshot_settings,
    .mode_refused = mode_refused,
    .dump_failed = dump_failed,
    .model_swapped = model_swapped,
  };
}
