/*
 * refuse-while-running.c — a setting taken at start, set while running:
 * refused with a warning (refuse-while-running.h).
 */
#include "refuse-while-running.h"

gboolean
gst_hybrid_refuse_while_running (GstElement * element,
    const GParamSpec * pspec, const gchar * why)
{
  if (GST_STATE (element) <= GST_STATE_READY)
    return FALSE;
  GST_OBJECT_UNLOCK (element);
  GST_ELEMENT_WARNING (element, RESOURCE, SETTINGS,
      ("%s cannot change while the element runs: the change is ignored",
          g_param_spec_get_name ((GParamSpec *) pspec)),
      ("%s", why ? why : "set it in the NULL or READY state; the running "
          "value stays"));
  return TRUE;
}
