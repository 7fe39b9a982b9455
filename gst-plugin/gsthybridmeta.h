/*
 * gsthybridmeta.h — attaching hybridinfer's results to buffers.
 *
 * The meta itself, GstHybridTensorMeta, is public: it lives in
 * libgsthybridmeta-1.0 (<gst/hybrid/hybridmeta.h>, gst-plugin/lib/gst/hybrid),
 * which applications link to read it and this plugin links to attach it.
 * What remains here is the plugin's side: a meta holds a reference on the
 * element's pooled result (gsthybridresult.h).
 */
#ifndef GST_HYBRID_PLUGIN_META_H
#define GST_HYBRID_PLUGIN_META_H

#include <gst/gst.h>
#include <gst/hybrid/hybridmeta.h>

G_BEGIN_DECLS

typedef struct _GstHybridResult GstHybridResult;

/* Attaches `result` (a new reference is taken; copies of the buffer take
 * their own).  Allocates nothing but the meta's slot in the buffer. */
GstHybridTensorMeta *gst_buffer_add_hybrid_tensor_meta (GstBuffer * buffer,
    GstHybridResult * result, gboolean inferred);

G_END_DECLS
#endif /* GST_HYBRID_PLUGIN_META_H */
