/*
 * gsthybridinfer-enums.c — the enum types of hybridinfer's properties:
 * the nicks are what gst-launch and gst-inspect show.
 */
#include "gsthybridinfer-enums.h"
#include "decode.h"
#include "hybrid.h"
#include "hybrid-frame.h"

#define DEFINE_ENUM_TYPE(func, name, ...)                                  \
  GType func (void)                                                        \
  {                                                                        \
    static GType type = 0;                                                 \
    static const GEnumValue values[] = { __VA_ARGS__, {0, NULL, NULL} };   \
    if (g_once_init_enter (&type))                                         \
      g_once_init_leave (&type, g_enum_register_static (name, values));    \
    return type;                                                           \
  }

DEFINE_ENUM_TYPE (gst_hybrid_infer_mode_get_type, "GstHybridInferMode",
    {HY_MODE_HYBRID, "Hybridized: a compiled plan, one arena", "hybrid"},
    {HY_MODE_IMPERATIVE, "Imperative: node by node, every layer kept",
        "imperative"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_precision_get_type,
    "GstHybridInferPrecision",
    {HY_PRECISION_FP32, "32-bit floats throughout", "fp32"},
    {HY_PRECISION_FP16, "GPU only: convolutions and matrix products on "
          "tensor cores from fp16 copies, accumulating in fp32", "fp16"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_color_order_get_type,
    "GstHybridInferColorOrder",
    {GST_HYBRID_INFER_COLOR_ORDER_RGB, "Tensor channels R, G, B", "rgb"},
    {GST_HYBRID_INFER_COLOR_ORDER_BGR, "Tensor channels B, G, R", "bgr"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_scale_get_type, "GstHybridInferScale",
    {GST_HYBRID_INFER_SCALE_BYTE, "Pixel values 0..255", "0-255"},
    {GST_HYBRID_INFER_SCALE_UNIT, "Pixel values divided by 255: 0..1",
        "0-1"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_resize_get_type, "GstHybridInferResize",
    {HY_RESIZE_STRETCH, "Stretch the frame to the input size", "stretch"},
    {HY_RESIZE_LETTERBOX, "Keep the aspect ratio, pad with black",
        "letterbox"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_interpolation_get_type,
    "GstHybridInferInterpolation",
    {HY_INTERP_BILINEAR, "Bilinear", "bilinear"},
    {HY_INTERP_NEAREST, "Nearest neighbour", "nearest"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_output_get_type, "GstHybridInferOutput",
    {GST_HYBRID_OUTPUT_AUTO, "From the output shapes", "auto"},
    {GST_HYBRID_OUTPUT_CLASSIFICATION, "Top-k classes of the first head",
        "classification"},
    {GST_HYBRID_OUTPUT_DETECTION,
        "Boxes: (B,K,6) or ids/scores/bboxes heads", "detection"},
    {GST_HYBRID_OUTPUT_RAW, "Tensors only (in the meta)", "raw"},
    {GST_HYBRID_OUTPUT_SEGMENTATION, "A class per pixel of the first head "
          "(B,C,H,W): the class-map tensor", "segmentation"},
    {GST_HYBRID_OUTPUT_POSE, "Keypoints: the maximum of each heatmap of the "
          "first head (B,K,H,W), as GluonCV's SimplePose", "pose"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_region_get_type, "GstHybridInferRegion",
    {GST_HYBRID_INFER_REGION_FULL_FRAME, "The whole frame", "full-frame"},
    {GST_HYBRID_INFER_REGION_ROI, "Each region of interest upstream "
          "found (GstVideoRegionOfInterestMeta); results go to its meta",
        "roi"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_activation_get_type,
    "GstHybridInferActivation",
    {GST_HYBRID_ACTIVATION_AUTO, "Classification: softmax, unless the "
          "model (its sidecar, or its last layer) applies one", "auto"},
    {GST_HYBRID_ACTIVATION_NONE, "The model's own values", "none"},
    {GST_HYBRID_ACTIVATION_SOFTMAX, "Softmax over the classes", "softmax"},
    {GST_HYBRID_ACTIVATION_SIGMOID, "Sigmoid of each score", "sigmoid"})
