/*
 * example-util.h — the little the example programs share: where to write,
 * random inputs, comparing outputs, and saving them for the MXNet check.
 */
#ifndef HY_EXAMPLE_UTIL_H
#define HY_EXAMPLE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "hybrid-block.h"
#include "hybrid-npy.h"

/* Outputs of two runs agree when max|a - b| <= TOL · max(1, max|b|). */
#define EXAMPLE_TOL 1e-5

/* The value of `--out DIR` (default "."), created if needed. */
static inline const char *
example_out_dir (int argc, char **argv)
{
  const char *dir = ".";
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp (argv[i], "--out"))
      dir = argv[i + 1];
  g_mkdir_with_parents (dir, 0755);
  return dir;
}

/* A tensor of N(0, 1) numbers, as mx.nd.random_normal. */
static inline hy_tensor *
example_random_input (int ndim, const int64_t *dims)
{
  hy_shape shape = hy_shape_make (ndim, dims);
  hy_tensor *x = hy_tensor_new (&shape);
  hy_init normal = hy_init_normal (1.0f);
  hy_init_fill (&normal, x, NULL);
  return x;
}

/* Whether b matches the reference a; prints the difference. */
static inline gboolean
example_same (const char *what, const hy_tensor *ref, const hy_tensor *got)
{
  if (!hy_shape_equal (&ref->shape, &got->shape)) {
    printf ("%s: shapes differ\n", what);
    return FALSE;
  }
  double diff = 0, peak = 0;
  for (int64_t i = 0; i < hy_shape_numel (&ref->shape); i++) {
    diff = fmax (diff, fabs ((double) ref->data[i] - got->data[i]));
    peak = fmax (peak, fabs ((double) ref->data[i]));
  }
  gboolean ok = diff <= EXAMPLE_TOL * fmax (1.0, peak);
  printf ("%s: max |difference| %.3g (%s)\n", what, diff,
      ok ? "same" : "MISMATCH");
  return ok;
}

/* Writes DIR/NAME-input.npy and DIR/NAME-output.npy beside the export, so
 * tests/conformance/check_block_export.py can feed MXNet the same input. */
static inline gboolean
example_save_io (const char *dir, const char *name, const hy_tensor *input,
    const hy_tensor *output, GError **error)
{
  g_autofree char *in_path = g_strdup_printf ("%s/%s-input.npy", dir, name);
  g_autofree char *out_path = g_strdup_printf ("%s/%s-output.npy", dir, name);
  return hy_npy_save (input, in_path, error)
      && hy_npy_save (output, out_path, error);
}

static inline void
example_fail (GError *error)
{
  fprintf (stderr, "error: %s\n", error ? error->message : "(no message)");
  exit (1);
}

/* Runs `call`, which reports failures through `&error`, and stops the
 * example with the message when it fails:
 *   EXAMPLE_TRY (y = hy_block_forward (net, x, &error));             */
#define EXAMPLE_TRY(call) \
  do { \
    GError *error = NULL; \
    if (!(call)) \
      example_fail (error); \
  } while (0)

#endif /* HY_EXAMPLE_UTIL_H */
