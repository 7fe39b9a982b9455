/*
 * refusal.h — how a CUDA kernel refuses its input's values (MXNet raises
 * on them: gather_nd's index out of range) without allocating or
 * synchronising: the CPU's hy_cpu_refuse (kernels/cpu/cpu-kernel.h) for a
 * device that cannot stop a forward halfway.
 *
 * The backend keeps one record in host memory mapped into the device
 * (allocated once with the backend).  A refusing kernel's check writes
 * it, from one thread, only while it is empty: calls run in stream order,
 * so the record is the first refusing call's, with the numbers its message
 * needs.  The kernels themselves never read out of range (gather_nd's bad
 * rows are zeros) and the forward runs to its end; the backend's run,
 * which synchronises anyway before its outputs are downloaded, then finds
 * the record, fails the forward with HY_ERROR_INVALID naming the call,
 * and empties the record.  A forward that refuses nothing costs one host
 * read of `kind`.  Calls know their index from the context
 * (hy_cuda_ctx.call, set as they are enqueued), so a CUDA graph recorded
 * once replays with the right one.
 *
 * Shared with the emulation tests: plain C, no CUDA types.
 */
#ifndef HY_CUDA_REFUSAL_H
#define HY_CUDA_REFUSAL_H

#include <stdint.h>
#include <stdio.h>

#include <glib.h>

typedef enum hy_cuda_refusal_kind {
  HY_CUDA_REFUSAL_NONE = 0,
  HY_CUDA_REFUSAL_INDEX = 1,    /* an index out of its axis */
} hy_cuda_refusal_kind;

typedef struct hy_cuda_refusal {
  int32_t kind;                 /* hy_cuda_refusal_kind; NONE: empty */
  int32_t call;                 /* of the run's calls */
  float value;                  /* the index refused */
  int32_t axis;
  int64_t size;                 /* of that axis */
  int64_t column;               /* of the indices */
} hy_cuda_refusal;

/* The message, as the CPU kernel words it (kernels/cpu/layout.c). */
static inline void
hy_cuda_refusal_message (const hy_cuda_refusal *r, char *buf, size_t size)
{
  if (r->kind == HY_CUDA_REFUSAL_INDEX)
    snprintf (buf, size, "IndexError: index %g is out of bounds for axis %d "
        "with size %" G_GINT64_FORMAT " (indices column %" G_GINT64_FORMAT
        ")", (double) r->value, (int) r->axis, (gint64) r->size,
        (gint64) r->column);
  else
    snprintf (buf, size, "refused input (kind %d)", (int) r->kind);
}

#endif /* HY_CUDA_REFUSAL_H */
