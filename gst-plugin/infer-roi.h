/*
 * infer-roi.h — secondary inference on regions of interest
 * (inference-region=roi): each GstVideoRegionOfInterestMeta an upstream
 * detector attached (of the classes asked for) is cropped out of the
 * frame, converted into a batch slot of the session's input and run
 * through the model, batch-size regions per forward; its result is added
 * to that region's meta as a "hybridinfer" parameter structure, its
 * places (keypoints, boxes) in frame pixels.
 *
 * A crop converts through a frame plan for its size.  Plans are kept for
 * the most recent sizes (GST_HYBRID_ROI_PLANS): a detector's boxes come
 * in few sizes when objects stand still, and in new ones as they move,
 * which costs a plan (a few small allocations) per new size.
 */
#ifndef GST_HYBRID_INFER_ROI_H
#define GST_HYBRID_INFER_ROI_H

#include <gst/video/video.h>

#include "infer-engine.h"
#include "infer-session.h"

G_BEGIN_DECLS

#define GST_HYBRID_ROI_PLANS 16

typedef struct _GstHybridRoi GstHybridRoi;

/* `classes`: the region types (roi_type, e.g. the detector's labels) to
 * infer on, NULL-terminated; NULL or empty: every region. */
GstHybridRoi *gst_hybrid_roi_new (const gchar * const *classes);
void gst_hybrid_roi_free (GstHybridRoi * roi);

/* The session the regions run through: at start, and again whenever a
 * reload swaps it.  The crops' plans (made for a session's input size and
 * pre-processing) and the slots (one per batch entry) are of one session:
 * this forgets the old ones. */
void gst_hybrid_roi_set_session (GstHybridRoi * roi,
    const GstHybridSession * session);
/* On a shared engine: its session (crops' plans are made for its input)
 * and the client's pre-processing; regions then run through
 * gst_hybrid_roi_infer_on_engine. */
void gst_hybrid_roi_set_engine (GstHybridRoi * roi,
    GstHybridEngineClient * client);

/* The frame format of the caps: crops are cut from frames of it. */
void gst_hybrid_roi_set_frame (GstHybridRoi * roi, hy_pixel_layout layout,
    float yuv_kr, float yuv_kb, bool yuv_full_range);

/* Frames with regions, none of them of object-class's types, before
 * that is said (a frame of only other types is normal; a hundred are a
 * misspelt class). */
#define GST_HYBRID_ROI_CLASS_PATIENCE 100

/* object-class judged against the region types `buf` carries, until
 * judged once: a type that differs from a class only by case at once,
 * else GST_HYBRID_ROI_CLASS_PATIENCE frames with regions and no region
 * of the classes.  Returns the warning's text (free it) that one time,
 * else NULL; allocates nothing until then. */
gchar *gst_hybrid_roi_check_classes (GstHybridRoi * roi, GstBuffer * buf);

/* What a frame's regions need: the frame mapped, and what a result says
 * of the frame. */
typedef struct {
  const uint8_t *planes[3];
  int strides[3];
  int width, height;
  GstHybridResultFrame details;
  guint top_k;
  gfloat threshold;
  const hyg_class_thresholds *class_thresholds;       /* NULL: none */
  hy_mode mode;
} GstHybridRoiFrame;

/* Runs every region of `buf` that roi's classes take through `session`
 * (the one given to gst_hybrid_roi_set_session; batch-size at a time) and adds each one's result to its meta.  *n_done:
 * regions inferred.  FALSE + error when a forward or a crop's plan
 * failed. */
gboolean gst_hybrid_roi_infer (GstHybridRoi * roi, GstHybridSession * session,
    GstBuffer * buf, const GstHybridRoiFrame * frame, guint * n_done,
    GError ** error);

/* On a shared engine (gst_hybrid_roi_set_engine): each region the classes
 * take is handed to the engine as a request of its own (`base` with the
 * region's corner and its crop's plan) and waited for, so the crops of
 * every element on the engine share its batches; its result is added to
 * its meta.  GST_FLOW_FLUSHING when a flush or a state change ended the
 * wait; GST_FLOW_ERROR + error when a forward or a plan failed. */
GstFlowReturn gst_hybrid_roi_infer_on_engine (GstHybridRoi * roi,
    GstBuffer * buf, const GstHybridRoiFrame * frame,
    const GstHybridEngineRequest * base, guint * n_done, GError ** error);

G_END_DECLS
#endif /* GST_HYBRID_INFER_ROI_H */
