/*
 * test-conformance.c — our outputs against real MXNet 1.9.1's.
 *
 *   test-conformance [--device DEV] [--precision P] FIXTURES_DIR [FILTER]
 *
 * Every subdirectory holding a case.json (written by gen_fixtures.py, which
 * runs MXNet) is one case: the model is loaded from its files, run on its
 * inputs in both imperative and hybrid mode, and each output compared with
 * MXNet's:  max|ours − mxnet| ≤ 1e-4 · max(1, max|mxnet|) over the finite
 * values; NaN and ±Inf must appear exactly where MXNet has them.
 * Hybrid and imperative must also agree with each other to 1e-5 relative.
 *
 * With --device cuda[:N] both modes run on the GPU and are also compared
 * with the CPU backend's hybrid output (1e-4 relative: cuDNN and cuBLAS
 * sum in other orders than OpenBLAS).  Without a usable GPU the whole run
 * is one TAP skip line saying why.  With --precision fp16 (convolutions
 * and matrix products from fp16 copies, fp32 accumulation) every
 * tolerance becomes 2e-2 relative: fp16 keeps 11 significant bits.
 * With --precision bf16 (the CPU: convolutions from bf16 copies of their
 * input and weights through oneDNN, fp32 accumulation, everything else
 * fp32) every tolerance becomes 2^-7 · 16 = 2^-3 (0.125) relative,
 * and hybrid mode is compared with MXNet as well as imperative mode:
 * bf16 keeps 8 significant bits, so each rounded operand is off by up to
 * 2^-9 relative and a product of two by 2^-8; a convolution's sum of
 * such products stays near 2^-8 of its scale (the committed single
 * convolutions: 2^-9 to 2^-8), and the error grows through a deep
 * network's layers: on the zoo's seeded random weights ResNet-18 ends
 * 0.006 off, MobileNetV2 0.089, ResNet-50 v1 0.094 (k = 12; per model in
 * docs/PRECISION.md), so k = 16 leaves a third more.  Outputs of rank 2 with 10 or more
 * columns (classifiers' scores) must also have the same top-1 class as
 * MXNet in every row, unless MXNet's scores of the two classes lie within
 * the tolerance (a near-tie either engine may break).  On a CPU without
 * AVX512_BF16 the whole run is one TAP skip line saying so.
 * Detectors' outputs (GluonCV's ids (B, K[, 1]), scores of the same shape
 * and boxes (B, K, 4), and any further output with rows (B, K, ...), such
 * as Mask R-CNN's masks) are rows that NMS put in score order.  Two
 * candidates whose scores lie within the tolerance may come out in either
 * order without either engine being wrong, so a row of ours that does not
 * match MXNet's row in its place may match another of MXNet's rows, not
 * matched yet, whose score MXNet gave within the tolerance of the score
 * MXNet has in that place — every value of the row within the tolerance.
 * Each such pairing is counted and reported; nothing else may move.
 * Output is TAP, one test point per case.  On a device, a case whose
 * model has an op that device has no kernel for yet (ops.def's HY_OP_CPU)
 * is a TAP skip naming the node and op: what the device lacks is listed in
 * docs/OPERATORS.md, not a failure of the ops it has.
 * A case.json with "exact": true (integer steps and their ranges, the
 * int8 ops' fixtures) allows no difference at all, against MXNet, between
 * the modes and between a device and the CPU.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"

#define MXNET_TOL 1e-4
#define MODE_TOL 1e-5
#define DEVICE_VS_CPU_TOL 1e-4
#define FP16_TOL 2e-2
/* 2^-7 · k, k = 16 (see the top of this file). */
#define BF16_TOL (16.0 / 128.0)

static hy_device device = { HY_DEVICE_CPU, 0 };
static hy_precision precision = HY_PRECISION_FP32;
static double mxnet_tol = MXNET_TOL, mode_tol = MODE_TOL,
    device_tol = DEVICE_VS_CPU_TOL;

/* max |a − b| and max |b| over two same-shaped tensors, b the reference.
 * NaN and ±Inf are exact outcomes, never within a tolerance: NaN matches
 * only NaN, an infinity only the same infinity, and anything else is an
 * infinite difference.  Only finite references set the scale: one Inf in
 * MXNet's output must not make every other element's tolerance infinite.
 * *mismatched counts those non-finite mismatches. */
