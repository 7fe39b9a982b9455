/*
 * test-device-plan.c — the executor's and the plan's device paths, on a
 * machine without a device.
 *
 * A "pretend device" backend runs the CPU kernels but says its memory is
 * not host memory, so the core takes every path a GPU backend takes:
 * weights uploaded, inputs uploaded into arena slots, outputs downloaded
 * into host mirrors, calls prepared and released, plans recorded
 * ("captured") once and replayed.  Its memory is separate allocations it
 * tracks, and before every kernel call it checks that each tensor the
 * call reads or writes lies inside one of them: a host pointer reaching a
 * device kernel (a weight never uploaded, an input read where the caller
 * keeps it) fails the test instead of working by accident.
 *
 * Every committed conformance case (tests/fixtures, outputs from real
 * MXNet) runs in both modes on it and must match MXNet as on the CPU.
 * Then: hybrid mode keeps working after the host copy of the weights is
 * wiped (they were uploaded once); imperative mode's node hook sees the
 * CPU's values; every allocation, prepared call and recording is
 * released.
 */
#include <math.h>
#include <string.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "hybrid-block.h"
#include "core/backend.h"
#include "core/block-impl.h"
#include "core/model-impl.h"
#include "kernels/cpu/cpu-kernel.h"
#include "hybrid-npy.h"

#define MXNET_TOL 1e-4

typedef struct pretend_device {
  hy_backend base;
  hy_backend *cpu;
  GHashTable *blocks;           /* start → size, live allocations */
  int prepared, released;
  int kernel_calls;             /* calls run on this device */
  int captures, replays, captures_released;
  int stray;                    /* tensors outside device memory */
  char *stray_what;
  /* The first prepared call of over 32 inputs: '1' for each input marked
   * constant (hy_call_input_const), '0' for the others. */
  char *wide_const;
} pretend_device;

static pretend_device *
pd (hy_backend *be)
{
  return (pretend_device *) be;
}

/* TRUE when [p, p + bytes) lies in one live allocation. */
static gboolean
in_device_memory (pretend_device *d, const void *p, size_t bytes)
{
  GHashTableIter it;
  gpointer start, size;
  g_hash_table_iter_init (&it, d->blocks);
  while (g_hash_table_iter_next (&it, &start, &size)) {
    const char *s = start;
    if ((const char *) p >= s
        && (const char *) p + bytes <= s + GPOINTER_TO_SIZE (size))
      return TRUE;
  }
  return FALSE;
}

static void
check_tensor (pretend_device *d, const hy_tensor *t, const hy_call *call,
    const char *role)
{
  if (!t || hy_shape_numel (&t->shape) == 0
      || in_device_memory (d, t->data, hy_tensor_nbytes (t)))
    return;
  if (!d->stray++)
    d->stray_what = g_strdup_printf ("%s of a call to op %d is not in "
        "device memory", role, call->op);
}

/* The executor frees its backend last: everything must be back by then. */
static void
pretend_free (hy_backend *be)
{
  pretend_device *d = pd (be);
  g_assert_cmpint (d->released, ==, d->prepared);
  g_assert_cmpint (d->captures_released, ==, d->captures);
  g_assert_cmpint (g_hash_table_size (d->blocks), ==, 0);
  hy_backend_free (d->cpu);
  g_hash_table_unref (d->blocks);
  g_free (d->stray_what);
  g_free (d->wide_const);
  g_free (d);
}

/* The CPU backend's own set-up (oneDNN convolutions) too, so that the
 * pretend device runs exactly the CPU's kernels. */
static gboolean
pretend_prepare (hy_backend *be, hy_call *call, GError **error)
{
  hy_backend *cpu = pd (be)->cpu;
  if (cpu->iface->prepare_call && !cpu->iface->prepare_call (cpu, call,
          error))
    return FALSE;
  pd (be)->prepared++;
  if (call->n_in > 32 && !pd (be)->wide_const) {
    char *marks = g_malloc (call->n_in + 1);
    for (int k = 0; k < call->n_in; k++)
      marks[k] = hy_call_input_const (call, k) ? '1' : '0';
    marks[call->n_in] = '\0';
    pd (be)->wide_const = marks;
  }
  return TRUE;
}

static void
pretend_release (hy_backend *be, hy_call *call)
{
  hy_backend *cpu = pd (be)->cpu;
  if (cpu->iface->release_call)
    cpu->iface->release_call (cpu, call);
  pd (be)->released++;
}

