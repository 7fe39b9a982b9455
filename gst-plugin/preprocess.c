/*
 * preprocess.c — frame to tensor in one pass (see preprocess.h).
 *
 * Each output row is produced in two steps: the needed source pixels are
 * sampled and converted to RGB floats in three row-sized scratch arrays,
 * then normalised into the tensor's channel planes.  The second step is a
 * contiguous loop gcc vectorises; the first is a gather, bounded by the
 * tensor size rather than the frame size.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "preprocess.h"

/* Where output columns (or rows) sample the source: two neighbours and the
 * weight of the second.  Offsets are in bytes for packed pixels. */
typedef struct sample_table {
  int *lo, *hi;
  float *w;
} sample_table;

struct hy_preprocess {
  hy_preprocess_config cfg;
  int ox, oy, rw, rh;           /* where the picture lands in the tensor */
  sample_table cols, rows;      /* luma or packed pixels */
  sample_table ccols, crows;    /* 4:2:0 chroma */
  bool direct;                  /* same size: each pixel read as is */
  int bpp;                      /* packed: bytes per pixel */
  int off[3];                   /* packed: byte offset of R, G, B */
  float mul[3], add[3];         /* value = pixel * mul + add, per channel */
  float *row[3];                /* R, G, B of one output row */
  /* YUV to RGB: R = y + vr * v, G = y - ug * u - vg * v, B = y + ub * u,
   * after y, u, v are brought to full range and centred. */
  float y_mul, y_add, c_mul, vr, ug, vg, ub;
};

static void
table_alloc (sample_table *t, int n)
{
  t->lo = g_new (int, n);
  t->hi = g_new (int, n);
  t->w = g_new (float, n);
}

static void
table_clear (sample_table *t)
{
  g_free (t->lo);
  g_free (t->hi);
  g_free (t->w);
}

/* n outputs over a source of `src` samples that the outputs cover at
 * `ratio` source samples per output; `unit` scales indices to offsets. */
static void
table_fill (sample_table *t, int n, int src, double ratio,
    hy_interpolation interp, int unit)
{
  for (int i = 0; i < n; i++) {
    double centre = (i + 0.5) * ratio;
    int lo, hi;
    float w;
    if (interp == HY_INTERP_NEAREST) {
      lo = hi = MIN ((int) floor (centre), src - 1);
      w = 0.0f;
    } else {
      double s = CLAMP (centre - 0.5, 0.0, (double) (src - 1));
      lo = (int) floor (s);
      hi = MIN (lo + 1, src - 1);
      w = (float) (s - lo);
    }
    t->lo[i] = lo * unit;
    t->hi[i] = hi * unit;
    t->w[i] = w;
  }
}

static gboolean
is_yuv (hy_pixel_layout layout)
{
  return layout == HY_PIXEL_NV12 || layout == HY_PIXEL_I420;
}

static void
setup_yuv (hy_preprocess *pp)
{
  const hy_preprocess_config *c = &pp->cfg;
  float kr = c->yuv_kr, kb = c->yuv_kb, kg = 1.0f - kr - kb;
  if (c->yuv_full_range) {
    pp->y_mul = 1.0f;
    pp->y_add = 0.0f;
    pp->c_mul = 1.0f;
  } else {
    pp->y_mul = 255.0f / 219.0f;
    pp->y_add = -16.0f * 255.0f / 219.0f;
    pp->c_mul = 255.0f / 224.0f;
  }
  pp->vr = 2.0f * (1.0f - kr);
  pp->ub = 2.0f * (1.0f - kb);
  pp->vg = 2.0f * kr * (1.0f - kr) / kg;
  pp->ug = 2.0f * kb * (1.0f - kb) / kg;
}

