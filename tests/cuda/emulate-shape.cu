/*
 * emulate-shape.cu — the CUDA data-movement kernels (shape.cu, slice.cu,
 * tile.cu) emulated on the host against the CPU kernels: for each case the
 * op is parsed and its shapes inferred by the core, random inputs go
 * through hy_cpu_kernel_for, and the CUDA side's host planning plus its
 * element functions (shape.cuh, slice.cuh, tile.cuh) are run over every
 * output index, as the launches would.  No GPU needed (launch.cuh).
 *
 * The copy-only ops (_copy, Flatten, Reshape, …) have no element function:
 * their kernel is one device-to-device copy, emulated as memcpy.
 *
 * One line per case; exits 1 if any case failed.
 */
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/shape.cuh"
#include "kernels/cuda/slice.cuh"
#include "kernels/cuda/tile.cuh"
#include "kernels/cuda/pad.cuh"
#include "kernels/cuda/upsampling.cuh"
#include "emulate-harness.h"

/* ---- the CUDA side, emulated -------------------------------------------- */

/* A strided gather as gather () in slice.cu / transpose in shape.cu runs
 * it: a contiguous walk is one copy from base, else the kernel. */
static void
emulate_gather (const hy_cuda_strided_args *w, const hy_tensor *x,
    hy_tensor *y)
{
  const int64_t n = hy_shape_numel (&y->shape);
  if (n == 0)
    return;
  if (hy_cuda_strided_contiguous (w)) {
    memcpy (y->data, x->data + w->base, (size_t) n * sizeof (float));
    return;
  }
  for (int64_t i = 0; i < n; i++)
    y->data[i] = x->data[hy_cuda_strided_src (w, i)];
}

/* move_parts () in slice.cu. */
static void
emulate_parts (hy_tensor *joined, int axis, hy_tensor *const *parts,
    int n_parts, int64_t part_len, bool concat)
{
  if (hy_shape_numel (&joined->shape) == 0)
    return;
  for (int from = 0; from < n_parts; from += HY_CUDA_PARTS_MAX) {
    int64_t outer;
    const hy_cuda_parts_args p = hy_cuda_parts_plan (&joined->shape, axis,
        parts, n_parts, part_len, from, &outer);
    if (outer == 1) {
      for (int k = 0; k < p.n; k++) {
        float *run = joined->data + p.first + p.start[k];
        const size_t len = (size_t) (p.start[k + 1] - p.start[k]);
        if (concat)
          memcpy (run, p.data[k], len * sizeof (float));
        else
          memcpy (p.data[k], run, len * sizeof (float));
      }
      continue;
    }
    for (int64_t i = 0; i < outer * p.span; i++) {
      int64_t at_joined, at_part;
      const int k = hy_cuda_parts_locate (&p, i, &at_joined, &at_part);
      if (concat)
        joined->data[at_joined] = p.data[k][at_part];
      else
        p.data[k][at_part] = joined->data[at_joined];
    }
  }
}

