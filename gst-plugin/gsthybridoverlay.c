/*
 * gsthybridoverlay.c — the hybridoverlay element.
 *
 * SECTION:element-hybridoverlay
 * @title: hybridoverlay
 *
 * Draws what hybridinfer found onto the frames: a box with its label and
 * confidence for every GstVideoRegionOfInterestMeta (any element's), the
 * results a secondary hybridinfer (inference-region=roi) added to it after
 * the label, and the top classes of a classification in the top-left
 * corner.  Text is laid out by Pango and rendered antialiased by Cairo
 * (overlay-text.c), in the font `font-desc` names; labels seen before cost
 * nothing.  Frames without results pass untouched (and unmapped).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBx ! \
 *     hybridinfer model=model-symbol.json labels=labels.txt ! \
 *     hybridoverlay ! videoconvert ! autovideosink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdarg.h>

#include <math.h>

#include <gst/video/video.h>

#include "gsthybridmeta.h"
#include "gsthybridoverlay.h"
#include "overlay-draw.h"
#include "overlay-text.h"
#include "video-format.h"

GST_DEBUG_CATEGORY_STATIC (gst_hybrid_overlay_debug);
#define GST_CAT_DEFAULT gst_hybrid_overlay_debug

enum
{
  PROP_0,
  PROP_DRAW_BOXES,
  PROP_DRAW_LABELS,
  PROP_DRAW_CLASSES,
  PROP_LINE_WIDTH,
  PROP_FONT_SCALE,
  PROP_FONT_DESC,
  PROP_BOX_COLOR,
  PROP_TEXT_COLOR,
  PROP_DRAW_MAP,
  PROP_MAP_ALPHA,
  PROP_MAP_BACKGROUND,
  PROP_KEYPOINT_THRESHOLD,
};

#define DEFAULT_DRAW_BOXES TRUE
#define DEFAULT_DRAW_LABELS TRUE
#define DEFAULT_DRAW_CLASSES TRUE
#define DEFAULT_LINE_WIDTH 0    /* auto */
#define DEFAULT_FONT_SCALE 0    /* auto */
#define DEFAULT_FONT_DESC "Sans"
#define DEFAULT_BOX_COLOR 0xff00ff00
#define DEFAULT_TEXT_COLOR 0xff000000
#define DEFAULT_DRAW_MAP TRUE
#define DEFAULT_MAP_ALPHA 0.5
#define DEFAULT_MAP_BACKGROUND 0
#define N_CLASS_COLORS 256
#define DEFAULT_KEYPOINT_THRESHOLD 0.2  /* GluonCV's plot_keypoints' */
#define MAX_CLASS_LINES 5
/* Auto sizes grow one step per this many lines of picture. */
#define AUTO_STEP_LINES 240
/* A step of font-scale, in pixels of the font's size (its em). */
#define FONT_STEP_PIXELS 10
/* Longest label text drawn, in bytes. */
#define MAX_LABEL_BYTES 256

struct _GstHybridOverlay
{
  GstVideoFilter parent;

  /* properties; object lock */
  gboolean draw_boxes;
  gboolean draw_labels;
  gboolean draw_classes;
  guint line_width;
  guint font_scale;
  gchar *font_desc;
  guint box_color;
  guint text_color;
  gboolean draw_map;
  gdouble map_alpha;
  gint map_background;
  gfloat keypoint_threshold;

  /* class colours (hyg_class_color), made once */
  hyg_color palette[N_CLASS_COLORS];

  /* streaming thread; made in start, freed in stop */
  hyg_text_renderer *text;
  guint8 *coverage;             /* an instance mask's, grown as needed */
  gsize coverage_size;
};

#define gst_hybrid_overlay_parent_class parent_class
G_DEFINE_TYPE (GstHybridOverlay, gst_hybrid_overlay, GST_TYPE_VIDEO_FILTER);
GST_ELEMENT_REGISTER_DEFINE (hybridoverlay, "hybridoverlay", GST_RANK_NONE,
    GST_TYPE_HYBRID_OVERLAY);

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_HYBRID_VIDEO_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_HYBRID_VIDEO_CAPS));

