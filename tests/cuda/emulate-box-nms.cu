/*
 * emulate-box-nms.cu — the CUDA _contrib_box_nms kernel (box-nms.cu)
 * emulated on the host against the CPU kernel: the block's steps run in
 * the kernel's order, each step's threads one after another (what a
 * __syncthreads-separated phase of independent threads amounts to), with
 * the element functions of box-nms.cuh, and every output must be the
 * CPU's exactly.
 *
 * Rows are detections clustered around a few centres so that boxes
 * overlap across overlap_thresh, with scores on a coarse grid (ties, kept
 * in row order by the stable sort), a few NaN scores and ids, background
 * rows and boxes starting left of 0 (left unconverted, as MXNet does).
 *
 * One line per case; exits 1 if any case failed.
 */
#include <vector>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/box-nms.cuh"
#include "emulate-harness.h"

/* ---- the CUDA side, emulated -------------------------------------------- */

static void
emulate (emu *e)
{
  const hy_nms_args a = hy_nms_plan (
      (const hy_box_nms_params *) e->params, &e->in[0]->shape);
  if (a.batches == 0)
    return;
  if (a.topk == 0) {
    memcpy (e->got[0]->data, e->in[0]->data,
        (size_t) numel (e->in[0]) * sizeof (float));
    return;
  }
  const int threads = HY_CUDA_THREADS;
  std::vector<char> ws ((size_t) a.batches * hy_nms_scratch_size (&a));
  for (int64_t b = 0; b < a.batches; b++) {
    const float *x = e->in[0]->data + b * a.n * a.width;
    float *y = e->got[0]->data + b * a.n * a.width;
    const hy_nms_scratch s = hy_cuda_nms_scratch_at (&a, ws.data (), b);
    const int64_t count = hy_nms_collect (&a, x, s.idx);
    for (int64_t run = 1; run < count; run *= 2) {
      for (int t = 0; t < threads; t++)
        for (int64_t lo = (int64_t) t * 2 * run; lo < count;
            lo += (int64_t) threads * 2 * run)
          hy_nms_merge (&a, x, s.idx, s.tmp, count, run, lo);
      for (int64_t k = 0; k < count; k++)
        s.idx[k] = s.tmp[k];
    }
    const int64_t m = count < a.topk ? count : a.topk;
    for (int64_t k = 0; k < m; k++)
      s.area[k] = hy_nms_area (&a, x, s.idx, k);
    for (int64_t ref = 0; ref < m; ref++) {
      if (s.idx[ref] < 0)
        continue;
      for (int64_t pos = ref + 1; pos < m; pos++)
        if (hy_nms_suppresses (&a, x, s.idx, s.area, ref, pos))
          s.idx[pos] = -1;
    }
    const int64_t kept = hy_nms_pack (s.idx, m, s.tmp);
    for (int64_t i = 0; i < a.n * a.width; i++)
      y[i] = hy_nms_out (&a, x, s.tmp, kept, i);
  }
}

/* ---- inputs ------------------------------------------------------------- */

/* Rows of `width` values: the box at coord (corner or center encoding,
 * per `center`), the score at score, the class id at id (if >= 0); other
 * values random. */
static void
fill_detections (hy_tensor *t, int coord, int score, int id, bool center)
{
  const int64_t width = t->shape.dims[t->shape.ndim - 1];
  const int64_t rows = numel (t) / width;
  for (int64_t r = 0; r < rows; r++) {
    float *row = t->data + r * width;
    for (int64_t c = 0; c < width; c++)
      row[c] = emu_uniform (-1.0f, 1.0f);
    /* A few centres: neighbours overlap a lot, others little. */
    const float cx = 10.0f * (float) (r % 4) + emu_uniform (-2.0f, 2.0f);
    const float cy = 10.0f * (float) (r % 3) + emu_uniform (-2.0f, 2.0f);
    const float w = emu_uniform (2.0f, 12.0f), h = emu_uniform (2.0f, 12.0f);
    float *b = row + coord;
    if (center) {
      b[0] = cx;
      b[1] = cy;
      b[2] = w;
      b[3] = h;
    } else {
      b[0] = cx - w / 2;
      b[1] = cy - h / 2;
      b[2] = cx + w / 2;
      b[3] = cy + h / 2;
    }
    if (r % 17 == 5)
      b[0] = -b[0] - 1.0f;              /* left of 0: never converted */
    row[score] = roundf (emu_uniform (-0.2f, 1.0f) * 8.0f) / 8.0f;
    if (r % 23 == 11)
      row[score] = NAN;
    if (id >= 0) {
      row[id] = (float) (r % 3);
      if (r % 19 == 7)
        row[id] = -1.0f;
      if (r % 29 == 13)
        row[id] = NAN;
    }
  }
}

static void
run (const char *const *kv, hy_shape in, int coord, int score, int id,
    bool center)
{
  emu e;
  if (!emu_open (&e, "_contrib_box_nms", kv, &in, 1))
    return;
  fill_detections (e.in[0], coord, score, id, center);
  emu_run_cpu (&e);
  emulate (&e);
  emu_finish (&e);
}

/* ---- cases -------------------------------------------------------------- */

int
main (void)
{
  /* GluonCV's SSD/YOLO layout: (id, score, x1, y1, x2, y2). */
  const char *const *none = NULL;
  run (none, S (1, 40, 6), 2, 1, -1, false);
  run (KV ("id_index", "0"), S (2, 60, 6), 2, 1, 0, false);
  run (KV ("id_index", "0", "force_suppress", "True"), S (2, 60, 6), 2, 1,
      0, false);
  run (KV ("id_index", "0", "background_id", "0"), S (1, 70, 6), 2, 1, 0,
      false);
  run (KV ("id_index", "0", "overlap_thresh", "0.3", "valid_thresh",
          "0.25", "topk", "20"), S (3, 80, 6), 2, 1, 0, false);
  run (KV ("id_index", "0", "topk", "400"), S (2, 300, 6), 2, 1, 0, false);
  run (KV ("topk", "1"), S (2, 30, 6), 2, 1, -1, false);
  run (KV ("topk", "0"), S (2, 30, 6), 2, 1, -1, false);
  run (KV ("overlap_thresh", "0"), S (1, 50, 6), 2, 1, -1, false);
  run (KV ("overlap_thresh", "1"), S (1, 50, 6), 2, 1, -1, false);
  /* Other layouts: (score, x, y, w, h) center in and out, extra columns. */
  run (KV ("coord_start", "1", "score_index", "0", "in_format", "center",
          "out_format", "center"), S (1, 45, 5), 1, 0, -1, true);
  run (KV ("coord_start", "1", "score_index", "0", "in_format", "center",
          "out_format", "corner"), S (2, 45, 5), 1, 0, -1, true);
  run (KV ("id_index", "0", "out_format", "center"), S (2, 45, 6), 2, 1, 0,
      false);
  run (KV ("coord_start", "3", "score_index", "0", "id_index", "7"),
      S (2, 33, 9), 3, 0, 7, false);
  /* Leading axes: every one but the last two is a batch. */
  run (KV ("id_index", "0"), S (2, 3, 25, 6), 2, 1, 0, false);
  run (none, S (1, 1, 6), 2, 1, -1, false);
  /* More candidates than threads: the merges and the suppression rounds
   * split over the whole block. */
  run (KV ("id_index", "0"), S (1, 1000, 6), 2, 1, 0, false);
  return emu_summary ();
}
