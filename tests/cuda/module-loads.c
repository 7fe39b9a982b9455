/*
 * module-loads.c — the CUDA backend module, as the core opens it: every
 * symbol it needs resolves (RTLD_NOW: a kernel family that calls a core
 * function the library does not export fails here, on any machine, rather
 * than on the first GPU that runs it), and its entry points are there and
 * answer on this machine.
 *
 * Usage: module-loads PATH-TO-libhybrid-cuda.so
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>

#include <glib.h>

#include "hybrid.h"

int
main (int argc, char **argv)
{
  if (argc != 2) {
    fprintf (stderr, "usage: %s libhybrid-cuda.so\n", argv[0]);
    return 2;
  }
  /* libhybrid is loaded already (this test links it), as in any process
   * that opens the module. */
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  char *cpu_reason = hy_device_unavailable_reason (cpu);
  g_free (cpu_reason);

  int failures = 0;
  printf ("1..4\n");
  void *module = dlopen (argv[1], RTLD_NOW | RTLD_LOCAL);
  printf ("%s 1 - %s opens with every symbol resolved%s%s\n",
      module ? "ok" : "not ok", argv[1], module ? "" : ": ",
      module ? "" : dlerror ());
  if (!module) {
    printf ("not ok 2 - entry points\nnot ok 3 - absent\nnot ok 4 - reason\n");
    return 1;
  }
  void *backend_new = dlsym (module, "hy_cuda_backend_new");
  char *(*reason) (int) = (char *(*)(int)) dlsym (module,
      "hy_cuda_unavailable_reason");
  bool (*absent) (void) = (bool (*)(void)) dlsym (module, "hy_cuda_absent");
  bool entries = backend_new && reason && absent;
  failures += !entries;
  printf ("%s 2 - hy_cuda_backend_new, hy_cuda_unavailable_reason and "
      "hy_cuda_absent are exported\n", entries ? "ok" : "not ok");
  if (!entries) {
    printf ("not ok 3 - absent\nnot ok 4 - reason\n");
    return 1;
  }
  /* The module's own answers agree with the core's, whether or not this
   * machine has a GPU. */
  bool module_absent = absent ();
  bool core_absent = hy_device_no_gpu ();
  failures += module_absent != core_absent;
  printf ("%s 3 - the module says %s, the core %s\n",
      module_absent == core_absent ? "ok" : "not ok",
      module_absent ? "no GPU" : "a GPU", core_absent ? "no GPU" : "a GPU");
  hy_device gpu = { HY_DEVICE_CUDA, 0 };
  char *from_module = reason (0);
  char *from_core = hy_device_unavailable_reason (gpu);
  bool same = g_strcmp0 (from_module, from_core) == 0;
  failures += !same;
  printf ("%s 4 - why cuda:0 is unusable: module '%s', core '%s'\n",
      same ? "ok" : "not ok", from_module ? from_module : "(usable)",
      from_core ? from_core : "(usable)");
  g_free (from_module);
  g_free (from_core);
  return failures ? 1 : 0;
}