static void
emulate (emu *e)
{
  const hy_tensor *x = e->n_in > 0 ? e->in[0] : NULL;
  hy_tensor *y = e->got[0];
  const int64_t n = hy_shape_numel (&y->shape);
  switch (e->op->id) {
    case HY_OP_IDENTITY:
    case HY_OP_DROPOUT:
    case HY_OP_BLOCK_GRAD:
    case HY_OP_FLATTEN:
    case HY_OP_RESHAPE:
    case HY_OP_RESHAPE_LIKE:
    case HY_OP_EXPAND_DIMS:
    case HY_OP_SQUEEZE:
      memcpy (y->data, x->data, (size_t) n * sizeof (float));
      break;
    case HY_OP_TRANSPOSE:
    case HY_OP_SWAP_AXIS: {
      const hy_cuda_strided_args w = hy_cuda_transpose_walk (
          (const hy_transpose_params *) e->params, &x->shape);
      emulate_gather (&w, x, y);
      break;
    }
    case HY_OP_SLICE:
      if (n > 0) {
        const hy_cuda_strided_args w = hy_cuda_slice_walk (
            (const hy_slice_params *) e->params, &x->shape);
        emulate_gather (&w, x, y);
      }
      break;
    case HY_OP_SLICE_AXIS:
      if (n > 0) {
        const hy_cuda_strided_args w = hy_cuda_slice_axis_walk (
            (const hy_slice_axis_params *) e->params, &x->shape);
        emulate_gather (&w, x, y);
      }
      break;
    case HY_OP_CONCAT:
      emulate_parts (y, ((const hy_concat_params *) e->params)->dim, e->in,
          e->n_in, 0, true);
      break;
    case HY_OP_SLICE_CHANNEL: {
      const hy_split_params *p = (const hy_split_params *) e->params;
      const int axis = p->axis < 0 ? p->axis + x->shape.ndim : p->axis;
      emulate_parts ((hy_tensor *) x, axis, e->got, e->n_out,
          x->shape.dims[axis] / e->n_out, false);
      break;
    }
    case HY_OP_TILE: {
      const hy_cuda_tile_args t = hy_cuda_tile_plan (
          (const hy_tile_params *) e->params, &x->shape, &y->shape);
      for (int64_t i = 0; i < n; i++)
        y->data[i] = x->data[hy_cuda_tile_src (&t, i)];
      break;
    }
    case HY_OP_REPEAT: {
      const hy_cuda_repeat_args r = hy_cuda_repeat_plan (
          (const hy_repeat_params *) e->params, &x->shape);
      for (int64_t i = 0; i < n; i++)
        y->data[i] = x->data[hy_cuda_repeat_src (&r, i)];
      break;
    }
    case HY_OP_UP_SAMPLING: {
      /* Nearest: one launch per input, in order (upsampling.cu). */
      const hy_upsampling_params *p = (const hy_upsampling_params *)
          e->params;
      for (int k = 0; k < e->n_in; k++) {
        int64_t count, dst;
        const hy_cuda_upsampling_args a = hy_cuda_upsampling_plan (p, e->in,
            k, y, &count);
        for (int64_t i = 0; i < count; i++) {
          const float v = e->in[k]->data[hy_cuda_upsampling_src (&a, i,
                  &dst)];
          y->data[dst] = a.add ? y->data[dst] + v : v;
        }
      }
      break;
    }
    case HY_OP_PAD: {
      const hy_cuda_pad_args a = hy_cuda_pad_plan (
          (const hy_pad_params *) e->params, &x->shape, &y->shape);
      for (int64_t i = 0; i < n; i++)
        y->data[i] = hy_cuda_pad_at (&a, x->data, i);
      break;
    }
    case HY_OP_ARANGE:
    case HY_OP_ARANGE_LIKE: {
      const hy_cuda_arange_args a = hy_cuda_arange_plan (
          (const hy_arange_params *) e->params);
      for (int64_t i = 0; i < n; i++)
        y->data[i] = hy_cuda_arange_value (&a, i);
      break;
    }
    default:
      printf ("(no emulation for %s)\n", e->op->name);
      break;
  }
}

static void
run (const char *op, const char *const *kv, std::initializer_list<hy_shape> in)
{
  emu_run (emulate, op, kv, in.begin (), (int) in.size (), -1.0f, 1.0f);
}

/* ---- cases -------------------------------------------------------------- */

static void
copy_cases (void)
{
  run ("_copy", NULL, { S (3, 5) });
  run ("identity", NULL, { S (7) });
  run ("Dropout", KV ("p", "0.5"), { S (2, 3, 4) });
  run ("BlockGrad", NULL, { S (4, 1, 3) });
  run ("Flatten", NULL, { S (2, 3, 4, 5) });
  run ("Reshape", KV ("shape", "(-1, 5)"), { S (2, 3, 5) });
  run ("reshape_like", KV ("lhs_begin", "1", "rhs_begin", "1"),
      { S (2, 3, 4), S (5, 12) });
  run ("expand_dims", KV ("axis", "-1"), { S (2, 3) });
  run ("squeeze", NULL, { S (2, 1, 3, 1) });
  run ("squeeze", KV ("axis", "(-1,)"), { S (2, 3, 1) });
}

static void
transpose_cases (void)
{
  run ("transpose", NULL, { S (9) });
  run ("transpose", NULL, { S (5, 7) });
  run ("transpose", NULL, { S (2, 3, 4) });
  run ("transpose", NULL, { S (2, 3, 4, 5) });
  run ("transpose", NULL, { S (2, 3, 1, 4, 5) });
  run ("transpose", KV ("axes", "(0, 1, 2)"), { S (2, 3, 4) });
  run ("transpose", KV ("axes", "(0, 2, 1)"), { S (2, 3, 4) });
  run ("transpose", KV ("axes", "(2, 0, 1)"), { S (3, 5, 7) });
  run ("transpose", KV ("axes", "(1, 0, 2)"), { S (3, 5, 7) });
  run ("transpose", KV ("axes", "(0, 2, 3, 1)"), { S (2, 3, 9, 11) });
  run ("transpose", KV ("axes", "(0, 3, 1, 2)"), { S (2, 9, 11, 3) });
  run ("transpose", KV ("axes", "(2, 0, 1, 3)"), { S (1, 3, 1, 4) });
  run ("transpose", KV ("axes", "(1, 0, 2, 3)"), { S (1, 3, 5, 4) });
  run ("transpose", KV ("axes", "(4, 2, 0, 3, 1)"), { S (2, 3, 1, 4, 5) });
  run ("transpose", KV ("axes", "(0, 1, 3, 2, 4)"), { S (2, 3, 4, 5, 6) });
  run ("transpose", KV ("axes", "(3, 4, 5, 0, 1, 2)"),
      { S (2, 1, 3, 2, 3, 2) });
  run ("SwapAxis", NULL, { S (2, 3, 4) });
  run ("SwapAxis", KV ("dim1", "1", "dim2", "3"), { S (2, 3, 4, 5) });
  run ("SwapAxis", KV ("dim1", "-1", "dim2", "0"), { S (3, 5, 7) });
  run ("swapaxes", KV ("dim1", "2", "dim2", "-2"), { S (2, 3, 4, 5) });
}