static gboolean
check_config (const hy_preprocess_config *c, GError **error)
{
  if (c->src_width < 1 || c->src_height < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "frame size %dx%d: both sides must be at least 1", c->src_width,
        c->src_height);
    return FALSE;
  }
  if (c->dst_width < 1 || c->dst_height < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "input size %dx%d: both sides must be at least 1", c->dst_width,
        c->dst_height);
    return FALSE;
  }
  if (c->dst_channels != 1 && c->dst_channels != 3) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "the model input has %d channels: only 1 (gray) or 3 (colour) "
        "can be made from video", c->dst_channels);
    return FALSE;
  }
  if ((unsigned) c->layout > HY_PIXEL_I420) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "pixel layout %d is not one hy_preprocess knows", (int) c->layout);
    return FALSE;
  }
  for (int i = 0; i < c->dst_channels; i++) {
    if (!(c->std[i] != 0.0f) || !isfinite (c->std[i])
        || !isfinite (c->mean[i])) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "channel %d: std must be finite and non-zero and mean finite "
          "(got mean %g, std %g)", i, c->mean[i], c->std[i]);
      return FALSE;
    }
  }
  return TRUE;
}

hy_preprocess *
hy_preprocess_new (const hy_preprocess_config *config, GError **error)
{
  if (!check_config (config, error))
    return NULL;
  hy_preprocess *pp = g_new0 (hy_preprocess, 1);
  const hy_preprocess_config *c = &pp->cfg;
  pp->cfg = *config;

  pp->rw = c->dst_width;
  pp->rh = c->dst_height;
  if (c->resize == HY_RESIZE_LETTERBOX) {
    double s = MIN ((double) c->dst_width / c->src_width,
        (double) c->dst_height / c->src_height);
    pp->rw = CLAMP ((int) lround (c->src_width * s), 1, c->dst_width);
    pp->rh = CLAMP ((int) lround (c->src_height * s), 1, c->dst_height);
  }
  pp->ox = (c->dst_width - pp->rw) / 2;
  pp->oy = (c->dst_height - pp->rh) / 2;
  /* Sampling pixel centres at the same size lands on the pixels: no
   * interpolation (chroma, at half size, still interpolates). */
  pp->direct = pp->rw == c->src_width && pp->rh == c->src_height;

  double rx = (double) c->src_width / pp->rw;
  double ry = (double) c->src_height / pp->rh;
  int unit = 1;
  if (!is_yuv (c->layout) && c->layout != HY_PIXEL_GRAY8) {
    int alpha;
    hy_pixel_packed (c->layout, &pp->bpp, &pp->off[0], &pp->off[1],
        &pp->off[2], &alpha);
    unit = pp->bpp;
  }
  table_alloc (&pp->cols, pp->rw);
  table_alloc (&pp->rows, pp->rh);
  table_fill (&pp->cols, pp->rw, c->src_width, rx, c->interpolation, unit);
  table_fill (&pp->rows, pp->rh, c->src_height, ry, c->interpolation, 1);
  if (is_yuv (c->layout)) {
    int cw = (c->src_width + 1) / 2, ch = (c->src_height + 1) / 2;
    table_alloc (&pp->ccols, pp->rw);
    table_alloc (&pp->crows, pp->rh);
    /* NV12 interleaves U and V: a chroma sample is two bytes apart. */
    table_fill (&pp->ccols, pp->rw, cw, rx / 2, c->interpolation,
        c->layout == HY_PIXEL_NV12 ? 2 : 1);
    table_fill (&pp->crows, pp->rh, ch, ry / 2, c->interpolation, 1);
    setup_yuv (pp);
  }

  for (int i = 0; i < c->dst_channels; i++) {
    pp->mul[i] = c->scale / c->std[i];
    pp->add[i] = -c->mean[i] / c->std[i];
  }
  for (int i = 0; i < 3; i++)
    pp->row[i] = g_new (float, pp->rw);
  return pp;
}

void
hy_preprocess_free (hy_preprocess *pp)
{
  if (!pp)
    return;
  table_clear (&pp->cols);
  table_clear (&pp->rows);
  table_clear (&pp->ccols);
  table_clear (&pp->crows);
  for (int i = 0; i < 3; i++)
    g_free (pp->row[i]);
  g_free (pp);
}

const hy_preprocess_config *
hy_preprocess_get_config (const hy_preprocess *pp)
{
  return &pp->cfg;
}

