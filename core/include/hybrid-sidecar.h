/*
 * hybrid-sidecar.h — a model's sidecar: the JSON file beside an export that
 * says how to feed it and read it (input name and size, colour order,
 * scale, mean/std, resize and interpolation, labels, output kind and
 * activation), so that `hybridinfer model=prefix-symbol.json` needs no
 * other setting.
 *
 * The file is PREFIX-model.json beside PREFIX-symbol.json (one rule, no
 * search): hy_sidecar_path_for_model.  Every key is optional; a key the
 * file leaves out is not "set" (hy_sidecar.set) and the reader's own
 * default applies.  The schema, with the values each key takes, is in
 * docs/ELEMENT.md ("The model's sidecar").  Reading is bounded
 * (hy_file_read_bounded, hy_json_check_nesting); the file holds exactly
 * one JSON object, each key once (a second value or a repeated key is an
 * HY_ERROR_FORMAT error naming the file, and the key); a wrong type or
 * value (mean and std must be floats: FLT_MAX at most, std FLT_MIN at
 * least) is an HY_ERROR_FORMAT error naming the file, the key and the
 * value; a key
 * the schema does not have is not an error: it is listed in
 * hy_sidecar.unknown_keys for the caller to warn about, and dropped.
 */
#ifndef HYBRID_SIDECAR_H
#define HYBRID_SIDECAR_H

#include <stdbool.h>

#include <glib.h>

#include "hybrid-frame.h"

G_BEGIN_DECLS

/* The sidecar file for a symbol file: "dir/prefix-symbol.json" gives
 * "dir/prefix-model.json".  NULL when the name does not end in
 * "-symbol.json" (then there is no sidecar).  Free with g_free. */
char *hy_sidecar_path_for_model (const char *model_path);

/* Which keys a sidecar gave (hy_sidecar.set). */
typedef enum hy_sidecar_field {
  HY_SIDECAR_INPUT_NAME = 1 << 0,
  HY_SIDECAR_INPUT_SIZE = 1 << 1,
  HY_SIDECAR_COLOR_ORDER = 1 << 2,
  HY_SIDECAR_SCALE = 1 << 3,
  HY_SIDECAR_MEAN = 1 << 4,
  HY_SIDECAR_STD = 1 << 5,
  HY_SIDECAR_RESIZE = 1 << 6,
  HY_SIDECAR_INTERPOLATION = 1 << 7,
  HY_SIDECAR_LABELS = 1 << 8,   /* labels or labels_file */
  HY_SIDECAR_OUTPUT = 1 << 9,
  HY_SIDECAR_ACTIVATION = 1 << 10,
  HY_SIDECAR_PARAMS = 1 << 11,
  HY_SIDECAR_THRESHOLD = 1 << 12,
  HY_SIDECAR_TOP_K = 1 << 13,
  HY_SIDECAR_IOU_THRESHOLD = 1 << 14,
} hy_sidecar_field;

typedef enum hy_sidecar_output {
  HY_SIDECAR_OUTPUT_AUTO,       /* from the output shapes */
  HY_SIDECAR_OUTPUT_CLASSIFICATION,
  HY_SIDECAR_OUTPUT_DETECTION,
  HY_SIDECAR_OUTPUT_RAW,
  HY_SIDECAR_OUTPUT_SEGMENTATION,
  HY_SIDECAR_OUTPUT_POSE,
} hy_sidecar_output;

/* What the network's last layer already applies to its scores: a
 * description for whoever reads them (probabilities or logits); the
 * element passes scores on as the model computes them. */
typedef enum hy_sidecar_activation {
  HY_SIDECAR_ACTIVATION_NONE,   /* raw scores (logits) */
  HY_SIDECAR_ACTIVATION_SOFTMAX,
  HY_SIDECAR_ACTIVATION_SIGMOID,
} hy_sidecar_activation;

#define HY_SIDECAR_MAX_CHANNELS 3
#define HY_SIDECAR_MAX_TOP_K 1000
/* The largest side input_size takes: the element's input-size bound too
 * (property-parse.c), so that a sidecar that loads also starts. */
#define HY_MAX_INPUT_SIDE 16384
/* input_width/height for "input_size": "frame" (follow the frame). */
#define HY_SIDECAR_SIZE_FRAME (-1)

typedef struct hy_sidecar {
  char *path;                   /* the file read, or NULL (made in code) */
  unsigned set;                 /* hy_sidecar_field bits */
  char *input_name;
  int input_width, input_height;        /* or HY_SIDECAR_SIZE_FRAME */
  bool bgr;                     /* color_order "bgr" */
  bool unit_scale;              /* scale "0-1" (pixels / 255), else "0-255" */
  double mean[HY_SIDECAR_MAX_CHANNELS], std[HY_SIDECAR_MAX_CHANNELS];
  int n_mean, n_std;            /* 1 (every channel) or 3 */
  hy_resize_mode resize;
  hy_interpolation interpolation;
  /* Labels: inline (NULL-terminated), or a file (resolved against the
   * sidecar's folder when read), never both. */
  char **labels;
  char *labels_file;
  hy_sidecar_output output;
  hy_sidecar_activation activation;
  char *params_file;            /* resolved like labels_file; or NULL */
  double threshold;             /* the lowest score reported; float range */
  unsigned top_k;               /* classes reported, 1 … HY_SIDECAR_MAX_TOP_K */
  /* detection heads the element runs NMS on (YOLOv8's): a box is
   * dropped for a better one of its class overlapping it more; [0, 1] */
  double iou_threshold;
  /* "description" (a string), "validation" and "training" (any JSON):
   * for people; kept verbatim (as JSON text of one object holding those
   * keys) so that a rewrite carries them over.  May be NULL. */
  char *notes_json;
  char **unknown_keys;          /* NULL-terminated; NULL when none */
} hy_sidecar;

/* An empty sidecar (nothing set), for writing one from code. */
hy_sidecar *hy_sidecar_new (void);
void hy_sidecar_free (hy_sidecar *sidecar);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (hy_sidecar, hy_sidecar_free)

/* Reads and checks a sidecar file.  NULL + error (HY_ERROR_IO when it
 * cannot be read, HY_ERROR_FORMAT naming the file, key and value). */
hy_sidecar *hy_sidecar_load (const char *path, GError **error);

/* The sidecar of a symbol file, when there is one: NULL with no error
 * when PREFIX-model.json does not exist (or the name has no -symbol.json
 * suffix); NULL + error when it exists and cannot be used. */
hy_sidecar *hy_sidecar_find (const char *model_path, GError **error);

/* The file's text: the keys that are set, then the notes.  A labels_file
 * or params_file is written as given (relative paths stay relative:
 * callers writing elsewhere inline the labels or make paths absolute). */
char *hy_sidecar_to_json (const hy_sidecar *sidecar);

/* Writes the sidecar to `path` atomically (a temporary file renamed). */
gboolean hy_sidecar_save (const hy_sidecar *sidecar, const char *path,
    GError **error);

/* Writes PREFIX-model.json, the sidecar of the export that
 * hy_model_export or hy_block_export wrote at `prefix`.  A labels file is
 * read and its labels written inline, and a params file is left out (the
 * new export has its own), so that the new sidecar stands alone wherever
 * the export is moved. */
gboolean hy_sidecar_save_for_prefix (const hy_sidecar *sidecar,
    const char *prefix, GError **error);

G_END_DECLS
#endif /* HYBRID_SIDECAR_H */
