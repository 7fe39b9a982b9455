/*
 * emulate-elementwise.cu — the CUDA elementwise kernels' element functions
 * (kernels/cuda/elementwise.cuh) run on the host over every output index
 * and compared with the CPU kernels, on a machine without a GPU.
 *
 * Every op of the families elementwise.cu implements, with attribute
 * variants, broadcasting shapes (size-1 axes, rank differences), odd sizes
 * and special values (NaN, ±inf, ties, float16 limits) among random data.
 * Each case builds the kernel's launch arguments with the same host
 * planning functions the .cu entry points use, runs the element function
 * for every index, in launch order, and again with the output on input 0
 * where the op may run in place.  One line per case; exit 1 on a failure.
 */
#include "kernels/cuda/elementwise.cuh"
#include "emulate-harness.h"

/* Values that exercise the edge cases of MXNet's semantics: signed zeros,
 * rounding ties, NaN and infinities, float16's limits and subnormals,
 * integer-cast wrap-around. */
static const float specials[] = {
  0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 1.0f, -1.0f, 2.0f, NAN,
  INFINITY, -INFINITY, 65504.0f, 65519.0f, 65520.0f, -65520.0f, 1e-6f,
  3e-8f, -6e-5f, 300.7f, -129.6f, 255.5f, 1e10f, -3e9f, 0x1p63f,
};
#define N_SPECIALS ((int) (sizeof specials / sizeof specials[0]))

/* ---- the emulated launches --------------------------------------------- */

/* The launches elementwise.cu makes for the op, in stream order. */
static void
emulate (const hy_op_info *op, const void *params, hy_tensor *const *in,
    int n_in, hy_tensor *const *out, int n_out)
{
  const char *family = op->family;
  hy_tensor *o = out[0];

  if (!strcmp (family, "unary")) {
    hy_cuda_unary_args a = hy_cuda_unary_plan (
        (const hy_unary_params *) params, in[0], o);
    MAP (a, hy_cuda_unary_at, o);
  } else if (!strcmp (family, "scalar")) {
    hy_cuda_scalar_args a = hy_cuda_scalar_plan (
        (const hy_scalar_params *) params, in[0], o);
    MAP (a, hy_cuda_scalar_at, o);
  } else if (!strcmp (family, "binary")) {
    if (numel (o) == 0)
      return;
    hy_cuda_binary_args a = hy_cuda_binary_plan (
        (const hy_binary_params *) params, in[0], in[1], o);
    MAP (a, hy_cuda_binary_at, o);
  } else if (!strcmp (family, "add_n")) {
    if (n_in == 1 && o->data == in[0]->data)
      return;
    for (int l = 0; l < hy_cuda_add_n_launches (n_in); l++) {
      hy_cuda_add_n_args a = hy_cuda_add_n_plan (
          (const hy_add_n_params *) params, in, n_in, o, l);
      MAP (a, hy_cuda_add_n_at, o);
    }
  } else if (!strcmp (family, "clip")) {
    hy_cuda_clip_args a = hy_cuda_clip_plan (
        (const hy_clip_params *) params, in[0], o);
    MAP (a, hy_cuda_clip_at, o);
  } else if (!strcmp (family, "hard_sigmoid")) {
    hy_cuda_clip_args a = hy_cuda_hard_sigmoid_plan (
        (const hy_hard_sigmoid_params *) params, in[0], o);
    MAP (a, hy_cuda_hard_sigmoid_at, o);
  } else if (!strcmp (family, "where")) {
    hy_cuda_where_args a = hy_cuda_where_plan (in[0], in[1], in[2], o);
    MAP (a, hy_cuda_where_at, o);
  } else if (!strcmp (family, "cast")) {
    hy_cuda_cast_args a = hy_cuda_cast_plan (
        (const hy_cast_params *) params, in[0], o);
    MAP (a, hy_cuda_cast_at, o);
  } else if (!strcmp (family, "fill_like")) {
    hy_cuda_fill_args a = hy_cuda_fill_like_plan (
        (const hy_fill_like_params *) params, o);
    MAP (a, hy_cuda_fill_at, o);
  } else {
    g_error ("no emulation for family %s", family);
  }
}

/* where's condition: mostly exact zeros and ones, NaN now and then. */
static float
adjust (const hy_op_info *op, int input, int64_t at, float v, GRand *rand)
{
  if (op->id == HY_OP_WHERE && input == 0)
    return at % 7 == 3 ? NAN : (float) g_rand_int_range (rand, -1, 2);
  return v;
}

static const emu_suite suite = { specials, N_SPECIALS, adjust, emulate };

/* ---- the cases --------------------------------------------------------- */

