/*
 * test-ops-zoo.c — what the zoo's newer ops refuse, with the attribute or
 * input named: MXNet 1.9.1 refuses the same attributes and shapes (or
 * fails inside its kernel), and we must say why before a forward.
 *
 * Their values are checked against MXNet by the conformance fixtures
 * (op_UpSampling_*, op_Pad_*, op_SyncBatchNorm_*, op_reshape_like_*,
 * op_broadcast_like_*, op__contrib_arange_like_*); this file checks
 * parsing and shape inference only.
 */
#include "hybrid.h"
#include "op-checks.h"

/* ---- UpSampling --------------------------------------------------------- */

static void
test_upsampling_shapes (void)
{
  hy_shape one = SHAPE (2, 3, 4, 5);
  expect_shape ("UpSampling", KV ("scale", "2", "sample_type", "nearest"),
      &one, 1, "(2, 3, 8, 10)");
  /* Each input repeated by its own factor, the channels concatenated. */
  hy_shape three[3] = { SHAPE (2, 3, 4, 4), SHAPE (2, 2, 2, 2),
    SHAPE (2, 1, 8, 8) };
  expect_shape ("UpSampling", KV ("scale", "2", "sample_type", "nearest",
          "num_args", "3"), three, 3, "(2, 6, 8, 8)");
  hy_shape same[2] = { SHAPE (1, 3, 2, 2), SHAPE (1, 3, 4, 4) };
  expect_shape ("UpSampling", KV ("scale", "2", "sample_type", "nearest",
          "num_args", "2", "multi_input_mode", "sum"), same, 2,
      "(1, 3, 4, 4)");
  hy_shape bil[2] = { SHAPE (1, 3, 4, 5), SHAPE (3, 1, 5, 5) };
  expect_shape ("UpSampling", KV ("scale", "3", "sample_type", "bilinear",
          "num_filter", "3"), bil, 2, "(1, 3, 12, 15)");
}

static void
test_upsampling_refusals (void)
{
  hy_shape one = SHAPE (2, 3, 4, 5);
  expect_error ("UpSampling", KV ("sample_type", "nearest"), &one, 1,
      "'scale'");
  expect_error ("UpSampling", KV ("scale", "2"), &one, 1, "'sample_type'");
  expect_error ("UpSampling", KV ("scale", "(2, 3)", "sample_type",
          "nearest"), &one, 1, "'scale'");
  expect_error ("UpSampling", KV ("scale", "0", "sample_type", "nearest"),
      &one, 1, "must be an integer in [1,");
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "cubic"),
      &one, 1, "'sample_type'");
  hy_shape flat = SHAPE (2, 3, 4);
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "nearest"),
      &flat, 1, "needs 4-D (batch, channel, y, x) inputs");
  /* MXNet repeats by the height's factor on both axes: another width
   * factor fails there. */
  hy_shape uneven[2] = { SHAPE (2, 3, 2, 3), SHAPE (2, 2, 1, 3) };
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "nearest",
          "num_args", "2"), uneven, 2, "one whole factor on both axes");
  hy_shape larger[2] = { SHAPE (2, 3, 2, 3), SHAPE (2, 2, 8, 12) };
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "nearest",
          "num_args", "2"), larger, 2, "input 1 (arg1) of shape");
  hy_shape batches[2] = { SHAPE (2, 3, 2, 3), SHAPE (1, 2, 4, 6) };
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "nearest",
          "num_args", "2"), batches, 2, "the same batch");
  hy_shape channels[2] = { SHAPE (2, 3, 2, 3), SHAPE (2, 2, 4, 6) };
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "nearest",
          "num_args", "2", "multi_input_mode", "sum"), channels, 2,
      "multi_input_mode='sum' needs the same count");
  /* Bilinear: a grouped deconvolution of one group per channel. */
  hy_shape bil[2] = { SHAPE (1, 3, 4, 5), SHAPE (3, 1, 4, 4) };
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "bilinear"),
      bil, 2, "'num_filter' = '0 (absent)' must be the input's channel");
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "bilinear",
          "num_filter", "1"), bil, 2, "has 3 channels but num_filter is 1");
  hy_shape bad_weight[2] = { SHAPE (1, 3, 4, 5), SHAPE (3, 1, 3, 3) };
  expect_error ("UpSampling", KV ("scale", "2", "sample_type", "bilinear",
          "num_filter", "3"), bad_weight, 2, "weight");
}

