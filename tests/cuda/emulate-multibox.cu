/*
 * emulate-multibox.cu — the CUDA _contrib_MultiBoxPrior and
 * _contrib_MultiBoxDetection kernels (multibox-prior.cu,
 * multibox-detection.cu) emulated on the host against the CPU kernels:
 * the prior's element function over every index, the detection block's
 * steps in the kernel's order, each step's threads one after another
 * (what a __syncthreads-separated phase of independent threads amounts
 * to).  Every output must be the CPU's bit for bit (NaN matching NaN).
 *
 * Detection inputs are made to meet every branch: class probabilities on
 * a coarse grid (ties between classes and between anchors' scores, kept
 * in order by the stable sort), a few NaN ones, anchors clustered so that
 * boxes overlap across nms_threshold, degenerate and NaN anchors, offsets
 * with NaN and overflowing exponents.
 *
 * One line per case; exits 1 if any case failed.
 */
#include <vector>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/multibox-prior.cuh"
#include "kernels/cuda/multibox-detection.cuh"
#include "emulate-harness.h"

/* got[] against want[] bit for bit (any NaN matches any NaN); the case's
 * line; the tensors freed. */
static void
finish_exact (emu *e)
{
  char why[256] = "";
  bool ok = true;
  for (int j = 0; j < e->n_out && ok; j++) {
    for (int64_t i = 0; i < numel (e->want[j]); i++) {
      const float w = e->want[j]->data[i], g = e->got[j]->data[i];
      if ((isnan (w) && isnan (g)) || !memcmp (&w, &g, sizeof w))
        continue;
      snprintf (why, sizeof why, "output %d at %" G_GINT64_FORMAT
          ": got %.9g, want %.9g", j, (gint64) i, g, w);
      ok = false;
      break;
    }
  }
  emu_report (ok, e->name, 0.0, why);
  emu_close (e);
}

/* ---- MultiBoxPrior ------------------------------------------------------ */

static void
prior (const char *const *kv, hy_shape data)
{
  emu e;
  if (!emu_open (&e, "_contrib_MultiBoxPrior", kv, &data, 1))
    return;
  /* Only the map's shape matters. */
  for (int64_t i = 0; i < numel (e.in[0]); i++)
    e.in[0]->data[i] = emu_uniform (-1.0f, 1.0f);
  emu_run_cpu (&e);
  const hy_cuda_prior_args a = hy_cuda_prior_plan (
      (const hy_multibox_prior_params *) e.params, &e.in[0]->shape);
  MAP (a, hy_cuda_prior_one, e.got[0]);
  finish_exact (&e);
}

/* ---- MultiBoxDetection, emulated ---------------------------------------- */

/* Rows suppressed over every case: none would leave NMS untested. */
static int64_t suppressed;

static void
emulate_detection (emu *e)
{
  const hy_mbd_args a = hy_mbd_plan (
      (const hy_multibox_detection_params *) e->params, &e->in[0]->shape);
  if (a.batch == 0 || a.anchors == 0)
    return;
  const int threads = HY_CUDA_THREADS;
  const int64_t na = a.anchors;
  std::vector<char> ws ((size_t) a.batch * hy_mbd_scratch_size (&a));
  for (int64_t n = 0; n < a.batch; n++) {
    const float *cls = e->in[0]->data + n * a.classes * na;
    const float *loc = e->in[1]->data + n * na * 4;
    const float *anchors = e->in[2]->data;
    float *y = e->got[0]->data + n * na * 6;
    const hy_mbd_scratch s = hy_cuda_mbd_scratch_at (&a, ws.data (), n);
    for (int64_t i = 0; i < na; i++)
      hy_mbd_classify (&a, cls, i, s.rows + i * 6);
    const int64_t count = hy_mbd_collect (&a, s.rows, s.idx);
    for (int64_t i = 0; i < na * 6; i++)
      y[i] = hy_mbd_out (&a, s.rows, s.idx, count, anchors, loc, i);
    if (!a.nms || count < 1)
      continue;
    for (int64_t i = 0; i < count * 6; i++)
      s.rows[i] = y[i];
    for (int64_t k = 0; k < count; k++)
      s.idx[k] = k;
    for (int64_t run = 1; run < count; run *= 2) {
      for (int t = 0; t < threads; t++)
        for (int64_t lo = (int64_t) t * 2 * run; lo < count;
            lo += (int64_t) threads * 2 * run)
          hy_mbd_merge (s.rows, s.idx, s.tmp, count, run, lo);
      for (int64_t k = 0; k < count; k++)
        s.idx[k] = s.tmp[k];
    }
    const int64_t kept = hy_mbd_kept (&a, count);
    for (int64_t i = 0; i < count * 6; i++)
      hy_mbd_write_back (s.rows, s.idx, kept, i, y);
    for (int64_t ref = 0; ref < kept; ref++) {
      if (y[ref * 6] < 0)
        continue;
      for (int t = 0; t < threads; t++)
        for (int64_t pos = ref + 1 + t; pos < kept; pos += threads)
          if (hy_mbd_suppresses (&a, y, ref, pos)) {
            y[pos * 6] = -1.0f;
            suppressed++;
          }
    }
  }
}