static gboolean
pretend_run (hy_backend *be, const hy_call *calls, int n_calls,
    void **capture, GError **error)
{
  pretend_device *d = pd (be);
  if (capture && !*capture) {
    *capture = g_malloc (1);
    d->captures++;
  } else if (capture) {
    d->replays++;
  }
  d->kernel_calls += n_calls;
  for (int c = 0; c < n_calls; c++) {
    for (int k = 0; k < calls[c].n_in; k++)
      check_tensor (d, calls[c].in[k], &calls[c], "an input");
    for (int k = 0; k < calls[c].n_out; k++)
      check_tensor (d, calls[c].out[k], &calls[c], "an output");
  }
  return d->cpu->iface->run (d->cpu, calls, n_calls, NULL, error);
}

static void
pretend_release_capture (hy_backend *be, void *capture)
{
  pd (be)->captures_released++;
  g_free (capture);
}

static void *
pretend_alloc (hy_backend *be, size_t bytes, GError **error)
{
  /* NaN-filled: a slot read before anything wrote it shows. */
  size_t n = MAX (bytes, 1);
  float *p = g_malloc (n);
  for (size_t i = 0; i < n / sizeof (float); i++)
    p[i] = NAN;
  g_hash_table_insert (pd (be)->blocks, p, GSIZE_TO_POINTER (n));
  return p;
}

static void
pretend_dealloc (hy_backend *be, void *ptr)
{
  g_assert_true (g_hash_table_remove (pd (be)->blocks, ptr));
  g_free (ptr);
}

static gboolean
pretend_upload (hy_backend *be, void *dst, const void *src, size_t bytes,
    GError **error)
{
  g_assert_true (in_device_memory (pd (be), dst, bytes));
  memcpy (dst, src, bytes);
  return TRUE;
}

static gboolean
pretend_download (hy_backend *be, void *dst, const void *src, size_t bytes,
    GError **error)
{
  g_assert_true (in_device_memory (pd (be), src, bytes));
  g_assert_false (in_device_memory (pd (be), dst, bytes));
  memcpy (dst, src, bytes);
  return TRUE;
}

static hy_backend_iface pretend_iface = {
  .name = "pretend",
  .host_memory = FALSE,
  .free = pretend_free,
  .prepare_call = pretend_prepare,
  .release_call = pretend_release,
  .run = pretend_run,
  .release_capture = pretend_release_capture,
  .alloc = pretend_alloc,
  .dealloc = pretend_dealloc,
  .upload = pretend_upload,
  .download = pretend_download,
};

static pretend_device *
pretend_device_new (void)
{
  pretend_device *d = g_new0 (pretend_device, 1);
  d->cpu = hy_backend_new ((hy_device) { HY_DEVICE_CPU, 0 }, 0, NULL);
  pretend_iface.kernel_for = d->cpu->iface->kernel_for;
  pretend_iface.copy_kernel = d->cpu->iface->copy_kernel;
  d->base.iface = &pretend_iface;
  d->base.device = (hy_device) { HY_DEVICE_CUDA, 0 };
  d->blocks = g_hash_table_new (g_direct_hash, g_direct_equal);
  return d;
}

/* ---- cases -------------------------------------------------------------- */

typedef struct fixture {
  char *dir;
  hy_model *model;
  GPtrArray *inputs;            /* model input order */
  GPtrArray *expected;          /* MXNet's outputs */
} fixture;

static void
fixture_free (fixture *f)
{
  hy_model_free (f->model);
  g_ptr_array_unref (f->inputs);
  g_ptr_array_unref (f->expected);
  g_free (f->dir);
  g_free (f);
}

static fixture *
fixture_load (const char *dir)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *cj = g_build_filename (dir, "case.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, cj, &error));
  JsonObject *spec = json_node_get_object (json_parser_get_root (parser));

  fixture *f = g_new0 (fixture, 1);
  f->dir = g_strdup (dir);
  g_autofree char *sym = g_build_filename (dir, "model-symbol.json", NULL);
  g_autofree char *par = g_build_filename (dir, "model-0000.params", NULL);
  f->model = hy_model_load (sym, g_file_test (par, G_FILE_TEST_EXISTS)
      ? par : NULL, &error);
  g_assert_no_error (error);
  f->inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) hy_tensor_free);
  f->expected = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  JsonArray *ins = json_object_get_array_member (spec, "inputs");
  g_ptr_array_set_size (f->inputs, hy_model_n_inputs (f->model));
  for (guint i = 0; i < json_array_get_length (ins); i++) {
    JsonObject *o = json_array_get_object_element (ins, i);
    int idx = hy_model_input_index (f->model,
        json_object_get_string_member (o, "name"));
    g_assert_cmpint (idx, >=, 0);
    g_autofree char *file = g_build_filename (dir,
        json_object_get_string_member (o, "file"), NULL);
    g_ptr_array_index (f->inputs, idx) = hy_npy_load (file, &error);
    g_assert_no_error (error);
  }
  JsonArray *outs = json_object_get_array_member (spec, "outputs");
  for (guint i = 0; i < json_array_get_length (outs); i++) {
    g_autofree char *file = g_build_filename (dir,
        json_array_get_string_element (outs, i), NULL);
    g_ptr_array_add (f->expected, hy_npy_load (file, &error));
    g_assert_no_error (error);
  }
  return f;
}

