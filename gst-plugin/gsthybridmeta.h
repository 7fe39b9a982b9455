/*
 * gsthybridmeta.h — the tensor meta hybridinfer attaches to video buffers.
 *
 * Every buffer that leaves hybridinfer with a result carries one
 * GstHybridTensorMeta: each output head of the model (its name, shape and
 * float32 data for this frame), and `results`, the same GstStructure that
 * the element posts on the bus ("hybridinfer", see docs/ELEMENT.md).
 * Detection results also come as GstVideoRegionOfInterestMeta.
 *
 * Lifetime: the meta holds a reference on immutable storage shared by
 * every buffer that carries the same result (with interval > 1, the frames
 * in between carry the last result with inferred = FALSE), so a copied
 * buffer costs no tensor copy.  Pointers read from the meta stay valid as
 * long as the buffer holds the meta; nothing in it may be modified.  Once
 * the last meta on it is gone, the storage goes back to the element's pool
 * and a later frame's result is written into it.
 *
 * Applications need not link the plugin: the struct layout below is the
 * contract, and gst_buffer_get_hybrid_tensor_meta() finds the API type by
 * name once the plugin is loaded.
 */
#ifndef GST_HYBRID_META_H
#define GST_HYBRID_META_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_HYBRID_TENSOR_META_API_NAME "GstHybridTensorMetaAPI"
#define GST_HYBRID_TENSOR_MAX_DIMS 6

/* One output head, as produced for this frame.  With batch-size > 1 it is
 * this frame's slice: the batch dimension is 1. */
typedef struct _GstHybridTensor {
  const gchar *name;            /* the graph head's node name */
  gint ndim;
  gint64 dims[GST_HYBRID_TENSOR_MAX_DIMS];
  gsize n_elements;
  const gfloat *data;           /* n_elements floats, C order */
} GstHybridTensor;

typedef struct _GstHybridTensorMeta {
  GstMeta meta;

  guint64 frame_number;         /* the frame the tensors were computed on
                                 * (counted from 0 since the element
                                 * started) */
  gboolean inferred;            /* FALSE: carried over from frame_number */
  guint n_tensors;
  const GstHybridTensor *tensors;
  const GstStructure *results;  /* "hybridinfer": what the bus message says */

  /*< private >*/
  gpointer _result;
} GstHybridTensorMeta;

static inline GstHybridTensorMeta *
gst_buffer_get_hybrid_tensor_meta (GstBuffer * buffer)
{
  GType api = g_type_from_name (GST_HYBRID_TENSOR_META_API_NAME);
  return api ? (GstHybridTensorMeta *) gst_buffer_get_meta (buffer, api)
      : NULL;
}

/* ---- for the plugin itself ---------------------------------------------- */

typedef struct _GstHybridResult GstHybridResult;

GType gst_hybrid_tensor_meta_api_get_type (void);
const GstMetaInfo *gst_hybrid_tensor_meta_get_info (void);

/* Attaches `result` (a new reference is taken). */
GstHybridTensorMeta *gst_buffer_add_hybrid_tensor_meta (GstBuffer * buffer,
    GstHybridResult * result, gboolean inferred);

G_END_DECLS
#endif /* GST_HYBRID_META_H */
