/*
 * gst/hybrid/hybridmeta.h — GstHybridTensorMeta: what hybridinfer computed
 * for a video frame, as applications read it (libgsthybridmeta-1.0).
 *
 * Every buffer that leaves hybridinfer with a result carries one
 * GstHybridTensorMeta: each output head of the model (its name, shape and
 * float32 data for this frame), and `results`, the same GstStructure that
 * the element can post on the bus ("hybridinfer", docs/ELEMENT.md).
 * Detection boxes also come as GstVideoRegionOfInterestMeta.
 *
 * C applications may read the fields; the accessors below say the same
 * thing in a form GObject introspection can bind (arrays with their
 * lengths, a classification's top classes by index), so that Python reads
 * results through the GstHybrid-1.0 typelib.
 *
 * Lifetime: the meta holds a reference on immutable storage shared by
 * every buffer that carries the same result, so a copied buffer costs no
 * tensor copy.  Everything read from the meta stays valid as long as the
 * buffer holds the meta; nothing in it may be modified.  Once the last
 * meta on it is gone the storage is reused for a later frame's result:
 * copy what must outlive the buffer.
 */
#ifndef __GST_HYBRID_META_H__
#define __GST_HYBRID_META_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_HYBRID_TENSOR_META_API_NAME "GstHybridTensorMetaAPI"
#define GST_HYBRID_TENSOR_META_API_TYPE (gst_hybrid_tensor_meta_api_get_type ())
#define GST_HYBRID_TENSOR_META_INFO (gst_hybrid_tensor_meta_get_info ())
#define GST_HYBRID_TENSOR_MAX_DIMS 6

typedef struct _GstHybridTensor GstHybridTensor;
typedef struct _GstHybridTensorMeta GstHybridTensorMeta;

/**
 * GstHybridTensor:
 * @name: the graph head's node name
 * @ndim: how many of @dims are used
 * @dims: the shape; with batch-size > 1 this frame's slice (batch 1)
 * @n_elements: the product of the dims
 * @data: @n_elements floats, C order
 *
 * One output head of the model, as produced for one frame.  From
 * bindings, read it with gst_hybrid_tensor_get_dims() and
 * gst_hybrid_tensor_get_data().
 */
struct _GstHybridTensor {
  const gchar *name;
  gint ndim;
  gint64 dims[GST_HYBRID_TENSOR_MAX_DIMS];
  gsize n_elements;
  const gfloat *data;
};

/**
 * GstHybridTensorMeta:
 * @meta: the parent #GstMeta
 * @frame_number: the frame the tensors were computed on (counted from 0
 *   since the element started)
 * @inferred: %FALSE when the result was carried over from @frame_number
 *   (hybridinfer's interval > 1)
 * @n_tensors: the number of output heads
 * @tensors: (array length=n_tensors): the output heads
 * @results: the "hybridinfer" structure (docs/ELEMENT.md, "The bus message")
 *
 * The result of one inferred frame, on every buffer that carries it.
 */
struct _GstHybridTensorMeta {
  GstMeta meta;

  guint64 frame_number;
  gboolean inferred;
  guint n_tensors;
  const GstHybridTensor *tensors;
  const GstStructure *results;

  /*< private >*/
  gpointer _owner;
  GBoxedCopyFunc _owner_ref;
  GDestroyNotify _owner_unref;
};

GType gst_hybrid_tensor_meta_api_get_type (void);
const GstMetaInfo *gst_hybrid_tensor_meta_get_info (void);

GstHybridTensorMeta *gst_buffer_get_hybrid_tensor_meta (GstBuffer * buffer);

GstHybridTensorMeta *gst_buffer_add_hybrid_tensor_meta_full (GstBuffer *
    buffer, guint64 frame_number, gboolean inferred, guint n_tensors,
    const GstHybridTensor * tensors, const GstStructure * results,
    gpointer owner, GBoxedCopyFunc owner_ref, GDestroyNotify owner_unref);

guint64 gst_hybrid_tensor_meta_get_frame_number (const GstHybridTensorMeta *
    meta);
gboolean gst_hybrid_tensor_meta_is_inferred (const GstHybridTensorMeta *
    meta);
const GstStructure *gst_hybrid_tensor_meta_get_results (const
    GstHybridTensorMeta * meta);
const gchar *gst_hybrid_tensor_meta_get_result_type (const
    GstHybridTensorMeta * meta);

guint gst_hybrid_tensor_meta_get_n_tensors (const GstHybridTensorMeta * meta);
const GstHybridTensor *gst_hybrid_tensor_meta_get_tensor (const
    GstHybridTensorMeta * meta, guint index);
const GstHybridTensor *gst_hybrid_tensor_meta_find_tensor (const
    GstHybridTensorMeta * meta, const gchar * name);

guint gst_hybrid_tensor_meta_get_n_top (const GstHybridTensorMeta * meta);
const gchar *gst_hybrid_tensor_meta_get_top_label (const GstHybridTensorMeta *
    meta, guint index);
gint gst_hybrid_tensor_meta_get_top_class_id (const GstHybridTensorMeta *
    meta, guint index);
gfloat gst_hybrid_tensor_meta_get_top_score (const GstHybridTensorMeta *
    meta, guint index);

guint gst_hybrid_tensor_meta_get_n_detections (const GstHybridTensorMeta *
    meta);
gboolean gst_hybrid_tensor_meta_get_detection (const GstHybridTensorMeta *
    meta, guint index, const gchar ** label, gint * class_id, gfloat * score,
    gfloat * x, gfloat * y, gfloat * width, gfloat * height);

const gchar *gst_hybrid_tensor_get_name (const GstHybridTensor * tensor);
const gint64 *gst_hybrid_tensor_get_dims (const GstHybridTensor * tensor,
    guint * n_dims);
const gfloat *gst_hybrid_tensor_get_data (const GstHybridTensor * tensor,
    gsize * n_elements);

/* A region of interest's secondary result (hybridinfer
 * inference-region=roi), by the region's index in the buffer. */
guint gst_buffer_get_n_hybrid_regions (GstBuffer * buffer);
const GstStructure *gst_buffer_get_hybrid_region_result (GstBuffer * buffer,
    guint index);
const gchar *gst_buffer_get_hybrid_region_label (GstBuffer * buffer,
    guint index, gfloat * score);

G_END_DECLS
#endif /* __GST_HYBRID_META_H__ */