static void
slice_cases (void)
{
  run ("slice", KV ("begin", "(1, 2)", "end", "(4, 6)"), { S (5, 7) });
  run ("slice", KV ("begin", "(0, 1)", "end", "(5, 7)", "step", "(2, 3)"),
      { S (5, 7) });
  run ("slice", KV ("begin", "(None, None)", "end", "(None, None)", "step",
          "(-1, -2)"), { S (5, 7) });
  run ("slice", KV ("begin", "(-2, None)", "end", "(None, -1)"),
      { S (5, 7) });
  run ("slice", KV ("begin", "(-100, 2)", "end", "(100, 200)"),
      { S (5, 7) });
  run ("slice", KV ("begin", "(1,)", "end", "(3,)"), { S (5, 4, 3) });
  run ("slice", KV ("begin", "(None, 1)", "end", "(None, 3)"),
      { S (5, 4, 3) });
  run ("slice", KV ("begin", "(4, None)", "end", "(0, None)", "step",
          "(-2, None)"), { S (5, 4, 3) });
  run ("slice", KV ("begin", "(0, 0, 1, 0, 2)", "end",
          "(2, 3, 4, 5, 6)", "step", "(1, 2, 1, 3, 2)"),
      { S (2, 3, 4, 5, 6) });
  run ("slice", KV ("begin", "(2,)", "end", "(2,)"), { S (5, 3) });
  run ("slice", KV ("begin", "(3,)", "end", "(None,)", "step", "(-1,)"),
      { S (8) });
  run ("crop", KV ("begin", "(0, 1, 1)", "end", "(1, 3, 3)"),
      { S (1, 4, 4) });
  run ("slice_axis", KV ("axis", "0", "begin", "1", "end", "3"),
      { S (4, 5) });
  run ("slice_axis", KV ("axis", "1", "begin", "1", "end", "None"),
      { S (4, 5) });
  run ("slice_axis", KV ("axis", "-1", "begin", "-3", "end", "-1"),
      { S (2, 3, 7) });
  run ("slice_axis", KV ("axis", "-2", "begin", "0", "end", "2"),
      { S (2, 3, 7) });
  run ("slice_axis", KV ("axis", "2", "begin", "1", "end", "4"),
      { S (2, 3, 5, 2, 3) });
}

static void
concat_split_cases (void)
{
  run ("Concat", KV ("num_args", "2", "dim", "0"), { S (2, 3), S (4, 3) });
  run ("Concat", KV ("num_args", "3", "dim", "1"),
      { S (2, 3, 4), S (2, 5, 4), S (2, 1, 4) });
  run ("Concat", KV ("num_args", "2", "dim", "-1"), { S (3, 2), S (3, 5) });
  run ("concat", KV ("num_args", "2", "dim", "1"),
      { S (1, 4, 3, 3), S (1, 6, 3, 3) });
  run ("Concat", KV ("num_args", "3", "dim", "1"),
      { S (2, 4, 3), S (2, 0, 3), S (2, 5, 3) });
  run ("Concat", KV ("num_args", "2", "dim", "0"), { S (3), S (4) });
  run ("Concat", KV ("num_args", "2", "dim", "4"),
      { S (2, 1, 2, 3, 2), S (2, 1, 2, 3, 5) });
  {
    /* More parts than one launch takes. */
    hy_shape in[20];
    for (int k = 0; k < 20; k++)
      in[k] = S (3, 1 + k % 4, 2);
    emu_run (emulate, "Concat", KV ("num_args", "20", "dim", "1"), in, 20,
        -1.0f, 1.0f);
  }
  run ("SliceChannel", KV ("num_outputs", "3", "axis", "1"),
      { S (2, 6, 4) });
  run ("split", KV ("num_outputs", "2", "axis", "-1"), { S (3, 4, 6) });
  run ("split", KV ("num_outputs", "3", "axis", "1", "squeeze_axis",
          "True"), { S (2, 3, 5) });
  run ("split", KV ("num_outputs", "2", "axis", "0"), { S (4, 5) });
  run ("split", KV ("num_outputs", "20", "axis", "1"), { S (3, 40, 2) });
  run ("split", KV ("num_outputs", "17", "axis", "0", "squeeze_axis", "1"),
      { S (17, 3) });
}

