/*
 * hybridmeta.c — GstHybridTensorMeta (gst/hybrid/hybridmeta.h).
 *
 * The meta holds a reference on storage someone else owns (the element's
 * pooled result): adding it takes one through the owner's ref function and
 * nothing else, so attaching a result costs only GStreamer's own slot in
 * the buffer.  The accessors read the "hybridinfer" structure, which is
 * the documented form of the result for every output kind.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "hybridmeta.h"

/**
 * SECTION:gsthybridmeta
 * @title: GstHybridTensorMeta
 * @short_description: hybridinfer's results on video buffers
 *
 * Read what the `hybridinfer` element computed for a frame:
 * |[<!-- language="C" -->
 * GstHybridTensorMeta *meta = gst_buffer_get_hybrid_tensor_meta (buffer);
 * if (meta && gst_hybrid_tensor_meta_get_n_top (meta) > 0)
 *   g_print ("%s %.3f\n", gst_hybrid_tensor_meta_get_top_label (meta, 0),
 *       gst_hybrid_tensor_meta_get_top_score (meta, 0));
 * ]|
 * |[<!-- language="Python" -->
 * meta = GstHybrid.buffer_get_hybrid_tensor_meta(buffer)
 * if meta and meta.get_n_top() > 0:
 *     print(meta.get_top_label(0), meta.get_top_score(0))
 * ]|
 */

/**
 * gst_hybrid_tensor_meta_api_get_type:
 *
 * Returns: the API type of #GstHybridTensorMeta
 */
GType
gst_hybrid_tensor_meta_api_get_type (void)
{
  static GType type = 0;
  /* No tags: the tensors describe the picture's content, not its pixels,
   * so scaling or converting the frame keeps them. */
  static const gchar *tags[] = { NULL };
  if (g_once_init_enter (&type)) {
    /* A second copy of this library in the process (an application
     * linking an installed one, a plugin from a build tree) must share the
     * type, not fail to register it again. */
    GType t = g_type_from_name (GST_HYBRID_TENSOR_META_API_NAME);
    if (!t)
      t = gst_meta_api_type_register (GST_HYBRID_TENSOR_META_API_NAME, tags);
    g_once_init_leave (&type, t);
  }
  return type;
}

static gboolean
meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  GstHybridTensorMeta *m = (GstHybridTensorMeta *) meta;
  m->frame_number = 0;
  m->inferred = FALSE;
  m->n_tensors = 0;
  m->tensors = NULL;
  m->results = NULL;
  m->_owner = NULL;
  m->_owner_ref = NULL;
  m->_owner_unref = NULL;
  return TRUE;
}

static void
meta_free (GstMeta * meta, GstBuffer * buffer)
{
  GstHybridTensorMeta *m = (GstHybridTensorMeta *) meta;
  if (m->_owner && m->_owner_unref)
    m->_owner_unref (m->_owner);
  m->_owner = NULL;
}

/* Every transform shares the immutable result: nothing to copy. */
static gboolean
meta_transform (GstBuffer * dest, GstMeta * meta, GstBuffer * buffer,
    GQuark type, gpointer data)
{
  GstHybridTensorMeta *m = (GstHybridTensorMeta *) meta;
  return gst_buffer_add_hybrid_tensor_meta_full (dest, m->frame_number,
      m->inferred, m->n_tensors, m->tensors, m->results, m->_owner,
      m->_owner_ref, m->_owner_unref) != NULL;
}

/**
 * gst_hybrid_tensor_meta_get_info:
 *
 * Returns: (transfer none): the #GstMetaInfo of #GstHybridTensorMeta
 */
const GstMetaInfo *
gst_hybrid_tensor_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;
  if (g_once_init_enter ((GstMetaInfo **) & info)) {
    /* As for the API type: a registration by another copy is reused. */
    const GstMetaInfo *i = gst_meta_get_info ("GstHybridTensorMeta");
    if (!i)
      i = gst_meta_register (gst_hybrid_tensor_meta_api_get_type (),
          "GstHybridTensorMeta", sizeof (GstHybridTensorMeta), meta_init,
          meta_free, meta_transform);
    g_once_init_leave ((GstMetaInfo **) & info, (GstMetaInfo *) i);
  }
  return info;
}

/**
 * gst_buffer_get_hybrid_tensor_meta:
 * @buffer: a #GstBuffer
 *
 * Returns: (transfer none) (nullable): the result hybridinfer attached to
 *   @buffer, or %NULL
 */
