/*
 * onnx-tail.c — the CPU kernel of _hy_onnx_tail: runs the program the
 * ONNX importer made of a graph's data-dependent tail (NonZero,
 * NonMaxSuppression and what reads them), working every shape out as it
 * goes, as ONNX Runtime does, then hands the op's outputs over at the
 * shapes the file declared.
 *
 * Every value lives at its capacity in the workspace: two dry runs (the
 * data-dependent counts at none and at their bound, shapes only) give the
 * capacities, which depend on the inputs' shapes alone, so the workspace
 * asked for is the same every forward of a plan and nothing is allocated
 * after the first.  A step that would write more than its value's
 * capacity (a shape that grows with the count in some other way than the
 * two ends say) fails the forward naming its node; none writes past it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/onnx-tail.h"

void hy_cpu_onnx_tail (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static void
run_const (tail_run *r, tail_value *out)
{
  const hy_tail_step *s = &r->p->steps[r->step];
  hy_shape shape = { .ndim = s->n_attr };
  memcpy (shape.dims, s->attr, sizeof (int64_t) * s->n_attr);
  out->shape = shape;
  /* the pool outlives every run, and no step writes its inputs */
  out->data = (double *) r->p->pool + s->pool_at;
  out->known = true;
}

static void
run_program (tail_run *r)
{
  const hy_onnx_tail_params *p = r->p;
  for (int s = 0; s < p->n_steps; s++) {
    r->step = s;
    tail_value *out = &r->v[hy_tail_step_value (p, s)];
    out->is_int = p->steps[s].is_int;
    switch (p->steps[s].kind) {
      case HY_TAIL_CONST:
        run_const (r, out);
        break;
      case HY_TAIL_NONZERO:
        tail_nonzero (r, out);
        break;
      case HY_TAIL_NMS:
        tail_nms (r, out);
        break;
      default:
        tail_shape_step (r, out);
        break;
    }
  }
}

static void
set_inputs (tail_run *r, const hy_tensor *const *in, int n_in)
{
  for (int i = 0; i < n_in && i < HY_TAIL_MAX_VALUES; i++) {
    tail_value *v = &r->v[i];
    v->shape = in[i]->shape;
    v->is_int = false;
    v->known = r->mode == TAIL_REAL;
    if (r->mode != TAIL_REAL)
      continue;
    int64_t n = hy_shape_numel (&v->shape);
    for (int64_t j = 0; j < n; j++)
      v->data[j] = in[i]->data[j];
  }
}

/* A constant's values stay in the params: it needs no room. */
static bool
is_const (const hy_onnx_tail_params *p, int v)
{
  return v >= p->n_inputs && p->steps[v - p->n_inputs].kind == HY_TAIL_CONST;
}

/* Runs both dry runs; each value's capacity is the larger of its sizes. */
static void
plan_capacities (tail_run *r, const hy_tensor *const *in, int n_in,
    int64_t *nms_boxes)
{
  int n_values = hy_tail_step_value (r->p, r->p->n_steps);
  int64_t cap[HY_TAIL_MAX_VALUES] = { 0 };
  *nms_boxes = 0;
  for (int pass = 0; pass < 2; pass++) {
    r->mode = pass ? TAIL_DRY_MOST : TAIL_DRY_NONE;
    set_inputs (r, in, n_in);
    run_program (r);
    for (int v = 0; v < n_values; v++)
      cap[v] = MAX (cap[v], hy_shape_numel (&r->v[v].shape));
    for (int s = 0; s < r->p->n_steps; s++)
      if (r->p->steps[s].kind == HY_TAIL_NMS) {
        r->step = s;
        tail_nms_bound (r, nms_boxes);
      }
  }
  for (int v = 0; v < n_values; v++)
    r->v[v].cap = cap[v];
}

void
hy_cpu_onnx_tail (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_onnx_tail_params *p = params;
  tail_run run = { .ctx = ctx, .p = p };
  tail_run *r = &run;
  int64_t nms_boxes;
  plan_capacities (r, in, n_in, &nms_boxes);

  int n_values = hy_tail_step_value (p, p->n_steps);
  int64_t total = 0;
  for (int v = 0; v < n_values; v++)
    if (!is_const (p, v))
      total += r->v[v].cap;
  /* NonMaxSuppression: a class's candidates, their sort's other half,
   * the boxes it keeps */
  r->scratch_len = 3 * nms_boxes;
  double *ws = hy_cpu_workspace (ctx,
      (size_t) (total + r->scratch_len + 1) * sizeof (double));
  for (int v = 0; v < n_values; v++) {
    if (is_const (p, v))
      continue;
    r->v[v].data = ws;
    ws += r->v[v].cap;
  }
  r->scratch = (int64_t *) ws;
  r->mode = TAIL_REAL;
  set_inputs (r, in, n_in);
  run_program (r);

  for (int k = 0; k < n_out && k < p->n_outputs; k++) {
    const tail_value *v = &r->v[p->out_value[k]];
    if (!hy_shape_equal (&v->shape, &p->out_shape[k])) {
      char got[HY_SHAPE_STRLEN], want[HY_SHAPE_STRLEN];
      r->step = MAX (p->out_value[k] - p->n_inputs, 0);
      tail_refuse (r, "computes %s for graph output %d, which the file "
          "declares %s", hy_shape_format (&v->shape, got, sizeof got), k,
          hy_shape_format (&p->out_shape[k], want, sizeof want));
    }
  }
  for (int k = 0; k < n_out && k < p->n_outputs; k++) {
    const tail_value *v = &r->v[p->out_value[k]];
    int64_t n = hy_shape_numel (&v->shape);
    for (int64_t j = 0; j < n; j++)
      out[k]->data[j] = (float) v->data[j];
  }
}
