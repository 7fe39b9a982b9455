/*
 * decode-masks.c — Mask R-CNN's masks: each kept detection's M x M mask
 * (head 3, (B, K, M, M), the probabilities of the row's own class, as
 * GluonCV's export picks them) pasted into the frame as GluonCV's
 * gluoncv.data.transforms.mask.fill pastes it (fast_fill, what
 * utils.viz.expand_mask uses), with the box mapped back to the picture as
 * the detection's box is (letterbox or stretch undone):
 *
 *  - the mask gets a border of zeros, (M + 2) x (M + 2), and the box grows
 *    about its centre by (M + 2) / M to match (in float32, as numpy does);
 *  - its corners are rounded half to even (np.round), giving a rectangle
 *    of (x2 - x1 + 1) x (y2 - y1 + 1) pixels;
 *  - the padded mask is resized to that rectangle with PIL's bilinear
 *    filter on a float image ("F": separable, horizontal pass first, a
 *    triangle filter widened by the scale when shrinking, weights and sums
 *    in double, each pass stored as float), then a pixel is inside where
 *    the value is > 0.5;
 *  - what lies inside the picture is kept.
 *
 * The result: per detection, where its bitmap lies in the frame and its
 * bytes (GstHybridDetection.mask_*; the ROI meta's "mask" parameter), and
 * in the "hybridinfer" structure "masks", per detection an int array
 * <x, y, width, height, runs…>: the bitmap's row-major run lengths,
 * alternating outside / inside and starting with outside (docs/ELEMENT.md).
 */
#include <math.h>
#include <string.h>

#include "decode-masks.h"
#include "result-fields.h"

static GQuark masks_name;

void
gst_hybrid_masks_fields (void)
{
  masks_name = g_quark_from_static_string ("masks");
}

gboolean
gst_hybrid_masks_head_fits (const hy_shape *shapes, guint n_heads,
    gint64 batch)
{
  if (n_heads != 4)
    return FALSE;
  const hy_shape *m = &shapes[3];
  return m->ndim == 4 && m->dims[0] == batch && shapes[0].ndim >= 2
      && m->dims[1] == shapes[0].dims[1] && m->dims[2] >= 1
      && m->dims[3] >= 1;
}

/* ---- PIL's bilinear resampling (Resample.c), one axis ---------------- */

typedef struct {
  int ksize;
  int *bounds;                  /* per output pixel: first input, count */
  double *weights;              /* per output pixel: ksize weights */
} Axis;

static int
axis_ksize (int in_size, int out_size)
{
  double filterscale = MAX ((double) in_size / out_size, 1.0);
  return (int) ceil (filterscale) * 2 + 1;
}

static void
axis_fill (Axis *a, int in_size, int out_size)
{
  double scale = (double) in_size / out_size;
  double filterscale = MAX (scale, 1.0);
  double support = filterscale;       /* the triangle's support is 1 */
  for (int xx = 0; xx < out_size; xx++) {
    double center = (xx + 0.5) * scale, total = 0.0;
    int xmin = (int) (center - support + 0.5);
    int xmax = (int) (center + support + 0.5);
    xmin = MAX (xmin, 0);
    xmax = MIN (xmax, in_size) - xmin;
    double *k = &a->weights[(gsize) xx * a->ksize];
    int x = 0;
    for (; x < xmax; x++) {
      double t = fabs ((x + xmin - center + 0.5) / filterscale);
      k[x] = t < 1.0 ? 1.0 - t : 0.0;
      total += k[x];
    }
    for (x = 0; x < xmax; x++)
      if (total != 0.0)
        k[x] /= total;
    for (; x < a->ksize; x++)
      k[x] = 0.0;
    a->bounds[2 * xx] = xmin;
    a->bounds[2 * xx + 1] = xmax;
  }
}

/* Bytes of scratch for a (pw x ph) -> (w x h) resize. */
static gsize
scratch_size (int pw, int ph, int w, int h)
{
  return (gsize) w * axis_ksize (pw, w) * sizeof (double)
      + (gsize) h * axis_ksize (ph, h) * sizeof (double)
      + 2 * ((gsize) w + (gsize) h) * sizeof (int)
      + (gsize) w * ph * sizeof (float) + 64;
}

static gpointer
grow (gpointer buf, gsize *capacity, gsize need)
{
  if (need <= *capacity)
    return buf;
  *capacity = MAX (need, *capacity * 2);
  return g_realloc (buf, *capacity);
}

/* ---- pasting ------------------------------------------------------------ */

/* The pasted rectangle of a box (picture pixels) for an m_w x m_h mask:
 * the expanded box rounded, (x1, y1) … (x2, y2) inclusive. */