GstHybridTensorMeta *
gst_buffer_get_hybrid_tensor_meta (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  return (GstHybridTensorMeta *) gst_buffer_get_meta (buffer,
      GST_HYBRID_TENSOR_META_API_TYPE);
}

/**
 * gst_buffer_add_hybrid_tensor_meta_full: (skip)
 * @buffer: a writable #GstBuffer
 * @frame_number: the frame the tensors were computed on
 * @inferred: %FALSE when carried over from @frame_number
 * @n_tensors: the number of tensors
 * @tensors: (array length=n_tensors): the tensors
 * @results: the "hybridinfer" structure
 * @owner: (nullable): what keeps @tensors and @results alive
 * @owner_ref: takes a reference on @owner
 * @owner_unref: drops it
 *
 * For elements producing results: attaches a meta pointing at @tensors and
 * @results, which must stay valid and unchanged while @owner is
 * referenced; a reference is taken (@owner_ref) for each meta, and copied
 * buffers take their own.  Allocates nothing but the meta's slot.
 *
 * Returns: (transfer none): the meta
 */
GstHybridTensorMeta *
gst_buffer_add_hybrid_tensor_meta_full (GstBuffer * buffer,
    guint64 frame_number, gboolean inferred, guint n_tensors,
    const GstHybridTensor * tensors, const GstStructure * results,
    gpointer owner, GBoxedCopyFunc owner_ref, GDestroyNotify owner_unref)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (n_tensors == 0 || tensors != NULL, NULL);
  g_return_val_if_fail (owner == NULL || (owner_ref && owner_unref), NULL);

  GstHybridTensorMeta *meta = (GstHybridTensorMeta *)
      gst_buffer_add_meta (buffer, GST_HYBRID_TENSOR_META_INFO, NULL);
  if (!meta)
    return NULL;
  meta->frame_number = frame_number;
  meta->inferred = inferred;
  meta->n_tensors = n_tensors;
  meta->tensors = tensors;
  meta->results = results;
  meta->_owner = owner ? owner_ref (owner) : NULL;
  meta->_owner_ref = owner_ref;
  meta->_owner_unref = owner_unref;
  return meta;
}

/**
 * gst_hybrid_tensor_meta_get_frame_number:
 * @meta: a #GstHybridTensorMeta
 *
 * Returns: the frame the tensors were computed on, counted from 0 since
 *   the element started
 */
guint64
gst_hybrid_tensor_meta_get_frame_number (const GstHybridTensorMeta * meta)
{
  g_return_val_if_fail (meta != NULL, 0);
  return meta->frame_number;
}

/**
 * gst_hybrid_tensor_meta_is_inferred:
 * @meta: a #GstHybridTensorMeta
 *
 * Returns: %TRUE when this buffer's own frame was inferred, %FALSE when
 *   it carries the result of an earlier one (interval > 1)
 */
gboolean
gst_hybrid_tensor_meta_is_inferred (const GstHybridTensorMeta * meta)
{
  g_return_val_if_fail (meta != NULL, FALSE);
  return meta->inferred;
}

/**
 * gst_hybrid_tensor_meta_get_results:
 * @meta: a #GstHybridTensorMeta
 *
 * Returns: (transfer none) (nullable): the "hybridinfer" structure, the
 *   same fields as the element's bus message
 */
const GstStructure *
gst_hybrid_tensor_meta_get_results (const GstHybridTensorMeta * meta)
{
  g_return_val_if_fail (meta != NULL, NULL);
  return meta->results;
}

/**
 * gst_hybrid_tensor_meta_get_result_type:
 * @meta: a #GstHybridTensorMeta
 *
 * Returns: (transfer none) (nullable): "classification", "detection" or
 *   "raw"
 */
const gchar *
gst_hybrid_tensor_meta_get_result_type (const GstHybridTensorMeta * meta)
{
  g_return_val_if_fail (meta != NULL, NULL);
  return meta->results ? gst_structure_get_string (meta->results, "type")
      : NULL;
}

/**
 * gst_hybrid_tensor_meta_get_n_tensors:
 * @meta: a #GstHybridTensorMeta
 *
 * Returns: the number of output heads
 */
