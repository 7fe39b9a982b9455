/*
 * slice.cuh — the index arithmetic of Concat and SliceChannel on the GPU
 * (slice.cu), shared with tests/cuda/emulate-shape.cu.  slice and
 * slice_axis are strided gathers (shape.cuh).
 *
 * Both ops view the joined tensor as (outer, block) and each part as
 * (outer, part block), the part blocks laid end to end inside the joined
 * one.  One launch moves up to HY_CUDA_PARTS_MAX parts, their pointers
 * and offsets passed by value; more parts take more launches.  A launch
 * walks the joined elements of its parts in order, so the joined side is
 * read or written contiguously.
 */
#ifndef HY_CUDA_SLICE_CUH
#define HY_CUDA_SLICE_CUH

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/shape.h"

#define HY_CUDA_PARTS_MAX 16

typedef struct hy_cuda_parts_args {
  int n;                        /* parts in this launch */
  int64_t block;                /* the joined tensor's elements per outer */
  int64_t first;                /* where this launch's parts start in it */
  int64_t span;                 /* their elements per outer, together */
  /* Part k covers [start[k], start[k + 1]) of the span. */
  int64_t start[HY_CUDA_PARTS_MAX + 1];
  /* Concat reads these, SliceChannel writes them. */
  float *data[HY_CUDA_PARTS_MAX];
} hy_cuda_parts_args;

/* Element i of a launch over outer · span elements: the part it belongs
 * to (returned), its index in the joined tensor and in the part. */
HY_CUDA_HD int
hy_cuda_parts_locate (const hy_cuda_parts_args *p, int64_t i, int64_t *joined,
    int64_t *in_part)
{
  const int64_t o = i / p->span, pos = i % p->span;
  int k = 0;
  while (pos >= p->start[k + 1])
    k++;                        /* empty parts are skipped here */
  *joined = o * p->block + p->first + pos;
  *in_part = o * (p->start[k + 1] - p->start[k]) + pos - p->start[k];
  return k;
}

/* The launch moving parts [from, from + HY_CUDA_PARTS_MAX) of the n_parts
 * joined along axis (may be negative) of `joined`; *outer: the outer
 * indices.  Part j's length on the axis is part_len, or its own when
 * part_len is 0 (Concat's parts differ; SliceChannel's are equal but may
 * have lost the axis to squeeze_axis). */
static inline hy_cuda_parts_args
hy_cuda_parts_plan (const hy_shape *joined, int axis,
    const hy_tensor *const *parts, int n_parts, int64_t part_len, int from,
    int64_t *outer)
{
  if (axis < 0)
    axis += joined->ndim;
  int64_t inner = 1;
  *outer = 1;
  for (int i = 0; i < axis; i++)
    *outer *= joined->dims[i];
  for (int i = axis + 1; i < joined->ndim; i++)
    inner *= joined->dims[i];

  hy_cuda_parts_args p = {};
  p.n = n_parts - from < HY_CUDA_PARTS_MAX ? n_parts - from
      : HY_CUDA_PARTS_MAX;
  p.block = joined->dims[axis] * inner;
  for (int j = 0; j < from; j++)
    p.first += (part_len ? part_len : parts[j]->shape.dims[axis]) * inner;
  for (int k = 0; k < p.n; k++) {
    const hy_tensor *t = parts[from + k];
    const int64_t len = part_len ? part_len : t->shape.dims[axis];
    p.start[k + 1] = p.start[k] + len * inner;
    p.data[k] = t->data;
  }
  p.span = p.start[p.n];
  return p;
}

#endif /* HY_CUDA_SLICE_CUH */
