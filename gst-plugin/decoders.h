/*
 * decoders.h — the table of output kinds (decoders.def): the `output`
 * property's values, looked up by value, by sidecar name, or walked.
 */
#ifndef GST_HYBRID_DECODERS_H
#define GST_HYBRID_DECODERS_H

#include "decode.h"

G_BEGIN_DECLS

/* The `output` property's value: GST_HYBRID_OUTPUT_AUTO, or a kind's
 * place in decoders.def (the first is 1). */
typedef gint GstHybridOutput;
#define GST_HYBRID_OUTPUT_AUTO 0

/* The kinds, in decoders.def's order: gst_hybrid_decoders[i] is value
 * i + 1. */
extern const GstHybridDecoder *const gst_hybrid_decoders[];
extern const guint gst_hybrid_n_decoders;

/* Once per process, before any result: every kind's field names. */
void gst_hybrid_decoders_init (void);

/* The kind of value `output`; NULL for auto (or a value no kind has). */
const GstHybridDecoder *gst_hybrid_decoder_for (GstHybridOutput output);

/* The value of the kind a sidecar's "output" names; auto for auto, or
 * for a kind no row gives that name. */
GstHybridOutput gst_hybrid_output_from_sidecar (hy_sidecar_output output);

G_END_DECLS
#endif /* GST_HYBRID_DECODERS_H */
