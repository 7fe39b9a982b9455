/*
 * format-sniff.h — telling a symbol file from the other files a user may
 * name in its place.
 *
 * An ONNX model or an MXNet params file given as the model reaches the JSON
 * reader, whose own complaint ("data must be UTF-8 encoded", "nested more
 * than 128 levels deep") names neither what the file is nor what to pass
 * instead.  The leading bytes say it first.
 */
#ifndef HY_FORMAT_SNIFF_H
#define HY_FORMAT_SNIFF_H

#include <glib.h>

/* FALSE with an error (HY_ERROR_FORMAT) naming `source`, what the bytes
 * are and what hybridinfer reads instead, when `data` is plainly an ONNX
 * ModelProto or an MXNet NDArray list; TRUE otherwise, whatever else it
 * is (the JSON reader then judges it). */
gboolean hy_symbol_sniff_foreign (const char *data, gsize length,
    const char *source, GError **error);

/* TRUE when `data` (a file's first bytes) is an ONNX ModelProto, or a
 * file named *.onnx that is not JSON: the model loader then reads it as
 * ONNX. */
gboolean hy_sniff_onnx (const char *data, gsize length, const char *source);

#endif