/* ---- Pad ---------------------------------------------------------------- */

static void
test_pad (void)
{
  hy_shape x4 = SHAPE (2, 3, 4, 5), x5 = SHAPE (1, 2, 3, 4, 3);
  expect_shape ("Pad", KV ("mode", "edge", "pad_width",
          "(0, 0, 0, 0, 1, 2, 3, 4)"), &x4, 1, "(2, 3, 7, 12)");
  expect_shape ("Pad", KV ("mode", "constant", "pad_width",
          "(0, 0, 0, 0, -1, 0, 0, 0, 0, -3)"), &x5, 1, "(1, 2, 2, 4, 0)");
  expect_error ("Pad", KV ("pad_width", "(0, 0, 0, 0, 1, 1, 1, 1)"), &x4, 1,
      "'mode'");
  expect_error ("Pad", KV ("mode", "constant"), &x4, 1, "'pad_width'");
  expect_error ("Pad", KV ("mode", "wrap", "pad_width",
          "(0, 0, 0, 0, 1, 1, 1, 1)"), &x4, 1, "'mode'");
  expect_error ("Pad", KV ("mode", "constant", "pad_width",
          "(0, 0, 0, 0, 1, 1)"), &x4, 1, "so 8 or 10");
  expect_error ("Pad", KV ("mode", "constant", "pad_width",
          "(0, 1, 0, 0, 1, 1, 1, 1)"), &x4, 1,
      "pads the batch or channel axis");
  expect_error ("Pad", KV ("mode", "constant", "pad_width",
          "(0, 0, 0, 0, 1, 1, 1, 1, 1, 1)"), &x4, 1,
      "pad_width has 10 entries, for 5-D data");
  expect_error ("Pad", KV ("mode", "reflect", "pad_width",
          "(0, 0, 0, 0, 4, 0, 0, 0)"), &x4, 1,
      "each must be shorter than the axis");
  expect_error ("Pad", KV ("mode", "constant", "pad_width",
          "(0, 0, 0, 0, -3, -2, 0, 0)"), &x4, 1, "to less than nothing");
  hy_shape empty = SHAPE (1, 1, 0, 2);
  expect_error ("Pad", KV ("mode", "edge", "pad_width",
          "(0, 0, 0, 0, 1, 0, 0, 0)"), &empty, 1, "has no edge to pad with");
}

/* ---- _contrib_SyncBatchNorm -------------------------------------------- */

static void
test_sync_batch_norm (void)
{
  const char *op = "_contrib_SyncBatchNorm";
  hy_shape in[5] = { SHAPE (2, 3, 4), SHAPE (3), SHAPE (3), SHAPE (3),
    SHAPE (3) };
  expect_shape (op, KV ("key", "bn0", "ndev", "8"), in, 5, "(2, 3, 4)");
  expect_error (op, KV ("ndev", "1"), in, 5, "'key'");
  expect_error (op, KV ("key", "bn0", "axis", "1"), in, 5,
      "'axis' is not one of _contrib_SyncBatchNorm's");
  expect_error (op, KV ("key", "bn0", "output_mean_var", "True"), in, 5,
      "leaves _contrib_SyncBatchNorm's mean and var outputs unwritten");
  hy_shape wrong[5] = { SHAPE (2, 4, 4), SHAPE (3), SHAPE (3), SHAPE (3),
    SHAPE (3) };
  expect_error (op, KV ("key", "bn0"), wrong, 5, "gamma");
}

/* ---- reshape_like, broadcast_like, _contrib_arange_like ---------------- */

