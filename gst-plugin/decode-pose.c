/*
 * decode-pose.c — output=pose: the first head (B, K, H, W) as K keypoint
 * heatmaps (GluonCV's SimplePose), read as GluonCV's heatmap_to_coord
 * reads them: each keypoint at its heatmap's maximum (the first one on
 * ties, as MXNet's argmax), at heatmap column x and row y, scored by that
 * maximum (a maximum not above 0 puts the keypoint at (0, 0)); the
 * heatmap spans the model input, so the keypoint is at input pixel
 * (x·in_w/W, y·in_h/H), then mapped back to the frame like a detection
 * box.
 *
 * With K = 17 the keypoints are COCO's (nose, eyes, ears, shoulders,
 * elbows, wrists, hips, knees, ankles) and the result names the skeleton
 * GluonCV draws: pairs of keypoint indices.
 */
#include "decode.h"
#include "result-fields.h"
#include "result-pool.h"

#define COCO_KEYPOINTS 17

/* A first head (B, K, H, W): one heatmap per keypoint. */
static gboolean
fits (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  return n_heads >= 1 && shapes[0].ndim == 4 && shapes[0].dims[0] == batch;
}

static GQuark keypoints_name, skeleton_name;

static void
fields (void)
{
  keypoints_name = g_quark_from_static_string ("keypoints");
  skeleton_name = g_quark_from_static_string ("skeleton");
}

/* Every keypoint is labelled: a label slot per keypoint. */
static void
block (GstHybridResultPool *pool, const hy_model *model)
{
  const GstHybridTensor *head = &pool->layout[0];
  guint k = head->ndim >= 2 ? (guint) head->dims[1] : 0;
  pool->n_label_slots = gst_hybrid_result_pool_label_room (pool, k, k);
}

/* GluonCV's joint_pairs (utils/viz/keypoints.py) for COCO's 17. */
static const gint coco_skeleton[][2] = {
  {0, 1}, {1, 3}, {0, 2}, {2, 4}, {5, 6}, {5, 7}, {7, 9}, {6, 8}, {8, 10},
  {5, 11}, {6, 12}, {11, 12}, {11, 13}, {12, 14}, {13, 15}, {14, 16},
};

/* The first maximum of n values, and where. */
static gsize
first_max (const gfloat *v, gsize n, gfloat *max)
{
  gsize at = 0;
  for (gsize i = 1; i < n; i++)
    if (v[i] > v[at])
      at = i;
  *max = v[at];
  return at;
}

static void
decode (GstHybridResult *r, const GstHybridResultSpec *spec)
{
  GstStructure *s = r->results;
  const GstHybridTensor *head = &r->tensors[0];
  guint k = (guint) head->dims[1];
  gint64 h = head->dims[2], w = head->dims[3];
  gsize plane = (gsize) (h * w);
  const hy_frame_config *pc = hy_frame_plan_config (spec->plan);

  g_value_set_int (hyg_field (s, hyg_names.count, G_TYPE_INT), (gint) k);
  gboolean coco = k == COCO_KEYPOINTS;
  guint n_edges = coco ? G_N_ELEMENTS (coco_skeleton) : 0;
  /* (a field added may move the others: pointers once all are there) */
  hyg_array_fit (hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY), k,
      G_TYPE_STRING, k);
  hyg_array_fit (hyg_field (s, keypoints_name, GST_TYPE_ARRAY), 3 * k,
      G_TYPE_FLOAT, 3 * k);
  hyg_array_fit (hyg_field (s, skeleton_name, GST_TYPE_ARRAY),
      2 * n_edges, G_TYPE_INT, 2 * n_edges);
  GValue *labels = hyg_field (s, hyg_names.labels, GST_TYPE_ARRAY);
  GValue *points = hyg_field (s, keypoints_name, GST_TYPE_ARRAY);
  GValue *edges = hyg_field (s, skeleton_name, GST_TYPE_ARRAY);
  for (guint j = 0; j < k; j++) {
    gfloat max;
    gsize at = first_max (head->data + j * plane, plane, &max);
    gfloat hx = max > 0 ? (gfloat) (at % (gsize) w) : 0;
    gfloat hy = max > 0 ? (gfloat) (at / (gsize) w) : 0;
    gfloat fx, fy;
    gst_hybrid_spec_to_frame (spec, hx * pc->dst_width / (gfloat) w,
        hy * pc->dst_height / (gfloat) h, &fx, &fy);
    g_value_set_float (hyg_array_item (points, 3 * j), fx);
    g_value_set_float (hyg_array_item (points, 3 * j + 1), fy);
    g_value_set_float (hyg_array_item (points, 3 * j + 2), max);
    hyg_set_pooled (hyg_array_item (labels, j),
        gst_hybrid_result_label (r, j, (gint) j));
  }
  for (guint e = 0; e < n_edges; e++) {
    g_value_set_int (hyg_array_item (edges, 2 * e), coco_skeleton[e][0]);
    g_value_set_int (hyg_array_item (edges, 2 * e + 1), coco_skeleton[e][1]);
  }
}

const GstHybridDecoder gst_hybrid_decoder_pose = {
  .nick = "pose",
  .description = "Keypoints: the maximum of each heatmap of the "
      "first head (B,K,H,W), as GluonCV's SimplePose",
  .sidecar = HY_SIDECAR_OUTPUT_POSE,
  .fits = fits,
  .fits_needs = "a first head (B, K, H, W): one heatmap per keypoint",
  .fields = fields,
  .block = block,
  .decode = decode,
};
