/*
 * cli.h — shared plumbing of the `hybridinfer` command-line tool.
 *
 * Every subcommand returns an exit status: 0 success, 1 a failure with one
 * "hybridinfer: error: …" line on stderr, 2 a usage error.
 */
#ifndef HY_CLI_H
#define HY_CLI_H

#include <glib.h>

#include "hybrid.h"
#include "hybrid-quantize.h"

enum { HY_EXIT_OK = 0, HY_EXIT_FAIL = 1, HY_EXIT_USAGE = 2 };

int hy_cmd_run (int argc, char **argv);
int hy_cmd_inspect (int argc, char **argv);
int hy_cmd_export (int argc, char **argv);
int hy_cmd_diff (int argc, char **argv);
int hy_cmd_bench (int argc, char **argv);
int hy_cmd_quantize (int argc, char **argv);

/* Prints one error line (the GError's message) and returns HY_EXIT_FAIL. */
int hy_cli_fail (const GError *error);
int hy_cli_failf (const char *format, ...) G_GNUC_PRINTF (1, 2);
int hy_cli_usage (GOptionContext *ctx, const char *format, ...)
    G_GNUC_PRINTF (2, 3);

/* "1x3x224x224" → shape; "NAME=1x3x224x224" also sets *name (g_free). */
gboolean hy_cli_parse_shape (const char *text, char **name, hy_shape *out,
    GError **error);
/* "NAME=FILE" → name and file; a bare FILE leaves *name NULL. */
void hy_cli_split_assignment (const char *text, char **name, char **value);

/* --mode: "hybrid" (also for NULL) or "imperative". */
gboolean hy_cli_parse_mode (const char *text, hy_mode *out, GError **error);
/* Applies each "[NAME=]1x3x224x224" of --shape; a bare shape needs a
 * one-input model. */
gboolean hy_cli_apply_shapes (hy_shapes *shapes, char **specs,
    GError **error);

/* --qdq: how a QDQ ONNX file runs (hybrid-quantize.h). */
#define HY_CLI_QDQ_OPTION(field) \
  {"qdq", 0, 0, G_OPTION_ARG_STRING, &(field), \
      "A QDQ ONNX file: int8 (default: its int8 layers) or float (each " \
      "QuantizeLinear/DequantizeLinear pair as written)", "MODE"}

/* --qdq's value: "int8" (also NULL) or "float". */
gboolean hy_cli_parse_qdq (const char *text, hy_qdq_mode *out,
    GError **error);

/* Loads the model named by --model/--params; a QDQ file as --qdq says
 * (NULL: int8), with one line on stderr saying what became of it. */
hy_model *hy_cli_load_model (const char *model, const char *params,
    const char *qdq, GError **error);

/* The model's sidecar (preprocessing, labels), if it has one, written
 * beside the files `export` or `quantize` made at prefix, so the element
 * feeds the new model as it fed the old one (unknown keys dropped with a
 * warning).  One that cannot be read is an error. */
gboolean hy_cli_copy_sidecar (const char *model, const char *prefix,
    GError **error);

/* Re-executes the tool with OPENBLAS_CORETYPE set when this CPU runs a
 * faster OpenBLAS kernel set than the one OpenBLAS picked by itself (the
 * variable is only read when the library loads).  Returns only when no
 * re-exec happened. */
void hy_cli_tune_blas (char **argv);

/* This CPU's name (/proc/cpuinfo's "model name"); free with g_free. */
char *hy_cli_cpu_name (void);
/* One core's measured FMA ceiling in GFLOP/s (about 0.1 s of work), and
 * the vector set it used; 0 when the CPU has neither AVX-512 nor AVX2. */
double hy_cli_fma_peak_gflops (const char **isa);
/* Prints a per-layer profile (bench --profile) against a whole forward's
 * median time and the FMA ceiling of `threads` cores. */
void hy_cli_print_profile (const hy_layer_profile *layers, int n_layers,
    double forward_ms, int threads);

#endif /* HY_CLI_H */
