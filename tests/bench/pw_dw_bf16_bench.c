/*
 * pw_dw_bf16_bench.c — MobileNetV2's inverted-residual blocks as oneDNN
 * bf16 chains, to hold against the fused fp32 chain (conv-pw-dw.c) that
 * precision bf16 keeps for them (docs/PRECISION.md, "pw-dw chains").
 *
 * Each block is three oneDNN 2.6 primitives on nhwc activations kept in
 * bf16 between them: the expansion 1x1 (ReLU6 as a post-op), the 3x3
 * depthwise (groups = channels, ReLU6), the projection 1x1 (fp32 out, the
 * residual as a sum post-op where the block has one), weights in the
 * layout oneDNN picks.  No transposes: the input is already nhwc bf16 and
 * the output stays nhwc.  That is the best a bf16 chain could do with
 * oneDNN's kernels, cheaper than any version the plan could run (which
 * would also lay its input out and its output back, or carry nhwc bf16
 * through every other op).  One thread (oneDNN's OpenMP held to one, as
 * conv-dnnl.c holds it), data warm, process CPU time per block, median of
 * 200 calls; compare with the same blocks' "cpu ms" in
 *
 *   build/tools/hybridinfer bench --model .../mobilenetv2_1.0/model-symbol.json \
 *       --shape 1x3x224x224 --precision bf16 --profile --threads 1
 *
 * Built by meson when oneDNN is (not a test):
 *
 *   ninja -C build tests/pw-dw-bf16-bench && build/tests/pw-dw-bf16-bench
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>

#define ITERATIONS 200

/* MobileNetV2 1.0 at 224 (Gluon's: every block has its expansion, the
 * first one of factor 1): input channels, expansion, output channels,
 * stride, input side. */
static const int blocks[][5] = {
  { 32, 1, 16, 1, 112 }, { 16, 6, 24, 2, 112 }, { 24, 6, 24, 1, 56 },
  { 24, 6, 32, 2, 56 }, { 32, 6, 32, 1, 28 }, { 32, 6, 32, 1, 28 },
  { 32, 6, 64, 2, 28 }, { 64, 6, 64, 1, 14 }, { 64, 6, 64, 1, 14 },
  { 64, 6, 64, 1, 14 }, { 64, 6, 96, 1, 14 }, { 96, 6, 96, 1, 14 },
  { 96, 6, 96, 1, 14 }, { 96, 6, 160, 2, 14 }, { 160, 6, 160, 1, 7 },
  { 160, 6, 160, 1, 7 }, { 160, 6, 320, 1, 7 },
};