guint
gst_hybrid_tensor_meta_get_n_tensors (const GstHybridTensorMeta * meta)
{
  g_return_val_if_fail (meta != NULL, 0);
  return meta->n_tensors;
}

/**
 * gst_hybrid_tensor_meta_get_tensor:
 * @meta: a #GstHybridTensorMeta
 * @index: which head, from 0
 *
 * Returns: (transfer none) (nullable): output head @index, %NULL past the
 *   last
 */
const GstHybridTensor *
gst_hybrid_tensor_meta_get_tensor (const GstHybridTensorMeta * meta,
    guint index)
{
  g_return_val_if_fail (meta != NULL, NULL);
  return index < meta->n_tensors ? &meta->tensors[index] : NULL;
}

/**
 * gst_hybrid_tensor_meta_find_tensor:
 * @meta: a #GstHybridTensorMeta
 * @name: a graph head's node name
 *
 * Returns: (transfer none) (nullable): the head called @name, or %NULL
 */
const GstHybridTensor *
gst_hybrid_tensor_meta_find_tensor (const GstHybridTensorMeta * meta,
    const gchar * name)
{
  g_return_val_if_fail (meta != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  for (guint i = 0; i < meta->n_tensors; i++)
    if (g_strcmp0 (meta->tensors[i].name, name) == 0)
      return &meta->tensors[i];
  return NULL;
}

/* Element `index` of the array field `field` of a result of `type`, or
 * NULL when the meta has no such result or the index is past the end. */
static const GValue *
result_element (const GstHybridTensorMeta * meta, const gchar * type,
    const gchar * field, guint index)
{
  if (!meta->results
      || g_strcmp0 (gst_structure_get_string (meta->results, "type"), type))
    return NULL;
  const GValue *array = gst_structure_get_value (meta->results, field);
  if (!array || !GST_VALUE_HOLDS_ARRAY (array)
      || index >= gst_value_array_get_size (array))
    return NULL;
  return gst_value_array_get_value (array, index);
}

static guint
result_count (const GstHybridTensorMeta * meta, const gchar * type)
{
  if (!meta->results
      || g_strcmp0 (gst_structure_get_string (meta->results, "type"), type))
    return 0;
  /* Every per-class and per-box array has one entry each. */
  const GValue *array = gst_structure_get_value (meta->results, "scores");
  return array && GST_VALUE_HOLDS_ARRAY (array)
      ? gst_value_array_get_size (array) : 0;
}

/**
 * gst_hybrid_tensor_meta_get_n_top:
 * @meta: a #GstHybridTensorMeta
 *
 * Returns: how many top classes a classification reports (hybridinfer's
 *   top-k, or fewer when the model has fewer classes); 0 for other
 *   results
 */
guint
gst_hybrid_tensor_meta_get_n_top (const GstHybridTensorMeta * meta)
{
  g_return_val_if_fail (meta != NULL, 0);
  return result_count (meta, "classification");
}

/**
 * gst_hybrid_tensor_meta_get_top_label:
 * @meta: a #GstHybridTensorMeta
 * @index: 0 for the best class, 1 for the next…
 *
 * Returns: (transfer none) (nullable): the label of the @index-th best
 *   class (`class-N` when the labels file does not name it), or %NULL when
 *   @meta is no classification or @index is not below
 *   gst_hybrid_tensor_meta_get_n_top()
 */
const gchar *
gst_hybrid_tensor_meta_get_top_label (const GstHybridTensorMeta * meta,
    guint index)
{
  g_return_val_if_fail (meta != NULL, NULL);
  const GValue *v = result_element (meta, "classification", "labels", index);
  return v && G_VALUE_HOLDS_STRING (v) ? g_value_get_string (v) : NULL;
}

/**
 * gst_hybrid_tensor_meta_get_top_class_id:
 * @meta: a #GstHybridTensorMeta
 * @index: 0 for the best class, 1 for the next…
 *
 * Returns: the class index of the @index-th best class, -1 when there is
 *   none
 */
gint
gst_hybrid_tensor_meta_get_top_class_id (const GstHybridTensorMeta * meta,
    guint index)
{
  g_return_val_if_fail (meta != NULL, -1);
  const GValue *v = result_element (meta, "classification", "class-ids",
      index);
  return v && G_VALUE_HOLDS_INT (v) ? g_value_get_int (v) : -1;
}

/**
 * gst_hybrid_tensor_meta_get_top_score:
 * @meta: a #GstHybridTensorMeta
 * @index: 0 for the best class, 1 for the next…
 *
 * Returns: the score of the @index-th best class (after the model's own
 *   activation), NaN when there is none
 */
gfloat
gst_hybrid_tensor_meta_get_top_score (const GstHybridTensorMeta * meta,
    guint index)
{
  g_return_val_if_fail (meta != NULL, NAN);
  const GValue *v = result_element (meta, "classification", "scores", index);
  return v && G_VALUE_HOLDS_FLOAT (v) ? g_value_get_float (v) : NAN;
}

/**
 * gst_hybrid_tensor_meta_get_n_detections:
 * @meta: a #GstHybridTensorMeta
 *
 * Returns: how many boxes a detection reports (above hybridinfer's
 *   threshold); 0 for other results
 */
guint
gst_hybrid_tensor_meta_get_n_detections (const GstHybridTensorMeta * meta)
{
  g_return_val_if_fail (meta != NULL, 0);
  return result_count (meta, "detection");
}

/**
 * gst_hybrid_tensor_meta_get_detection:
 * @meta: a #GstHybridTensorMeta
 * @index: which box, from 0 (the model's order)
 * @label: (out) (optional) (transfer none): its label
 * @class_id: (out) (optional): its class index
 * @score: (out) (optional): its score
 * @x: (out) (optional): left edge, frame pixels
 * @y: (out) (optional): top edge, frame pixels
 * @width: (out) (optional): width, frame pixels
 * @height: (out) (optional): height, frame pixels
 *
 * Box @index of a detection, as its #GstVideoRegionOfInterestMeta says
 * (before rounding to whole pixels).
 *
 * Returns: %FALSE when @meta is no detection or has no box @index
 */
gboolean
gst_hybrid_tensor_meta_get_detection (const GstHybridTensorMeta * meta,
    guint index, const gchar ** label, gint * class_id, gfloat * score,
    gfloat * x, gfloat * y, gfloat * width, gfloat * height)
{
  g_return_val_if_fail (meta != NULL, FALSE);
  const GValue *l = result_element (meta, "detection", "labels", index);
  const GValue *c = result_element (meta, "detection", "class-ids", index);
  const GValue *s = result_element (meta, "detection", "scores", index);
  const GValue *b = result_element (meta, "detection", "boxes", index);
  if (!l || !c || !s || !b || !G_VALUE_HOLDS_STRING (l)
      || !G_VALUE_HOLDS_INT (c) || !G_VALUE_HOLDS_FLOAT (s)
      || !GST_VALUE_HOLDS_ARRAY (b) || gst_value_array_get_size (b) != 4)
    return FALSE;
  gfloat *out[4] = { x, y, width, height };
  for (guint i = 0; i < 4; i++) {
    const GValue *v = gst_value_array_get_value (b, i);
    if (!G_VALUE_HOLDS_FLOAT (v))
      return FALSE;
    if (out[i])
      *out[i] = g_value_get_float (v);
  }
  if (label)
    *label = g_value_get_string (l);
  if (class_id)
    *class_id = g_value_get_int (c);
  if (score)
    *score = g_value_get_float (s);
  return TRUE;
}

/**
 * gst_hybrid_tensor_get_name:
 * @tensor: a #GstHybridTensor
 *
 * Returns: (transfer none): the graph head's node name
 */
const gchar *
gst_hybrid_tensor_get_name (const GstHybridTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return tensor->name;
}

/**
 * gst_hybrid_tensor_get_dims:
 * @tensor: a #GstHybridTensor
 * @n_dims: (out): the number of dimensions
 *
 * Returns: (transfer none) (array length=n_dims): the shape
 */
const gint64 *
gst_hybrid_tensor_get_dims (const GstHybridTensor * tensor, guint * n_dims)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  if (n_dims)
    *n_dims = (guint) tensor->ndim;
  return tensor->dims;
}

/**
 * gst_hybrid_tensor_get_data:
 * @tensor: a #GstHybridTensor
 * @n_elements: (out): the number of values
 *
 * Returns: (transfer none) (array length=n_elements): the values, float32
 *   in C order
 */
const gfloat *
gst_hybrid_tensor_get_data (const GstHybridTensor * tensor,
    gsize * n_elements)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  if (n_elements)
    *n_elements = tensor->n_elements;
  return tensor->data;
}