/* max |a − b| ≤ tol · max(1, max |b|), NaN only where b has NaN. */
static gboolean
close_to (const hy_tensor *a, const hy_tensor *b, double tol)
{
  if (!hy_shape_equal (&a->shape, &b->shape))
    return FALSE;
  double md = 0, mr = 0;
  for (int64_t i = 0; i < hy_shape_numel (&b->shape); i++) {
    /* NaN and ±Inf exactly where MXNet has them. */
    if (!isfinite (a->data[i]) || !isfinite (b->data[i])) {
      if (isnan (a->data[i]) && isnan (b->data[i]))
        continue;
      if (a->data[i] != b->data[i])
        return FALSE;
      continue;
    }
    md = MAX (md, fabs ((double) a->data[i] - b->data[i]));
    mr = MAX (mr, fabs ((double) b->data[i]));
  }
  return md <= tol * MAX (1.0, mr);
}

static gboolean
matches_mxnet (hy_executor *exec, const fixture *f)
{
  for (guint i = 0; i < f->expected->len; i++)
    if (!close_to (hy_executor_output (exec, (int) i),
            g_ptr_array_index (f->expected, i), MXNET_TOL))
      return FALSE;
  return TRUE;
}

static gboolean
forward (hy_executor *exec, const fixture *f, GError **error)
{
  return hy_executor_forward (exec, (const hy_tensor *const *)
      f->inputs->pdata, (int) f->inputs->len, error);
}

/* Both modes, twice each, on a fresh pretend device; all released. */
static void
run_case (const char *dir, int *failures)
{
  fixture *f = fixture_load (dir);
  for (int m = 0; m < 2; m++) {
    hy_mode mode = m ? HY_MODE_HYBRID : HY_MODE_IMPERATIVE;
    pretend_device *d = pretend_device_new ();
    g_autoptr (GError) error = NULL;
    hy_executor *exec = hy_executor_new_on (f->model, &d->base, mode,
        &error);
    g_assert_no_error (error);
    gboolean ok = forward (exec, f, &error) && forward (exec, f, &error);
    g_assert_no_error (error);
    ok = ok && matches_mxnet (exec, f) && d->stray == 0;
    if (!ok) {
      g_test_message ("%s (%s): %s", dir, m ? "hybrid" : "imperative",
          d->stray_what ? d->stray_what : "outputs differ from MXNet's");
      (*failures)++;
    }
    if (mode == HY_MODE_HYBRID) {
      g_assert_cmpint (d->captures, ==, 1);
      g_assert_cmpint (d->replays, ==, 1);
    }
    g_assert_cmpint (d->prepared, >, 0);
    hy_executor_free (exec);    /* and d, which checks the releases */
  }
  fixture_free (f);
}

/* Fills every weight of the model's host copy with NaN. */
static void
wipe_host_weights (hy_model *model)
{
  for (guint i = 0; i < hy_graph_n_nodes (model->graph); i++) {
    hy_node *node = hy_graph_node (model->graph, i);
    for (int64_t k = 0; node->value && k < hy_shape_numel (
            &node->value->shape); k++)
      node->value->data[k] = NAN;
  }
}

static char *
case_dir (const char *name)
{
  return g_build_filename (g_getenv ("HY_SOURCE_DIR"), "tests", "fixtures",
      name, NULL);
}

