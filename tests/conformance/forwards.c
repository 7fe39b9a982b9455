/*
 * forwards.c — several forwards of one executor, for the checks whose
 * point is what a plan does from one forward to the next (the ONNX tail's
 * counts change with the data, its plan and workspace must not).
 *
 *   forwards MODE MODEL OUTDIR IN.npy...
 *
 * MODE hybrid or imperative; forward k reads the k-th file as the model's
 * one input and writes OUTDIR/kK-outputJ.npy.  Exit 1 with the error.
 */
#include <stdio.h>
#include <string.h>

#include "hybrid.h"
#include "hybrid-npy.h"

int
main (int argc, char **argv)
{
  if (argc < 5) {
    fprintf (stderr, "usage: forwards hybrid|imperative MODEL OUTDIR IN.npy...\n");
    return 2;
  }
  GError *error = NULL;
  hy_mode mode = strcmp (argv[1], "imperative") ? HY_MODE_HYBRID
      : HY_MODE_IMPERATIVE;
  hy_model *model = hy_model_load (argv[2], NULL, &error);
  hy_executor *exec = model ? hy_executor_new (model, (hy_device) { HY_DEVICE_CPU, 0 }, mode,
      &error) : NULL;
  int rc = exec ? 0 : 1;
  for (int k = 0; !rc && k + 4 < argc; k++) {
    hy_tensor *in = hy_npy_load (argv[k + 4], &error);
    if (!in || !hy_executor_forward (exec, (const hy_tensor *const *) &in, 1,
            &error))
      rc = 1;
    for (int j = 0; !rc && j < hy_executor_n_outputs (exec); j++) {
      char *path = g_strdup_printf ("%s/k%d-output%d.npy", argv[3], k, j);
      if (!hy_npy_save (hy_executor_output (exec, j), path, &error))
        rc = 1;
      g_free (path);
    }
    if (in)
      hy_tensor_free (in);
  }
  if (rc)
    fprintf (stderr, "forwards: error: %s\n", error ? error->message : "?");
  g_clear_error (&error);
  if (exec)
    hy_executor_free (exec);
  if (model)
    hy_model_free (model);
  return rc;
}
