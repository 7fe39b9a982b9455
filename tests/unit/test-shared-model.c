/*
 * test-shared-model.c — one loaded model, shared by threads.
 *
 * A model is read-only once loaded; what changes per forward (input
 * shapes, node shapes, plans, arenas) belongs to each executor.  Four
 * threads each make their own executor on one shared model and run 200
 * forwards at their own batch size (1, 2, 3, 4: every forward infers
 * shapes different from its neighbours'), two of them hybridized and two
 * imperative.  Every output must equal, bit for bit, what the same
 * executor setup gives when it runs alone; the batch-4 result must also
 * match real MXNet's (the committed seed_net fixture).  Afterwards the
 * model still reports the shapes its file declares.
 *
 * The suite runs this under AddressSanitizer too (tools/test.sh).
 */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"

#define N_THREADS 4
#define FORWARDS 200

typedef struct worker {
  const hy_model *model;
  int batch;
  hy_mode mode;
  const hy_tensor *input;
  const hy_tensor *expected;
  int mismatches;               /* forwards whose output differed */
  char *error;                  /* the first failure, if any */
} worker;

static char *
fixture_path (const char *file)
{
  const char *src = g_getenv ("HY_SOURCE_DIR");
  g_assert_nonnull (src);
  return g_build_filename (src, "tests", "fixtures", "seed_net", file, NULL);
}

/* The first `batch` samples of the fixture's (4, 1, 28, 28) input. */
static hy_tensor *
first_samples (const hy_tensor *all, int batch)
{
  hy_shape s = all->shape;
  s.dims[0] = batch;
  hy_tensor *t = hy_tensor_new (&s);
  memcpy (t->data, all->data, hy_tensor_nbytes (t));
  return t;
}

static hy_executor *
new_executor (const hy_model *model, hy_mode mode, GError **error)
{
  /* One compute thread each: four executors on two cores already keep
   * every core busy. */
  hy_executor_options o = { .mode = mode, .threads = 1 };
  return hy_executor_new_with_options (model, &o, error);
}

/* What one executor gives on its own. */
static hy_tensor *
run_alone (const hy_model *model, hy_mode mode, const hy_tensor *input)
{
  g_autoptr (GError) error = NULL;
  hy_executor *exec = new_executor (model, mode, &error);
  g_assert_no_error (error);
  g_assert_true (hy_executor_forward (exec, &input, 1, &error));
  g_assert_no_error (error);
  hy_tensor *out = hy_tensor_copy (hy_executor_output (exec, 0));
  hy_executor_free (exec);
  return out;
}

static gpointer
work (gpointer data)
{
  worker *w = data;
  GError *error = NULL;
  hy_executor *exec = new_executor (w->model, w->mode, &error);
  for (int i = 0; exec && i < FORWARDS; i++) {
    if (!hy_executor_forward (exec, &w->input, 1, &error))
      break;
    const hy_tensor *out = hy_executor_output (exec, 0);
    if (!hy_shape_equal (&out->shape, &w->expected->shape)
        || memcmp (out->data, w->expected->data,
            hy_tensor_nbytes (w->expected)) != 0)
      w->mismatches++;
  }
  if (error)
    w->error = g_strdup (error->message);
  g_clear_error (&error);
  hy_executor_free (exec);
  return NULL;
}

static void
test_threads_share_one_model (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *symbol = fixture_path ("model-symbol.json");
  g_autofree char *params = fixture_path ("model-0000.params");
  g_autofree char *input_path = fixture_path ("input0.npy");
  g_autofree char *output_path = fixture_path ("output0.npy");
  hy_model *model = hy_model_load (symbol, params, &error);
  g_assert_no_error (error);
  hy_tensor *all = hy_npy_load (input_path, &error);
  g_assert_no_error (error);
  hy_tensor *mxnet = hy_npy_load (output_path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (all->shape.dims[0], ==, N_THREADS);
  const hy_shape declared = hy_model_input_shape (model, 0);

  worker w[N_THREADS];
  hy_tensor *inputs[N_THREADS], *expected[N_THREADS];
  for (int t = 0; t < N_THREADS; t++) {
    hy_mode mode = t % 2 ? HY_MODE_IMPERATIVE : HY_MODE_HYBRID;
    inputs[t] = first_samples (all, t + 1);
    expected[t] = run_alone (model, mode, inputs[t]);
    w[t] = (worker) { .model = model, .batch = t + 1, .mode = mode,
      .input = inputs[t], .expected = expected[t] };
  }

  /* The single-threaded batch-4 result is MXNet's. */
  const hy_tensor *b4 = expected[N_THREADS - 1];
  g_assert_true (hy_shape_equal (&b4->shape, &mxnet->shape));
  for (gint64 i = 0; i < hy_shape_numel (&b4->shape); i++)
    g_assert_cmpfloat (fabsf (b4->data[i] - mxnet->data[i]), <=,
        1e-4f * MAX (1.0f, fabsf (mxnet->data[i])));

  GThread *threads[N_THREADS];
  for (int t = 0; t < N_THREADS; t++)
    threads[t] = g_thread_new ("forward", work, &w[t]);
  for (int t = 0; t < N_THREADS; t++)
    g_thread_join (threads[t]);

  for (int t = 0; t < N_THREADS; t++) {
    g_test_message ("batch %d (%s): %d of %d forwards differed%s%s",
        w[t].batch, w[t].mode == HY_MODE_HYBRID ? "hybrid" : "imperative",
        w[t].mismatches, FORWARDS, w[t].error ? ": " : "",
        w[t].error ? w[t].error : "");
    g_assert_null (w[t].error);
    g_assert_cmpint (w[t].mismatches, ==, 0);
  }
  /* Nothing the executors did reached the model. */
  hy_shape after = hy_model_input_shape (model, 0);
  g_assert_true (hy_shape_equal (&after, &declared));

  for (int t = 0; t < N_THREADS; t++) {
    hy_tensor_free (inputs[t]);
    hy_tensor_free (expected[t]);
  }
  hy_tensor_free (all);
  hy_tensor_free (mxnet);
  hy_model_free (model);
}

/* Two executors on one model keep their own input shapes. */
static void
test_executors_keep_their_shapes (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *symbol = fixture_path ("model-symbol.json");
  hy_model *model = hy_model_load (symbol, NULL, &error);
  g_assert_no_error (error);
  hy_executor *a = new_executor (model, HY_MODE_HYBRID, &error);
  hy_executor *b = new_executor (model, HY_MODE_HYBRID, &error);
  g_assert_no_error (error);
  hy_shape s1 = { .ndim = 4, .dims = { 1, 1, 28, 28 } };
  hy_shape s3 = { .ndim = 4, .dims = { 3, 1, 28, 28 } };
  g_assert_true (hy_executor_set_input_shape (a, "data", &s1, &error));
  g_assert_true (hy_executor_set_input_shape (b, "data", &s3, &error));
  hy_shape oa = hy_executor_output_shape (a, 0, &error);
  hy_shape ob = hy_executor_output_shape (b, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (oa.dims[0], ==, 1);
  g_assert_cmpint (ob.dims[0], ==, 3);
  g_assert_cmpint (hy_shapes_input (hy_executor_shapes (a), 0).dims[0], ==,
      1);
  hy_executor_free (a);
  hy_executor_free (b);
  hy_model_free (model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/shared-model/threads", test_threads_share_one_model);
  g_test_add_func ("/shared-model/own-shapes",
      test_executors_keep_their_shapes);
  return g_test_run ();
}