/* ---- detection inputs --------------------------------------------------- */

/* Probabilities (N, C, A) on a grid of eighths: ties everywhere; every
 * nan_every-th value NaN (0: none). */
static void
fill_probabilities (hy_tensor *t, int nan_every)
{
  for (int64_t i = 0; i < numel (t); i++) {
    t->data[i] = roundf (emu_uniform (0.0f, 1.0f) * 8.0f) / 8.0f;
    if (nan_every > 0 && i % nan_every == nan_every - 1)
      t->data[i] = NAN;
  }
}

/* Offsets (N, A·4): small, on a grid of sixteenths (equal boxes from
 * equal anchors), a few NaN and a few whose exponent overflows. */
static void
fill_offsets (hy_tensor *t)
{
  for (int64_t i = 0; i < numel (t); i++) {
    t->data[i] = roundf (emu_uniform (-1.0f, 1.0f) * 16.0f) / 16.0f;
    if (i % 97 == 41)
      t->data[i] = NAN;
    if (i % 131 == 66)
      t->data[i] = 900.0f;
  }
}

/* Corner anchors (K, A, 4) around a few centres, so that neighbours
 * overlap a lot and others little; some reversed (negative width), some
 * NaN, some past [0, 1] (clipped away or not). */
static void
fill_anchors (hy_tensor *t)
{
  const int64_t rows = numel (t) / 4;
  for (int64_t r = 0; r < rows; r++) {
    float *b = t->data + r * 4;
    const float cx = 0.25f * (float) (r % 4) + emu_uniform (-0.05f, 0.05f);
    const float cy = 0.3f * (float) (r % 3) + emu_uniform (-0.05f, 0.05f);
    const float w = emu_uniform (0.05f, 0.4f), h = emu_uniform (0.05f, 0.4f);
    b[0] = cx - w / 2;
    b[1] = cy - h / 2;
    b[2] = cx + w / 2;
    b[3] = cy + h / 2;
    if (r % 37 == 19) {
      const float x = b[0];
      b[0] = b[2];
      b[2] = x;
    }
    if (r % 53 == 29)
      b[1] = NAN;
    if (r % 8 == 3)
      memcpy (b, b - 4, sizeof (float[4]));     /* a copy of the last */
  }
}

/* The offsets of an anchor copied from the last (fill_anchors) copied too:
 * equal boxes, whose IoU is exactly 1. */
static void
copy_offsets (hy_tensor *loc, int64_t anchors)
{
  const int64_t batches = loc->shape.dims[0];
  for (int64_t n = 0; n < batches; n++)
    for (int64_t r = 3; r < anchors; r += 8) {
      float *o = loc->data + (n * anchors + r) * 4;
      memcpy (o, o - 4, sizeof (float[4]));
    }
}