static inline float
bilerp (const uint8_t *restrict a, const uint8_t *restrict b, int lo, int hi,
    float wx, float wy)
{
  float top = a[lo] + (a[hi] - a[lo]) * wx;
  float bottom = b[lo] + (b[hi] - b[lo]) * wx;
  return top + (bottom - top) * wy;
}

static void
sample_packed (const hy_preprocess *pp, const uint8_t *a, const uint8_t *b,
    float wy)
{
  const sample_table *t = &pp->cols;
  float *restrict r = pp->row[0], *restrict g = pp->row[1],
      *restrict bl = pp->row[2];
  const uint8_t *ar = a + pp->off[0], *ag = a + pp->off[1],
      *ab = a + pp->off[2];
  const uint8_t *br = b + pp->off[0], *bg = b + pp->off[1],
      *bb = b + pp->off[2];
  for (int i = 0; i < pp->rw; i++) {
    int lo = t->lo[i], hi = t->hi[i];
    float w = t->w[i];
    r[i] = bilerp (ar, br, lo, hi, w, wy);
    g[i] = bilerp (ag, bg, lo, hi, w, wy);
    bl[i] = bilerp (ab, bb, lo, hi, w, wy);
  }
}

/* The frame at the tensor's size: a plain conversion of one row. */
static void
copy_packed (const hy_preprocess *pp, const uint8_t *restrict a)
{
  float *restrict r = pp->row[0], *restrict g = pp->row[1],
      *restrict b = pp->row[2];
  const int bpp = pp->bpp, ro = pp->off[0], go = pp->off[1],
      bo = pp->off[2];
  for (int i = 0; i < pp->rw; i++) {
    r[i] = a[i * bpp + ro];
    g[i] = a[i * bpp + go];
    b[i] = a[i * bpp + bo];
  }
}

static void
copy_plane (float *restrict out, const uint8_t *restrict a, int n)
{
  for (int i = 0; i < n; i++)
    out[i] = a[i];
}

static void
sample_gray (const hy_preprocess *pp, const uint8_t *a, const uint8_t *b,
    float wy)
{
  const sample_table *t = &pp->cols;
  float *restrict v = pp->row[0];
  if (pp->direct)
    copy_plane (v, a, pp->rw);
  else
    for (int i = 0; i < pp->rw; i++)
      v[i] = bilerp (a, b, t->lo[i], t->hi[i], t->w[i], wy);
  memcpy (pp->row[1], v, (size_t) pp->rw * sizeof (float));
  memcpy (pp->row[2], v, (size_t) pp->rw * sizeof (float));
}

static inline float
clamp_byte (float v)
{
  return v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
}

/* ya, yb: luma rows; ua/ub, va/vb: chroma rows of U and V. */
static void
sample_yuv (const hy_preprocess *pp, const uint8_t *ya, const uint8_t *yb,
    float wy, const uint8_t *ua, const uint8_t *ub_, const uint8_t *va,
    const uint8_t *vb, float cwy)
{
  const sample_table *t = &pp->cols, *ct = &pp->ccols;
  float *restrict r = pp->row[0], *restrict g = pp->row[1],
      *restrict b = pp->row[2];
  for (int i = 0; i < pp->rw; i++) {
    float y = pp->direct ? ya[i]
        : bilerp (ya, yb, t->lo[i], t->hi[i], t->w[i], wy);
    float u = bilerp (ua, ub_, ct->lo[i], ct->hi[i], ct->w[i], cwy);
    float v = bilerp (va, vb, ct->lo[i], ct->hi[i], ct->w[i], cwy);
    y = y * pp->y_mul + pp->y_add;
    u = (u - 128.0f) * pp->c_mul;
    v = (v - 128.0f) * pp->c_mul;
    r[i] = clamp_byte (y + pp->vr * v);
    g[i] = clamp_byte (y - pp->ug * u - pp->vg * v);
    b[i] = clamp_byte (y + pp->ub * u);
  }
}

