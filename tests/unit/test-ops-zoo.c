/*
 * test-ops-zoo.c — what the zoo's newer ops refuse, with the attribute or
 * input named: MXNet 1.9.1 refuses the same attributes and shapes (or
 * fails inside its kernel), and we must say why before a forward.
 *
 * Their values are checked against MXNet by the conformance fixtures
 * (op_UpSampling_*, op_Pad_*, op_SyncBatchNorm_*); this file checks parsing and shape inference only.
 */
#include <string.h>

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ops-zoo/upsampling/shapes", test_upsampling_shapes);
  g_test_add_func ("/ops-zoo/upsampling/refusals", test_upsampling_refusals);
  g_test_add_func ("/ops-zoo/pad", test_pad);
  g_test_add_func ("/ops-zoo/sync-batch-norm", test_sync_batch_norm);
  return g_test_run ();
}
