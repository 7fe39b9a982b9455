/*
 * shape-learn.h — weight shapes inferred from the ops that read them, for
 * models loaded without their weights (hy_model_load_graph_only).
 *
 * An op's infer_shape() already knows what shape each of its weights must
 * have, and checks it.  While hy_graph_infer_shapes() runs one node of a
 * weightless model, it opens a window over that node's input shapes; a
 * check that meets an unknown shape inside the window records the
 * expected shape there and passes.  That is MXNet's backward shape
 * inference for weights, with no second shape function per op.
 */
#ifndef HY_SHAPE_LEARN_H
#define HY_SHAPE_LEARN_H

#include <glib.h>

#include "hybrid-tensor.h"

/* If `got` is an unknown shape (ndim < 0) inside the open window, it
 * becomes `want` and TRUE is returned; otherwise FALSE, changing nothing. */
gboolean hy_shape_learn (const hy_shape *got, const hy_shape *want);

/* Opens the window over in[0..n) for this thread (closes it with n = 0);
 * learned[i] is set when in[i] was learned. */
void hy_shape_learn_window (hy_shape *in, gboolean *learned, guint n);

#endif /* HY_SHAPE_LEARN_H */