static void gst_hybrid_overlay_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_hybrid_overlay_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_hybrid_overlay_finalize (GObject * object);
static gboolean gst_hybrid_overlay_start (GstBaseTransform * trans);
static gboolean gst_hybrid_overlay_stop (GstBaseTransform * trans);
static GstFlowReturn gst_hybrid_overlay_transform_ip (GstBaseTransform *
    trans, GstBuffer * buf);
static GstFlowReturn gst_hybrid_overlay_transform_frame_ip (GstVideoFilter *
    filter, GstVideoFrame * frame);

static void
gst_hybrid_overlay_class_init (GstHybridOverlayClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstVideoFilterClass *filter_class = GST_VIDEO_FILTER_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
      | GST_PARAM_MUTABLE_PLAYING;

  gobject_class->set_property = gst_hybrid_overlay_set_property;
  gobject_class->get_property = gst_hybrid_overlay_get_property;
  gobject_class->finalize = gst_hybrid_overlay_finalize;

  g_object_class_install_property (gobject_class, PROP_DRAW_BOXES,
      g_param_spec_boolean ("draw-boxes", "Draw boxes",
          "Outline every region of interest (detection box)",
          DEFAULT_DRAW_BOXES, flags));
  g_object_class_install_property (gobject_class, PROP_DRAW_LABELS,
      g_param_spec_boolean ("draw-labels", "Draw labels",
          "Write each box's label and confidence above it",
          DEFAULT_DRAW_LABELS, flags));
  g_object_class_install_property (gobject_class, PROP_DRAW_CLASSES,
      g_param_spec_boolean ("draw-classes", "Draw classes",
          "Write a classification's top classes and scores top-left",
          DEFAULT_DRAW_CLASSES, flags));
  g_object_class_install_property (gobject_class, PROP_LINE_WIDTH,
      g_param_spec_uint ("line-width", "Line width",
          "Box outline width in pixels (0: one per 240 lines of picture, "
          "at least 2)", 0, 64, DEFAULT_LINE_WIDTH, flags));
  g_object_class_install_property (gobject_class, PROP_FONT_SCALE,
      g_param_spec_uint ("font-scale", "Font scale",
          "Text size in steps of 10 pixels: the font's size is 10 x "
          "font-scale pixels (0: one step per 240 lines of picture, at "
          "least 1); a size in font-desc wins", 0, 32, DEFAULT_FONT_SCALE,
          flags));
  g_object_class_install_property (gobject_class, PROP_FONT_DESC,
      g_param_spec_string ("font-desc", "Font description",
          "Pango font description of the text: family, style, weight "
          "(\"Sans\", \"DejaVu Serif Bold\"); a size in it is in pixels "
          "(\"Sans 24\") and replaces font-scale's", DEFAULT_FONT_DESC,
          flags));
  g_object_class_install_property (gobject_class, PROP_BOX_COLOR,
      g_param_spec_uint ("box-color", "Box color",
          "Colour of boxes and label backgrounds, as 0xAARRGGBB (alpha "
          "ignored)", 0, G_MAXUINT32, DEFAULT_BOX_COLOR, flags));
  g_object_class_install_property (gobject_class, PROP_TEXT_COLOR,
      g_param_spec_uint ("text-color", "Text color",
          "Colour of the text, as 0xAARRGGBB (alpha ignored)", 0,
          G_MAXUINT32, DEFAULT_TEXT_COLOR, flags));

  g_object_class_install_property (gobject_class, PROP_DRAW_MAP,
      g_param_spec_boolean ("draw-map", "Draw map",
          "Paint a segmentation's class map over the frame, a colour per "
          "class (Pascal VOC's palette), and instance masks, a colour per "
          "object", DEFAULT_DRAW_MAP, flags));
  g_object_class_install_property (gobject_class, PROP_MAP_ALPHA,
      g_param_spec_double ("map-alpha", "Map alpha",
          "Opacity of the class map's and the masks' colours", 0.0, 1.0,
          DEFAULT_MAP_ALPHA,
          flags));
  g_object_class_install_property (gobject_class, PROP_MAP_BACKGROUND,
      g_param_spec_int ("map-background", "Map background",
          "The class left unpainted (VOC's background is 0); -1: none", -1,
          G_MAXINT, DEFAULT_MAP_BACKGROUND, flags));
  g_object_class_install_property (gobject_class, PROP_KEYPOINT_THRESHOLD,
      g_param_spec_float ("keypoint-threshold", "Keypoint threshold",
          "Pose: the lowest score a keypoint (and a skeleton edge, at both "
          "ends) is drawn with", -G_MAXFLOAT, G_MAXFLOAT,
          DEFAULT_KEYPOINT_THRESHOLD, flags));
  gst_element_class_set_static_metadata (element_class,
      "Hybrid inference overlay", "Filter/Effect/Video",
      "Draws hybridinfer's detections and classes onto the video",
      "hybridinfer authors");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_hybrid_overlay_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_hybrid_overlay_stop);
  trans_class->transform_ip =
      GST_DEBUG_FUNCPTR (gst_hybrid_overlay_transform_ip);
  filter_class->transform_frame_ip =
      GST_DEBUG_FUNCPTR (gst_hybrid_overlay_transform_frame_ip);
  GST_DEBUG_CATEGORY_INIT (gst_hybrid_overlay_debug, "hybridoverlay", 0,
      "hybridoverlay element");
}

