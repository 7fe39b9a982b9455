/*
 * detection-classes.h — how many classes a detector scores, read from the
 * graph that makes its heads: a detector's class ids are values in its
 * heads, so their shapes do not say it (decode.h, classes_in_graph).
 */
#ifndef GST_HYBRID_DETECTION_CLASSES_H
#define GST_HYBRID_DETECTION_CLASSES_H

#include <glib.h>

#include "hybrid.h"

G_BEGIN_DECLS

/* The class count of the detector whose first head (the class ids) the
 * model's output 0 is, for the input shapes of `running` (the executor's);
 * -1 when the graph does not show it. */
gint64 gst_hybrid_detection_classes (const hy_model * model,
    const hy_shapes * running);

G_END_DECLS
#endif /* GST_HYBRID_DETECTION_CLASSES_H */