static void
compare (const hy_tensor *a, const hy_tensor *b, double *max_diff,
    double *max_ref, int64_t *mismatched)
{
  int64_t n = hy_shape_numel (&a->shape), bad = 0;
  double md = 0, mr = 0;
  for (int64_t i = 0; i < n; i++) {
    const double got = a->data[i], ref = b->data[i];
    double d;
    if (isfinite (got) && isfinite (ref)) {
      d = fabs (got - ref);
      if (fabs (ref) > mr)
        mr = fabs (ref);
    } else if ((isnan (got) && isnan (ref)) || got == ref) {
      d = 0;                    /* both NaN, or the same infinity */
    } else {
      d = INFINITY;
      bad++;
    }
    if (d > md)
      md = d;
  }
  *max_diff = md;
  *max_ref = mr;
  *mismatched = bad;
}

typedef struct case_result {
  gboolean ok;
  char *detail;
  gboolean skipped;             /* unsupported on the device */
} case_result;

static gboolean
run_mode (hy_model *model, hy_device dev, hy_mode mode, hy_tensor **inputs,
    int n_inputs, hy_executor **out_exec, GError **error)
{
  hy_executor *exec = hy_executor_new (model, dev, mode, error);
  if (!exec)
    return FALSE;
  if ((dev.kind != HY_DEVICE_CPU || precision == HY_PRECISION_BF16)
      && !hy_executor_set_precision (exec, precision, error)) {
    hy_executor_free (exec);
    return FALSE;
  }
  /* Twice: the second forward exercises reuse of planned memory. */
  for (int r = 0; r < 2; r++) {
    if (!hy_executor_forward (exec, (const hy_tensor *const *) inputs,
            n_inputs, error)) {
      hy_executor_free (exec);
      return FALSE;
    }
  }
  *out_exec = exec;
  return TRUE;
}

/* Loads the case's inputs in the model's input order. */
static gboolean
load_inputs (const char *dir, JsonObject *spec, hy_model *model,
    GPtrArray *inputs, GString *detail, GError **error)
{
  JsonArray *in_specs = json_object_get_array_member (spec, "inputs");
  int n_in = hy_model_n_inputs (model);
  if ((int) json_array_get_length (in_specs) != n_in) {
    g_string_printf (detail, "case has %u inputs, model %d",
        json_array_get_length (in_specs), n_in);
    return FALSE;
  }
  g_ptr_array_set_size (inputs, n_in);
  for (guint i = 0; i < json_array_get_length (in_specs); i++) {
    JsonObject *o = json_array_get_object_element (in_specs, i);
    const char *name = json_object_get_string_member (o, "name");
    int idx = hy_model_input_index (model, name);
    if (idx < 0) {
      g_string_printf (detail, "model has no input '%s'", name);
      return FALSE;
    }
    g_autofree char *f = g_build_filename (dir,
        json_object_get_string_member (o, "file"), NULL);
    hy_tensor *t = hy_npy_load (f, error);
    if (!t)
      return FALSE;
    g_ptr_array_index (inputs, idx) = t;
  }
  return TRUE;
}

/* ---- detectors' rows in NMS order ---- */

static int64_t
row_size (const hy_tensor *t)
{
  int64_t n = 1;
  for (int d = 2; d < t->shape.ndim; d++)
    n *= t->shape.dims[d];
  return n;
}

/* Whether refs and ours are a detector's rows: ids and scores alike,
 * (B, K) or (B, K, 1), boxes (B, K, 4), any further output (B, K, ...). */
static gboolean
ranked_rows (hy_tensor **refs, const hy_tensor *const *ours, int n)
{
  if (n < 3)
    return FALSE;
  const hy_shape *ids = &refs[0]->shape;
  if (!(ids->ndim == 2 || (ids->ndim == 3 && ids->dims[2] == 1))
      || !hy_shape_equal (ids, &refs[1]->shape) || refs[2]->shape.ndim != 3
      || refs[2]->shape.dims[2] != 4)
    return FALSE;
  for (int i = 0; i < n; i++)
    if (refs[i]->shape.ndim < 2 || refs[i]->shape.dims[0] != ids->dims[0]
        || refs[i]->shape.dims[1] != ids->dims[1]
        || !hy_shape_equal (&refs[i]->shape, &ours[i]->shape))
      return FALSE;
  return TRUE;
}

