/*
 * refuse-while-running.h — one rule for the elements' settings that are
 * taken at start: set while the element runs, a change would not apply,
 * so it is refused aloud (a RESOURCE / SETTINGS warning naming the
 * property) rather than kept silently where the getter would show a value
 * nothing uses.
 */
#ifndef GST_HYBRID_REFUSE_WHILE_RUNNING_H
#define GST_HYBRID_REFUSE_WHILE_RUNNING_H

#include <gst/gst.h>

G_BEGIN_DECLS

/* Called from set_property with `element`'s object lock held.  Past
 * READY: releases the lock, posts the warning (posting takes the lock)
 * with `why` as its debug text (NULL: the running value stays) and
 * returns TRUE, the change refused.  Else FALSE, the lock still held. */
gboolean gst_hybrid_refuse_while_running (GstElement * element,
    const GParamSpec * pspec, const gchar * why);

G_END_DECLS
#endif /* GST_HYBRID_REFUSE_WHILE_RUNNING_H */