static void
paste_rect (const gfloat box[4], int m_w, int m_h, int r[4])
{
  gfloat cx = (box[0] + box[2]) / 2.0f, cy = (box[1] + box[3]) / 2.0f;
  gfloat hw = (box[2] - box[0]) / 2.0f, hh = (box[3] - box[1]) / 2.0f;
  hw = hw * (gfloat) ((double) (m_w + 2) / m_w);
  hh = hh * (gfloat) ((double) (m_h + 2) / m_h);
  r[0] = (int) rintf (cx - hw);
  r[1] = (int) rintf (cy - hh);
  r[2] = (int) rintf (cx + hw);
  r[3] = (int) rintf (cy + hh);
}

/* The mask (m_w x m_h floats) padded and resized to the w x h rectangle
 * at (x1, y1), thresholded, for the part [cx0, cx1) x [cy0, cy1) of it
 * (rectangle pixels) written row by row into `out`. */
static void
resize_into (const gfloat *mask, int m_w, int m_h, int w, int h, int cx0,
    int cy0, int cx1, int cy1, gpointer scratch, guint8 *out)
{
  int pw = m_w + 2, ph = m_h + 2;
  Axis ax = {.ksize = axis_ksize (pw, w) }, ay = {.ksize = axis_ksize (ph, h) };
  guint8 *p = scratch;
  ax.weights = (double *) p;
  p += (gsize) w * ax.ksize * sizeof (double);
  ay.weights = (double *) p;
  p += (gsize) h * ay.ksize * sizeof (double);
  ax.bounds = (int *) p;
  p += 2 * (gsize) w * sizeof (int);
  ay.bounds = (int *) p;
  p += 2 * (gsize) h * sizeof (int);
  float *rows = (float *) p;    /* the horizontal pass: ph rows of w */
  axis_fill (&ax, pw, w);
  axis_fill (&ay, ph, h);

  /* padded pixel (u, v) is mask pixel (u - 1, v - 1), zero on the border */
#define PADDED(u, v) ((u) >= 1 && (u) <= m_w && (v) >= 1 && (v) <= m_h \
      ? mask[((v) - 1) * m_w + (u) - 1] : 0.0f)
  for (int v = 0; v < ph; v++)
    for (int xx = cx0; xx < cx1; xx++) {
      const double *k = &ax.weights[(gsize) xx * ax.ksize];
      int xmin = ax.bounds[2 * xx], n = ax.bounds[2 * xx + 1];
      double sum = 0.0;
      for (int x = 0; x < n; x++)
        sum += PADDED (x + xmin, v) * k[x];
      rows[(gsize) v * w + xx] = (float) sum;
    }
#undef PADDED
  for (int yy = cy0; yy < cy1; yy++) {
    const double *k = &ay.weights[(gsize) yy * ay.ksize];
    int ymin = ay.bounds[2 * yy], n = ay.bounds[2 * yy + 1];
    for (int xx = cx0; xx < cx1; xx++) {
      double sum = 0.0;
      for (int y = 0; y < n; y++)
        sum += rows[(gsize) (y + ymin) * w + xx] * k[y];
      *out++ = (float) sum > 0.5f;
    }
  }
}

/* Makes `array` hold n ints, keeping the ones it has (a longer one is
 * replaced: GStreamer cannot shrink an array in place). */
static void
fit_ints (GValue *array, guint n)
{
  if (gst_value_array_get_size (array) > n) {
    g_value_unset (array);
    gst_value_array_init (array, n);
  }
  for (guint len = gst_value_array_get_size (array); len < n; len++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_INT);
    gst_value_array_append_and_take_value (array, &v);
  }
}

static guint
count_runs (const guint8 *bits, gsize n)
{
  guint runs = 1;
  guint8 at = 0;
  for (gsize i = 0; i < n; i++)
    if (bits[i] != at) {
      at = bits[i];
      runs++;
    }
  return runs;
}

static void
write_runs (GValue *array, const GstHybridDetection *d, const guint8 *bits)
{
  gsize n = (gsize) d->mask_w * d->mask_h;
  fit_ints (array, 4 + count_runs (bits, n));
  g_value_set_int (hyg_array_item (array, 0), d->mask_x);
  g_value_set_int (hyg_array_item (array, 1), d->mask_y);
  g_value_set_int (hyg_array_item (array, 2), d->mask_w);
  g_value_set_int (hyg_array_item (array, 3), d->mask_h);
  guint at = 4;
  gint run = 0;
  guint8 value = 0;
  for (gsize i = 0; i < n; i++) {
    if (bits[i] != value) {
      g_value_set_int (hyg_array_item (array, at++), run);
      value = bits[i];
      run = 0;
    }
    run++;
  }
  g_value_set_int (hyg_array_item (array, at), run);
}

