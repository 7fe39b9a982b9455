/*
 * track-feeder.c — a scene with known ground truth through hybridtrack:
 * appsrc ! hybridtrack ! hybridpublish location=OUT ! fakesink.
 *
 * Seven objects on a 640x480 frame for 300 frames: two of one class
 * crossing head-on (the one behind hidden while they overlap), one of
 * another class crossing their path, one entering from the left and
 * leaving on the right, one entering from the top, one leaving on the
 * left, and a still one hidden for a while by one passing in front.  Each
 * frame's detections are what a detector would give: the visible
 * objects' boxes with seeded Gaussian noise, some missed at random, and
 * now and then a false box.  With --interval N a result is made on every
 * Nth frame only and the frames between carry it as hybridinfer does:
 * the same regions, a tensor meta with the result's frame number and
 * inferred = FALSE.
 *
 * The ground truth (every object at least 30 % inside the frame, hidden
 * or not, as MOT benchmarks count them) goes to --gt as CSV lines
 * "frame,id,x,y,w,h"; mot_eval.py scores the JSON lines against it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/hybrid/hybridmeta.h>
#include <gst/video/video.h>

#define FRAME_W 640
#define FRAME_H 480
#define MAX_OBJECTS 16

typedef struct {
  int id, class_id;
  int first, last;              /* frames it exists in */
  double x0, y0, vx, vy;        /* top-left at `first`, pixels per frame */
  double sway;                  /* vertical sine amplitude: not quite linear */
  double w, h;
  int depth;                    /* smaller is nearer: hides the others */
} SceneObject;

static const SceneObject scene[] = {
  {1, 0, 0, 299, 20, 200, 2.0, 0.0, 6.0, 40, 60, 1},
  {2, 0, 0, 299, 580, 206, -2.0, 0.0, 0.0, 40, 60, 2},
  {3, 1, 0, 299, 300, 10, 0.3, 1.4, 0.0, 50, 50, 1},
  {4, 0, 60, 299, -44, 345, 3.0, 0.0, 4.0, 45, 45, 1},
  {5, 0, 0, 299, 452, 335, 0.0, 0.0, 0.0, 40, 40, 3},
  {6, 0, 150, 299, 150, -40, 0.2, 2.5, 0.0, 40, 40, 1},
  {7, 1, 0, 120, 200, 420, -2.5, 0.0, 3.0, 50, 40, 1},
};

typedef struct {
  double x, y, w, h;
} Box;

static Box
object_box (const SceneObject * o, int f)
{
  double t = f - o->first;
  Box b = { o->x0 + o->vx * t, o->y0 + o->vy * t + o->sway * sin (t / 15.0),
    o->w, o->h
  };
  return b;
}

static Box
clip (Box b)
{
  double x1 = CLAMP (b.x, 0, FRAME_W), y1 = CLAMP (b.y, 0, FRAME_H);
  double x2 = CLAMP (b.x + b.w, 0, FRAME_W), y2 = CLAMP (b.y + b.h, 0, FRAME_H);
  Box c = { x1, y1, x2 - x1, y2 - y1 };
  return c;
}

static double
overlap_area (Box a, Box b)
{
  double iw = MIN (a.x + a.w, b.x + b.w) - MAX (a.x, b.x);
  double ih = MIN (a.y + a.h, b.y + b.h) - MAX (a.y, b.y);
  return iw > 0 && ih > 0 ? iw * ih : 0.0;
}

/* The share of the object inside the frame. */
static double
visible_in_frame (Box b)
{
  Box c = clip (b);
  return c.w * c.h / (b.w * b.h);
}

/* Whether a nearer object covers more than half of it. */
static gboolean
hidden (int k, int f)
{
  Box b = object_box (&scene[k], f);
  for (guint j = 0; j < G_N_ELEMENTS (scene); j++) {
    if (j == (guint) k || f < scene[j].first || f > scene[j].last
        || scene[j].depth >= scene[k].depth)
      continue;
    if (overlap_area (b, object_box (&scene[j], f)) > 0.5 * b.w * b.h)
      return TRUE;
  }
  return FALSE;
}

typedef struct {
  Box box;
  int class_id;
  double score;
} Detection;

static int
detect (GRand * rand, int f, double noise, double miss, Detection * out)
{
  int n = 0;
  for (guint k = 0; k < G_N_ELEMENTS (scene); k++) {
    const SceneObject *o = &scene[k];
    if (f < o->first || f > o->last)
      continue;
    Box b = object_box (o, f);
    if (visible_in_frame (b) < 0.5 || hidden ((int) k, f)
        || g_rand_double (rand) < miss)
      continue;
    /* noise relative to the size, as a detector's error is */
    b.x += g_rand_double_range (rand, -1, 1) * noise * b.w;
    b.y += g_rand_double_range (rand, -1, 1) * noise * b.h;
    b.w *= 1.0 + g_rand_double_range (rand, -1, 1) * noise;
    b.h *= 1.0 + g_rand_double_range (rand, -1, 1) * noise;
    out[n].box = clip (b);
    out[n].class_id = o->class_id;
    out[n].score = g_rand_double_range (rand, 0.6, 1.0);
    n++;
  }
  if (g_rand_double (rand) < 0.1) {     /* a false box, never twice alike */
    Box b = { g_rand_double_range (rand, 0, FRAME_W - 60),
      g_rand_double_range (rand, 0, FRAME_H - 60), 40, 40
    };
    out[n].box = b;
    out[n].class_id = g_rand_int_range (rand, 0, 2);
    out[n].score = 0.55;
    n++;
  }
  return n;
}

