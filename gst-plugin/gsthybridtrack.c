/*
 * gsthybridtrack.c — hybridtrack: SORT on the regions of interest of a
 * video stream (docs/ELEMENT.md, "hybridtrack").
 *
 * An in-place GstBaseTransform that reads and rewrites the buffer's
 * GstVideoRegionOfInterestMeta: a frame that brings a new detector result
 * updates the tracker (track-sort.h) and each region gets its track's id;
 * a frame that carries an old result (hybridinfer interval=N: the same
 * tensor meta, same frame number, inferred = FALSE) only advances the
 * tracks, and its regions are moved to where their tracks predict them.
 *
 * One element is one stream: the tracks belong to the frames that pass
 * through this instance, in order.  Several cameras need an element each
 * (after each one's hybridinfer, or after a demuxer), never one shared.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gsthybridtrack.h"

#include <math.h>

#include <gst/hybrid/hybridmeta.h>
#include <gst/video/video.h>

#include "track-sort.h"

GST_DEBUG_CATEGORY_STATIC (gst_hybrid_track_debug);
#define GST_CAT_DEFAULT gst_hybrid_track_debug

#define DEFAULT_MIN_HITS 3
#define DEFAULT_MAX_AGE 30
#define DEFAULT_IOU_THRESHOLD 0.3f
#define DEFAULT_PREDICT TRUE

enum
{
  PROP_0,
  PROP_MIN_HITS,
  PROP_MAX_AGE,
  PROP_IOU_THRESHOLD,
  PROP_PREDICT,
  PROP_TRACKS_STARTED,
};

struct _GstHybridTrack
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  TrackSortConfig config;
  gboolean config_changed;
  gboolean predict;
  guint64 tracks_started;

  /* streaming thread only */
  TrackSort *tracker;
  gboolean have_result;
  guint64 result_frame;         /* the tensor meta's frame of the last result */
  gint frame_width, frame_height;       /* 0 when the caps do not say */
  TrackDetection detections[TRACK_SORT_MAX_DETECTIONS];
  GstVideoRegionOfInterestMeta *rois[TRACK_SORT_MAX_DETECTIONS];
  /* each region's track id in the last result, in the buffer's order:
   * a carried result's regions come in the same order */
  guint32 result_ids[TRACK_SORT_MAX_DETECTIONS];
  guint n_result_ids;
  GQuark tracking_name;
};

G_DEFINE_TYPE (GstHybridTrack, gst_hybrid_track, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (hybridtrack, "hybridtrack", GST_RANK_NONE,
    GST_TYPE_HYBRID_TRACK);

/* The metas are the point, not the pixels: any caps pass. */
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void
gst_hybrid_track_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstHybridTrack *self = GST_HYBRID_TRACK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MIN_HITS:
      self->config.min_hits = g_value_get_uint (value);
      self->config_changed = TRUE;
      break;
    case PROP_MAX_AGE:
      self->config.max_age = g_value_get_uint (value);
      self->config_changed = TRUE;
      break;
    case PROP_IOU_THRESHOLD:
      self->config.iou_threshold = g_value_get_float (value);
      self->config_changed = TRUE;
      break;
    case PROP_PREDICT:
      self->predict = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_hybrid_track_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstHybridTrack *self = GST_HYBRID_TRACK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MIN_HITS:
      g_value_set_uint (value, self->config.min_hits);
      break;
    case PROP_MAX_AGE:
      g_value_set_uint (value, self->config.max_age);
      break;
    case PROP_IOU_THRESHOLD:
      g_value_set_float (value, self->config.iou_threshold);
      break;
    case PROP_PREDICT:
      g_value_set_boolean (value, self->predict);
      break;
    case PROP_TRACKS_STARTED:
      g_value_set_uint64 (value, self->tracks_started);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* The tracks go; the ids go on (`tracks-started` too), so that an id
 * names one object for the whole stream. */
static void
forget_tracks (GstHybridTrack * self)
{
  if (self->tracker)
    track_sort_clear (self->tracker);
  self->have_result = FALSE;
  self->n_result_ids = 0;
}

static gboolean
gst_hybrid_track_start (GstBaseTransform * trans)
{
  GstHybridTrack *self = GST_HYBRID_TRACK (trans);

  GST_OBJECT_LOCK (self);
  TrackSortConfig config = self->config;
  self->config_changed = FALSE;
  GST_OBJECT_UNLOCK (self);
  /* the property ranges keep the configuration valid: only memory fails */
  self->tracker = track_sort_new (&config);
  if (!self->tracker) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, (NULL),
        ("out of memory making the tracker"));
    return FALSE;
  }
  self->frame_width = self->frame_height = 0;
  self->have_result = FALSE;
  self->n_result_ids = 0;
  GST_OBJECT_LOCK (self);
  self->tracks_started = 0;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_hybrid_track_stop (GstBaseTransform * trans)
{
  GstHybridTrack *self = GST_HYBRID_TRACK (trans);

  track_sort_free (self->tracker);
  self->tracker = NULL;
  return TRUE;
}

