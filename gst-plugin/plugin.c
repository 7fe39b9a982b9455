/*
 * plugin.c — the hybridinfer plugin: the inference element, its overlay,
 * the tracker and the results publisher.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gsthybridinfer.h"
#include "gsthybridoverlay.h"
#include "gsthybridpublish.h"
#include "gsthybridtrack.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ok = FALSE;
  ok |= GST_ELEMENT_REGISTER (hybridinfer, plugin);
  ok |= GST_ELEMENT_REGISTER (hybridoverlay, plugin);
  ok |= GST_ELEMENT_REGISTER (hybridtrack, plugin);
  ok |= GST_ELEMENT_REGISTER (hybridpublish, plugin);
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, hybridinfer,
    "Runs video through hybridized MXNet Gluon models", plugin_init,
    PACKAGE_VERSION, "Apache 2.0", "hybridinfer",
    "https://github.com/hybridinfer/hybridinfer")
