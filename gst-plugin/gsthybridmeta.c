/*
 * gsthybridmeta.c — GstHybridTensorMeta: a reference on a shared result.
 */
#include "gsthybridmeta.h"
#include "gsthybridresult.h"

GType
gst_hybrid_tensor_meta_api_get_type (void)
{
  static GType type = 0;
  /* No tags: the tensors describe the picture's content, not its pixels,
   * so scaling or converting the frame keeps them. */
  static const gchar *tags[] = { NULL };
  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register (GST_HYBRID_TENSOR_META_API_NAME,
        tags);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void
set_result (GstHybridTensorMeta *meta, GstHybridResult *result,
    gboolean inferred)
{
  meta->_result = gst_hybrid_result_ref (result);
  meta->frame_number = result->frame_number;
  meta->inferred = inferred;
  meta->n_tensors = result->n_tensors;
  meta->tensors = result->tensors;
  meta->results = result->results;
}

static gboolean
meta_init (GstMeta *meta, gpointer params, GstBuffer *buffer)
{
  GstHybridTensorMeta *m = (GstHybridTensorMeta *) meta;
  m->_result = NULL;
  m->n_tensors = 0;
  m->tensors = NULL;
  m->results = NULL;
  m->inferred = FALSE;
  m->frame_number = 0;
  return TRUE;
}

static void
meta_free (GstMeta *meta, GstBuffer *buffer)
{
  GstHybridTensorMeta *m = (GstHybridTensorMeta *) meta;
  if (m->_result)
    gst_hybrid_result_unref (m->_result);
  m->_result = NULL;
}

/* Every transform shares the immutable result: nothing to copy. */
static gboolean
meta_transform (GstBuffer *dest, GstMeta *meta, GstBuffer *buffer,
    GQuark type, gpointer data)
{
  GstHybridTensorMeta *m = (GstHybridTensorMeta *) meta;
  if (!m->_result)
    return TRUE;
  return gst_buffer_add_hybrid_tensor_meta (dest, m->_result,
      m->inferred) != NULL;
}

const GstMetaInfo *
gst_hybrid_tensor_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;
  if (g_once_init_enter ((GstMetaInfo **) & info)) {
    const GstMetaInfo *i =
        gst_meta_register (gst_hybrid_tensor_meta_api_get_type (),
        "GstHybridTensorMeta", sizeof (GstHybridTensorMeta), meta_init,
        meta_free, meta_transform);
    g_once_init_leave ((GstMetaInfo **) & info, (GstMetaInfo *) i);
  }
  return info;
}

GstHybridTensorMeta *
gst_buffer_add_hybrid_tensor_meta (GstBuffer *buffer, GstHybridResult *result,
    gboolean inferred)
{
  GstHybridTensorMeta *meta = (GstHybridTensorMeta *)
      gst_buffer_add_meta (buffer, gst_hybrid_tensor_meta_get_info (), NULL);
  if (meta)
    set_result (meta, result, inferred);
  return meta;
}
