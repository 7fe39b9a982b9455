/*
 * decoders.c — the table of output kinds: decoders.def's rows, each
 * defined in its decode-NICK.c (decoders.h).
 */
#include "decoders.h"
#include "result-fields.h"

#define GST_HYBRID_DECODER(nick) \
  extern const GstHybridDecoder gst_hybrid_decoder_##nick;
#include "decoders.def"
#undef GST_HYBRID_DECODER

const GstHybridDecoder *const gst_hybrid_decoders[] = {
#define GST_HYBRID_DECODER(nick) &gst_hybrid_decoder_##nick,
#include "decoders.def"
#undef GST_HYBRID_DECODER
};

const guint gst_hybrid_n_decoders = G_N_ELEMENTS (gst_hybrid_decoders);

void
gst_hybrid_decoders_init (void)
{
  static gsize done = 0;
  if (!g_once_init_enter (&done))
    return;
  hyg_names_init ();
  for (guint i = 0; i < gst_hybrid_n_decoders; i++)
    if (gst_hybrid_decoders[i]->fields)
      gst_hybrid_decoders[i]->fields ();
  g_once_init_leave (&done, 1);
}

const GstHybridDecoder *
gst_hybrid_decoder_for (GstHybridOutput output)
{
  if (output < 1 || (guint) output > gst_hybrid_n_decoders)
    return NULL;
  return gst_hybrid_decoders[output - 1];
}

GstHybridOutput
gst_hybrid_output_from_sidecar (hy_sidecar_output output)
{
  for (guint i = 0; output != HY_SIDECAR_OUTPUT_AUTO
      && i < gst_hybrid_n_decoders; i++)
    if (gst_hybrid_decoders[i]->sidecar == output)
      return (GstHybridOutput) i + 1;
  return GST_HYBRID_OUTPUT_AUTO;
}