static void
write_truth (FILE * gt, int f)
{
  for (guint k = 0; k < G_N_ELEMENTS (scene); k++) {
    const SceneObject *o = &scene[k];
    if (f < o->first || f > o->last)
      continue;
    Box b = object_box (o, f);
    if (visible_in_frame (b) < 0.3)
      continue;
    Box c = clip (b);
    fprintf (gt, "%d,%d,%.2f,%.2f,%.2f,%.2f\n", f, o->id, c.x, c.y, c.w,
        c.h);
  }
}

static void
attach (GstBuffer * buf, const Detection * d, int n, guint64 result_frame,
    gboolean inferred)
{
  static const gchar *labels[] = { "person", "car" };
  gst_buffer_add_hybrid_tensor_meta_full (buf, result_frame, inferred, 0,
      NULL, NULL, NULL, NULL, NULL);
  for (int i = 0; i < n; i++) {
    guint x = (guint) (d[i].box.x + 0.5), y = (guint) (d[i].box.y + 0.5);
    guint x2 = (guint) (d[i].box.x + d[i].box.w + 0.5);
    guint y2 = (guint) (d[i].box.y + d[i].box.h + 0.5);
    if (x2 <= x || y2 <= y)
      continue;
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (buf,
        labels[d[i].class_id], x, y, x2 - x, y2 - y);
    roi->id = i;
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("detection", "label", G_TYPE_STRING,
            labels[d[i].class_id], "class-id", G_TYPE_INT, d[i].class_id,
            "confidence", G_TYPE_DOUBLE, d[i].score, NULL));
  }
}

int
main (int argc, char **argv)
{
  gint seed = 1, interval = 1, frames = 300;
  gdouble noise = 0.04, miss = 0.08;
  gboolean no_predict = FALSE;
  gchar *gt_path = NULL, *out_path = NULL, *track_props = NULL;
  GOptionEntry entries[] = {
    {"seed", 0, 0, G_OPTION_ARG_INT, &seed, "noise seed", "N"},
    {"interval", 0, 0, G_OPTION_ARG_INT, &interval, "a result every N frames",
        "N"},
    {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "frames (at most 300)", "N"},
    {"noise", 0, 0, G_OPTION_ARG_DOUBLE, &noise,
        "box noise, a share of the size", "S"},
    {"miss", 0, 0, G_OPTION_ARG_DOUBLE, &miss, "chance of a missed box", "P"},
    {"no-predict", 0, 0, G_OPTION_ARG_NONE, &no_predict,
        "hybridtrack predict=false", NULL},
    {"track-props", 0, 0, G_OPTION_ARG_STRING, &track_props,
        "more hybridtrack properties", "P=V ..."},
    {"gt", 0, 0, G_OPTION_ARG_FILENAME, &gt_path, "ground truth CSV", "PATH"},
    {"out", 0, 0, G_OPTION_ARG_FILENAME, &out_path, "hybridpublish location",
        "PATH"},
    {NULL}
  };
  GError *error = NULL;
  GOptionContext *ctx = g_option_context_new ("- a scene through hybridtrack");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || !gt_path
      || !out_path || interval < 1 || frames < 1 || frames > 300) {
    g_printerr ("track-feeder: %s\n", error ? error->message
        : "--gt and --out are needed; --interval >= 1; --frames 1..300");
    return 2;
  }
  g_option_context_free (ctx);

  gchar *desc = g_strdup_printf ("appsrc name=src format=time "
      "caps=video/x-raw,format=GRAY8,width=%d,height=%d,framerate=30/1 ! "
      "hybridtrack name=track predict=%s %s ! hybridpublish location=\"%s\" ! "
      "fakesink", FRAME_W, FRAME_H, no_predict ? "false" : "true",
      track_props ? track_props : "", out_path);
  GstElement *pipeline = gst_parse_launch (desc, &error);
  g_free (desc);
  /* a missing element (the plugin not found) still gives a pipeline */
  if (error) {
    g_printerr ("track-feeder: %s\n", error->message);
    return 1;
  }
  FILE *gt = fopen (gt_path, "w");
  if (!gt) {
    g_printerr ("track-feeder: cannot write %s\n", gt_path);
    return 1;
  }
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);

  GRand *rand = g_rand_new_with_seed ((guint32) seed);
  Detection result[MAX_OBJECTS];
  int n_result = 0;
  guint64 result_frame = 0;
  for (int f = 0; f < frames; f++) {
    gboolean inferred = f % interval == 0;
    if (inferred) {
      n_result = detect (rand, f, noise, miss, result);
      result_frame = (guint64) f;
    }
    write_truth (gt, f);
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 1, NULL);
    GST_BUFFER_PTS (buf) = gst_util_uint64_scale (f, GST_SECOND, 30);
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    attach (buf, result, n_result, result_frame, inferred);
    if (gst_app_src_push_buffer (GST_APP_SRC (src), buf) != GST_FLOW_OK)
      break;
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  fclose (gt);

  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  int rc = 0;
  if (!msg || GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gchar *dbg = NULL;
    if (msg)
      gst_message_parse_error (msg, &error, &dbg);
    g_printerr ("track-feeder: %s (%s)\n", msg ? error->message
        : "no EOS within 60 s", dbg ? dbg : "");
    g_clear_error (&error);
    g_free (dbg);
    rc = 1;
  }
  if (msg)
    gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  g_rand_free (rand);
  g_free (gt_path);
  g_free (out_path);
  g_free (track_props);
  /* GST_TRACERS=leaks reports here */
  gst_deinit ();
  return rc;
}
