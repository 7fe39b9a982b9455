/*
 * gsthybridinfer-enums.h — the enum types of hybridinfer's properties.
 */
#ifndef GST_HYBRID_INFER_ENUMS_H
#define GST_HYBRID_INFER_ENUMS_H

#include <glib-object.h>

G_BEGIN_DECLS

typedef enum {
  GST_HYBRID_INFER_SCALE_BYTE,  /* 0..255 */
  GST_HYBRID_INFER_SCALE_UNIT,  /* 0..1 */
} GstHybridInferScale;

typedef enum {
  GST_HYBRID_INFER_REGION_FULL_FRAME,
  GST_HYBRID_INFER_REGION_ROI,
} GstHybridInferRegion;

typedef enum {
  GST_HYBRID_INFER_COLOR_ORDER_RGB,
  GST_HYBRID_INFER_COLOR_ORDER_BGR,
} GstHybridInferColorOrder;

/* mode: hy_mode; precision: hy_precision; qdq: hy_qdq_mode; resize: hy_resize_mode; interpolation: hy_interpolation;
 * output: GstHybridOutput (auto, then the kinds of decoders.def);
 * output-activation: GstHybridActivation — the values of the types they
 * name. */
#define GST_TYPE_HYBRID_INFER_MODE (gst_hybrid_infer_mode_get_type ())
#define GST_TYPE_HYBRID_INFER_PRECISION (gst_hybrid_infer_precision_get_type ())
#define GST_TYPE_HYBRID_INFER_QDQ (gst_hybrid_infer_qdq_get_type ())
#define GST_TYPE_HYBRID_INFER_COLOR_ORDER (gst_hybrid_infer_color_order_get_type ())
#define GST_TYPE_HYBRID_INFER_SCALE (gst_hybrid_infer_scale_get_type ())
#define GST_TYPE_HYBRID_INFER_RESIZE (gst_hybrid_infer_resize_get_type ())
#define GST_TYPE_HYBRID_INFER_INTERPOLATION (gst_hybrid_infer_interpolation_get_type ())
#define GST_TYPE_HYBRID_INFER_OUTPUT (gst_hybrid_infer_output_get_type ())
#define GST_TYPE_HYBRID_INFER_ACTIVATION (gst_hybrid_infer_activation_get_type ())
#define GST_TYPE_HYBRID_INFER_REGION (gst_hybrid_infer_region_get_type ())

GType gst_hybrid_infer_mode_get_type (void);
GType gst_hybrid_infer_precision_get_type (void);
GType gst_hybrid_infer_qdq_get_type (void);
GType gst_hybrid_infer_color_order_get_type (void);
GType gst_hybrid_infer_scale_get_type (void);
GType gst_hybrid_infer_resize_get_type (void);
GType gst_hybrid_infer_interpolation_get_type (void);
GType gst_hybrid_infer_output_get_type (void);
GType gst_hybrid_infer_activation_get_type (void);
GType gst_hybrid_infer_region_get_type (void);

G_END_DECLS
#endif /* GST_HYBRID_INFER_ENUMS_H */
