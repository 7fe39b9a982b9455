/*
 * qlut-chain.h — a small int8 model with a hard sigmoid between two
 * quantized values, as MXNet's quantize_net_v2 exports MobileNetV3's:
 * data → quantize_v2 → dequantize → scalar op → clip → scalar op →
 * quantize_v2 → dequantize.  Hybrid mode runs the middle as one look-up
 * on bytes (kernels/cpu/quantized/qlut-bytes.h); imperative mode runs
 * every op.  Shared by test-qlut-bytes.c and test-plan-alloc.c.
 */
#ifndef HY_TEST_QLUT_CHAIN_H
#define HY_TEST_QLUT_CHAIN_H

#include <glib.h>
#include <glib/gstdio.h>

#include "hybrid.h"

typedef struct qlut_chain {
  const char *in_type;          /* the first quantize_v2's out_type */
  float in_min, in_max;         /* its calibrated range */
  const char *first, *first_scalar;     /* the op before the clip */
  float clip_min, clip_max;
  const char *last, *last_scalar;       /* the op after it */
  const char *out_type;         /* the second quantize_v2's */
  float out_min, out_max;
} qlut_chain;

/* The hard sigmoid of MobileNetV3's int8 export. */
#define QLUT_HARD_SIGMOID \
  { "int8", -4.0f, 4.0f, "_plus_scalar", "3.0", 0.0f, 6.0f, \
    "_div_scalar", "6.0", "int8", 0.0f, 1.0f }

/* The symbol JSON of `c`. */
static inline char *
qlut_chain_json (const qlut_chain *c)
{
  return g_strdup_printf ("{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
      " {\"op\": \"_contrib_quantize_v2\", \"name\": \"q0\", \"attrs\":"
      "  {\"out_type\": \"%s\", \"min_calib_range\": \"%.9g\","
      "   \"max_calib_range\": \"%.9g\"}, \"inputs\": [[0, 0, 0]]},"
      " {\"op\": \"_contrib_dequantize\", \"name\": \"dq0\", \"inputs\":"
      "  [[1, 0, 0], [1, 1, 0], [1, 2, 0]]},"
      " {\"op\": \"%s\", \"name\": \"s0\", \"attrs\": {\"scalar\": \"%s\"},"
      "  \"inputs\": [[2, 0, 0]]},"
      " {\"op\": \"clip\", \"name\": \"c0\", \"attrs\": {\"a_min\": \"%.9g\","
      "  \"a_max\": \"%.9g\"}, \"inputs\": [[3, 0, 0]]},"
      " {\"op\": \"%s\", \"name\": \"s1\", \"attrs\": {\"scalar\": \"%s\"},"
      "  \"inputs\": [[4, 0, 0]]},"
      " {\"op\": \"_contrib_quantize_v2\", \"name\": \"q1\", \"attrs\":"
      "  {\"out_type\": \"%s\", \"min_calib_range\": \"%.9g\","
      "   \"max_calib_range\": \"%.9g\"}, \"inputs\": [[5, 0, 0]]},"
      " {\"op\": \"_contrib_dequantize\", \"name\": \"dq1\", \"inputs\":"
      "  [[6, 0, 0], [6, 1, 0], [6, 2, 0]]}],"
      " \"arg_nodes\": [0], \"heads\": [[7, 0, 0]]}",
      c->in_type, c->in_min, c->in_max, c->first, c->first_scalar,
      c->clip_min, c->clip_max, c->last, c->last_scalar, c->out_type,
      c->out_min, c->out_max);
}

/* Loads `c` from a file of its own in a new temporary directory. */
static inline hy_model *
qlut_chain_model (const qlut_chain *c)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("qlut-chain-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "chain-symbol.json", NULL);
  g_autofree char *json = qlut_chain_json (c);
  g_assert_true (g_file_set_contents (path, json, -1, &error));
  hy_model *model = hy_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_unlink (path);
  g_rmdir (dir);
  return model;
}

/* One image (1, C, H, W) whose values run evenly over [lo, hi] (every
 * byte of the first quantize_v2, and beyond its range on both sides). */
static inline hy_tensor *
qlut_chain_input (int64_t C, int64_t H, int64_t W, float lo, float hi)
{
  hy_shape s = { .ndim = 4, .dims = { 1, C, H, W } };
  hy_tensor *t = hy_tensor_new (&s);
  const int64_t n = hy_shape_numel (&s);
  for (int64_t i = 0; i < n; i++)
    t->data[(i * 7919) % n] = lo + (hi - lo) * (float) i / (float) (n - 1);
  return t;
}

#endif /* HY_TEST_QLUT_CHAIN_H */
