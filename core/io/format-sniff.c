/*
 * format-sniff.c — recognising ONNX models and MXNet params files by their
 * leading bytes, before a symbol file's JSON is parsed.
 *
 * Only what cannot be JSON is claimed: a JSON text starts (after
 * whitespace) with a value, never with a control byte such as 0x08 or
 * 0x12, so no symbol file is ever refused here.
 */
#include <string.h>

#include "hybrid.h"
#include "core/io/format-sniff.h"

/* MXNet's NDArray-list magic, the first little-endian u64 of every
 * `prefix-NNNN.params` (MXNet's kMXAPINDArrayListMagic). */
#define PARAMS_LIST_MAGIC 0x112

/* Reads one protobuf varint at data[*at]; FALSE when it runs past the
 * end or over ten bytes. */
static gboolean
read_varint (const guint8 *data, gsize length, gsize *at, guint64 *value)
{
  guint64 v = 0;
  for (int shift = 0; shift < 70 && *at < length; shift += 7) {
    guint8 b = data[(*at)++];
    v |= (guint64) (b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *value = v;
      return TRUE;
    }
  }
  return FALSE;
}

/* A serialised ModelProto opens with field 1, ir_version (tag 0x08, a
 * varint; every exporter writes it first and real versions are 1 to a few
 * tens), then another field of ModelProto: producer_name (2), ...,
 * graph (7), opset_import (8) and so on up to 20, each with the wire type
 * its field has.  Two well-formed fields in that order are not chance. */
static gboolean
looks_like_onnx (const guint8 *data, gsize length)
{
  gsize at = 0;
  guint64 tag, value;
  if (length < 4 || data[0] != 0x08)
    return FALSE;
  at = 1;
  if (!read_varint (data, length, &at, &value) || value == 0 || value > 100)
    return FALSE;
  if (!read_varint (data, length, &at, &tag))
    return FALSE;
  guint64 field = tag >> 3, wire = tag & 7;
  /* Varint fields after ir_version: model_version (5); the rest that
   * follow it are strings or messages (length-delimited). */
  if (field == 5)
    return wire == 0;
  return field >= 2 && field <= 20 && wire == 2;
}

static gboolean
looks_like_params (const guint8 *data, gsize length)
{
  if (length < 8)
    return FALSE;
  guint64 magic = 0;
  for (int i = 7; i >= 0; i--)
    magic = (magic << 8) | data[i];
  return magic == PARAMS_LIST_MAGIC;
}

/* A file named *.onnx whose first non-blank byte opens no JSON value is
 * an ONNX model even when its header is unusual. */
static gboolean
onnx_by_name (const char *source, const guint8 *data, gsize length)
{
  if (!source || !g_str_has_suffix (source, ".onnx"))
    return FALSE;
  for (gsize i = 0; i < length; i++) {
    guint8 c = data[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      continue;
    return c != '{' && c != '[';
  }
  return FALSE;
}

gboolean
hy_sniff_onnx (const char *data, gsize length, const char *source)
{
  const guint8 *bytes = (const guint8 *) data;
  return looks_like_onnx (bytes, length) || onnx_by_name (source, bytes,
      length);
}

gboolean
hy_symbol_sniff_foreign (const char *data, gsize length, const char *source,
    GError **error)
{
  const guint8 *bytes = (const guint8 *) data;
  if (!source)
    source = "<symbol>";
  if (looks_like_params (bytes, length)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s is an MXNet params file (weights), not a symbol file: give the "
        "model as the prefix-symbol.json that HybridBlock.export wrote "
        "beside it, and this file as the params", source);
    return FALSE;
  }
  if (looks_like_onnx (bytes, length) || onnx_by_name (source, bytes, length)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "%s is an ONNX model (protobuf), not a symbol file: load it as a "
        "model (hy_model_load, the tool's --model, the element's model=), "
        "which reads ONNX as well as MXNet's symbol JSON", source);
    return FALSE;
  }
  return TRUE;
}