static void
sample_row (const hy_preprocess *pp, int j, const uint8_t *const planes[3],
    const int strides[3])
{
  const hy_preprocess_config *c = &pp->cfg;
  const uint8_t *a = planes[0] + (size_t) pp->rows.lo[j] * strides[0];
  const uint8_t *b = planes[0] + (size_t) pp->rows.hi[j] * strides[0];
  float wy = pp->rows.w[j];
  if (c->layout == HY_PIXEL_GRAY8) {
    sample_gray (pp, a, b, wy);
  } else if (is_yuv (c->layout)) {
    int clo = pp->crows.lo[j], chi = pp->crows.hi[j];
    float cwy = pp->crows.w[j];
    const uint8_t *u0, *u1, *v0, *v1;
    if (c->layout == HY_PIXEL_NV12) {
      u0 = planes[1] + (size_t) clo * strides[1];
      u1 = planes[1] + (size_t) chi * strides[1];
      v0 = u0 + 1;
      v1 = u1 + 1;
    } else {
      u0 = planes[1] + (size_t) clo * strides[1];
      u1 = planes[1] + (size_t) chi * strides[1];
      v0 = planes[2] + (size_t) clo * strides[2];
      v1 = planes[2] + (size_t) chi * strides[2];
    }
    sample_yuv (pp, a, b, wy, u0, u1, v0, v1, cwy);
  } else if (pp->direct) {
    copy_packed (pp, a);
  } else {
    sample_packed (pp, a, b, wy);
  }
}

static void
fill (float *restrict p, int n, float v)
{
  for (int i = 0; i < n; i++)
    p[i] = v;
}

/* Normalises the sampled row into row y of each tensor channel. */
static void
store_row (const hy_preprocess *pp, int y, float *dst)
{
  const hy_preprocess_config *c = &pp->cfg;
  size_t plane = (size_t) c->dst_width * c->dst_height;
  size_t at = (size_t) y * c->dst_width + pp->ox;
  if (c->dst_channels == 1) {
    const float *restrict r = pp->row[0], *restrict g = pp->row[1],
        *restrict b = pp->row[2];
    float *restrict out = dst + at;
    float mul = pp->mul[0], add = pp->add[0];
    for (int i = 0; i < pp->rw; i++)
      out[i] = (0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i]) * mul + add;
    return;
  }
  for (int ch = 0; ch < 3; ch++) {
    const float *restrict src = pp->row[c->bgr ? 2 - ch : ch];
    float *restrict out = dst + ch * plane + at;
    float mul = pp->mul[ch], add = pp->add[ch];
    for (int i = 0; i < pp->rw; i++)
      out[i] = src[i] * mul + add;
  }
}

/* Letterbox bands: black, normalised. */
static void
fill_padding (const hy_preprocess *pp, float *dst)
{
  const hy_preprocess_config *c = &pp->cfg;
  int w = c->dst_width, h = c->dst_height;
  size_t plane = (size_t) w * h;
  int right = w - pp->ox - pp->rw;
  for (int ch = 0; ch < c->dst_channels; ch++) {
    float *p = dst + ch * plane;
    float v = pp->add[ch];
    fill (p, pp->oy * w, v);
    fill (p + (size_t) (pp->oy + pp->rh) * w, (h - pp->oy - pp->rh) * w, v);
    for (int y = pp->oy; y < pp->oy + pp->rh; y++) {
      fill (p + (size_t) y * w, pp->ox, v);
      fill (p + (size_t) y * w + pp->ox + pp->rw, right, v);
    }
  }
}

void
hy_preprocess_run (const hy_preprocess *pp, const uint8_t *const planes[3],
    const int strides[3], float *dst)
{
  if (pp->rw != pp->cfg.dst_width || pp->rh != pp->cfg.dst_height)
    fill_padding (pp, dst);
  for (int j = 0; j < pp->rh; j++) {
    sample_row (pp, j, planes, strides);
    store_row (pp, pp->oy + j, dst);
  }
}

void
hy_preprocess_to_frame (const hy_preprocess *pp, float x, float y,
    float *frame_x, float *frame_y)
{
  *frame_x = (x - pp->ox) * (float) pp->cfg.src_width / pp->rw;
  *frame_y = (y - pp->oy) * (float) pp->cfg.src_height / pp->rh;
}