static gboolean
rows_match (hy_tensor **refs, const hy_tensor *const *ours, const double *tol,
    int n, int64_t b, int64_t k_ours, int64_t k_ref)
{
  for (int i = 0; i < n; i++) {
    const int64_t m = row_size (refs[i]), rows = refs[i]->shape.dims[1];
    const float *r = refs[i]->data + (b * rows + k_ref) * m;
    const float *o = ours[i]->data + (b * rows + k_ours) * m;
    for (int64_t j = 0; j < m; j++)
      if (!(fabs ((double) o[j] - r[j]) <= tol[i]) && o[j] != r[j])
        return FALSE;
  }
  return TRUE;
}

/* Puts MXNet's rows in ours' order where near-ties let them trade places
 * (see the top of this file); returns how many rows moved. */
static int64_t
pair_near_ties (hy_tensor **refs, const hy_tensor *const *ours, int n)
{
  double tol[n];
  for (int i = 0; i < n; i++) {
    double md, mr;
    int64_t bad;
    compare (refs[i], refs[i], &md, &mr, &bad);
    tol[i] = mxnet_tol * MAX (1.0, mr);
  }
  const int64_t batch = refs[0]->shape.dims[0], rows = refs[0]->shape.dims[1];
  g_autofree int64_t *pair = g_new (int64_t, rows);
  g_autofree gboolean *taken = g_new (gboolean, rows);
  int64_t moved = 0;
  for (int64_t b = 0; b < batch; b++) {
    const float *ref_score = refs[1]->data + b * rows;
    for (int64_t k = 0; k < rows; k++) {
      taken[k] = rows_match (refs, ours, tol, n, b, k, k);
      pair[k] = taken[k] ? k : -1;
    }
    for (int64_t k = 0; k < rows; k++)
      for (int64_t j = 0; pair[k] < 0 && j < rows; j++)
        if (!taken[j] && fabs ((double) ref_score[k] - ref_score[j]) <= tol[1]
            && rows_match (refs, ours, tol, n, b, k, j)) {
          pair[k] = j;
          taken[j] = TRUE;
          moved++;
        }
    for (int i = 0; i < n && moved; i++) {
      const int64_t m = row_size (refs[i]);
      float *r = refs[i]->data + b * rows * m;
      g_autofree float *copy = g_memdup2 (r, (gsize) (rows * m) * sizeof *r);
      for (int64_t k = 0; k < rows; k++)
        if (pair[k] >= 0)
          memcpy (r + k * m, copy + pair[k] * m, (size_t) m * sizeof *r);
    }
  }
  return moved;
}

/* Compares both modes' outputs with MXNet's and with each other. */
/* Whether every row of ours has MXNet's top-1 class, or one whose MXNet
 * score is within tol of it (a near-tie); says how many rows agree. */
static gboolean
top1_agrees (const hy_tensor *ours, const hy_tensor *ref, double tol,
    GString *detail)
{
  const int64_t rows = ref->shape.dims[0], cols = ref->shape.dims[1];
  const float *o = ours->data, *r = ref->data;
  int64_t same = 0, ties = 0;
  for (int64_t i = 0; i < rows; i++) {
    int64_t ob = 0, rb = 0;
    for (int64_t j = 1; j < cols; j++) {
      ob = o[i * cols + j] > o[i * cols + ob] ? j : ob;
      rb = r[i * cols + j] > r[i * cols + rb] ? j : rb;
    }
    if (ob == rb)
      same++;
    else if ((double) r[i * cols + rb] - r[i * cols + ob] <= tol)
      ties++;
  }
  g_string_append_printf (detail, "top-1 %" G_GINT64_FORMAT "/%"
      G_GINT64_FORMAT, same, rows);
  if (ties)
    g_string_append_printf (detail, " (%" G_GINT64_FORMAT " near-ties)",
        ties);
  g_string_append (detail, "; ");
  return same + ties == rows;
}