static void
upsampling_cases (void)
{
  run ("UpSampling", KV ("scale", "2", "sample_type", "nearest"),
      { S (2, 3, 4, 5) });
  run ("UpSampling", KV ("scale", "3", "sample_type", "nearest"),
      { S (1, 2, 3, 1) });
  run ("UpSampling", KV ("scale", "2", "sample_type", "nearest", "num_args",
          "4"), { S (2, 3, 4, 4), S (2, 2, 2, 2), S (2, 1, 8, 8),
          S (2, 2, 4, 4) });
  run ("UpSampling", KV ("scale", "4", "sample_type", "nearest", "num_args",
          "3", "multi_input_mode", "sum"), { S (1, 2, 2, 3), S (1, 2, 4, 6),
          S (1, 2, 2, 3) });
}

static void
pad_cases (void)
{
  run ("Pad", KV ("mode", "constant", "pad_width", "(0, 0, 0, 0, 1, 2, 0, 3)",
          "constant_value", "1.5"), { S (2, 3, 4, 5) });
  run ("Pad", KV ("mode", "edge", "pad_width", "(0, 0, 0, 0, 5, 4, 0, 7)"),
      { S (1, 2, 2, 3) });
  run ("Pad", KV ("mode", "reflect", "pad_width", "(0, 0, 0, 0, 3, 3, 4, 4)"),
      { S (2, 3, 4, 5) });
  run ("pad", KV ("mode", "reflect", "pad_width",
          "(0, 0, 0, 0, 1, 2, 2, 1, 2, 2)"), { S (1, 2, 3, 4, 3) });
  run ("Pad", KV ("mode", "edge", "pad_width",
          "(0, 0, 0, 0, -1, 2, 2, -1, 0, 0)"), { S (1, 2, 3, 4, 3) });
  run ("Pad", KV ("mode", "constant", "pad_width", "(0, 0, 0, 0, -1, 2, 1, -2)"),
      { S (2, 3, 4, 5) });
}

static void
tile_cases (void)
{
  run ("tile", KV ("reps", "(3,)"), { S (4) });
  run ("tile", KV ("reps", "(2, 3)"), { S (3, 2) });
  run ("tile", KV ("reps", "(2,)"), { S (2, 3, 4) });
  run ("tile", KV ("reps", "(2, 1, 3)"), { S (3, 4) });
  run ("tile", KV ("reps", "(1, 2, 1, 3, 2)"), { S (2, 1, 3) });
  run ("tile", KV ("reps", "(1, 1)"), { S (3, 5) });
  run ("repeat", KV ("repeats", "3"), { S (2, 3) });
  run ("repeat", KV ("repeats", "2", "axis", "0"), { S (3, 4) });
  run ("repeat", KV ("repeats", "2", "axis", "-1"), { S (3, 4) });
  run ("repeat", KV ("repeats", "3", "axis", "1"), { S (2, 3, 4) });
  run ("repeat", KV ("repeats", "1", "axis", "2"), { S (2, 3, 4, 2) });
  run ("_arange", KV ("start", "3"), {});
  run ("_arange", KV ("start", "0.5", "stop", "7.3", "step", "0.7"), {});
  run ("_arange", KV ("start", "-2", "stop", "5", "repeat", "3"), {});
  run ("_contrib_arange_like", KV ("start", "0.1", "step", "0.3", "repeat",
          "2"), { S (3, 5) });
  run ("_contrib_arange_like", KV ("axis", "-1", "start", "-2.5"),
      { S (2, 7) });
  run ("_arange", KV ("start", "10", "stop", "1", "step", "-1.5"), {});
  run ("_arange", KV ("start", "1.7", "stop", "9.2", "step", "1.3",
          "dtype", "int32"), {});
  run ("_arange", KV ("start", "0.1", "stop", "3.3", "step", "0.1",
          "dtype", "float64", "repeat", "2"), {});
}

int
main (void)
{
  copy_cases ();
  transpose_cases ();
  slice_cases ();
  concat_split_cases ();
  tile_cases ();
  pad_cases ();
  upsampling_cases ();
  return emu_summary ();
}
