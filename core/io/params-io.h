/*
 * params-io.h — MXNet's NDArray-list files (`prefix-NNNN.params`).
 *
 * Reads V0 (pre-V1), V1, V2 and V3 dense arrays in any dtype that converts
 * to float32; refuses sparse storage, unknown dtypes, truncation and
 * implausible sizes with a message naming the file, the array (index and
 * name) and the byte offset.  Writes V2 dense float32, as MXNet 1.9.1 does.
 */
#ifndef HY_PARAMS_IO_H
#define HY_PARAMS_IO_H

#include <glib.h>

#include "hybrid-tensor.h"

typedef enum hy_param_kind {
  HY_PARAM_PLAIN,               /* no prefix: save_parameters() names */
  HY_PARAM_ARG,                 /* "arg:NAME" */
  HY_PARAM_AUX,                 /* "aux:NAME" */
} hy_param_kind;

typedef struct hy_param {
  char *name;                   /* without the arg:/aux: prefix; "" in a
                                 * list saved without names */
  hy_param_kind kind;
  int stored_dtype;             /* dtype in the file, before conversion;
                                 * -1 for an empty ("none") array */
  hy_tensor *tensor;            /* float32; an empty array's has ndim -1 */
  gboolean write_int8;          /* writing: store as int8 (a quantized
                                 * layer's weights), not float32 */
} hy_param;

typedef struct hy_param_list {
  hy_param *items;
  guint n;
} hy_param_list;

hy_param_list *hy_params_parse (const guint8 *data, gsize size,
    const char *source, GError **error);
hy_param_list *hy_params_load (const char *path, GError **error);
void hy_param_list_free (hy_param_list *list);
const hy_param *hy_param_list_find (const hy_param_list *list,
    const char *name);

/* Serialises (name, kind, tensor) triples; the list is only read.  Every
 * array is written float32, except one marked write_int8 (its tensor
 * holds the integers). */
GBytes *hy_params_write (const hy_param_list *list);
gboolean hy_params_save (const hy_param_list *list, const char *path,
    GError **error);

#endif /* HY_PARAMS_IO_H */