static void
test_reshape_like (void)
{
  hy_shape in[2] = { SHAPE (2, 3, 4), SHAPE (6, 4) };
  expect_shape ("reshape_like", NULL, in, 2, "(6, 4)");
  hy_shape part[2] = { SHAPE (2, 3, 4), SHAPE (9, 2, 6, 8) };
  expect_shape ("reshape_like", KV ("lhs_begin", "-2", "rhs_begin", "1",
          "rhs_end", "-1"), part, 2, "(2, 2, 6)");
  expect_shape ("reshape_like", KV ("lhs_begin", "None", "lhs_end", "None",
          "rhs_begin", "0", "rhs_end", "None"), in, 2, "(6, 4)");
  /* MXNet's checks: a non-empty range inside the rank, equal counts. */
  expect_error ("reshape_like", KV ("rhs_begin", "0", "rhs_end", "0"), in,
      2, "rhs_begin, rhs_end resolve to axes [0, 0) of rhs (6, 4)");
  expect_error ("reshape_like", KV ("lhs_begin", "2", "lhs_end", "1"), in,
      2, "lhs_begin, lhs_end resolve to axes [2, 1)");
  expect_error ("reshape_like", KV ("lhs_begin", "5"), in, 2,
      "must be a non-empty range of its axes");
  expect_error ("reshape_like", KV ("lhs_end", "4"), in, 2,
      "must be a non-empty range of its axes");
  hy_shape counts[2] = { SHAPE (2, 3, 4), SHAPE (3, 2, 5) };
  expect_error ("reshape_like", NULL, counts, 2,
      "lhs of shape (2, 3, 4) cannot become (3, 2, 5): the element counts "
      "differ");
  expect_error ("reshape_like", KV ("lhs_begin", "x"), in, 2,
      "'lhs_begin'");
}

static void
test_broadcast_like (void)
{
  hy_shape in[2] = { SHAPE (2, 1), SHAPE (2, 3) };
  expect_shape ("broadcast_like", NULL, in, 2, "(2, 3)");
  hy_shape axes[2] = { SHAPE (2, 1, 1), SHAPE (5, 7, 9) };
  expect_shape ("broadcast_like", KV ("lhs_axes", "(-1, 1)", "rhs_axes",
          "(0, -2)"), axes, 2, "(2, 7, 5)");
  /* Only one of the two: MXNet broadcasts the whole shape. */
  expect_error ("broadcast_like", KV ("lhs_axes", "(1,)"), axes, 2,
      "the ranks must match");
  hy_shape rank[2] = { SHAPE (3), SHAPE (2, 3) };
  expect_error ("broadcast_like", NULL, rank, 2,
      "lhs of shape (3,) cannot be broadcast to rhs's (2, 3)");
  hy_shape wide[2] = { SHAPE (2, 2), SHAPE (2, 3) };
  expect_error ("broadcast_like", NULL, wide, 2, "be 1 long");
  expect_error ("broadcast_like", KV ("lhs_axes", "(1,)", "rhs_axes",
          "(1, 2)"), axes, 2, "the same, non-zero number of entries");
  expect_error ("broadcast_like", KV ("lhs_axes", "()", "rhs_axes", "()"),
      axes, 2, "the same, non-zero number of entries");
  hy_shape not_one[2] = { SHAPE (2, 2), SHAPE (5, 2, 9) };
  expect_error ("broadcast_like", KV ("lhs_axes", "(1,)", "rhs_axes",
          "(1,)"), not_one, 2, "an axis in lhs_axes must have length 1");
  expect_error ("broadcast_like", KV ("lhs_axes", "(3,)", "rhs_axes",
          "(0,)"), axes, 2, "axes pair 0 (lhs 3, rhs 0) is outside");
}

static void
test_arange_like (void)
{
  const char *op = "_contrib_arange_like";
  hy_shape x = SHAPE (2, 3, 4);
  expect_shape (op, NULL, &x, 1, "(2, 3, 4)");
  expect_shape (op, KV ("axis", "-1", "repeat", "2"), &x, 1, "(4,)");
  expect_shape (op, KV ("axis", "None"), &x, 1, "(2, 3, 4)");
  expect_error (op, KV ("axis", "3"), &x, 1,
      "attribute 'axis' = 3 is out of range for data of shape (2, 3, 4)");
  /* MXNet divides by repeat. */
  expect_error (op, KV ("repeat", "0"), &x, 1,
      "attribute 'repeat' = 0 must be positive");
  expect_error (op, KV ("start", "one"), &x, 1, "'start'");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ops-zoo/upsampling/shapes", test_upsampling_shapes);
  g_test_add_func ("/ops-zoo/upsampling/refusals", test_upsampling_refusals);
  g_test_add_func ("/ops-zoo/pad", test_pad);
  g_test_add_func ("/ops-zoo/sync-batch-norm", test_sync_batch_norm);
  g_test_add_func ("/ops-zoo/reshape-like", test_reshape_like);
  g_test_add_func ("/ops-zoo/broadcast-like", test_broadcast_like);
  g_test_add_func ("/ops-zoo/arange-like", test_arange_like);
  return g_test_run ();
}