/* Why a case is not compared in bf16, or NULL.  Two kinds of output are
 * decisions, not values, and bf16's rounding may flip them where MXNet's
 * fp32 sits near the edge: which outputs a NaN reaches (oneDNN's AMX
 * kernels multiply padding by zero weights, and NaN · 0 is NaN), and a
 * detector's rows (a box on one side of NMS's overlap threshold or the
 * score threshold adds or removes a row).  Reported as a TAP skip, never
 * passed in silence (docs/PRECISION.md).  Both are still compared in
 * fp32; the NaN cases skipped are the convolutions' only. */
static const char *
bf16_not_compared (const char *dir, gboolean ranked)
{
  if (precision != HY_PRECISION_BF16)
    return NULL;
  g_autofree char *name = g_path_get_basename (dir);
  if (g_str_has_prefix (name, "op_Convolution")
      && g_str_has_suffix (name, "_nan"))
    return "bf16: where a NaN input reaches is oneDNN's to decide "
        "(padding times zero weights)";
  if (ranked)
    return "bf16: a detector's rows are NMS and threshold decisions, "
        "which bf16 may flip";
  return NULL;
}

static gboolean
compare_outputs (const char *dir, JsonObject *spec, hy_executor *imp,
    hy_executor *hyb, hy_executor *cpu, GString *detail, gboolean *skipped)
{
  JsonArray *outs = json_object_get_array_member (spec, "outputs");
  if ((int) json_array_get_length (outs) != hy_executor_n_outputs (imp)) {
    g_string_printf (detail, "MXNet gave %u outputs, we give %d",
        json_array_get_length (outs), hy_executor_n_outputs (imp));
    return FALSE;
  }
  const int n = (int) json_array_get_length (outs);
  const gboolean exact = json_object_has_member (spec, "exact")
      && json_object_get_boolean_member (spec, "exact");
  g_autofree hy_tensor **refs = g_new0 (hy_tensor *, n);
  g_autofree const hy_tensor **imps = g_new0 (const hy_tensor *, n);
  gboolean all_ok = TRUE;
  for (int i = 0; i < n; i++) {
    g_autofree char *f = g_build_filename (dir,
        json_array_get_string_element (outs, i), NULL);
    g_autoptr (GError) error = NULL;
    refs[i] = hy_npy_load (f, &error);
    imps[i] = hy_executor_output (imp, i);
    if (!refs[i]) {
      g_string_append_printf (detail, "%s ", error->message);
      all_ok = FALSE;
    }
  }
  const gboolean loaded = all_ok;
  /* MultiBoxDetection's rows (B, K, 6) at the end of a model are a
   * detector's too (the op alone computes the same in bf16 as in fp32). */
  const char *not_compared = loaded ? bf16_not_compared (dir,
      ranked_rows (refs, imps, n) || (refs[0]->shape.ndim == 3
          && refs[0]->shape.dims[2] == 6 && json_object_has_member (spec,
              "kind") && !g_strcmp0 (json_object_get_string_member (spec,
                  "kind"), "model"))) : NULL;
  if (not_compared) {
    g_string_append (detail, not_compared);
    *skipped = TRUE;
    for (int i = 0; i < n; i++)
      hy_tensor_free (refs[i]);
    return TRUE;
  }
  if (loaded && ranked_rows (refs, imps, n)) {
    int64_t moved = pair_near_ties (refs, imps, n);
    if (moved)
      g_string_append_printf (detail, "%" G_GINT64_FORMAT " rows paired "
          "across a near-tie; ", moved);
  }
  for (guint i = 0; i < (guint) n && loaded; i++) {
    hy_tensor *ref = refs[i];
    const hy_tensor *ours = hy_executor_output (imp, (int) i);
    const hy_tensor *ours_h = hy_executor_output (hyb, (int) i);
    char a[HY_SHAPE_STRLEN], b[HY_SHAPE_STRLEN];
    if (!hy_shape_equal (&ours->shape, &ref->shape)) {
      g_string_append_printf (detail, "output %u shape %s, MXNet %s; ", i,
          hy_shape_format (&ours->shape, a, sizeof a),
          hy_shape_format (&ref->shape, b, sizeof b));
      all_ok = FALSE;
    } else {
      double diff, max_ref, hdiff, hmax;
      int64_t bad, hbad;
      compare (ours, ref, &diff, &max_ref, &bad);
      compare (ours_h, ours, &hdiff, &hmax, &hbad);
      double tol = exact ? 0.0 : mxnet_tol * MAX (1.0, max_ref);
      double htol = exact ? 0.0 : mode_tol * MAX (1.0, hmax);
      g_string_append_printf (detail,
          "out%u max|d|=%.3g (tol %.3g) hybrid-vs-imperative %.3g; ", i,
          diff, tol, hdiff);
      if (bad)
        g_string_append_printf (detail, "%" G_GINT64_FORMAT " NaN/Inf "
            "mismatches; ", bad);
      all_ok &= diff <= tol && hdiff <= htol;
      if (precision == HY_PRECISION_BF16) {
        /* Hybrid mode runs other kernels in bf16 than imperative mode
         * (fused chains stay fp32): each against MXNet on its own. */
        double bdiff, bmax;
        int64_t bbad;
        compare (ours_h, ref, &bdiff, &bmax, &bbad);
        g_string_append_printf (detail, "rel %.3g, hybrid %.3g; ",
            max_ref > 0 ? diff / max_ref : diff,
            max_ref > 0 ? bdiff / max_ref : bdiff);
        all_ok &= bdiff <= tol && !bbad;
        if (!bad && ref->shape.ndim == 2 && ref->shape.dims[1] >= 10)
          all_ok &= top1_agrees (ours, ref, tol, detail)
              & top1_agrees (ours_h, ref, tol, detail);
      }
      if (cpu) {
        double cdiff, cmax;
        int64_t cbad;
        compare (ours_h, hy_executor_output (cpu, (int) i), &cdiff, &cmax,
            &cbad);
        g_string_append_printf (detail, "vs-cpu %.3g; ", cdiff);
        all_ok &= cdiff <= (exact ? 0.0 : device_tol * MAX (1.0, cmax));
      }
    }
  }
  for (int i = 0; i < n; i++)
    hy_tensor_free (refs[i]);
  return all_ok;
}

