/*
 * installed-app.c — an application of libgsthybridmeta-1.0 as a user
 * builds it: compiled by test-installed.sh against the installed header
 * and library (pkg-config gsthybridmeta-1.0, nothing from the source
 * tree), run on buffers from the installed plugin.
 *
 *   installed-app MODELS_DIR
 *
 * Runs videotestsrc pattern=red ! hybridinfer (the "colors" test model)
 * ! fakesink and reads every buffer's result in fakesink's handoff, through
 * the accessors and through the struct fields.  Exits 0 when every buffer
 * says "red", printing one line per buffer.
 */
#include <stdio.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/hybrid/hybridmeta.h>

#define FRAMES 3

static guint frames, good;

static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer user_data)
{
  GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (buf);
  frames++;
  if (!meta) {
    fprintf (stderr, "installed-app: buffer %u has no GstHybridTensorMeta\n",
        frames - 1);
    return;
  }
  const gchar *label = gst_hybrid_tensor_meta_get_top_label (meta, 0);
  gfloat score = gst_hybrid_tensor_meta_get_top_score (meta, 0);
  const GstHybridTensor *t = gst_hybrid_tensor_meta_get_tensor (meta, 0);
  guint ndim = 0;
  gsize n = 0;
  const gint64 *dims = gst_hybrid_tensor_get_dims (t, &ndim);
  const gfloat *data = gst_hybrid_tensor_get_data (t, &n);
  gint id = gst_hybrid_tensor_meta_get_top_class_id (meta, 0);
  printf ("frame %" G_GUINT64_FORMAT ": %s %.3f (class %d; head %s, %u dims, "
      "%" G_GSIZE_FORMAT " values)\n", meta->frame_number,
      label ? label : "(none)", score, id, gst_hybrid_tensor_get_name (t),
      ndim, n);
  /* The fields and the accessors say the same thing. */
  if (label && strcmp (label, "red") == 0 && id >= 0 && (gsize) id < n
      && ABS (data[id] - score) < 1e-6f && meta->n_tensors == 1 && meta->tensors == t
      && ndim == 2 && dims[1] == (gint64) n && meta->inferred
      && g_strcmp0 (gst_structure_get_string (meta->results, "label"),
          "red") == 0)
    good++;
}

int
main (int argc, char **argv)
{
  if (argc != 2) {
    fprintf (stderr, "usage: installed-app MODELS_DIR\n");
    return 2;
  }
  gst_init (&argc, &argv);

  /* A buffer nobody inferred has no meta. */
  GstBuffer *empty = gst_buffer_new ();
  if (gst_buffer_get_hybrid_tensor_meta (empty)) {
    fprintf (stderr, "installed-app: a new buffer has a meta\n");
    return 1;
  }
  gst_buffer_unref (empty);

  gchar *desc = g_strdup_printf ("videotestsrc pattern=red num-buffers=%d "
      "! video/x-raw,format=RGB,width=32,height=32 "
      "! hybridinfer model=%s/colors-symbol.json labels=%s/colors.txt "
      "device=cpu ! fakesink name=sink signal-handoffs=true",
      FRAMES, argv[1], argv[1]);
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &error);
  g_free (desc);
  if (!pipeline) {
    fprintf (stderr, "installed-app: %s\n", error->message);
    return 1;
  }
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), NULL);
  gst_object_unref (sink);

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  int rc = 0;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *e = NULL;
    gst_message_parse_error (msg, &e, NULL);
    fprintf (stderr, "installed-app: %s\n", e->message);
    g_clear_error (&e);
    rc = 1;
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);

  if (frames != FRAMES || good != FRAMES) {
    fprintf (stderr, "installed-app: %u of %u buffers read as red "
        "(expected %d)\n", good, frames, FRAMES);
    rc = 1;
  }
  return rc;
}