/* Detection d's pasted rectangle in picture pixels, (x1, y1) … (x2, y2)
 * inclusive, and its part inside the picture (FALSE when none is). */
static gboolean
place (const GstHybridDetection *d, const GstHybridTensor *boxes,
    const GstHybridResultSpec *spec, int m_w, int m_h, int rect[4],
    int clip[4])
{
  const hy_frame_config *pc = hy_frame_plan_config (spec->plan);
  const gfloat *b = boxes->data + (gsize) d->row * 4;
  gfloat box[4];
  hy_frame_plan_to_frame (spec->plan, b[0], b[1], &box[0], &box[1]);
  hy_frame_plan_to_frame (spec->plan, b[2], b[3], &box[2], &box[3]);
  paste_rect (box, m_w, m_h, rect);
  clip[0] = MAX (rect[0], 0);
  clip[1] = MAX (rect[1], 0);
  clip[2] = MIN (rect[2] + 1, pc->src_width);
  clip[3] = MIN (rect[3] + 1, pc->src_height);
  /* PIL cannot resize to nothing: no mask then */
  return rect[2] >= rect[0] && rect[3] >= rect[1] && clip[2] > clip[0]
      && clip[3] > clip[1];
}

void
gst_hybrid_decode_masks (GstHybridResult *r, const GstHybridResultSpec *spec,
    guint mask_head)
{
  const GstHybridTensor *head = &r->tensors[mask_head];
  const GstHybridTensor *boxes = &r->tensors[2];
  int m_h = (int) head->dims[2], m_w = (int) head->dims[3];
  int rect[4], clip[4];

  /* where each lands, and the room it takes */
  gsize bytes = 0, scratch = 0;
  for (guint i = 0; i < r->n_detections; i++) {
    GstHybridDetection *d = &r->detections[i];
    d->mask_x = d->mask_y = d->mask_w = d->mask_h = 0;
    d->mask_at = bytes;
    if (!place (d, boxes, spec, m_w, m_h, rect, clip))
      continue;
    d->mask_x = clip[0];
    d->mask_y = clip[1];
    d->mask_w = clip[2] - clip[0];
    d->mask_h = clip[3] - clip[1];
    bytes += (gsize) d->mask_w * d->mask_h;
    scratch = MAX (scratch, scratch_size (m_w + 2, m_h + 2,
            rect[2] - rect[0] + 1, rect[3] - rect[1] + 1));
  }
  r->masks = grow (r->masks, &r->masks_capacity, MAX (bytes, 1));
  r->mask_scratch = grow (r->mask_scratch, &r->mask_scratch_capacity,
      MAX (scratch, 1));
  r->masks_size = bytes;

  GstStructure *s = r->results;
  GValue *list = hyg_field (s, masks_name, GST_TYPE_ARRAY);
  if (gst_value_array_get_size (list) > r->n_detections) {
    g_value_unset (list);
    gst_value_array_init (list, r->n_detections);
  }
  while (gst_value_array_get_size (list) < r->n_detections) {
    GValue v = G_VALUE_INIT;
    gst_value_array_init (&v, 4);
    gst_value_array_append_and_take_value (list, &v);
  }
  for (guint i = 0; i < r->n_detections; i++) {
    GstHybridDetection *d = &r->detections[i];
    guint8 *bits = r->masks + d->mask_at;
    if (d->mask_w > 0 && place (d, boxes, spec, m_w, m_h, rect, clip))
      resize_into (head->data + (gsize) d->row * m_w * m_h, m_w, m_h,
          rect[2] - rect[0] + 1, rect[3] - rect[1] + 1, clip[0] - rect[0],
          clip[1] - rect[1], clip[2] - rect[0], clip[3] - rect[1],
          r->mask_scratch, bits);
    /* then placed in the buffer's frame, as the box is */
    d->mask_x += (gint) spec->origin_x;
    d->mask_y += (gint) spec->origin_y;
    write_runs (hyg_array_item (list, i), d, bits);
  }
}

GstStructure *
gst_hybrid_result_mask_param (const GstHybridResult *result, guint i)
{
  const GstHybridDetection *d = &result->detections[i];
  /* a detection without a masks head has none (decode-detection.c) */
  if (d->mask_w <= 0 || d->mask_h <= 0)
    return NULL;
  GBytes *data = g_bytes_new (result->masks + d->mask_at,
      (gsize) d->mask_w * d->mask_h);
  GstStructure *p = gst_structure_new ("mask", "x", G_TYPE_INT, d->mask_x,
      "y", G_TYPE_INT, d->mask_y, "width", G_TYPE_INT, d->mask_w,
      "height", G_TYPE_INT, d->mask_h, "data", G_TYPE_BYTES, data, NULL);
  g_bytes_unref (data);
  return p;
}
