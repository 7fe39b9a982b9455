/*
 * infer-roi.c — secondary inference on regions of interest (infer-roi.h).
 */
#include "infer-roi.h"

/* A frame plan for crops of one size. */
typedef struct {
  int width, height;
  hy_frame_plan *plan;
  guint64 used;                 /* when last used: the oldest goes first */
} roi_plan;

struct _GstHybridRoi {
  GQuark *classes;              /* 0-terminated; NULL: every region */
  hy_pixel_layout layout;
  float yuv_kr, yuv_kb;
  bool yuv_full_range;
  roi_plan plans[GST_HYBRID_ROI_PLANS];   /* for `session` */
  guint64 clock;
  const GstHybridSession *session;      /* what the plans and slots fit */
  /* on a shared engine: the client, whose pre-processing the plans use
   * (NULL: the own session's) */
  GstHybridEngineClient *client;
  const GstHybridPrep *prep;
  /* a crop's request a flush left in the engine: its plan stays until
   * that has run (gst_hybrid_engine_client_settle) */
  gboolean unsettled;
  /* the regions of the forward being gathered, by slot: one per entry of
   * the session's batch */
  GstVideoRegionOfInterestMeta **slots;
  const hy_frame_plan **slot_plans;
  int *slot_xy;                 /* the crops' corners in the frame */
  int n_slots;
  /* object-class against the types seen (check_classes): judged once */
  gboolean classes_judged;
  guint frames_unmatched;
  GQuark seen[16];              /* the first distinct types seen */
  guint n_seen;
};

GstHybridRoi *
gst_hybrid_roi_new (const gchar *const *classes)
{
  GstHybridRoi *roi = g_new0 (GstHybridRoi, 1);
  guint n = classes ? g_strv_length ((gchar **) classes) : 0;
  if (n) {
    roi->classes = g_new0 (GQuark, n + 1);
    for (guint i = 0; i < n; i++)
      roi->classes[i] = g_quark_from_string (classes[i]);
  }
  return roi;
}

static void
forget_plans (GstHybridRoi *roi)
{
  for (int i = 0; i < GST_HYBRID_ROI_PLANS; i++)
    g_clear_pointer (&roi->plans[i].plan, hy_frame_plan_free);
}

void
gst_hybrid_roi_free (GstHybridRoi *roi)
{
  if (!roi)
    return;
  forget_plans (roi);
  g_free (roi->classes);
  g_free (roi->slots);
  g_free (roi->slot_plans);
  g_free (roi->slot_xy);
  g_free (roi);
}

void
gst_hybrid_roi_set_session (GstHybridRoi *roi,
    const GstHybridSession *session)
{
  int batch = gst_hybrid_session_batch (session);
  forget_plans (roi);
  roi->session = session;
  g_free (roi->slots);
  g_free (roi->slot_plans);
  g_free (roi->slot_xy);
  roi->slots = g_new0 (GstVideoRegionOfInterestMeta *, batch);
  roi->slot_plans = g_new0 (const hy_frame_plan *, batch);
  roi->slot_xy = g_new0 (int, 2 * batch);
  roi->n_slots = 0;
}

void
gst_hybrid_roi_set_engine (GstHybridRoi *roi, GstHybridEngineClient *client)
{
  gst_hybrid_roi_set_session (roi, gst_hybrid_engine_client_session (client));
  roi->client = client;
  roi->prep = gst_hybrid_engine_client_prep (client);
}

void
gst_hybrid_roi_set_frame (GstHybridRoi *roi, hy_pixel_layout layout,
    float yuv_kr, float yuv_kb, bool yuv_full_range)
{
  /* a flushed crop still in the engine is read with its plan */
  if (roi->unsettled && gst_hybrid_engine_client_settle (roi->client))
    roi->unsettled = FALSE;
  forget_plans (roi);
  roi->layout = layout;
  roi->yuv_kr = yuv_kr;
  roi->yuv_kb = yuv_kb;
  roi->yuv_full_range = yuv_full_range;
}

static gboolean
wanted (const GstHybridRoi *roi, const GstVideoRegionOfInterestMeta *meta)
{
  if (!roi->classes)
    return TRUE;
  for (const GQuark *q = roi->classes; *q; q++)
    if (*q == meta->roi_type)
      return TRUE;
  return FALSE;
}

static gchar *
classes_text (const GstHybridRoi *roi)
{
  GString *s = g_string_new (NULL);
  for (const GQuark *q = roi->classes; *q; q++)
    g_string_append_printf (s, "%s%s", q == roi->classes ? "" : ",",
        g_quark_to_string (*q));
  return g_string_free (s, FALSE);
}

static gchar *
seen_text (const GstHybridRoi *roi)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < roi->n_seen; i++)
    g_string_append_printf (s, "%s'%s'", i ? ", " : "",
        g_quark_to_string (roi->seen[i]));
  if (roi->n_seen == G_N_ELEMENTS (roi->seen))
    g_string_append (s, ", ...");
  return g_string_free (s, FALSE);
}