#define CHECK(call) do { dnnl_status_t st_ = (call); if (st_ != dnnl_success) { \
      fprintf (stderr, "%s: %d\n", #call, (int) st_); exit (1); } } while (0)

static dnnl_engine_t engine;
static dnnl_stream_t stream;

typedef struct {
  dnnl_primitive_t prim;
  dnnl_memory_t src, weights, dst;
  const char *impl;
} conv;

static double
cpu_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static dnnl_memory_t
filled (const dnnl_memory_desc_t *md)
{
  dnnl_memory_t m;
  CHECK (dnnl_memory_create (&m, md, engine, DNNL_MEMORY_ALLOCATE));
  void *p;
  CHECK (dnnl_memory_get_data_handle (m, &p));
  /* 0x3c00 as bf16 halves and as floats: small finite values either way */
  memset (p, 0x3c, dnnl_memory_desc_get_size (md));
  return m;
}

/* A 2-D convolution, nhwc bf16 in, dst type out, ReLU6 or a sum after. */
static conv
make_conv (int c, int f, int groups, int k, int stride, int side,
    dnnl_data_type_t dst_type, int relu6, int sum)
{
  const int pad = k / 2, out = (side + 2 * pad - k) / stride + 1;
  dnnl_memory_desc_t src_md, w_md, dst_md;
  const dnnl_dims_t src_dims = { 1, c, side, side };
  const dnnl_dims_t dst_dims = { 1, f, out, out };
  const dnnl_dims_t w_dims = { f, c, k, k };
  const dnnl_dims_t gw_dims = { groups, f / groups, c / groups, k, k };
  CHECK (dnnl_memory_desc_init_by_tag (&src_md, 4, src_dims, dnnl_bf16,
          dnnl_nhwc));
  CHECK (dnnl_memory_desc_init_by_tag (&dst_md, 4, dst_dims, dst_type,
          dnnl_nhwc));
  if (groups > 1)
    CHECK (dnnl_memory_desc_init_by_tag (&w_md, 5, gw_dims, dnnl_bf16,
            dnnl_format_tag_any));
  else
    CHECK (dnnl_memory_desc_init_by_tag (&w_md, 4, w_dims, dnnl_bf16,
            dnnl_format_tag_any));
  const dnnl_dims_t strides = { stride, stride }, pads = { pad, pad };
  dnnl_convolution_desc_t desc;
  CHECK (dnnl_convolution_forward_desc_init (&desc, dnnl_forward_inference,
          dnnl_convolution_direct, &src_md, &w_md, NULL, &dst_md, strides,
          pads, pads));
  dnnl_primitive_attr_t attr;
  dnnl_post_ops_t ops;
  CHECK (dnnl_primitive_attr_create (&attr));
  CHECK (dnnl_post_ops_create (&ops));
  if (sum)
    CHECK (dnnl_post_ops_append_sum (ops, 1.0f));
  if (relu6)
    CHECK (dnnl_post_ops_append_eltwise (ops, 1.0f, dnnl_eltwise_clip, 0.0f,
            6.0f));
  CHECK (dnnl_primitive_attr_set_post_ops (attr, ops));
  dnnl_primitive_desc_t pd;
  CHECK (dnnl_primitive_desc_create (&pd, &desc, attr, engine, NULL));
  conv cv;
  CHECK (dnnl_primitive_desc_query (pd, dnnl_query_impl_info_str, 0,
          &cv.impl));
  CHECK (dnnl_primitive_create (&cv.prim, pd));
  cv.src = filled (dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0));
  cv.weights = filled (dnnl_primitive_desc_query_md (pd,
          dnnl_query_weights_md, 0));
  cv.dst = filled (dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0));
  dnnl_post_ops_destroy (ops);
  dnnl_primitive_attr_destroy (attr);
  /* impl points into pd: keep pd alive (a bench, freed at exit). */
  return cv;
}

static void
run (const conv *cv)
{
  const dnnl_exec_arg_t args[] = {
    { DNNL_ARG_SRC, cv->src }, { DNNL_ARG_WEIGHTS, cv->weights },
    { DNNL_ARG_DST, cv->dst },
  };
  CHECK (dnnl_primitive_execute (cv->prim, stream, 3, args));
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (void)
{
  omp_set_num_threads (1);
  CHECK (dnnl_engine_create (&engine, dnnl_cpu, 0));
  CHECK (dnnl_stream_create (&stream, engine, dnnl_stream_default_flags));
  printf ("block  in->exp->out @side/stride   expand      depthwise   "
      "project     chain (cpu ms, median of %d)\n", ITERATIONS);
  double total = 0;
  for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
    const int c = blocks[b][0], t = blocks[b][1], f = blocks[b][2];
    const int stride = blocks[b][3], side = blocks[b][4];
    const int e = c * t, out_side = (side - 1) / stride + 1;
    conv ex = make_conv (c, e, 1, 1, 1, side, dnnl_bf16, 1, 0);
    conv dw = make_conv (e, e, e, 3, stride, side, dnnl_bf16, 1, 0);
    conv pj = make_conv (e, f, 1, 1, 1, out_side, dnnl_f32, 0,
        stride == 1 && c == f);
    double times[4][ITERATIONS];
    for (int i = 0; i < ITERATIONS + 5; i++) {
      double t0 = cpu_s ();
      run (&ex);
      double t1 = cpu_s ();
      run (&dw);
      double t2 = cpu_s ();
      run (&pj);
      double t3 = cpu_s ();
      if (i >= 5) {
        times[0][i - 5] = t1 - t0;
        times[1][i - 5] = t2 - t1;
        times[2][i - 5] = t3 - t2;
        times[3][i - 5] = t3 - t0;
      }
    }
    double med[4];
    for (int k = 0; k < 4; k++) {
      qsort (times[k], ITERATIONS, sizeof (double), cmp_double);
      med[k] = times[k][ITERATIONS / 2] * 1e3;
    }
    total += med[3];
    printf ("%3zu    %3d->%3d->%3d @%3d/%d        %.4f      %.4f      %.4f"
        "      %.4f   %s | %s | %s\n", b, c, e, f, side, stride, med[0],
        med[1], med[2], med[3], ex.impl, dw.impl, pj.impl);
  }
  printf ("all %zu blocks: %.3f cpu ms\n", sizeof blocks / sizeof blocks[0],
      total);
  return 0;
}
