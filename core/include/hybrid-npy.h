/*
 * npy.h — NumPy .npy files (format versions 1.0, 2.0, 3.0).
 *
 * Reading accepts little-endian float32 in C order only: a wrong dtype or
 * Fortran order is an error naming the file and what it held, not a silent
 * conversion.  Writing produces version 1.0 '<f4' C-order files that
 * numpy.load reads.
 */
#ifndef HY_NPY_H
#define HY_NPY_H

#include <glib.h>

#include "hybrid-tensor.h"

hy_tensor *hy_npy_parse (const guint8 *data, gsize size, const char *source,
    GError **error);
hy_tensor *hy_npy_load (const char *path, GError **error);
GBytes *hy_npy_write (const hy_tensor *tensor);
gboolean hy_npy_save (const hy_tensor *tensor, const char *path,
    GError **error);

#endif /* HY_NPY_H */