/* A plan reads the weights it uploaded, never the host copy. */
static void
test_weights_uploaded_once (void)
{
  g_autofree char *dir = case_dir ("seed_net");
  fixture *f = fixture_load (dir);
  pretend_device *d = pretend_device_new ();
  g_autoptr (GError) error = NULL;
  hy_executor *exec = hy_executor_new_on (f->model, &d->base,
      HY_MODE_HYBRID, &error);
  g_assert_true (forward (exec, f, &error));
  g_assert_true (matches_mxnet (exec, f));
  wipe_host_weights (f->model);
  g_assert_true (forward (exec, f, &error));
  g_assert_no_error (error);
  g_assert_true (matches_mxnet (exec, f));
  g_assert_cmpint (d->stray, ==, 0);
  hy_executor_free (exec);
  fixture_free (f);
}

/* A frame path's way in: the input written straight into its device
 * slot, then a forward that uploads nothing. */
static void
test_staged_input (void)
{
  g_autofree char *dir = case_dir ("seed_net");
  fixture *f = fixture_load (dir);
  pretend_device *d = pretend_device_new ();
  g_autoptr (GError) error = NULL;
  hy_executor *exec = hy_executor_new_on (f->model, &d->base,
      HY_MODE_HYBRID, &error);
  const hy_tensor *in = g_ptr_array_index (f->inputs, 0);
  g_assert_true (hy_executor_set_input_shape (exec,
          hy_model_input_name (f->model, 0), &in->shape, &error));
  hy_tensor *slot = hy_executor_device_input (exec, 0, &error);
  g_assert_no_error (error);
  g_assert_true (in_device_memory (d, slot->data, hy_tensor_nbytes (in)));
  memcpy (slot->data, in->data, hy_tensor_nbytes (in));
  g_assert_true (hy_executor_forward_staged (exec, &error));
  g_assert_no_error (error);
  g_assert_true (matches_mxnet (exec, f));
  g_assert_cmpint (d->stray, ==, 0);
  hy_executor_free (exec);

  /* Not on the CPU, where inputs are read where the caller has them. */
  exec = hy_executor_new (f->model, (hy_device) { HY_DEVICE_CPU, 0 },
      HY_MODE_HYBRID, &error);
  g_assert_null (hy_executor_device_input (exec, 0, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
  hy_executor_free (exec);
  fixture_free (f);
}

typedef struct hook_log {
  GPtrArray *outputs;           /* a copy of each node's output 0 */
} hook_log;

static void
log_node (const hy_model *model, const hy_node_event *ev, void *data)
{
  g_ptr_array_add (((hook_log *) data)->outputs,
      hy_tensor_copy (ev->outputs[0]));
}

/* Imperative mode's hook sees each node's value on the host, the same
 * as on the CPU. */
static void
test_imperative_hook (void)
{
  g_autofree char *dir = case_dir ("seed_net");
  fixture *f = fixture_load (dir);
  hook_log logs[2];
  for (int k = 0; k < 2; k++) {
    g_autoptr (GError) error = NULL;
    hy_backend *be = k ? &pretend_device_new ()->base
        : hy_backend_new ((hy_device) { HY_DEVICE_CPU, 0 }, 0, &error);
    hy_executor *exec = hy_executor_new_on (f->model, be,
        HY_MODE_IMPERATIVE, &error);
    logs[k].outputs = g_ptr_array_new_with_free_func (
        (GDestroyNotify) hy_tensor_free);
    hy_executor_set_node_hook (exec, log_node, &logs[k]);
    g_assert_true (forward (exec, f, &error));
    g_assert_no_error (error);
    hy_executor_free (exec);
  }
  g_assert_cmpuint (logs[0].outputs->len, >, 3);
  g_assert_cmpuint (logs[0].outputs->len, ==, logs[1].outputs->len);
  for (guint i = 0; i < logs[0].outputs->len; i++)
    g_assert_true (close_to (g_ptr_array_index (logs[1].outputs, i),
            g_ptr_array_index (logs[0].outputs, i), 0.0));
  for (int k = 0; k < 2; k++)
    g_ptr_array_unref (logs[k].outputs);
  fixture_free (f);
}

/* A node's constant inputs are marked whatever their index: Concat of 36
 * split parts, then 4 weights (in[36..39]).  Imperative steps mark every
 * input, plans only the weights; both match MXNet. */
static void
test_constant_inputs_past_32 (void)
{
  g_autofree char *dir = case_dir ("op_Concat_40_weights_last");
  fixture *f = fixture_load (dir);
  g_autofree char *weights_last = g_strnfill (40, '0');
  memset (weights_last + 36, '1', 4);
  for (int m = 0; m < 2; m++) {
    hy_mode mode = m ? HY_MODE_HYBRID : HY_MODE_IMPERATIVE;
    pretend_device *d = pretend_device_new ();
    g_autoptr (GError) error = NULL;
    hy_executor *exec = hy_executor_new_on (f->model, &d->base, mode,
        &error);
    g_assert_true (forward (exec, f, &error));
    g_assert_no_error (error);
    g_assert_true (matches_mxnet (exec, f));
    g_assert_nonnull (d->wide_const);
    if (mode == HY_MODE_HYBRID)
      g_assert_cmpstr (d->wide_const, ==, weights_last);
    else
      g_assert_true (strspn (d->wide_const, "1") == 40);
    hy_executor_free (exec);
  }
  fixture_free (f);
}

static void
test_fixtures (void)
{
  const char *src = g_getenv ("HY_SOURCE_DIR");
  g_assert_nonnull (src);
  g_autofree char *root = g_build_filename (src, "tests", "fixtures", NULL);
  g_autoptr (GDir) d = g_dir_open (root, 0, NULL);
  g_assert_nonnull (d);
  const char *e;
  int n = 0, failures = 0;
  while ((e = g_dir_read_name (d))) {
    g_autofree char *dir = g_build_filename (root, e, NULL);
    g_autofree char *cj = g_build_filename (dir, "case.json", NULL);
    if (!g_file_test (cj, G_FILE_TEST_EXISTS))
      continue;
    run_case (dir, &failures);
    n++;
  }
  g_test_message ("%d cases on the pretend device, %d failed", n, failures);
  g_assert_cmpint (n, >, 100);
  g_assert_cmpint (failures, ==, 0);
}

/* ---- a hybridized block on the backend it is given ----------------------- */

typedef struct made_devices {
  GPtrArray *devices;           /* pretend_device *, owned by executors */
} made_devices;

static hy_backend *
make_pretend (void *data, GError **error)
{
  made_devices *m = data;
  pretend_device *d = pretend_device_new ();
  g_ptr_array_add (m->devices, d);
  return &d->base;
}

/* A block hybridized onto a device runs every op of its compiled graph
 * there: the pretend device sees each call, and since its memory is its
 * own (NaN-filled allocations, checked before every call), a CPU kernel
 * run directly on the block's host tensors could not pass unnoticed. */
static void
test_hybridized_block_on_device (void)
{
  g_autoptr (GError) error = NULL;
  hy_random_seed (3);
  hy_block *net = hy_hybrid_sequential_new ();
  hy_sequential_add (net, hy_dense_new (16, NULL));
  hy_sequential_add (net, hy_activation_new ("relu"));
  hy_sequential_add (net, hy_dense_new (3, NULL));
  g_assert_true (hy_block_initialize (net, hy_init_xavier (), &error));
  hy_shape in_shape = { .ndim = 2, .dims = { 4, 8 } };
  hy_tensor *x = hy_tensor_new (&in_shape);
  for (int i = 0; i < 32; i++)
    x->data[i] = (float) ((i * 7) % 11) / 5.0f - 1.0f;

  const hy_tensor *y = hy_block_forward (net, x, &error);
  g_assert_no_error (error);
  hy_tensor *on_cpu = hy_tensor_copy (y);

  made_devices m = { g_ptr_array_new () };
  hy_block_hybridize_with (net, HY_HYBRID_STATIC_ALLOC, make_pretend, &m);
  for (int k = 0; k < 3; k++) {
    y = hy_block_forward (net, x, &error);
    g_assert_no_error (error);
    g_assert_true (close_to (y, on_cpu, 1e-6));
  }
  g_assert_cmpuint (m.devices->len, ==, 1);
  pretend_device *d = g_ptr_array_index (m.devices, 0);
  /* Two dense layers (relu fused into the first), three forwards. */
  g_assert_cmpint (d->kernel_calls, >=, 6);
  g_assert_cmpint (d->stray, ==, 0);
  g_assert_cmpint (d->replays, ==, 2);

  hy_block_free (net);
  g_ptr_array_unref (m.devices);
  hy_tensor_free (on_cpu);
  hy_tensor_free (x);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/device-plan/fixtures", test_fixtures);
  g_test_add_func ("/device-plan/weights-uploaded-once",
      test_weights_uploaded_once);
  g_test_add_func ("/device-plan/imperative-hook", test_imperative_hook);
  g_test_add_func ("/device-plan/constant-inputs-past-32",
      test_constant_inputs_past_32);
  g_test_add_func ("/device-plan/staged-input", test_staged_input);
  g_test_add_func ("/device-plan/hybridized-block",
      test_hybridized_block_on_device);
  return g_test_run ();
}
