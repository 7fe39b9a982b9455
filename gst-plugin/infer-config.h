/*
 * infer-config.h — what hybridinfer's properties say (the settings, with
 * their defaults), and the snapshot start() takes of them to make a
 * session's configuration (infer-session.h).
 */
#ifndef GST_HYBRID_INFER_CONFIG_H
#define GST_HYBRID_INFER_CONFIG_H

#include <gst/gst.h>

#include "gsthybridinfer-enums.h"
#include "infer-session.h"
#include "property-parse.h"

G_BEGIN_DECLS

#define DEFAULT_DEVICE "auto"
#define DEFAULT_PRECISION HY_PRECISION_FP32
#define DEFAULT_QDQ HY_QDQ_INT8
#define DEFAULT_MODE HY_MODE_HYBRID
#define DEFAULT_COLOR_ORDER GST_HYBRID_INFER_COLOR_ORDER_RGB
#define DEFAULT_SCALE GST_HYBRID_INFER_SCALE_BYTE
#define DEFAULT_RESIZE HY_RESIZE_STRETCH
#define DEFAULT_INTERPOLATION HY_INTERP_BILINEAR
#define DEFAULT_INTERVAL 1
#define DEFAULT_STATS_INTERVAL 0
#define DEFAULT_BATCH_SIZE 1
#define MAX_BATCH_SIZE 256
#define DEFAULT_BATCH_TIMEOUT_MS 1000
#define DEFAULT_OUTPUT GST_HYBRID_OUTPUT_AUTO
#define DEFAULT_TOP_K 1
#define DEFAULT_OUTPUT_ACTIVATION GST_HYBRID_ACTIVATION_AUTO
#define MAX_TOP_K GST_HYBRID_MAX_TOP_K
#define DEFAULT_THRESHOLD 0.5f
/* Ultralytics' own default for YOLOv8's NMS */
#define DEFAULT_IOU_THRESHOLD 0.7f
#define DEFAULT_POST_MESSAGES FALSE
/* Off: scripts parse gst-launch -m's text of the structure, which a
 * quoted JSON string at its end breaks, and it costs json-glib's
 * allocations per message. */
#define DEFAULT_MESSAGE_JSON FALSE
#define DEFAULT_SKIP_WHEN_BUSY FALSE
#define DEFAULT_INFERENCE_REGION GST_HYBRID_INFER_REGION_FULL_FRAME
#define MAX_CHANNEL_VALUES 3

/* The properties a model's sidecar (hybrid-sidecar.h) also gives: a bit
 * of GstHybridInferSettings.set_mask each.  A property is "set" once
 * set_property ran for it (gst-launch's name=value, g_object_set, a
 * GstChildProxy preset…), whatever the value, even the default: then it
 * wins over the sidecar.  None of these properties is G_PARAM_CONSTRUCT,
 * so construction never marks one. */
typedef enum {
  GST_HYBRID_SET_PARAMS = 1 << 0,
  GST_HYBRID_SET_LABELS = 1 << 1,
  GST_HYBRID_SET_INPUT_NAME = 1 << 2,
  GST_HYBRID_SET_INPUT_SIZE = 1 << 3,
  GST_HYBRID_SET_COLOR_ORDER = 1 << 4,
  GST_HYBRID_SET_MEAN = 1 << 5,
  GST_HYBRID_SET_STD = 1 << 6,
  GST_HYBRID_SET_SCALE = 1 << 7,
  GST_HYBRID_SET_RESIZE = 1 << 8,
  GST_HYBRID_SET_INTERPOLATION = 1 << 9,
  GST_HYBRID_SET_OUTPUT = 1 << 10,
  GST_HYBRID_SET_TOP_K = 1 << 11,
  GST_HYBRID_SET_THRESHOLD = 1 << 12,
  GST_HYBRID_SET_IOU_THRESHOLD = 1 << 13,
} GstHybridSetFlags;

/* What the properties say; the element guards it with its object lock. */
typedef struct {
  gchar *model;
  gchar *params;
  gchar *labels;
  gchar *device;
  hy_precision precision;
  hy_qdq_mode qdq;
  hy_mode mode;
  gchar *dump_dir;
  gchar *dump_frames;
  hyg_frame_set *dump_set;       /* NULL: dump_frames does not parse */
  gchar *input_name;
  gchar *input_size;
  GstHybridInferColorOrder color_order;
  GArray *mean, *std;           /* gdouble */
  GstHybridInferScale scale;
  hy_resize_mode resize;
  hy_interpolation interpolation;
  guint interval;
  guint stats_interval_ms;      /* 0: no hybridinfer-stats messages */
  guint batch_size;
  guint batch_timeout_ms;       /* 0: a partial batch waits for frames */
  GstHybridOutput output;
  GstHybridActivation output_activation;
  guint top_k;
  gfloat threshold;
  gfloat iou_threshold;         /* NMS of heads that need it (YOLOv8) */
  gchar *class_thresholds;      /* NULL: none (property-parse.h) */
  gboolean post_messages;
  gboolean message_json;        /* messages carry the JSON object */
  gchar *shared_engine;         /* NULL: the element's own model */
  GstHybridInferRegion inference_region;
  gchar *object_class;          /* roi: comma-separated types; NULL: all */
  gboolean skip_when_busy;
  guint set_mask;               /* GstHybridSetFlags: set by the user */
  /* The snapshot only: inline labels from the sidecar (labels NULL), and
   * what the sidecar says the model's last layer applies (AUTO: it does
   * not say).  labels_inline is packed (hyg_strv_pack): one block. */
  gchar **labels_inline;
  GstHybridActivation model_activation;
  /* The snapshot only: top_k and threshold from the sidecar, where it
   * gives them (GST_HYBRID_SET_TOP_K / _THRESHOLD bits; 0: none).  Frames
   * take them from the running session unless the property was set. */
  guint sidecar_scores;
  guint sidecar_top_k;
  gfloat sidecar_threshold;
} GstHybridInferSettings;

/* The defaults. */
void gst_hybrid_infer_settings_init (GstHybridInferSettings * s);
/* Frees what the settings hold. */
void gst_hybrid_infer_settings_clear (GstHybridInferSettings * s);
/* A deep copy of what start() reads (the caller holds the lock): no
 * dump-dir and no parsed dump set, which apply while playing. */
void gst_hybrid_infer_settings_snapshot (const GstHybridInferSettings * s,
    GstHybridInferSettings * copy);
/* Records that the user set property `name` (set_property calls it; the
 * caller holds the lock).  Names that no sidecar key matches are
 * ignored. */
void gst_hybrid_infer_settings_mark_set (GstHybridInferSettings * s,
    const gchar * name);
/* Fills the snapshot's unset settings from the model's sidecar
 * (PREFIX-model.json beside model=PREFIX-symbol.json), when there is one.
 * *sidecar_path (free it): the file used, or NULL.  *warning (free it):
 * the keys the sidecar has that this version does not know, or NULL.
 * FALSE + error naming the file, key and value when it cannot be used. */
gboolean gst_hybrid_infer_settings_apply_sidecar (GstHybridInferSettings *
    copy, gchar ** sidecar_path, gchar ** warning, GError ** error);
/* The session configuration from a snapshot; the strings stay owned by
 * the snapshot.  FALSE + error naming the property that is wrong. */
gboolean gst_hybrid_infer_settings_to_config (const GstHybridInferSettings *
    copy, GstHybridSessionConfig * config, GError ** error);

G_END_DECLS
#endif /* GST_HYBRID_INFER_CONFIG_H */