static gboolean
gst_hybrid_track_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstHybridTrack *self = GST_HYBRID_TRACK (trans);
  const GstStructure *s = gst_caps_get_structure (incaps, 0);

  /* Predicted boxes are kept inside the frame when its size is known. */
  if (!s || !gst_structure_get_int (s, "width", &self->frame_width)
      || !gst_structure_get_int (s, "height", &self->frame_height))
    self->frame_width = self->frame_height = 0;
  return TRUE;
}

static gboolean
gst_hybrid_track_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  /* After a flush (a seek) the next frame is not where the last one was:
   * the motion of the old tracks says nothing about it.  Ids are not
   * reused, so every id names one object for the whole stream. */
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    forget_tracks (GST_HYBRID_TRACK (trans));
  return GST_BASE_TRANSFORM_CLASS (gst_hybrid_track_parent_class)->sink_event
      (trans, event);
}

/* A region's class: its detection's class id, or for regions without one
 * (another element's) its type, as a negative number no class id takes. */
static gint
roi_class (const GstVideoRegionOfInterestMeta * roi)
{
  GstStructure *det = gst_video_region_of_interest_meta_get_param (
      (GstVideoRegionOfInterestMeta *) roi, "detection");
  gint class_id;
  if (det && gst_structure_get_int (det, "class-id", &class_id)
      && class_id >= 0)
    return class_id;
  return -1 - (gint) (roi->roi_type & G_MAXINT);
}

/* The buffer's regions, in order, at most TRACK_SORT_MAX_DETECTIONS. */
static guint
collect_rois (GstHybridTrack * self, GstBuffer * buf)
{
  gpointer state = NULL;
  GstMeta *meta;
  guint n = 0;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    if (n == TRACK_SORT_MAX_DETECTIONS) {
      GST_WARNING_OBJECT (self, "more than %d regions on a frame: the rest "
          "are not tracked", TRACK_SORT_MAX_DETECTIONS);
      break;
    }
    self->rois[n++] = (GstVideoRegionOfInterestMeta *) meta;
  }
  return n;
}

/* id (0: no track) into the region: its `id`, -1 without a track, and a
 * "tracking" parameter with the id and whether the box is a prediction. */
static void
mark_roi (GstHybridTrack * self, GstVideoRegionOfInterestMeta * roi,
    guint32 id, gboolean predicted)
{
  roi->id = id ? (gint) MIN (id, (guint32) G_MAXINT) : -1;
  if (!id)
    return;
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new_id (self->tracking_name,
          g_quark_from_static_string ("track-id"), G_TYPE_UINT, id,
          g_quark_from_static_string ("predicted"), G_TYPE_BOOLEAN,
          predicted, NULL));
}

static void
apply_config (GstHybridTrack * self)
{
  GST_OBJECT_LOCK (self);
  gboolean changed = self->config_changed;
  TrackSortConfig config = self->config;
  self->config_changed = FALSE;
  GST_OBJECT_UNLOCK (self);
  if (changed)
    track_sort_configure (self->tracker, &config);
}

static void
track_new_result (GstHybridTrack * self, guint n)
{
  for (guint i = 0; i < n; i++) {
    const GstVideoRegionOfInterestMeta *roi = self->rois[i];
    TrackDetection *d = &self->detections[i];
    d->box.x = (gfloat) roi->x;
    d->box.y = (gfloat) roi->y;
    d->box.w = (gfloat) roi->w;
    d->box.h = (gfloat) roi->h;
    d->class_id = roi_class (roi);
  }
  track_sort_update (self->tracker, self->detections, n);
  for (guint i = 0; i < n; i++) {
    guint32 id = self->detections[i].track_id;
    self->result_ids[i] = id;
    mark_roi (self, self->rois[i], id, FALSE);
  }
  self->n_result_ids = n;
  GST_OBJECT_LOCK (self);
  self->tracks_started = track_sort_ids_given (self->tracker);
  GST_OBJECT_UNLOCK (self);
}

/* Rounds a predicted box to whole pixels inside the frame (when its size
 * is known), keeping at least one pixel. */
static void
place_roi (GstHybridTrack * self, GstVideoRegionOfInterestMeta * roi,
    const TrackBox * b)
{
  gdouble x1 = floor (b->x + 0.5), y1 = floor (b->y + 0.5);
  gdouble x2 = floor (b->x + b->w + 0.5), y2 = floor (b->y + b->h + 0.5);
  gdouble fw = self->frame_width > 0 ? self->frame_width : G_MAXINT;
  gdouble fh = self->frame_height > 0 ? self->frame_height : G_MAXINT;
  x1 = CLAMP (x1, 0.0, fw - 1.0);
  y1 = CLAMP (y1, 0.0, fh - 1.0);
  x2 = CLAMP (x2, x1 + 1.0, fw);
  y2 = CLAMP (y2, y1 + 1.0, fh);
  roi->x = (guint) x1;
  roi->y = (guint) y1;
  roi->w = (guint) (x2 - x1);
  roi->h = (guint) (y2 - y1);
}