static void
detection (const char *const *kv, int64_t batch, int64_t classes,
    int64_t anchors, int64_t loc_batch, int64_t anchor_sets, int nan_every)
{
  hy_shape in[3] = { S (batch, classes, anchors), S (loc_batch, anchors * 4),
    S (anchor_sets, anchors, 4) };
  emu e;
  if (!emu_open (&e, "_contrib_MultiBoxDetection", kv, in, 3))
    return;
  fill_probabilities (e.in[0], nan_every);
  fill_offsets (e.in[1]);
  fill_anchors (e.in[2]);
  copy_offsets (e.in[1], anchors);
  emu_run_cpu (&e);
  emulate_detection (&e);
  finish_exact (&e);
}

/* ---- cases -------------------------------------------------------------- */

int
main (void)
{
  const char *const *none = NULL;

  /* Priors: SSD's sizes and ratios, maps square and not, steps given,
   * automatic and zero, offsets, clipping, a rank-5 map. */
  prior (none, S (2, 8, 5, 3));
  prior (KV ("sizes", "(0.2, 0.272)", "ratios", "(1, 2, 0.5)"),
      S (1, 4, 19, 19));
  prior (KV ("sizes", "(0.1, 0.141)", "ratios", "(1, 2, 0.5, 3, 0.333)",
          "clip", "True"), S (1, 2, 38, 38));
  prior (KV ("sizes", "(0.95, 1.2, 0.3)", "ratios", "(0.37, 1, 2.7)",
          "clip", "True", "steps", "(0.1, 0.05)", "offsets", "(0.3, 0.7)"),
      S (1, 1, 7, 11));
  prior (KV ("sizes", "(0.5,)", "ratios", "(2,)", "steps", "(0, 0.25)",
          "offsets", "(0, 1)"), S (1, 3, 10, 38));
  prior (KV ("sizes", "(0.75, 0.2)", "ratios", "(1, 3)"), S (1, 1, 1, 1));
  prior (KV ("ratios", "(1, 2, 0.5)"), S (1, 2, 3, 4, 7));

  /* Detections: defaults; the attributes one by one; more anchors than
   * threads; no NMS (thresholds outside (0, 1]); nothing or only the
   * background valid. */
  detection (none, 2, 4, 60, 2, 1, 0);
  detection (none, 1, 3, 45, 1, 1, 23);
  detection (KV ("threshold", "0.3", "nms_threshold", "0.45"), 2, 6, 80, 2,
      1, 0);
  detection (KV ("force_suppress", "True", "nms_threshold", "0.3"), 2, 5,
      70, 2, 1, 29);
  detection (KV ("nms_topk", "20"), 2, 4, 90, 2, 1, 0);
  detection (KV ("nms_topk", "1"), 1, 4, 40, 1, 1, 0);
  detection (KV ("nms_topk", "400", "force_suppress", "True"), 1, 3, 120,
      1, 1, 0);
  detection (KV ("clip", "False", "variances", "(0.2, 0.1, 0.3, 0.25)"), 2,
      4, 64, 2, 1, 31);
  detection (KV ("nms_threshold", "1"), 1, 4, 64, 1, 1, 0);
  detection (KV ("nms_threshold", "0"), 1, 4, 64, 1, 1, 0);
  detection (KV ("nms_threshold", "1.5"), 1, 4, 64, 1, 1, 0);
  detection (KV ("nms_threshold", "-0.5", "threshold", "0"), 1, 4, 64, 1, 1,
      0);
  detection (KV ("threshold", "2"), 2, 4, 50, 2, 1, 0);
  detection (none, 2, 1, 30, 2, 1, 0);
  /* More loc batches and anchor sets than read. */
  detection (none, 2, 4, 50, 3, 2, 0);
  detection (KV ("threshold", "0.05", "nms_threshold", "0.6"), 1, 5, 1000,
      1, 1, 0);
  detection (KV ("threshold", "0.1", "nms_topk", "300"), 3, 21, 2000, 3, 1,
      67);
  if (suppressed == 0)
    emu_fail_setup ("MultiBoxDetection cases", "no row was suppressed");
  return emu_summary ();
}
