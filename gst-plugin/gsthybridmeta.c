/*
 * gsthybridmeta.c — GstHybridTensorMeta on a shared result: the meta
 * (libgsthybridmeta-1.0) points into the result block and keeps it
 * referenced, so the block goes back to the element's pool only when no
 * buffer carries it any more.
 */
#include "gsthybridmeta.h"
#include "gsthybridresult.h"

static gpointer
result_ref (gpointer result)
{
  return gst_hybrid_result_ref (result);
}

static void
result_unref (gpointer result)
{
  gst_hybrid_result_unref (result);
}

GstHybridTensorMeta *
gst_buffer_add_hybrid_tensor_meta (GstBuffer * buffer,
    GstHybridResult * result, gboolean inferred)
{
  return gst_buffer_add_hybrid_tensor_meta_full (buffer,
      result->frame_number, inferred, result->n_tensors, result->tensors,
      result->results, result, result_ref, result_unref);
}