static void
check_family (const char *family, emu_kv kv, int n_in,
    const hy_shape *shapes, emu_fill fill)
{
  for (int id = 0; id < HY_OP_COUNT; id++) {
    const hy_op_info *op = hy_op_info_get ((hy_op_id) id);
    if (!strcmp (op->family, family))
      check (op->name, kv, n_in, shapes, fill);
  }
}

static void
check_unary (void)
{
  const hy_shape odd = S (3, 5, 7), one = S (1), longer = S (1001);
  const emu_fill positive = { 0.01f, 8.0f, false };
  const emu_fill large = { -200.0f, 200.0f, true };
  check_family ("unary", NO_ATTRS, 1, &odd, WIDE);
  check_family ("unary", NO_ATTRS, 1, &longer, positive);
  check_family ("unary", NO_ATTRS, 1, &longer, large);
  check_family ("unary", NO_ATTRS, 1, &one, PLAIN);
}

static void
check_scalar (void)
{
  static const char *const scalars[] = { "2", "-1.5", "0", "0.5", "3" };
  const hy_shape x = S (4, 33);
  for (size_t s = 0; s < G_N_ELEMENTS (scalars); s++)
    check_family ("scalar", KV ("scalar", scalars[s]), 1, &x, WIDE);
  const hy_shape scalar = S (1);
  check_family ("scalar", KV ("scalar", "-2", "is_int", "False"), 1, &scalar,
      PLAIN);
}

