/*
 * test-conv-pw-dw.c — a pointwise convolution and the depthwise one after
 * it run as one kernel (kernels/cpu/conv/conv-pw-dw.h) give what the two calls
 * give one after the other, bit for bit, on 1 and 2 threads: band edges,
 * maps whose rows are not whole vectors, strides 1 and 2, 3×3 and 5×5,
 * padding that leaves rows out, each epilogue; and the pairs it refuses.
 * Then the same with the projection that reads the depthwise output
 * taken in as well (hy_conv_pw_dw_take_projection): the three calls
 * against the one; and the depthwise layer and that projection alone as
 * one (a chain without an expansion, MobileNetV1's).
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "conv-reference.h"
#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/conv/conv-pw-dw.h"
#include "kernels/cpu/cpu-kernel.h"
#include "core/op.h"

typedef struct pair_case {
  const char *name;
  int batch, channels, height, width, expanded;
  int kernel, stride, pad;
  bool pw_bias, pw_bn, dw_bias, dw_bn, dw_res;
  hy_fused_act pw_act, dw_act;
} pair_case;

static const pair_case cases[] = {
  /* MobileNetV2's first expansions, at a smaller width. */
  { "relu6-s1", 1, 16, 40, 40, 96, 3, 1, 1, false, true, false, true, false,
    HY_FUSED_ACT_CLIP, HY_FUSED_ACT_CLIP },
  { "relu6-s2", 1, 16, 41, 37, 64, 3, 2, 1, false, true, false, true, false,
    HY_FUSED_ACT_CLIP, HY_FUSED_ACT_CLIP },
  /* MobileNetV3's: hard swish, 5×5, padding 2. */
  { "hswish-5x5-s2", 2, 24, 29, 30, 72, 5, 2, 2, true, true, true, true,
    false, HY_FUSED_ACT_HARD_SWISH, HY_FUSED_ACT_HARD_SWISH },
  { "hswish-5x5-s1", 1, 40, 28, 28, 120, 5, 1, 2, false, true, false, true,
    false, HY_FUSED_ACT_HARD_SWISH, HY_FUSED_ACT_RELU },
  /* Plain biases, a residual on the depthwise output, no padding. */
  { "bias-residual", 3, 8, 23, 17, 48, 3, 1, 0, true, false, true, false,
    true, HY_FUSED_ACT_RELU, HY_FUSED_ACT_NONE },
  /* Bands of one row (a wide map), padding past a stride-2 edge. */
  { "wide-s2", 1, 8, 9, 300, 256, 3, 2, 1, false, true, false, true, false,
    HY_FUSED_ACT_CLIP, HY_FUSED_ACT_HARD_SIGMOID },
  { "7x7", 1, 32, 7, 7, 192, 3, 1, 1, false, true, false, true, false,
    HY_FUSED_ACT_CLIP, HY_FUSED_ACT_CLIP },
};

static gboolean
skip_without_kernel (void)
{
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx512f"))
    return FALSE;
  g_test_skip ("this CPU has no AVX-512F: the pair is never fused");
  return TRUE;
}

static hy_conv_params
conv_params (int kernel, int stride, int pad, int filters, int groups,
    bool bias, bool bn, bool res, hy_fused_act act)
{
  hy_conv_params p = {
    .op = hy_op_lookup ("Convolution")->id, .n_spatial = 2,
    .kernel = { kernel, kernel }, .stride = { stride, stride },
    .dilate = { 1, 1 }, .pad = { pad, pad }, .num_filter = filters,
    .num_group = groups, .no_bias = !bias,
    .fused = { .act = act, .alpha = 0.0f, .beta = 6.0f, .batch_norm = bn,
      .residual = res },
  };
  return p;
}

/* hy_call.const_inputs bitsets (one word: no call here has 32 inputs):
 * everything but the data constant, as a plan marks weights; or only the
 * data, weights that may change between forwards. */
static const uint32_t all_but_data[1] = { ~1u }, data_only[1] = { 1u };

/* A call's argument list: data, a seeded weight, then conv-reference.h's
 * operands. */
