/*
 * gsthybridinfer-enums.c — the enum types of hybridinfer's properties:
 * the nicks are what gst-launch and gst-inspect show.
 */
#include "gsthybridinfer-enums.h"
#include "hybrid-quantize.h"
#include "decoders.h"
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
          "tensor cores from fp16 copies, accumulating in fp32", "fp16"},
    {HY_PRECISION_BF16, "CPU with AVX512_BF16 only (refused elsewhere): "
          "convolutions from bf16 copies through oneDNN, accumulating in "
          "fp32", "bf16"})
DEFINE_ENUM_TYPE (gst_hybrid_infer_qdq_get_type, "GstHybridInferQdq",
    {HY_QDQ_INT8, "The file's int8 model: its scales become the ranges of "
          "the int8 layers", "int8"},
    {HY_QDQ_FLOAT, "Each QuantizeLinear/DequantizeLinear pair in float, as "
          "written", "float"})
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

/* output: auto, then the table's kinds (decoders.def), each at its place
 * there. */
GType
gst_hybrid_infer_output_get_type (void)
{
  static GType type = 0;
  if (g_once_init_enter (&type)) {
    /* kept for the life of the process, as g_enum_register_static asks */
    GEnumValue *values = g_new0 (GEnumValue, gst_hybrid_n_decoders + 2);
    values[0].value = GST_HYBRID_OUTPUT_AUTO;
    values[0].value_name = "From the output shapes";
    values[0].value_nick = "auto";
    for (guint i = 0; i < gst_hybrid_n_decoders; i++) {
      values[i + 1].value = (gint) i + 1;
      values[i + 1].value_name = gst_hybrid_decoders[i]->description;
      values[i + 1].value_nick = gst_hybrid_decoders[i]->nick;
    }
    g_once_init_leave (&type, g_enum_register_static ("GstHybridInferOutput",
            values));
  }
  return type;
}

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