static void
check_binary (void)
{
  /* elemwise_* (equal shapes; the family also holds broadcast_*, whose
   * equal-shape case is this one too). */
  const hy_shape same[][2] = {
    { S (5, 7, 3), S (5, 7, 3) },
    { S (1), S (1) },
    { S (1, 1, 1), S (1, 1, 1) },
    { S (2, 1, 9), S (2, 1, 9) },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (same); k++)
    check_family ("binary", NO_ATTRS, 2, same[k], WIDE);

  /* broadcast_*: size-1 axes on either side, rank differences, axes that
   * merge and axes that do not, a single value on either side. */
  static const char *const ops[] = {
    "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
    "broadcast_maximum", "broadcast_minimum", "broadcast_power",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater",
    "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal",
  };
  const hy_shape shapes[][2] = {
    { S (2, 3, 4), S (1) },
    { S (1), S (2, 3, 4) },
    { S (4, 1, 5), S (3, 1) },
    { S (2, 1, 3, 1), S (1, 4, 1, 5) },
    { S (7), S (3, 1) },
    { S (2, 3, 1, 5), S (3, 4, 1) },
    { S (1, 1), S (1, 1, 1) },
    { S (6, 1, 1), S (1, 1) },
    { S (2, 3, 4, 5), S (1, 3, 1, 1) },
    { S (2, 3, 4, 5), S (3, 4, 5) },
    { S (3, 4, 5), S (2, 3, 1, 5) },
    { S (1, 2, 1, 3, 1, 2), S (2, 1, 3, 1, 2, 1) },
    { S (5, 1), S (1, 1, 6) },
  };
  for (size_t s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (size_t k = 0; k < G_N_ELEMENTS (ops); k++)
      check (ops[k], NO_ATTRS, 2, shapes[s], WIDE);
  /* An empty output: nothing to write, nothing read. */
  const hy_shape empty[2] = { S (0, 3), S (1, 3) };
  check ("broadcast_add", NO_ATTRS, 2, empty, WIDE);
}

static void
check_add_n (void)
{
  static const int counts[] = { 1, 2, 3, 15, 16, 17, 31, 32, 40 };
  hy_shape shapes[EMU_MAX_IO];
  for (int i = 0; i < EMU_MAX_IO; i++)
    shapes[i] = S (3, 11);
  for (size_t k = 0; k < G_N_ELEMENTS (counts); k++) {
    char n[8];
    snprintf (n, sizeof n, "%d", counts[k]);
    check ("add_n", KV ("num_args", n), counts[k], shapes, WIDE);
  }
  check ("ElementWiseSum", KV ("num_args", "2"), 2, shapes, PLAIN);
}

static void
check_clip_hard_sigmoid_fill (void)
{
  const hy_shape x = S (7, 9);
  check ("clip", KV ("a_min", "-1", "a_max", "1"), 1, &x, WIDE);
  check ("clip", KV ("a_min", "0", "a_max", "6"), 1, &x, WIDE);
  check ("clip", KV ("a_min", "1", "a_max", "-1"), 1, &x, WIDE);
  check ("clip", KV ("a_min", "-0.5", "a_max", "-0.5"), 1, &x, WIDE);
  check ("clip", KV ("a_min", "2", "a_max", "3"), 1, &x, WIDE);
  check ("hard_sigmoid", NO_ATTRS, 1, &x, WIDE);
  check ("hard_sigmoid", KV ("alpha", "0.5", "beta", "0.1"), 1, &x, WIDE);
  check ("hard_sigmoid", KV ("alpha", "-1", "beta", "0.7"), 1, &x, WIDE);
  check ("zeros_like", NO_ATTRS, 1, &x, WIDE);
  check ("ones_like", NO_ATTRS, 1, &x, WIDE);
}

static void
check_where (void)
{
  const hy_shape cases[][3] = {
    { S (4, 6), S (4, 6), S (4, 6) },
    { S (4), S (4, 6), S (4, 6) },
    { S (5), S (5), S (5) },
    { S (3), S (3, 2, 5), S (3, 2, 5) },
    { S (1), S (1, 7), S (1, 7) },
    { S (2, 3, 5), S (2, 3, 5), S (2, 3, 5) },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (cases); k++)
    check ("where", NO_ATTRS, 3, cases[k], WIDE);
}

static void
check_cast (void)
{
  static const char *const dtypes[] = {
    "float16", "bfloat16", "int32", "int64", "uint8", "int8", "bool",
    "float32", "float64",
  };
  const hy_shape x = S (9, 37);
  const emu_fill ints = { -400.0f, 400.0f, true };
  const emu_fill tiny = { -1e-4f, 1e-4f, true };
  const emu_fill huge = { -7e4f, 7e4f, true };
  for (size_t k = 0; k < G_N_ELEMENTS (dtypes); k++) {
    check ("Cast", KV ("dtype", dtypes[k]), 1, &x, ints);
    check ("Cast", KV ("dtype", dtypes[k]), 1, &x, huge);
  }
  check ("Cast", KV ("dtype", "float16"), 1, &x, tiny);
  check ("amp_cast", KV ("dtype", "float16"), 1, &x, WIDE);
}

/* The relu op against MXNet's relu itself, isnan(v) || v > 0 ? v : 0 (the
 * CPU comparison cannot tell if both drift together): NaN passes, ±0 and
 * negatives give +0. */
static void
check_relu_semantics (void)
{
  int bad = 0;
  for (int k = 0; k < N_SPECIALS; k++) {
    const float v = specials[k];
    const float want = isnan (v) || v > 0.0f ? v : 0.0f;
    const float got = hy_cuda_unary_op (HY_OP_RELU, v);
    if (!(isnan (got) && isnan (want))
        && (got != want || signbit (got) != signbit (want))) {
      if (bad++ == 0)
        printf ("  relu (%g) = %g, MXNet %g\n", (double) v, (double) got,
            (double) want);
    }
  }
  emu_report (bad == 0, "relu is MXNet's on NaN, infinities and signed "
      "zeros", 0.0, NULL);
}

/* Integer data (the dtype inference's int_dtype): integer inputs,
 * division truncating, results held in the dtype (narrow ones wrap). */
static void
check_integer (void)
{
  static const hy_dtype dtypes[] = {
    HY_DTYPE_INT64, HY_DTYPE_INT32, HY_DTYPE_UINT8, HY_DTYPE_INT8,
  };
  static const char *const scalars[] = { "2.5", "-3", "0", "7" };
  const emu_fill ints = { -300.0f, 300.0f, false };
  const emu_fill small = { -9.0f, 9.0f, false };
  const hy_shape x = S (5, 13), same[2] = { S (4, 9), S (4, 9) };
  const hy_shape bc[2] = { S (2, 3, 4), S (3, 1) };
  hy_shape many[EMU_MAX_IO];
  for (int i = 0; i < EMU_MAX_IO; i++)
    many[i] = S (3, 11);
  for (size_t d = 0; d < G_N_ELEMENTS (dtypes); d++) {
    emu_data_dtype = dtypes[d];
    check_family ("unary", NO_ATTRS, 1, &x, ints);
    for (size_t s = 0; s < G_N_ELEMENTS (scalars); s++)
      check_family ("scalar", KV ("scalar", scalars[s]), 1, &x, ints);
    check ("_div_scalar", KV ("scalar", "2.5", "is_int", "False"), 1, &x,
        ints);
    check_family ("binary", NO_ATTRS, 2, same, ints);
    check_family ("binary", NO_ATTRS, 2, same, small);
    check ("broadcast_div", NO_ATTRS, 2, bc, ints);
    check ("broadcast_mod", NO_ATTRS, 2, bc, small);
    check ("add_n", KV ("num_args", "3"), 3, many, ints);
    check ("add_n", KV ("num_args", "20"), 20, many, ints);
    check ("clip", KV ("a_min", "-2.5", "a_max", "3.7"), 1, &x, small);
  }
  emu_data_dtype = HY_DTYPE_FLOAT32;
}

int
main (void)
{
  emu_checking = &suite;
  check_relu_semantics ();
  check_unary ();
  check_scalar ();
  check_binary ();
  check_add_n ();
  check_clip_hard_sigmoid_fill ();
  check_where ();
  check_cast ();
  check_integer ();
  return emu_summary ();
}
