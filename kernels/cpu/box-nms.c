/*
 * box-nms.c — CPU kernel of _contrib_box_nms, MXNet 1.9.1's greedy
 * non-maximum suppression, result for result: the steps of
 * kernels/detection-common.h (which the CUDA kernel shares) over each
 * batch in turn.  Batches are independent and run on the context's
 * threads, each with its own scratch: the candidate list, its sort buffer
 * and the areas.
 */
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/detection-common.h"

void hy_cpu_box_nms (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct nms_job {
  hy_nms_args a;
  const float *x;
  float *y;
  char *scratch;
  size_t scratch_stride;
} nms_job;

static void
nms_batch (const hy_nms_args *a, const float *x, float *y, void *scratch)
{
  const hy_nms_scratch s = hy_nms_scratch_in (a, scratch);
  int64_t count = hy_nms_collect (a, x, s.idx);
  hy_detection_sort (x, a->width, a->score_index, s.idx, s.tmp, count);
  if (count > a->topk)
    count = a->topk;
  for (int64_t k = 0; k < count; k++)
    s.area[k] = hy_nms_area (a, x, s.idx, k);
  for (int64_t ref = 0; ref < count; ref++) {
    if (s.idx[ref] < 0)
      continue;
    for (int64_t pos = ref + 1; pos < count; pos++)
      if (hy_nms_suppresses (a, x, s.idx, s.area, ref, pos))
        s.idx[pos] = -1;
  }
  const int64_t kept = hy_nms_pack (s.idx, count, s.tmp);
  for (int64_t e = 0; e < a->n * a->width; e++)
    y[e] = hy_nms_out (a, x, s.tmp, kept, e);
}

static void
nms_batches (void *arg, int64_t begin, int64_t end, int thread)
{
  const nms_job *j = arg;
  const int64_t size = j->a.n * j->a.width;
  char *scratch = j->scratch + (size_t) thread * j->scratch_stride;
  for (int64_t b = begin; b < end; b++)
    nms_batch (&j->a, j->x + b * size, j->y + b * size, scratch);
}

void
hy_cpu_box_nms (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape *s = &in[0]->shape;
  int64_t numel = hy_shape_numel (s);
  if (numel == 0)
    return;
  nms_job j = { hy_nms_plan (params, s), in[0]->data, out[0]->data, NULL,
    0 };
  if (j.a.topk == 0) {
    memcpy (out[0]->data, in[0]->data, (size_t) numel * sizeof (float));
    return;
  }
  j.scratch = hy_cpu_workspace_per_thread (ctx, hy_nms_scratch_size (&j.a),
      &j.scratch_stride);
  hy_cpu_parallel_for (ctx, j.a.batches, 1, nms_batches, &j);
}