static void
gst_hybrid_overlay_init (GstHybridOverlay * self)
{
  self->draw_boxes = DEFAULT_DRAW_BOXES;
  self->draw_labels = DEFAULT_DRAW_LABELS;
  self->draw_classes = DEFAULT_DRAW_CLASSES;
  self->line_width = DEFAULT_LINE_WIDTH;
  self->font_scale = DEFAULT_FONT_SCALE;
  self->font_desc = g_strdup (DEFAULT_FONT_DESC);
  self->box_color = DEFAULT_BOX_COLOR;
  self->text_color = DEFAULT_TEXT_COLOR;
  self->draw_map = DEFAULT_DRAW_MAP;
  self->map_alpha = DEFAULT_MAP_ALPHA;
  self->map_background = DEFAULT_MAP_BACKGROUND;
  self->keypoint_threshold = DEFAULT_KEYPOINT_THRESHOLD;
  for (int i = 0; i < N_CLASS_COLORS; i++)
    self->palette[i] = hyg_class_color (i);
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}

static void
gst_hybrid_overlay_finalize (GObject * object)
{
  GstHybridOverlay *self = GST_HYBRID_OVERLAY (object);
  hyg_text_renderer_free (self->text);
  g_free (self->font_desc);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static gboolean
gst_hybrid_overlay_start (GstBaseTransform * trans)
{
  GstHybridOverlay *self = GST_HYBRID_OVERLAY (trans);
  if (!self->text)
    self->text = hyg_text_renderer_new ();
  return TRUE;
}

/* The renderer, its font map and its masks go with the stream. */
static gboolean
gst_hybrid_overlay_stop (GstBaseTransform * trans)
{
  GstHybridOverlay *self = GST_HYBRID_OVERLAY (trans);
  hyg_text_renderer_free (self->text);
  self->text = NULL;
  g_clear_pointer (&self->coverage, g_free);
  self->coverage_size = 0;
  return TRUE;
}

static void
gst_hybrid_overlay_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstHybridOverlay *self = GST_HYBRID_OVERLAY (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_DRAW_BOXES:
      self->draw_boxes = g_value_get_boolean (value);
      break;
    case PROP_DRAW_LABELS:
      self->draw_labels = g_value_get_boolean (value);
      break;
    case PROP_DRAW_CLASSES:
      self->draw_classes = g_value_get_boolean (value);
      break;
    case PROP_LINE_WIDTH:
      self->line_width = g_value_get_uint (value);
      break;
    case PROP_FONT_SCALE:
      self->font_scale = g_value_get_uint (value);
      break;
    case PROP_FONT_DESC:
      g_free (self->font_desc);
      self->font_desc = g_value_dup_string (value);
      break;
    case PROP_BOX_COLOR:
      self->box_color = g_value_get_uint (value);
      break;
    case PROP_TEXT_COLOR:
      self->text_color = g_value_get_uint (value);
      break;
    case PROP_DRAW_MAP:
      self->draw_map = g_value_get_boolean (value);
      break;
    case PROP_MAP_ALPHA:
      self->map_alpha = g_value_get_double (value);
      break;
    case PROP_MAP_BACKGROUND:
      self->map_background = g_value_get_int (value);
      break;
    case PROP_KEYPOINT_THRESHOLD:
      self->keypoint_threshold = g_value_get_float (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_hybrid_overlay_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstHybridOverlay *self = GST_HYBRID_OVERLAY (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_DRAW_BOXES:
      g_value_set_boolean (value, self->draw_boxes);
      break;
    case PROP_DRAW_LABELS:
      g_value_set_boolean (value, self->draw_labels);
      break;
    case PROP_DRAW_CLASSES:
      g_value_set_boolean (value, self->draw_classes);
      break;
    case PROP_LINE_WIDTH:
      g_value_set_uint (value, self->line_width);
      break;
    case PROP_FONT_SCALE:
      g_value_set_uint (value, self->font_scale);
      break;
    case PROP_FONT_DESC:
      g_value_set_string (value, self->font_desc);
      break;
    case PROP_BOX_COLOR:
      g_value_set_uint (value, self->box_color);
      break;
    case PROP_TEXT_COLOR:
      g_value_set_uint (value, self->text_color);
      break;
    case PROP_DRAW_MAP:
      g_value_set_boolean (value, self->draw_map);
      break;
    case PROP_MAP_ALPHA:
      g_value_set_double (value, self->map_alpha);
      break;
    case PROP_MAP_BACKGROUND:
      g_value_set_int (value, self->map_background);
      break;
    case PROP_KEYPOINT_THRESHOLD:
      g_value_set_float (value, self->keypoint_threshold);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* What one frame is drawn with: a snapshot of the properties. */
typedef struct {
  gboolean boxes, labels, classes, map;
  unsigned map_alpha;           /* 0 … 255 */
  int map_background;
  gfloat keypoint_threshold;
  int line, scale;
  hyg_color box, text;
  hyg_text_renderer *font;      /* NULL: no text */
} DrawStyle;

static hyg_color
rgb_of (guint argb)
{
  return (hyg_color) {
  (argb >> 16) & 0xff, (argb >> 8) & 0xff, argb & 0xff};
}

/* The renderer is set to the font of the moment here (a string comparison
 * when it is the same). */
static DrawStyle
style_for (GstHybridOverlay * self, int height)
{
  DrawStyle st;
  int step = height / AUTO_STEP_LINES;
  GST_OBJECT_LOCK (self);
  st.boxes = self->draw_boxes;
  st.labels = self->draw_labels;
  st.classes = self->draw_classes;
  st.map = self->draw_map;
  st.map_alpha = (unsigned) (self->map_alpha * 255.0 + 0.5);
  st.map_background = self->map_background;
  st.keypoint_threshold = self->keypoint_threshold;
  st.line = self->line_width ? (int) self->line_width : MAX (2, step);
  st.scale = self->font_scale ? (int) self->font_scale : MAX (1, step);
  st.box = rgb_of (self->box_color);
  st.text = rgb_of (self->text_color);
  st.font = self->text;
  if (st.font)
    hyg_text_renderer_set_font (st.font, self->font_desc,
        st.scale * FONT_STEP_PIXELS);
  GST_OBJECT_UNLOCK (self);
  return st;
}

/* The buffer's result meta when its results are of `type`. */
static GstHybridTensorMeta *
result_of_type (GstBuffer * buf, const gchar * type)
{
  GstHybridTensorMeta *meta = (GstHybridTensorMeta *)
      gst_buffer_get_meta (buf, gst_hybrid_tensor_meta_api_get_type ());
  if (!meta || !meta->results
      || g_strcmp0 (gst_structure_get_string (meta->results, "type"), type))
    return NULL;
  return meta;
}

static const GstStructure *
classification_of (GstBuffer * buf)
{
  GstHybridTensorMeta *meta = result_of_type (buf, "classification");
  return meta ? meta->results : NULL;
}

/* Frames with nothing to draw are not mapped, so never copied. */
static GstFlowReturn
gst_hybrid_overlay_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  if (!gst_buffer_get_meta (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)
      && !classification_of (buf) && !result_of_type (buf, "segmentation")
      && !result_of_type (buf, "pose"))
    return GST_FLOW_OK;
  return GST_BASE_TRANSFORM_CLASS (parent_class)->transform_ip (trans, buf);
}

/* A label's text, cut at MAX_LABEL_BYTES (no allocation). */
typedef struct {
  gchar s[MAX_LABEL_BYTES];
  gsize n;
} LabelText;

static void label_append (LabelText * t, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3);

static void
label_append (LabelText * t, const gchar * format, ...)
{
  if (t->n >= sizeof t->s - 1)
    return;
  va_list args;
  va_start (args, format);
  gint n = g_vsnprintf (t->s + t->n, sizeof t->s - t->n, format, args);
  va_end (args);
  if (n > 0)
    t->n = MIN (t->n + (gsize) n, sizeof t->s - 1);
}

/* "label #track confidence" (#track with hybridtrack), then " · label
 * score" for each result a secondary hybridinfer (inference-region=roi)
 * attached to the region. */
static void
roi_label (GstVideoRegionOfInterestMeta * roi, LabelText * t)
{
  GstStructure *det = gst_video_region_of_interest_meta_get_param (roi,
      "detection");
  gdouble confidence;
  t->n = 0;
  t->s[0] = '\0';
  GstStructure *tracking = gst_video_region_of_interest_meta_get_param (roi,
      "tracking");
  guint track_id;
  if (roi->roi_type)
    label_append (t, "%s", g_quark_to_string (roi->roi_type));
  /* hybridtrack's id: which object this is, from frame to frame */
  if (tracking && gst_structure_get_uint (tracking, "track-id", &track_id))
    label_append (t, t->n ? " #%u" : "#%u", track_id);
  if (det && gst_structure_get_double (det, "confidence", &confidence))
    label_append (t, t->n ? " %.2f" : "%.2f", confidence);
  for (GList * l = roi->params; l; l = l->next) {
    const GstStructure *p = l->data;
    const gchar *label;
    gfloat score;
    if (!gst_structure_has_name (p, "hybridinfer")
        || !(label = gst_structure_get_string (p, "label")))
      continue;
    label_append (t, "%s%s", t->n ? " \u00b7 " : "", label);
    if (gst_structure_get (p, "score", G_TYPE_FLOAT, &score, NULL))
      label_append (t, " %.2f", score);
  }
}

/* Keypoint k of a pose result: FALSE when there is none, or it scores
 * below the threshold or is not a finite place.  Places are clamped just
 * past the canvas, so that a line towards a far point stays short. */
static gboolean
keypoint_at (const hyg_canvas * canvas, const DrawStyle * st,
    const GValue * points, gint k, int *x, int *y)
{
  if (k < 0 || (guint) (3 * k + 2) >= gst_value_array_get_size (points))
    return FALSE;
  const GValue *vx = gst_value_array_get_value (points, 3 * k);
  const GValue *vy = gst_value_array_get_value (points, 3 * k + 1);
  const GValue *vs = gst_value_array_get_value (points, 3 * k + 2);
  if (!G_VALUE_HOLDS_FLOAT (vx) || !G_VALUE_HOLDS_FLOAT (vy)
      || !G_VALUE_HOLDS_FLOAT (vs))
    return FALSE;
  gfloat fx = g_value_get_float (vx), fy = g_value_get_float (vy);
  if (!(g_value_get_float (vs) >= st->keypoint_threshold)
      || !isfinite (fx) || !isfinite (fy))
    return FALSE;
  *x = (int) CLAMP (fx, -1.0f, (gfloat) canvas->width);
  *y = (int) CLAMP (fy, -1.0f, (gfloat) canvas->height);
  return TRUE;
}

/* A pose result (output=pose, on the frame or on a region): its skeleton's
 * edges, then its keypoints, in the box colour. */
static void
draw_pose (const hyg_canvas * canvas, const DrawStyle * st,
    const GstStructure * s)
{
  const GValue *points = gst_structure_get_value (s, "keypoints");
  const GValue *edges = gst_structure_get_value (s, "skeleton");
  if (!points || !GST_VALUE_HOLDS_ARRAY (points))
    return;
  guint n_edges = edges && GST_VALUE_HOLDS_ARRAY (edges)
      ? gst_value_array_get_size (edges) / 2 : 0;
  for (guint e = 0; e < n_edges; e++) {
    const GValue *a = gst_value_array_get_value (edges, 2 * e);
    const GValue *b = gst_value_array_get_value (edges, 2 * e + 1);
    int x0, y0, x1, y1;
    if (G_VALUE_HOLDS_INT (a) && G_VALUE_HOLDS_INT (b)
        && keypoint_at (canvas, st, points, g_value_get_int (a), &x0, &y0)
        && keypoint_at (canvas, st, points, g_value_get_int (b), &x1, &y1))
      hyg_canvas_draw_line (canvas, x0, y0, x1, y1, MAX (1, st->line / 2),
          st->box);
  }
  int side = MAX (3, 2 * st->line);
  guint n = gst_value_array_get_size (points) / 3;
  for (guint k = 0; k < n; k++) {
    int x, y;
    if (keypoint_at (canvas, st, points, (gint) k, &x, &y))
      hyg_canvas_fill_rect (canvas, x - side / 2, y - side / 2, side, side,
          st->box);
  }
}

static void
draw_box (const hyg_canvas * canvas, const DrawStyle * st,
    GstVideoRegionOfInterestMeta * roi)
{
  for (GList * l = roi->params; l; l = l->next)
    if (gst_structure_has_name (l->data, "hybridinfer")
        && !g_strcmp0 (gst_structure_get_string (l->data, "type"), "pose"))
      draw_pose (canvas, st, l->data);
  int x = (int) roi->x, y = (int) roi->y, w = (int) roi->w, h = (int) roi->h;
  if (st->boxes)
    hyg_canvas_stroke_rect (canvas, x, y, w, h, st->line, st->box);
  if (!st->labels || !st->font)
    return;
  LabelText text;
  roi_label (roi, &text);
  if (!text.n)
    return;
  const hyg_text_mask *m = hyg_text_render (st->font, text.s);
  int label_h = hyg_text_label_height (m);
  /* Above the box when it fits, else just inside its top edge. */
  int ty = y - label_h >= 0 ? y - label_h : y;
  /* A box at the right edge keeps its label whole: shifted left until it
   * ends at the frame's edge (never past the left one). */
  int tx = MAX (0, MIN (x, canvas->width - hyg_text_label_width (m)));
  hyg_text_draw_label (canvas, m, tx, ty, st->box, st->text);
}

static void
draw_classes (const hyg_canvas * canvas, const DrawStyle * st,
    const GstStructure * results)
{
  const GValue *labels = gst_structure_get_value (results, "labels");
  const GValue *scores = gst_structure_get_value (results, "scores");
  if (!st->font || !labels || !scores || !GST_VALUE_HOLDS_ARRAY (labels)
      || !GST_VALUE_HOLDS_ARRAY (scores))
    return;
  guint n = MIN (gst_value_array_get_size (labels),
      gst_value_array_get_size (scores));
  int corner = st->scale, y = corner;
  for (guint i = 0; i < MIN (n, MAX_CLASS_LINES); i++) {
    const GValue *l = gst_value_array_get_value (labels, i);
    const GValue *s = gst_value_array_get_value (scores, i);
    if (!G_VALUE_HOLDS_STRING (l) || !G_VALUE_HOLDS_FLOAT (s)
        || !g_value_get_string (l))
      continue;
    LabelText text = {.n = 0 };
    label_append (&text, "%s %.2f", g_value_get_string (l),
        g_value_get_float (s));
    y += hyg_text_draw_label (canvas, hyg_text_render (st->font, text.s),
        corner, y, st->box, st->text);
  }
}

/* A segmentation's class map, translucent, under everything else. */
static void
draw_map (GstHybridOverlay * self, const hyg_canvas * canvas,
    const DrawStyle * st, const GstHybridTensorMeta * meta)
{
  const GstHybridTensor *ids = gst_hybrid_tensor_meta_find_tensor (meta,
      "class-map");
  hyg_class_map map = { 0 };
  if (!ids || ids->ndim != 3
      || !gst_structure_get (meta->results, "map-x", G_TYPE_FLOAT, &map.x,
          "map-y", G_TYPE_FLOAT, &map.y, "map-width", G_TYPE_FLOAT,
          &map.width, "map-height", G_TYPE_FLOAT, &map.height, NULL))
    return;
  map.ids = ids->data;
  map.h = (int) ids->dims[1];
  map.w = (int) ids->dims[2];
  hyg_canvas_blend_classes (canvas, &map, self->palette, N_CLASS_COLORS,
      st->map_background, st->map_alpha);
}

/* An instance mask (a region's "mask" parameter, decode-masks.c),
 * translucent, in the colour of its object: palette entry 1 + the region's
 * id (the palette's 0 is black). */
static void
draw_mask (GstHybridOverlay * self, const hyg_canvas * canvas,
    const DrawStyle * st, GstVideoRegionOfInterestMeta * roi)
{
  GstStructure *p = gst_video_region_of_interest_meta_get_param (roi, "mask");
  gint x, y, w, h;
  GBytes *data = NULL;
  if (!p || !gst_structure_get (p, "x", G_TYPE_INT, &x, "y", G_TYPE_INT, &y,
          "width", G_TYPE_INT, &w, "height", G_TYPE_INT, &h, "data",
          G_TYPE_BYTES, &data, NULL))
    return;
  gsize n;
  const guint8 *bits = g_bytes_get_data (data, &n);
  if (w > 0 && h > 0 && n == (gsize) w * h) {
    if (n > self->coverage_size) {
      self->coverage = g_realloc (self->coverage, n);
      self->coverage_size = n;
    }
    for (gsize i = 0; i < n; i++)
      self->coverage[i] = bits[i] ? (guint8) st->map_alpha : 0;
    guint id = (guint) MAX (roi->id, 0);
    hyg_canvas_blend_mask (canvas, x, y, self->coverage, w, h, w,
        self->palette[1 + id % (N_CLASS_COLORS - 1)]);
  }
  g_bytes_unref (data);
}

static GstFlowReturn
gst_hybrid_overlay_transform_frame_ip (GstVideoFilter * filter,
    GstVideoFrame * frame)
{
  GstHybridOverlay *self = GST_HYBRID_OVERLAY (filter);
  hyg_canvas canvas = {
    .width = GST_VIDEO_FRAME_WIDTH (frame),
    .height = GST_VIDEO_FRAME_HEIGHT (frame),
  };
  if (!gst_hybrid_layout_for_format (GST_VIDEO_FRAME_FORMAT (frame),
          &canvas.layout))
    return GST_FLOW_NOT_NEGOTIATED;
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES (frame) && i < 3; i++) {
    canvas.planes[i] = GST_VIDEO_FRAME_PLANE_DATA (frame, i);
    canvas.strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE (frame, i);
  }
  DrawStyle st = style_for (self, canvas.height);
  GstHybridTensorMeta *segmentation = result_of_type (frame->buffer,
      "segmentation");
  if (segmentation && st.map)
    draw_map (self, &canvas, &st, segmentation);
  gpointer state = NULL;
  GstMeta *meta;
  while (st.map && (meta = gst_buffer_iterate_meta_filtered (frame->buffer,
              &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    draw_mask (self, &canvas, &st, (GstVideoRegionOfInterestMeta *) meta);
  state = NULL;
  while ((meta = gst_buffer_iterate_meta_filtered (frame->buffer, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    draw_box (&canvas, &st, (GstVideoRegionOfInterestMeta *) meta);
  GstHybridTensorMeta *pose = result_of_type (frame->buffer, "pose");
  if (pose)
    draw_pose (&canvas, &st, pose->results);
  const GstStructure *classes = classification_of (frame->buffer);
  if (classes && st.classes)
    draw_classes (&canvas, &st, classes);
  return GST_FLOW_OK;
}
