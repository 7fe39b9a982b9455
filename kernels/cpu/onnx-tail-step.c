/*
 * onnx-tail-step.c — what a step of _hy_onnx_tail's interpreter reads
 * and writes (onnx-tail.h): its inputs, its output at a checked shape and
 * capacity, and its refusal naming the ONNX node.  The steps
 * (onnx-tail-ops.c, onnx-tail-select.c) and the program's runner
 * (onnx-tail.c) all use these; they use none of each other's.
 */
#include <stdarg.h>
#include <stdio.h>

#include "kernels/cpu/onnx-tail.h"

static const char *const kind_names[] = {
#define HY_TAIL_KIND_NAME(id, name) name,
  HY_TAIL_KINDS (HY_TAIL_KIND_NAME)
#undef HY_TAIL_KIND_NAME
};

static const char *
step_name (const tail_run *r, int step)
{
  return r->p->names + r->p->steps[step].name_at;
}

void
tail_refuse (tail_run *r, const char *format, ...)
{
  char what[160];
  va_list ap;
  va_start (ap, format);
  vsnprintf (what, sizeof what, format, ap);
  va_end (ap);
  const hy_tail_step *s = &r->p->steps[r->step];
  hy_cpu_refuse (r->ctx, "node '%s' (%s): %s", step_name (r, r->step),
      kind_names[s->kind], what);
}

int64_t
tail_i64 (double v)
{
  if (v != v || v <= -9223372036854775808.0)
    return INT64_MIN;
  if (v >= 9223372036854775807.0)
    return INT64_MAX;
  return (int64_t) v;
}

tail_value *
tail_in (tail_run *r, int k)
{
  const hy_tail_step *s = &r->p->steps[r->step];
  if (k >= s->n_in || s->in[k] < 0)
    return NULL;
  return &r->v[s->in[k]];
}

const double *
tail_need (tail_run *r, int k, int64_t *n)
{
  tail_value *v = tail_in (r, k);
  if (!v)
    tail_refuse (r, "input %d is required", k);
  if (!v->known)
    tail_refuse (r, "input %d, which sets the output's shape, is computed "
        "from the data: no capacity can be planned for it", k);
  *n = hy_shape_numel (&v->shape);
  return v->data;
}

bool
tail_out (tail_run *r, tail_value *out, const hy_shape *shape)
{
  for (int d = 0; d < shape->ndim; d++)
    if (shape->dims[d] < 0)
      tail_refuse (r, "dimension %d of its output is %" G_GINT64_FORMAT, d,
          shape->dims[d]);
  out->shape = *shape;
  int64_t n = hy_shape_numel (shape);
  if (r->mode == TAIL_REAL) {
    if (n > out->cap)
      tail_refuse (r, "computes %" G_GINT64_FORMAT " values, more than the %"
          G_GINT64_FORMAT " planned from the counts' bounds", n, out->cap);
    out->known = true;
    return true;
  }
  out->known = false;
  out->data = NULL;
  if (n > TAIL_SMALL)
    return false;
  const hy_tail_step *s = &r->p->steps[r->step];
  for (int k = 0; k < s->n_in; k++)
    if (s->in[k] >= 0 && !r->v[s->in[k]].known)
      return false;
  out->data = out->small;
  out->known = true;
  return true;
}