typedef struct call_args {
  hy_tensor *in[6];
  int n_in;
  hy_call call;
} call_args;

static void
call_args_init (call_args *a, hy_tensor *x, const hy_shape *w,
    const hy_conv_params *p, hy_tensor **out, guint32 seed)
{
  memset (a, 0, sizeof *a);
  a->in[a->n_in++] = x;
  a->in[a->n_in] = hy_tensor_new (w);
  conv_fill (a->in[a->n_in++]->data, hy_shape_numel (w), seed);
  conv_operands_add (a->in, &a->n_in, p->num_filter, !p->no_bias,
      p->fused.batch_norm, p->fused.residual, &out[0]->shape);
  a->call = (hy_call) {
    .params = p, .in = (const hy_tensor *const *) a->in, .out = out,
    .n_in = a->n_in, .n_out = 1, .op = p->op, .const_inputs = all_but_data,
  };
}

static void
call_args_clear (call_args *a)
{
  for (int k = 1; k < a->n_in; k++)
    hy_tensor_free (a->in[k]);
}

/* The fused call, twice on one thread and twice on two, into `got`
 * (NaN-filled before each run): bit for bit `want`, what `apart` give. */
static void
run_fused (hy_cpu_ctx ctx[2], const hy_conv_pw_dw *fused,
    const hy_tensor *const *in, int n_in, hy_tensor *got,
    const hy_tensor *want, const char *apart)
{
  for (int run = 0; run < 4; run++) {
    memset (got->data, 0xff, hy_tensor_nbytes (got));
    hy_cpu_convolution_pw_dw (&ctx[run % 2], fused, in, n_in, &got, 1);
    for (int64_t i = 0; i < hy_shape_numel (&want->shape); i++)
      if (memcmp (&got->data[i], &want->data[i], sizeof (float)))
        g_error ("%d thread(s): output %" G_GINT64_FORMAT ": %.9g, %s give "
            "%.9g", run % 2 + 1, i, got->data[i], apart, want->data[i]);
  }
}

