/*
 * cuda-module.c — the CUDA backend is a module of its own,
 * libhybrid-cuda.so beside libhybrid.so, opened the first time a process
 * asks about a GPU.
 *
 * Why a module: cuBLAS, cuBLASLt and cuDNN map some 600 MB; linked into
 * libhybrid they were loaded and relocated by every process, the CPU-only
 * ones too: 0.1-0.3 s before main() and about 200 MB of resident memory
 * per process (per pipeline, for a camera app running several).  Opened
 * here, a process that never names a GPU never maps them, and one that
 * asks for `device=auto` on a machine without an NVIDIA driver only looks
 * for the driver.
 *
 * The module reaches the core through libhybrid's own symbols (it links
 * against it); the core reaches the module through the three entry points
 * below, looked up once.
 */
#include "core/cuda-module.h"

#include <dlfcn.h>
#include <string.h>

/* The module's entry points (kernels/cuda/cuda-backend.c). */
typedef struct cuda_entry {
  hy_backend *(*backend_new) (int index, GError **error);
  char *(*unavailable_reason) (int index);
  bool (*absent) (void);
} cuda_entry;

/* Without a driver no GPU can run: say so without mapping the CUDA
 * libraries.  The same words as the module's own check. */
#define NO_DRIVER "no NVIDIA driver is installed (libcuda.so.1 not found)"

/* What opening the module found; set once. */
typedef enum cuda_module_state {
  CUDA_MODULE_LOADED,
  CUDA_MODULE_NOT_BUILT,        /* configured without CUDA */
  CUDA_MODULE_NO_DRIVER,        /* a machine without an NVIDIA driver */
  CUDA_MODULE_BROKEN,           /* there, but it would not load */
} cuda_module_state;

static cuda_entry entry;
static cuda_module_state state;
static char *load_failure;      /* why the module is not usable, or NULL */

#ifdef HY_HAVE_CUDA_MODULE
/* Where libhybrid.so itself was loaded from: the module is installed (and
 * built) beside it. */
static char *
module_path (void)
{
  Dl_info info;
  if (!dladdr ((void *) hy_cuda_module_backend_new, &info) || !info.dli_fname)
    return g_strdup (HY_CUDA_MODULE_NAME);
  char *dir = g_path_get_dirname (info.dli_fname);
  char *path = g_build_filename (dir, HY_CUDA_MODULE_NAME, NULL);
  g_free (dir);
  return path;
}

static gboolean
driver_present (void)
{
  void *driver = dlopen ("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver)
    return FALSE;
  dlclose (driver);
  return TRUE;
}
#endif

static void
open_module (void)
{
#ifndef HY_HAVE_CUDA_MODULE
  state = CUDA_MODULE_NOT_BUILT;
  load_failure = g_strdup ("this build has no CUDA backend (configure with "
      "nvcc and cuDNN present, -Dcuda=enabled)");
#else
  if (!driver_present ()) {
    state = CUDA_MODULE_NO_DRIVER;
    load_failure = g_strdup (NO_DRIVER);
    return;
  }
  char *path = module_path ();
  /* Never closed: kernels and the CUDA runtime's own state live there for
   * the rest of the process. */
  void *module = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    state = CUDA_MODULE_BROKEN;
    load_failure = g_strdup_printf ("the CUDA backend %s could not be "
        "loaded: %s", path, dlerror ());
    g_free (path);
    return;
  }
  entry.backend_new = dlsym (module, "hy_cuda_backend_new");
  entry.unavailable_reason = dlsym (module, "hy_cuda_unavailable_reason");
  entry.absent = dlsym (module, "hy_cuda_absent");
  if (!entry.backend_new || !entry.unavailable_reason || !entry.absent) {
    state = CUDA_MODULE_BROKEN;
    load_failure = g_strdup_printf ("the CUDA backend %s lacks its entry "
        "points (a module from another build?)", path);
    memset (&entry, 0, sizeof entry);
  }
  g_free (path);
#endif
}

static gboolean
module_usable (void)
{
  static gsize once;
  if (g_once_init_enter (&once)) {
    open_module ();
    g_once_init_leave (&once, 1);
  }
  return load_failure == NULL;
}

hy_backend *
hy_cuda_module_backend_new (int index, GError **error)
{
  if (!module_usable ()) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED, "device cuda:%d: %s",
        index, load_failure);
    return NULL;
  }
  return entry.backend_new (index, error);
}

char *
hy_cuda_module_unavailable_reason (int index)
{
  if (!module_usable ())
    return g_strdup (load_failure);
  return entry.unavailable_reason (index);
}

gboolean
hy_cuda_module_no_gpu (void)
{
  if (!module_usable ())
    /* A module that is there but will not load is a broken install, not
     * a machine without a GPU: only a missing driver or build counts. */
    return state != CUDA_MODULE_BROKEN;
  return entry.absent ();
}
