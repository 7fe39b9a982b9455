/*
 * fuzz-diff-index.c — libFuzzer target: the index.json reader of
 * `hybridinfer diff` (tools/dump-index.c) on arbitrary bytes, then the
 * look-ups diff makes with what it read.
 */
#include <stddef.h>
#include <stdint.h>

#include "dump-index.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static gboolean once;
  if (!once) {
    /* A GLib or json-glib critical is a bug in the reader: it would be a
     * second stderr line from the tool, against the CLI's contract. */
    g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
    once = TRUE;
  }
  GError *error = NULL;
  dump_index *d = dump_index_parse ("fuzz", "fuzz/index.json",
      (const char *) data, size, &error);
  if (!d) {
    g_assert (error != NULL);
    g_clear_error (&error);
    return 0;
  }
  for (guint i = 0; i < d->entries->len; i++) {
    const dump_entry *e = &g_array_index (d->entries, dump_entry, i);
    g_assert (dump_index_find (d, e->name, e->output) != NULL);
  }
  dump_index_free (d);
  return 0;
}
