/*
 * test-cpu-workspace.c — a CPU kernel's workspace that cannot grow fails
 * the forward with an error instead of aborting the process.
 *
 * Kernels take scratch memory from their context's workspace and have no
 * error path (cpu-kernel.h); the CPU backend's run catches a workspace
 * that cannot grow and reports it as HY_ERROR_NO_MEMORY, as an arena that
 * cannot be had already was.  The request here is larger than any machine
 * (half the address space), so it fails everywhere, sanitizers included
 * (the suite runs them with allocator_may_return_null=1).
 */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "hybrid.h"
#include "core/backend.h"
#include "kernels/cpu/cpu-kernel.h"

static int kernel_runs;

/* A kernel whose scratch would not fit in any memory. */
static void
greedy_kernel (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  kernel_runs++;
  float *scratch = hy_cpu_workspace (ctx, SIZE_MAX / 2);
  scratch[0] = 1.0f;            /* never reached */
  kernel_runs += 100;
}

/* A kernel with a modest workspace, after the failure. */
static void
modest_kernel (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  float *scratch = hy_cpu_workspace (ctx, 4096);
  scratch[0] = 2.0f;
  out[0]->data[0] = scratch[0];
}

static void
test_workspace_failure_is_an_error (void)
{
  g_autoptr (GError) error = NULL;
  hy_backend *cpu = hy_backend_new ((hy_device) { HY_DEVICE_CPU, 0 }, 1,
      &error);
  g_assert_no_error (error);
  hy_shape s = { .ndim = 1, .dims = { 1 } };
  hy_tensor *out = hy_tensor_new (&s);
  hy_tensor *const outs[] = { out };
  hy_call calls[] = {
    { .fn = (hy_kernel_ptr) modest_kernel, .out = outs, .n_out = 1 },
    { .fn = (hy_kernel_ptr) greedy_kernel, .out = outs, .n_out = 1 },
  };

  g_assert_false (cpu->iface->run (cpu, calls, 2, NULL, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_NO_MEMORY);
  g_assert_nonnull (strstr (error->message, "call 2 of 2"));
  g_assert_nonnull (strstr (error->message, "workspace"));
  g_assert_cmpint (kernel_runs, ==, 1);
  g_clear_error (&error);

  /* The backend goes on working: the next run grows the workspace again. */
  out->data[0] = 0;
  g_assert_true (cpu->iface->run (cpu, calls, 1, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (out->data[0], ==, 2.0f);

  hy_tensor_free (out);
  hy_backend_free (cpu);
}

/* Input-sized tensors fail the same way, naming what needed them. */
static void
test_tensor_try_new (void)
{
  g_autoptr (GError) error = NULL;
  hy_shape huge = { .ndim = 4, .dims = { 1, 3, 100000, 100000 } };
  g_assert_null (hy_tensor_try_new (&huge, "the input tensor", &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_NO_MEMORY);
  g_assert_nonnull (strstr (error->message, "the input tensor"));
  g_assert_nonnull (strstr (error->message, "(1, 3, 100000, 100000)"));
  g_clear_error (&error);
  /* More elements than a size_t holds. */
  hy_shape overflow = { .ndim = 3,
    .dims = { G_GINT64_CONSTANT (1) << 40, 1 << 20, 1 << 10 } };
  g_assert_null (hy_tensor_try_new (&overflow, "x", &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_NO_MEMORY);
  g_clear_error (&error);
  /* Empty, though the other dimensions' product overflows (a params file
   * the fuzzer wrote): no elements, nothing to refuse. */
  hy_shape empty = { .ndim = 3,
    .dims = { 1778384896, G_GINT64_CONSTANT (4187224777), 0 } };
  g_assert_cmpint (hy_shape_numel (&empty), ==, 0);
  hy_tensor *t = hy_tensor_try_new (&empty, "x", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hy_tensor_nbytes (t), ==, 0);
  hy_tensor_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cpu-workspace/failure-is-an-error",
      test_workspace_failure_is_an_error);
  g_test_add_func ("/cpu-workspace/tensor-try-new", test_tensor_try_new);
  return g_test_run ();
}
