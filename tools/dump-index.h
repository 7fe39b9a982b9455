/*
 * dump-index.h — reading the index.json of a per-layer dump (ours from
 * `run --dump-dir`, MXNet's from tests/conformance/mxnet_dump.py), for
 * `hybridinfer diff` and its fuzz target (tests/fuzz/fuzz-diff-index.c).
 *
 * The index is untrusted: it is read bounded (DUMP_INDEX_MAX_BYTES), its
 * nesting is limited (DUMP_INDEX_MAX_DEPTH) before json-glib recurses into
 * it, and every entry must name a file inside the dump directory.
 */
#ifndef HY_DUMP_INDEX_H
#define HY_DUMP_INDEX_H

#include <json-glib/json-glib.h>

#include "hybrid.h"

/* Ours are about 200 bytes a layer: 64 MiB is some 300,000 layers. */
#define DUMP_INDEX_MAX_BYTES ((gsize) 64 << 20)
/* A real index nests 4 deep (object, nodes, entry, inputs). */
#define DUMP_INDEX_MAX_DEPTH 64

/* One dumped output, as index.json lists it. */
typedef struct dump_entry {
  int index, output;
  const char *name, *op, *file;
  JsonArray *inputs;            /* producer names; may be NULL */
  gboolean matched;             /* B side: some entry of A used it */
} dump_entry;

typedef struct dump_index {
  char *dir;
  JsonParser *parser;           /* owns the strings entries point to */
  GArray *entries;              /* dump_entry */
  GHashTable *by_key;           /* "name\x1foutput" → entry index + 1 */
} dump_index;

/* DIR/index.json. */
dump_index *dump_index_load (const char *dir, GError **error);
/* An index read from memory; `path` names it in messages. */
dump_index *dump_index_parse (const char *dir, const char *path,
    const char *json, gsize length, GError **error);
void dump_index_free (dump_index *d);
dump_entry *dump_index_find (dump_index *d, const char *name, int output);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (dump_index, dump_index_free)

#endif