static void
test_pair (gconstpointer data)
{
  if (skip_without_kernel ())
    return;
  const pair_case *q = data;
  const int oh = (q->height + 2 * q->pad - q->kernel) / q->stride + 1;
  const int ow = (q->width + 2 * q->pad - q->kernel) / q->stride + 1;
  const hy_conv_params pp = conv_params (1, 1, 0, q->expanded, 1, q->pw_bias,
      q->pw_bn, false, q->pw_act);
  const hy_conv_params dp = conv_params (q->kernel, q->stride, q->pad,
      q->expanded, q->expanded, q->dw_bias, q->dw_bn, q->dw_res, q->dw_act);
  hy_shape xs = { 4, { q->batch, q->channels, q->height, q->width } };
  hy_shape ms = { 4, { q->batch, q->expanded, q->height, q->width } };
  hy_shape ys = { 4, { q->batch, q->expanded, oh, ow } };
  hy_shape pw_w = { 4, { q->expanded, q->channels, 1, 1 } };
  hy_shape dw_w = { 4, { q->expanded, 1, q->kernel, q->kernel } };
  hy_tensor *x = hy_tensor_new (&xs);
  conv_fill (x->data, hy_shape_numel (&xs), 3);
  hy_tensor *mid = hy_tensor_new (&ms), *want = hy_tensor_new (&ys);
  hy_tensor *got = hy_tensor_new (&ys);
  call_args first, second;
  call_args_init (&first, x, &pw_w, &pp, &mid, 4);
  call_args_init (&second, mid, &dw_w, &dp, &want, 5);

  /* The two calls, as a plan runs them apart. */
  hy_cpu_ctx ctx[2] = { { 0 }, { 0 } };
  hy_cpu_ctx_set_threads (&ctx[1], 2);
  hy_conv_packed *packed = hy_conv_packed_new (&pp, first.call.in,
      first.n_in, mid, hy_call_input_const (&first.call, 1));
  g_assert_nonnull (packed);
  hy_cpu_convolution_packed (&ctx[0], packed, first.call.in, first.n_in,
      &mid, 1);
  hy_cpu_kernel_for (dp.op) (&ctx[0], &dp, second.call.in, second.n_in,
      &want, 1);

  /* As one: first's arguments, then second's but its data. */
  hy_conv_pw_dw *fused = hy_conv_pw_dw_new (&first.call, &second.call);
  g_assert_nonnull (fused);
  const hy_tensor *in[18];
  int n_in = 0;
  for (int k = 0; k < first.n_in; k++)
    in[n_in++] = first.in[k];
  for (int k = 1; k < second.n_in; k++)
    in[n_in++] = second.in[k];
  run_fused (ctx, fused, in, n_in, got, want, "the two calls");

  /* A projection to 16 channels (BatchNorm, a residual) after it: apart,
   * on the depthwise output just checked, and taken into the call. */
  const hy_conv_params qp = conv_params (1, 1, 0, 16, 1, true, true, true,
      HY_FUSED_ACT_NONE);
  hy_shape zs = { 4, { q->batch, 16, oh, ow } };
  hy_shape proj_w = { 4, { 16, q->expanded, 1, 1 } };
  hy_tensor *want_z = hy_tensor_new (&zs), *got_z = hy_tensor_new (&zs);
  call_args third;
  call_args_init (&third, want, &proj_w, &qp, &want_z, 6);
  hy_conv_packed *proj = hy_conv_packed_new (&qp, third.call.in,
      third.n_in, want_z, hy_call_input_const (&third.call, 1));
  g_assert_nonnull (proj);
  hy_cpu_convolution_packed (&ctx[0], proj, third.call.in, third.n_in,
      &want_z, 1);

  hy_tensor *dw_out = want;
  const hy_call pair = {
    .params = fused, .in = in, .out = &dw_out, .n_in = n_in, .n_out = 1,
    .op = dp.op, .const_inputs = all_but_data,
  };
  g_assert_true (hy_conv_pw_dw_take_projection (fused, &pair, &third.call));
  g_assert_cmpstr (hy_conv_pw_dw_kernel_name (fused), ==,
      "pointwise+depthwise+pointwise");
  /* Taken once only. */
  g_assert_false (hy_conv_pw_dw_take_projection (fused, &pair,
          &third.call));
  for (int k = 1; k < third.n_in; k++)
    in[n_in++] = third.in[k];
  run_fused (ctx, fused, in, n_in, got_z, want_z, "the three calls");

  /* The depthwise layer and the projection, without the expansion: its
   * arguments (data: the expansion's output), then the projection's. */
  hy_conv_pw_dw *from_dw = hy_conv_pw_dw_new (&second.call, &third.call);
  g_assert_nonnull (from_dw);
  g_assert_cmpstr (hy_conv_pw_dw_kernel_name (from_dw), ==,
      "depthwise+pointwise");
  g_assert_false (hy_conv_pw_dw_take_projection (from_dw, &second.call,
          &third.call));
  n_in = 0;
  for (int k = 0; k < second.n_in; k++)
    in[n_in++] = second.in[k];
  for (int k = 1; k < third.n_in; k++)
    in[n_in++] = third.in[k];
  run_fused (ctx, from_dw, in, n_in, got_z, want_z,
      "the depthwise and pointwise calls");

  hy_conv_pw_dw_free (from_dw);
  hy_conv_pw_dw_free (fused);
  hy_conv_packed_free (packed);
  hy_conv_packed_free (proj);
  hy_cpu_ctx_clear (&ctx[0]);
  hy_cpu_ctx_clear (&ctx[1]);
  call_args_clear (&first);
  call_args_clear (&second);
  call_args_clear (&third);
  hy_tensor_free (x);
  hy_tensor_free (mid);
  hy_tensor_free (want);
  hy_tensor_free (got);
  hy_tensor_free (want_z);
  hy_tensor_free (got_z);
}

