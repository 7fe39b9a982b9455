/*
 * multibox-detection.c — CPU kernel of _contrib_MultiBoxDetection, MXNet
 * 1.9.1's, row for row: the steps of kernels/detection-common.h (which
 * the CUDA kernel shares) over each image in turn.  Images are
 * independent and run on the context's threads, each with its own
 * scratch: the anchors' classes and scores (then the rows set aside for
 * the sort), the listed anchors (then the sort's positions) and the
 * sort's buffer.
 */
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/detection-common.h"

void hy_cpu_multibox_detection (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct detect_job {
  hy_mbd_args a;
  const float *cls, *loc, *anchors;
  float *y;
  char *scratch;
  size_t scratch_stride;
} detect_job;

static void
detect_image (const detect_job *j, int64_t n, void *scratch)
{
  const hy_mbd_args *a = &j->a;
  const int64_t na = a->anchors;
  const float *cls = j->cls + n * a->classes * na, *loc = j->loc + n * na * 4;
  float *y = j->y + n * na * 6;
  const hy_mbd_scratch s = hy_mbd_scratch_in (a, scratch);

  for (int64_t i = 0; i < na; i++)
    hy_mbd_classify (a, cls, i, s.rows + i * 6);
  const int64_t count = hy_mbd_collect (a, s.rows, s.idx);
  for (int64_t e = 0; e < na * 6; e++)
    y[e] = hy_mbd_out (a, s.rows, s.idx, count, j->anchors, loc, e);
  if (!a->nms || count < 1)
    return;

  for (int64_t e = 0; e < count * 6; e++)
    s.rows[e] = y[e];
  for (int64_t k = 0; k < count; k++)
    s.idx[k] = k;
  hy_detection_sort (s.rows, 6, 1, s.idx, s.tmp, count);
  const int64_t kept = hy_mbd_kept (a, count);
  for (int64_t e = 0; e < count * 6; e++)
    hy_mbd_write_back (s.rows, s.idx, kept, e, y);
  for (int64_t ref = 0; ref < kept; ref++) {
    if (y[ref * 6] < 0)
      continue;
    for (int64_t pos = ref + 1; pos < kept; pos++)
      if (hy_mbd_suppresses (a, y, ref, pos))
        y[pos * 6] = -1.0f;
  }
}

static void
detect_images (void *arg, int64_t begin, int64_t end, int thread)
{
  const detect_job *j = arg;
  char *scratch = j->scratch + (size_t) thread * j->scratch_stride;
  for (int64_t n = begin; n < end; n++)
    detect_image (j, n, scratch);
}

void
hy_cpu_multibox_detection (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  detect_job j = { hy_mbd_plan (params, &in[0]->shape), in[0]->data,
    in[1]->data, in[2]->data, out[0]->data, NULL, 0 };
  if (j.a.batch == 0)
    return;
  j.scratch = hy_cpu_workspace_per_thread (ctx, hy_mbd_scratch_size (&j.a),
      &j.scratch_stride);
  hy_cpu_parallel_for (ctx, j.a.batch, 1, detect_images, &j);
}