static void
track_carried_result (GstHybridTrack * self, guint n, gboolean predict)
{
  track_sort_predict (self->tracker);
  for (guint i = 0; i < n; i++) {
    guint32 id = i < self->n_result_ids ? self->result_ids[i] : 0;
    const TrackSortTrack *track = track_sort_find (self->tracker, id);
    if (!track) {
      mark_roi (self, self->rois[i], 0, FALSE);
      continue;
    }
    if (predict)
      place_roi (self, self->rois[i], &track->box);
    mark_roi (self, self->rois[i], id, predict);
  }
}

static GstFlowReturn
gst_hybrid_track_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstHybridTrack *self = GST_HYBRID_TRACK (trans);

  apply_config (self);
  GST_OBJECT_LOCK (self);
  gboolean predict = self->predict;
  GST_OBJECT_UNLOCK (self);

  /* A new result is one whose tensor meta names another frame than the
   * last one (hybridinfer's interval and skip-when-busy carry a result to
   * later frames under its own frame number).  Regions without a tensor
   * meta come from another element: each frame's are its own. */
  GstHybridTensorMeta *tm = gst_buffer_get_hybrid_tensor_meta (buf);
  gboolean fresh = !tm || !self->have_result
      || tm->frame_number != self->result_frame;
  guint n = collect_rois (self, buf);
  if (fresh) {
    track_new_result (self, n);
    self->have_result = tm != NULL;
    if (tm)
      self->result_frame = tm->frame_number;
  } else {
    track_carried_result (self, n, predict);
  }
  return GST_FLOW_OK;
}

static void
gst_hybrid_track_finalize (GObject * object)
{
  GstHybridTrack *self = GST_HYBRID_TRACK (object);
  track_sort_free (self->tracker);
  G_OBJECT_CLASS (gst_hybrid_track_parent_class)->finalize (object);
}

static void
gst_hybrid_track_class_init (GstHybridTrackClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_hybrid_track_set_property;
  gobject_class->get_property = gst_hybrid_track_get_property;
  gobject_class->finalize = gst_hybrid_track_finalize;

  g_object_class_install_property (gobject_class, PROP_MIN_HITS,
      g_param_spec_uint ("min-hits", "Minimum hits",
          "Consecutive detector results an object must be matched in before "
          "its track is confirmed and gets an id", 1, 1000,
          DEFAULT_MIN_HITS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_MAX_AGE,
      g_param_spec_uint ("max-age", "Maximum age",
          "Detector results a confirmed track survives without a match "
          "(occlusion, missed detections) before it is deleted", 0, 100000,
          DEFAULT_MAX_AGE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_IOU_THRESHOLD,
      g_param_spec_float ("iou-threshold", "IoU threshold",
          "The least intersection over union between a track's predicted "
          "box and a detection of its class for them to match", 0.01f, 1.0f,
          DEFAULT_IOU_THRESHOLD, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
          | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_PREDICT,
      g_param_spec_boolean ("predict", "Predict",
          "On frames that carry an earlier result (hybridinfer interval), "
          "move each tracked box to where its track predicts it",
          DEFAULT_PREDICT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_TRACKS_STARTED,
      g_param_spec_uint64 ("tracks-started", "Tracks started",
          "Tracks confirmed since the element started (the last id given)",
          0, G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_set_static_metadata (element_class,
      "Hybrid multi-object tracker", "Filter/Analyzer/Video",
      "Gives detection boxes (regions of interest) stable track ids with "
      "SORT: a Kalman filter per track and optimal IoU matching per class, "
      "and moves them along their tracks on frames the detector skipped",
      "hybridinfer");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_hybrid_track_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_hybrid_track_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_hybrid_track_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_hybrid_track_sink_event);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_hybrid_track_transform_ip);

  GST_DEBUG_CATEGORY_INIT (gst_hybrid_track_debug, "hybridtrack", 0,
      "hybridinfer's multi-object tracker");
}

static void
gst_hybrid_track_init (GstHybridTrack * self)
{
  self->config.min_hits = DEFAULT_MIN_HITS;
  self->config.max_age = DEFAULT_MAX_AGE;
  self->config.iou_threshold = DEFAULT_IOU_THRESHOLD;
  self->predict = DEFAULT_PREDICT;
  self->tracking_name = g_quark_from_static_string ("tracking");
  /* in place: the regions are rewritten, the pixels never touched */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}