static case_result
run_case (const char *dir, JsonObject *spec)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *sym = g_build_filename (dir, "model-symbol.json", NULL);
  g_autofree char *par = g_build_filename (dir, "model-0000.params", NULL);
  hy_executor *imp = NULL, *hyb = NULL, *cpu = NULL;
  hy_device host = { HY_DEVICE_CPU, 0 };
  gboolean on_device = device.kind != HY_DEVICE_CPU;
  g_autoptr (GPtrArray) inputs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  GString *detail = g_string_new (NULL);
  gboolean ok = FALSE, not_compared = FALSE;

  hy_model *model = hy_model_load (sym, g_file_test (par, G_FILE_TEST_EXISTS)
      ? par : NULL, &error);
  if (model && load_inputs (dir, spec, model, inputs, detail, &error)
      && run_mode (model, device, HY_MODE_IMPERATIVE,
          (hy_tensor **) inputs->pdata, (int) inputs->len, &imp, &error)
      && run_mode (model, device, HY_MODE_HYBRID,
          (hy_tensor **) inputs->pdata, (int) inputs->len, &hyb, &error)
      && (!on_device || run_mode (model, host, HY_MODE_HYBRID,
              (hy_tensor **) inputs->pdata, (int) inputs->len, &cpu, &error)))
    ok = compare_outputs (dir, spec, imp, hyb, cpu, detail, &not_compared);
  if (error)
    g_string_append (detail, error->message);
  gboolean skipped = not_compared || (on_device && error
      && g_error_matches (error, HY_ERROR, HY_ERROR_UNSUPPORTED));

  hy_executor_free (imp);
  hy_executor_free (hyb);
  hy_executor_free (cpu);
  hy_model_free (model);
  return (case_result) { ok || skipped, g_string_free (detail, FALSE),
    skipped };
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char **) a, *(const char **) b);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  while (argc > 2 && (!strcmp (argv[1], "--device")
          || !strcmp (argv[1], "--precision"))) {
    const gboolean ok = !strcmp (argv[1], "--device")
        ? hy_device_parse (argv[2], &device, &error)
        : hy_precision_parse (argv[2], &precision, &error);
    if (!ok) {
      fprintf (stderr, "%s\n", error->message);
      return 2;
    }
    argc -= 2;
    argv += 2;
  }
  if (precision == HY_PRECISION_FP16)
    mxnet_tol = mode_tol = device_tol = FP16_TOL;
  if (precision == HY_PRECISION_BF16)
    mxnet_tol = mode_tol = device_tol = BF16_TOL;
  if (argc < 2) {
    fprintf (stderr, "usage: test-conformance [--device DEV [--precision P]] "
        "FIXTURES_DIR [NAME_FILTER]\n");
    return 2;
  }
  const char *root = argv[1], *filter = argc > 2 ? argv[2] : NULL;
  g_autofree char *unavailable = hy_device_unavailable_reason (device);
  if (unavailable) {
    printf ("1..0 # SKIP %s\n", unavailable);
    return 0;
  }
  g_autoptr (GDir) d = g_dir_open (root, 0, &error);
  if (!d) {
    printf ("1..0 # SKIP\nBail out! %s (generate fixtures first: "
        "tests/conformance/gen_fixtures.py)\n", error->message);
    return 1;
  }
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *e;
  while ((e = g_dir_read_name (d))) {
    g_autofree char *cj = g_build_filename (root, e, "case.json", NULL);
    if (g_file_test (cj, G_FILE_TEST_EXISTS)
        && (!filter || strstr (e, filter)))
      g_ptr_array_add (names, g_strdup (e));
  }
  g_ptr_array_sort (names, compare_names);
  if (names->len == 0) {
    printf ("Bail out! no cases in %s%s%s\n", root,
        filter ? " matching " : "", filter ? filter : "");
    return 1;
  }
  if (precision != HY_PRECISION_FP32 && device.kind == HY_DEVICE_CPU) {
    /* A CPU that cannot run the precision: one skip line saying why (the
     * executor's own refusal), never a silent pass. */
    hy_model *probe_model = NULL;
    for (guint i = 0; !probe_model && i < names->len; i++) {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *sym = g_build_filename (root, name,
          "model-symbol.json", NULL);
      g_autofree char *par = g_build_filename (root, name,
          "model-0000.params", NULL);
      probe_model = hy_model_load (sym, g_file_test (par,
              G_FILE_TEST_EXISTS) ? par : NULL, NULL);
    }
    hy_executor *probe = probe_model ? hy_executor_new (probe_model, device,
        HY_MODE_HYBRID, NULL) : NULL;
    GError *refused = NULL;
    if (probe && !hy_executor_set_precision (probe, precision, &refused)) {
      printf ("1..0 # SKIP %s\n", refused->message);
      g_error_free (refused);
      hy_executor_free (probe);
      hy_model_free (probe_model);
      return 0;
    }
    hy_executor_free (probe);
    hy_model_free (probe_model);
  }
  printf ("1..%u\n", names->len);
  int failed = 0;
  for (guint i = 0; i < names->len; i++) {
    const char *name = g_ptr_array_index (names, i);
    g_autofree char *dir = g_build_filename (root, name, NULL);
    g_autofree char *cj = g_build_filename (dir, "case.json", NULL);
    g_autoptr (JsonParser) parser = json_parser_new ();
    case_result r;
    if (!json_parser_load_from_file (parser, cj, &error)) {
      r = (case_result) {.ok = FALSE,.detail = g_strdup (error->message) };
      g_clear_error (&error);
    } else {
      r = run_case (dir, json_node_get_object (json_parser_get_root (parser)));
    }
    printf ("%s %u - %s # %s%s\n", r.ok ? "ok" : "not ok", i + 1, name,
        r.skipped ? "SKIP " : "", r.detail);
    fflush (stdout);
    failed += !r.ok;
    g_free (r.detail);
  }
  fprintf (stderr, "conformance: %u cases, %d failed\n", names->len, failed);
  return failed ? 1 : 0;
}