/* Pairs the kernel does not run as one. */
static void
test_refuses (void)
{
  if (skip_without_kernel ())
    return;
  hy_shape xs = { 4, { 1, 16, 20, 20 } }, ms = { 4, { 1, 32, 20, 20 } };
  hy_shape ys = { 4, { 1, 32, 20, 20 } };
  hy_shape pw_w = { 4, { 32, 16, 1, 1 } }, dw_w = { 4, { 32, 1, 3, 3 } };
  hy_tensor *x = hy_tensor_new (&xs), *mid = hy_tensor_new (&ms);
  hy_tensor *y = hy_tensor_new (&ys);
  const hy_conv_params pp = conv_params (1, 1, 0, 32, 1, false, false, false,
      HY_FUSED_ACT_RELU);
  const hy_conv_params dp = conv_params (3, 1, 1, 32, 32, false, false,
      false, HY_FUSED_ACT_RELU);
  call_args first, second;
  call_args_init (&first, x, &pw_w, &pp, &mid, 4);
  call_args_init (&second, mid, &dw_w, &dp, &y, 5);
  hy_conv_pw_dw *ok = hy_conv_pw_dw_new (&first.call, &second.call);
  g_assert_nonnull (ok);
  hy_conv_pw_dw_free (ok);

  /* Weights that may change between forwards. */
  second.call.const_inputs = data_only;
  g_assert_null (hy_conv_pw_dw_new (&first.call, &second.call));
  second.call.const_inputs = all_but_data;
  /* second reads something else as its data. */
  second.in[0] = y;
  g_assert_null (hy_conv_pw_dw_new (&first.call, &second.call));
  second.in[0] = mid;
  /* A 3×3 first, or a dense second. */
  hy_conv_params p3 = pp;
  p3.kernel[0] = p3.kernel[1] = 3;
  p3.pad[0] = p3.pad[1] = 1;
  first.call.params = &p3;
  g_assert_null (hy_conv_pw_dw_new (&first.call, &second.call));
  first.call.params = &pp;
  hy_conv_params dense = dp;
  dense.num_group = 1;
  second.call.params = &dense;
  g_assert_null (hy_conv_pw_dw_new (&first.call, &second.call));
  second.call.params = &dp;
  /* An activation the depthwise kernel does not apply itself. */
  hy_conv_params tanh_dw = dp;
  tanh_dw.fused.act = HY_FUSED_ACT_TANH;
  second.call.params = &tanh_dw;
  g_assert_null (hy_conv_pw_dw_new (&first.call, &second.call));
  second.call.params = &dp;

  /* The depthwise layer and a pointwise one after it: taken, but not
   * with weights that may change, nor a 3×3 after it. */
  hy_shape zs = { 4, { 1, 16, 20, 20 } }, proj_w = { 4, { 16, 32, 1, 1 } };
  hy_tensor *z = hy_tensor_new (&zs);
  hy_conv_params qp = conv_params (1, 1, 0, 16, 1, true, false, false,
      HY_FUSED_ACT_NONE);
  call_args third;
  call_args_init (&third, y, &proj_w, &qp, &z, 6);
  ok = hy_conv_pw_dw_new (&second.call, &third.call);
  g_assert_nonnull (ok);
  hy_conv_pw_dw_free (ok);
  third.call.const_inputs = data_only;
  g_assert_null (hy_conv_pw_dw_new (&second.call, &third.call));
  third.call.const_inputs = all_but_data;
  hy_conv_params q3 = qp;
  q3.kernel[0] = q3.kernel[1] = 3;
  q3.pad[0] = q3.pad[1] = 1;
  third.call.params = &q3;
  g_assert_null (hy_conv_pw_dw_new (&second.call, &third.call));

  call_args_clear (&first);
  call_args_clear (&second);
  call_args_clear (&third);
  hy_tensor_free (x);
  hy_tensor_free (mid);
  hy_tensor_free (y);
  hy_tensor_free (z);
}

int
main (int argc, char **argv)
{
  /* Every pair it can run, whatever their size. */
  g_setenv ("HYBRIDINFER_PW_DW", "1", TRUE);
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *name = g_strdup_printf ("/conv-pw-dw/%s",
        cases[i].name);
    g_test_add_data_func (name, &cases[i], test_pair);
  }
  g_test_add_func ("/conv-pw-dw/refuses", test_refuses);
  return g_test_run ();
}