static void
remember_type (GstHybridRoi *roi, GQuark type)
{
  for (guint i = 0; i < roi->n_seen; i++)
    if (roi->seen[i] == type)
      return;
  if (roi->n_seen < G_N_ELEMENTS (roi->seen))
    roi->seen[roi->n_seen++] = type;
}

/* The class `type` equals but for case, or 0. */
static GQuark
class_but_for_case (const GstHybridRoi *roi, GQuark type)
{
  for (const GQuark *q = roi->classes; *q; q++)
    if (!g_ascii_strcasecmp (g_quark_to_string (*q),
            g_quark_to_string (type)))
      return *q;
  return 0;
}

gchar *
gst_hybrid_roi_check_classes (GstHybridRoi *roi, GstBuffer *buf)
{
  if (!roi->classes || roi->classes_judged)
    return NULL;
  gpointer state = NULL;
  GstMeta *meta;
  gboolean any = FALSE;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    const GstVideoRegionOfInterestMeta *m =
        (const GstVideoRegionOfInterestMeta *) meta;
    any = TRUE;
    if (wanted (roi, m)) {
      roi->classes_judged = TRUE;
      return NULL;
    }
    remember_type (roi, m->roi_type);
    GQuark near = class_but_for_case (roi, m->roi_type);
    if (near) {
      roi->classes_judged = TRUE;
      return g_strdup_printf ("object-class '%s' takes no region of type "
          "'%s': the case differs (object-class matches region types "
          "exactly)", g_quark_to_string (near),
          g_quark_to_string (m->roi_type));
    }
  }
  if (!any || ++roi->frames_unmatched < GST_HYBRID_ROI_CLASS_PATIENCE)
    return NULL;
  roi->classes_judged = TRUE;
  g_autofree gchar *classes = classes_text (roi);
  g_autofree gchar *seen = seen_text (roi);
  return g_strdup_printf ("object-class '%s' took none of the regions of "
      "%u frames; their types (the detector's labels) are %s", classes,
      roi->frames_unmatched, seen);
}

/* The plan for crops of width x height: a kept one, or a new one in place
 * of the least recently used. */
static const hy_frame_plan *
plan_for (GstHybridRoi *roi, const GstHybridSession *session, int width,
    int height, GError **error)
{
  roi_plan *oldest = &roi->plans[0];
  roi->clock++;
  for (int i = 0; i < GST_HYBRID_ROI_PLANS; i++) {
    roi_plan *p = &roi->plans[i];
    if (p->plan && p->width == width && p->height == height) {
      p->used = roi->clock;
      return p->plan;
    }
    if (!p->plan || (oldest->plan && p->used < oldest->used))
      oldest = p;
  }
  hy_frame_plan *plan = gst_hybrid_session_plan_frames (session, roi->prep,
      roi->layout, width, height, roi->yuv_kr, roi->yuv_kb,
      roi->yuv_full_range, error);
  if (!plan)
    return NULL;
  hy_frame_plan_free (oldest->plan);
  *oldest = (roi_plan) {.width = width,.height = height,.plan = plan,
    .used = roi->clock
  };
  return plan;
}

/* The region clamped to the frame, its corner on even pixels for 4:2:0
 * chroma (the crop grows by the pixel it loses); FALSE when nothing of it
 * is in the frame, in every format. */
static gboolean
crop_of (const GstHybridRoi *roi, const GstVideoRegionOfInterestMeta *m,
    int fw, int fh, int *x, int *y, int *w, int *h)
{
  gint64 x0 = MIN ((gint64) m->x, fw), y0 = MIN ((gint64) m->y, fh);
  gint64 x1 = MIN ((gint64) m->x + m->w, fw);
  gint64 y1 = MIN ((gint64) m->y + m->h, fh);
  /* empty in the frame: skipped before the corner is rounded, which would
   * give an empty region at an odd corner a pixel of its neighbour's */
  if (x1 <= x0 || y1 <= y0)
    return FALSE;
  if (roi->layout == HY_PIXEL_NV12 || roi->layout == HY_PIXEL_I420) {
    x0 &= ~(gint64) 1;
    y0 &= ~(gint64) 1;
  }
  *x = (int) x0;
  *y = (int) y0;
  *w = (int) (x1 - x0);
  *h = (int) (y1 - y0);
  return TRUE;
}

/* The planes of the crop at (x, y): the frame's, moved to its corner. */
static void
crop_planes (const GstHybridRoi *roi, const GstHybridRoiFrame *f, int x,
    int y, const uint8_t *planes[3])
{
  int bpp, r, g, b, a;
  planes[1] = planes[2] = NULL;
  if (hy_pixel_packed (roi->layout, &bpp, &r, &g, &b, &a)) {
    planes[0] = f->planes[0] + (gsize) y * f->strides[0] + (gsize) x * bpp;
    return;
  }
  planes[0] = f->planes[0] + (gsize) y * f->strides[0] + x;
  if (roi->layout == HY_PIXEL_NV12)
    planes[1] = f->planes[1] + (gsize) (y / 2) * f->strides[1] + x;
  else if (roi->layout == HY_PIXEL_I420) {
    planes[1] = f->planes[1] + (gsize) (y / 2) * f->strides[1] + x / 2;
    planes[2] = f->planes[2] + (gsize) (y / 2) * f->strides[2] + x / 2;
  }
}

/* Runs the gathered regions and gives each its result. */
static gboolean
run_slots (GstHybridRoi *roi, GstHybridSession *session,
    const GstHybridRoiFrame *f, GError **error)
{
  if (roi->n_slots == 0)
    return TRUE;
  if (!gst_hybrid_session_forward (session, f->mode, NULL, NULL, error))
    return FALSE;
  for (int i = 0; i < roi->n_slots; i++) {
    gboolean grew;
    GstHybridResultFrame details = f->details;
    /* places (boxes, keypoints, a map) in the buffer's frame */
    details.origin_x = (gfloat) roi->slot_xy[2 * i];
    details.origin_y = (gfloat) roi->slot_xy[2 * i + 1];
    GstHybridResult *result = gst_hybrid_session_result (session, i,
        roi->slot_plans[i], &details, f->top_k, f->threshold,
        f->class_thresholds, &grew);
    /* the meta owns its parameters: a copy (GStreamer's allocation) */
    gst_video_region_of_interest_meta_add_param (roi->slots[i],
        gst_structure_copy (result->results));
    gst_hybrid_result_unref (result);
  }
  roi->n_slots = 0;
  return TRUE;
}

gboolean
gst_hybrid_roi_infer (GstHybridRoi *roi, GstHybridSession *session,
    GstBuffer *buf, const GstHybridRoiFrame *f, guint *n_done,
    GError **error)
{
  int batch = gst_hybrid_session_batch (session);
  gpointer state = NULL;
  GstMeta *meta;
  *n_done = 0;
  /* plans and slots made for another session would overrun this one's
   * input (a reload that did not say so is the element's bug) */
  g_return_val_if_fail (session == roi->session, FALSE);
  roi->n_slots = 0;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *m = (GstVideoRegionOfInterestMeta *) meta;
    int x, y, w, h;
    if (!wanted (roi, m)
        || !crop_of (roi, m, f->width, f->height, &x, &y, &w, &h))
      continue;
    const hy_frame_plan *plan = plan_for (roi, session, w, h, error);
    if (!plan)
      return FALSE;
    const uint8_t *planes[3];
    crop_planes (roi, f, x, y, planes);
    gst_hybrid_session_load_with (session, plan, roi->n_slots, planes,
        f->strides);
    roi->slots[roi->n_slots] = m;
    roi->slot_plans[roi->n_slots] = plan;
    roi->slot_xy[2 * roi->n_slots] = x;
    roi->slot_xy[2 * roi->n_slots + 1] = y;
    roi->n_slots++;
    (*n_done)++;
    if (roi->n_slots == batch && !run_slots (roi, session, f, error))
      return FALSE;
  }
  return run_slots (roi, session, f, error);
}

GstFlowReturn
gst_hybrid_roi_infer_on_engine (GstHybridRoi *roi, GstBuffer *buf,
    const GstHybridRoiFrame *f, const GstHybridEngineRequest *base,
    guint *n_done, GError **error)
{
  gpointer state = NULL;
  GstMeta *meta;
  *n_done = 0;
  g_return_val_if_fail (roi->client != NULL, GST_FLOW_ERROR);
  /* no plan may go (plan_for replaces the oldest) while a flushed crop
   * may still be converted or read with it */
  if (roi->unsettled) {
    if (!gst_hybrid_engine_client_settle (roi->client))
      return GST_FLOW_FLUSHING;
    roi->unsettled = FALSE;
  }
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *m = (GstVideoRegionOfInterestMeta *) meta;
    int x, y, w, h;
    if (!wanted (roi, m)
        || !crop_of (roi, m, f->width, f->height, &x, &y, &w, &h))
      continue;
    const hy_frame_plan *plan = plan_for (roi, roi->session, w, h, error);
    if (!plan)
      return GST_FLOW_ERROR;
    const uint8_t *planes[3];
    crop_planes (roi, f, x, y, planes);
    GstHybridEngineRequest request = *base;
    request.plan = plan;
    request.frame.origin_x = (gfloat) x;
    request.frame.origin_y = (gfloat) y;
    GstHybridResult *result = NULL;
    GstFlowReturn ret = gst_hybrid_engine_client_infer (roi->client,
        planes, f->strides, &request, &result, error);
    if (ret == GST_FLOW_FLUSHING)
      roi->unsettled = TRUE;
    if (ret != GST_FLOW_OK)
      return ret;
    /* the meta owns its parameters: a copy (GStreamer's allocation) */
    gst_video_region_of_interest_meta_add_param (m,
        gst_structure_copy (result->results));
    gst_hybrid_result_unref (result);
    (*n_done)++;
  }
  return GST_FLOW_OK;
}
