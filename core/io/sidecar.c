/*
 * sidecar.c — a model's sidecar, PREFIX-model.json (hybrid-sidecar.h):
 * read, checked key by key, written back.
 *
 * The reader is strict about what it knows (a wrong type or value fails,
 * naming file, key and value: a typo must not quietly feed a model the
 * wrong pixels) and lenient about what it does not (an unknown key is
 * listed for a warning: a newer writer's key must not break an older
 * reader).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "hybrid-sidecar.h"

/* A sidecar is a few settings and at most a few thousand labels. */
#define SIDECAR_MAX_BYTES ((gsize) 16 << 20)
#define SIDECAR_MAX_DEPTH 32
#define LABELS_MAX_BYTES ((gsize) 16 << 20)
#define SIDECAR_SUFFIX "-model.json"
#define SYMBOL_SUFFIX "-symbol.json"
#define ONNX_SUFFIX ".onnx"

static const char *const notes_keys[] = { "description", "validation",
  "training", NULL
};

char *
hy_sidecar_path_for_model (const char *model_path)
{
  if (!model_path)
    return NULL;
  /* prefix-symbol.json and prefix.onnx share prefix-model.json. */
  const char *suffix = g_str_has_suffix (model_path, SYMBOL_SUFFIX)
      ? SYMBOL_SUFFIX : g_str_has_suffix (model_path, ONNX_SUFFIX)
      ? ONNX_SUFFIX : NULL;
  if (!suffix)
    return NULL;
  gsize stem = strlen (model_path) - strlen (suffix);
  return g_strdup_printf ("%.*s" SIDECAR_SUFFIX, (int) stem, model_path);
}

hy_sidecar *
hy_sidecar_new (void)
{
  hy_sidecar *s = g_new0 (hy_sidecar, 1);
  s->resize = HY_RESIZE_STRETCH;
  s->interpolation = HY_INTERP_BILINEAR;
  return s;
}

void
hy_sidecar_free (hy_sidecar *s)
{
  if (!s)
    return;
  g_free (s->path);
  g_free (s->input_name);
  g_strfreev (s->labels);
  g_free (s->labels_file);
  g_free (s->params_file);
  g_free (s->notes_json);
  g_strfreev (s->unknown_keys);
  g_free (s);
}

/* ---- reading ------------------------------------------------------------ */

/* The value as the file spells it, for messages (short). */
static char *
shown (JsonNode *node)
{
  g_autofree char *text = json_to_string (node, FALSE);
  if (strlen (text) > 60)
    return g_strdup_printf ("%.57s...", text);
  return g_steal_pointer (&text);
}

static gboolean
bad_value (GError **error, const char *path, const char *key, JsonNode *node,
    const char *expected)
{
  g_autofree char *value = shown (node);
  g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
      "sidecar %s: key \"%s\": %s is not %s", path, key, value, expected);
  return FALSE;
}

static gboolean
get_string (JsonNode *node, const char *path, const char *key,
    const char **out, GError **error)
{
  if (!JSON_NODE_HOLDS_VALUE (node)
      || json_node_get_value_type (node) != G_TYPE_STRING)
    return bad_value (error, path, key, node, "a string");
  *out = json_node_get_string (node);
  return TRUE;
}

/* A string that must be one of `names` (NULL-terminated): its index. */
static gboolean
get_choice (JsonNode *node, const char *path, const char *key,
    const char *const *names, int *out, GError **error)
{
  if (JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING) {
    const char *text = json_node_get_string (node);
    for (int i = 0; names[i]; i++)
      if (!strcmp (text, names[i])) {
        *out = i;
        return TRUE;
      }
  }
  g_autofree char *list = g_strjoinv ("\", \"", (char **) names);
  g_autofree char *expected = g_strdup_printf ("one of \"%s\"", list);
  return bad_value (error, path, key, node, expected);
}

static gboolean
get_number (JsonNode *node, double *out)
{
  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  GType t = json_node_get_value_type (node);
  if (t == G_TYPE_DOUBLE)
    *out = json_node_get_double (node);
  else if (t == G_TYPE_INT64)
    *out = (double) json_node_get_int (node);
  else
    return FALSE;
  return TRUE;
}

static gboolean
get_size (JsonNode *node, const char *path, hy_sidecar *s, GError **error)
{
  const char *expected = "[width, height] (whole numbers 1.."
      G_STRINGIFY (HY_MAX_INPUT_SIDE) ") or \"frame\"";
  if (JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING) {
    if (strcmp (json_node_get_string (node), "frame"))
      return bad_value (error, path, "input_size", node, expected);
    s->input_width = s->input_height = HY_SIDECAR_SIZE_FRAME;
    return TRUE;
  }
  if (!JSON_NODE_HOLDS_ARRAY (node)
      || json_array_get_length (json_node_get_array (node)) != 2)
    return bad_value (error, path, "input_size", node, expected);
  JsonArray *a = json_node_get_array (node);
  int side[2];
  for (int i = 0; i < 2; i++) {
    JsonNode *item = json_array_get_element (a, (guint) i);
    if (!JSON_NODE_HOLDS_VALUE (item)
        || json_node_get_value_type (item) != G_TYPE_INT64
        || json_node_get_int (item) < 1
        || json_node_get_int (item) > HY_MAX_INPUT_SIDE)
      return bad_value (error, path, "input_size", node, expected);
    side[i] = (int) json_node_get_int (item);
  }
  s->input_width = side[0];
  s->input_height = side[1];
  return TRUE;
}

/* Whether a mean or std value is one the frame conversion can use: it
 * computes in float, where a mean past FLT_MAX is infinite and a std
 * below FLT_MIN divides a pixel into infinity. */
static gboolean
channel_value_fits (double v, gboolean positive)
{
  if (positive)
    return v >= FLT_MIN && v <= FLT_MAX;
  return fabs (v) <= FLT_MAX;
}

/* mean/std: 1 or 3 numbers (std > 0), each a float. */
static gboolean
get_channels (JsonNode *node, const char *path, const char *key,
    gboolean positive, double *values, int *n, GError **error)
{
  const char *expected = positive
      ? "an array of 1 or 3 numbers greater than 0 (floats: 1.2e-38 to "
      "3.4e38)"
      : "an array of 1 or 3 numbers (floats: -3.4e38 to 3.4e38)";
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return bad_value (error, path, key, node, expected);
  JsonArray *a = json_node_get_array (node);
  guint len = json_array_get_length (a);
  if (len != 1 && len != HY_SIDECAR_MAX_CHANNELS)
    return bad_value (error, path, key, node, expected);
  for (guint i = 0; i < len; i++)
    if (!get_number (json_array_get_element (a, i), &values[i])
        || !channel_value_fits (values[i], positive))
      return bad_value (error, path, key, node, expected);
  *n = (int) len;
  return TRUE;
}

/* A path in the file: relative to the sidecar's folder. */
static char *
resolve (const char *sidecar_path, const char *file)
{
  if (g_path_is_absolute (file))
    return g_strdup (file);
  g_autofree char *dir = g_path_get_dirname (sidecar_path);
  return g_build_filename (dir, file, NULL);
}

static gboolean
get_labels (JsonNode *node, const char *path, hy_sidecar *s, GError **error)
{
  const char *expected = "a labels file name (relative to the sidecar) "
      "or an array of strings";
  if (JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING) {
    const char *file = json_node_get_string (node);
    if (!*file)
      return bad_value (error, path, "labels", node, expected);
    s->labels_file = resolve (path, file);
    return TRUE;
  }
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return bad_value (error, path, "labels", node, expected);
  JsonArray *a = json_node_get_array (node);
  guint n = json_array_get_length (a);
  if (n == 0)
    return bad_value (error, path, "labels", node, expected);
  s->labels = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++) {
    JsonNode *item = json_array_get_element (a, i);
    if (!JSON_NODE_HOLDS_VALUE (item)
        || json_node_get_value_type (item) != G_TYPE_STRING) {
      g_autofree char *key = g_strdup_printf ("labels[%u]", i);
      return bad_value (error, path, key, item, "a string");
    }
    s->labels[i] = g_strdup (json_node_get_string (item));
  }
  return TRUE;
}

static const char *const output_names[] = { "auto", "classification",
  "detection", "raw", "segmentation", "pose", NULL
};
static const char *const activation_names[] = { "none", "softmax",
  "sigmoid", NULL
};
static const char *const color_names[] = { "rgb", "bgr", NULL };
static const char *const scale_names[] = { "0-255", "0-1", NULL };
static const char *const resize_names[] = { "stretch", "letterbox", NULL };
static const char *const interp_names[] = { "bilinear", "nearest", NULL };

static gboolean
is_notes_key (const char *key)
{
  for (int i = 0; notes_keys[i]; i++)
    if (!strcmp (key, notes_keys[i]))
      return TRUE;
  return FALSE;
}

/* One key of the top-level object. */
static gboolean
read_key (hy_sidecar *s, const char *path, const char *key, JsonNode *node,
    JsonObject *notes, GPtrArray *unknown, GError **error)
{
  int choice;
  const char *text;
  if (!strcmp (key, "sidecar_version")) {
    double v;
    if (!get_number (node, &v) || v != 1)
      return bad_value (error, path, key, node, "1 (the only version)");
  } else if (!strcmp (key, "input_name")) {
    if (!get_string (node, path, key, &text, error))
      return FALSE;
    if (!*text)
      return bad_value (error, path, key, node, "a node name");
    s->input_name = g_strdup (text);
    s->set |= HY_SIDECAR_INPUT_NAME;
  } else if (!strcmp (key, "input_size")) {
    if (!get_size (node, path, s, error))
      return FALSE;
    s->set |= HY_SIDECAR_INPUT_SIZE;
  } else if (!strcmp (key, "color_order")) {
    if (!get_choice (node, path, key, color_names, &choice, error))
      return FALSE;
    s->bgr = choice == 1;
    s->set |= HY_SIDECAR_COLOR_ORDER;
  } else if (!strcmp (key, "scale")) {
    if (!get_choice (node, path, key, scale_names, &choice, error))
      return FALSE;
    s->unit_scale = choice == 1;
    s->set |= HY_SIDECAR_SCALE;
  } else if (!strcmp (key, "mean")) {
    if (!get_channels (node, path, key, FALSE, s->mean, &s->n_mean, error))
      return FALSE;
    s->set |= HY_SIDECAR_MEAN;
  } else if (!strcmp (key, "std")) {
    if (!get_channels (node, path, key, TRUE, s->std, &s->n_std, error))
      return FALSE;
    s->set |= HY_SIDECAR_STD;
  } else if (!strcmp (key, "resize")) {
    if (!get_choice (node, path, key, resize_names, &choice, error))
      return FALSE;
    s->resize = choice ? HY_RESIZE_LETTERBOX : HY_RESIZE_STRETCH;
    s->set |= HY_SIDECAR_RESIZE;
  } else if (!strcmp (key, "interpolation")) {
    if (!get_choice (node, path, key, interp_names, &choice, error))
      return FALSE;
    s->interpolation = choice ? HY_INTERP_NEAREST : HY_INTERP_BILINEAR;
    s->set |= HY_SIDECAR_INTERPOLATION;
  } else if (!strcmp (key, "labels")) {
    if (!get_labels (node, path, s, error))
      return FALSE;
    s->set |= HY_SIDECAR_LABELS;
  } else if (!strcmp (key, "output")) {
    if (!get_choice (node, path, key, output_names, &choice, error))
      return FALSE;
    s->output = (hy_sidecar_output) choice;
    s->set |= HY_SIDECAR_OUTPUT;
  } else if (!strcmp (key, "activation")) {
    if (!get_choice (node, path, key, activation_names, &choice, error))
      return FALSE;
    s->activation = (hy_sidecar_activation) choice;
    s->set |= HY_SIDECAR_ACTIVATION;
  } else if (!strcmp (key, "threshold")) {
    double v;
    if (!get_number (node, &v) || !isfinite (v) || fabs (v) > G_MAXFLOAT)
      return bad_value (error, path, key, node, "a number within float "
          "range");
    s->threshold = v;
    s->set |= HY_SIDECAR_THRESHOLD;
  } else if (!strcmp (key, "iou_threshold")) {
    double v;
    if (!get_number (node, &v) || !(v >= 0 && v <= 1))
      return bad_value (error, path, key, node, "a number from 0 to 1");
    s->iou_threshold = v;
    s->set |= HY_SIDECAR_IOU_THRESHOLD;
  } else if (!strcmp (key, "top_k")) {
    double v;
    if (!get_number (node, &v) || v != floor (v) || v < 1
        || v > HY_SIDECAR_MAX_TOP_K)
      return bad_value (error, path, key, node, "a whole number from 1 to "
          G_STRINGIFY (HY_SIDECAR_MAX_TOP_K));
    s->top_k = (unsigned) v;
    s->set |= HY_SIDECAR_TOP_K;
  } else if (!strcmp (key, "params")) {
    if (!get_string (node, path, key, &text, error))
      return FALSE;
    if (!*text)
      return bad_value (error, path, key, node, "a params file name");
    s->params_file = resolve (path, text);
    s->set |= HY_SIDECAR_PARAMS;
  } else if (is_notes_key (key)) {
    if (!strcmp (key, "description")
        && !get_string (node, path, key, &text, error))
      return FALSE;
    json_object_set_member (notes, key, json_node_copy (node));
  } else {
    g_ptr_array_add (unknown, g_strdup (key));
  }
  return TRUE;
}

/* What json-glib lets through and a sidecar must not have: a second
 * top-level value ("{…}{…}": json-glib keeps the first and drops the
 * rest) and a key given twice in one object (json-glib keeps the last).
 * Either way the file would not say what it reads as.  Watched through
 * the parser's signals, as it parses. */
typedef struct {
  int depth;
  guint roots;                  /* top-level values begun */
  GArray *members;              /* guint per open object: members read */
  char *duplicate;              /* the first key given twice */
} parse_watch;

static void
watch_value_start (parse_watch *w)
{
  if (w->depth++ == 0)
    w->roots++;
}

static void
watch_object_start (JsonParser *parser, gpointer data)
{
  parse_watch *w = data;
  guint none = 0;
  watch_value_start (w);
  g_array_append_val (w->members, none);
}

/* Emitted once the member is in the object: a duplicate replaced one, so
 * the object has fewer members than were read. */
static void
watch_object_member (JsonParser *parser, JsonObject *object,
    const char *name, gpointer data)
{
  parse_watch *w = data;
  guint *read = &g_array_index (w->members, guint, w->members->len - 1);
  if (++*read > json_object_get_size (object) && !w->duplicate)
    w->duplicate = g_strdup (name);
}

static void
watch_object_end (JsonParser *parser, JsonObject *object, gpointer data)
{
  parse_watch *w = data;
  w->depth--;
  g_array_set_size (w->members, w->members->len - 1);
}

static void
watch_array_start (JsonParser *parser, gpointer data)
{
  watch_value_start (data);
}

static void
watch_array_end (JsonParser *parser, JsonArray *array, gpointer data)
{
  ((parse_watch *) data)->depth--;
}

static void
parse_watch_connect (JsonParser *parser, parse_watch *w)
{
  w->members = g_array_new (FALSE, FALSE, sizeof (guint));
  g_signal_connect (parser, "object-start", G_CALLBACK (watch_object_start),
      w);
  g_signal_connect (parser, "object-member",
      G_CALLBACK (watch_object_member), w);
  g_signal_connect (parser, "object-end", G_CALLBACK (watch_object_end), w);
  g_signal_connect (parser, "array-start", G_CALLBACK (watch_array_start), w);
  g_signal_connect (parser, "array-end", G_CALLBACK (watch_array_end), w);
}

/* FALSE + error when the watch saw either; frees what it holds. */
static gboolean
parse_watch_finish (parse_watch *w, const char *path, GError **error)
{
  gboolean ok = TRUE;
  if (w->roots > 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "sidecar %s: more than one JSON value: the file must hold one "
        "JSON object", path);
    ok = FALSE;
  } else if (w->duplicate) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "sidecar %s: key \"%s\" is given more than once in an object",
        path, w->duplicate);
    ok = FALSE;
  }
  g_array_unref (w->members);
  g_free (w->duplicate);
  return ok;
}

static char *
object_text (JsonObject *object)
{
  g_autoptr (JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, object);
  return json_to_string (node, FALSE);
}

hy_sidecar *
hy_sidecar_load (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *text = NULL;
  gsize len;
  if (!hy_file_read_bounded (path, "model sidecar", SIDECAR_MAX_BYTES, &text,
          &len, error))
    return NULL;
  if (!hy_json_check_nesting (text, len, SIDECAR_MAX_DEPTH, path, NULL,
          error))
    return NULL;
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  GError *local = NULL;
  parse_watch watch = { 0 };
  parse_watch_connect (parser, &watch);
  gboolean parsed = json_parser_load_from_data (parser, text, (gssize) len,
      &local);
  g_signal_handlers_disconnect_by_data (parser, &watch);
  /* (a syntax error is the one to tell) */
  gboolean one_value = parse_watch_finish (&watch, path,
      parsed ? error : NULL);
  if (!parsed) {
    g_autofree char *source = g_strdup_printf ("sidecar %s", path);
    hy_json_set_parse_error (error, source, local);
    g_error_free (local);
    return NULL;
  }
  if (!one_value)
    return NULL;
  JsonNode *root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "sidecar %s: the file must hold one JSON object", path);
    return NULL;
  }
  g_autoptr (hy_sidecar) s = hy_sidecar_new ();
  s->path = g_strdup (path);
  g_autoptr (JsonObject) notes = json_object_new ();
  g_autoptr (GPtrArray) unknown = g_ptr_array_new_with_free_func (g_free);
  JsonObject *object = json_node_get_object (root);
  g_autoptr (GList) members = json_object_get_members (object);
  for (GList * m = members; m; m = m->next) {
    const char *key = m->data;
    if (!read_key (s, path, key, json_object_get_member (object, key), notes,
            unknown, error))
      return NULL;
  }
  if (json_object_get_size (notes))
    s->notes_json = object_text (notes);
  if (unknown->len) {
    g_ptr_array_add (unknown, NULL);
    s->unknown_keys = (char **) g_ptr_array_free (g_steal_pointer (&unknown),
        FALSE);
  }
  return g_steal_pointer (&s);
}

hy_sidecar *
hy_sidecar_find (const char *model_path, GError **error)
{
  g_autofree char *path = hy_sidecar_path_for_model (model_path);
  if (!path || !g_file_test (path, G_FILE_TEST_EXISTS))
    return NULL;
  return hy_sidecar_load (path, error);
}

/* ---- writing ------------------------------------------------------------ */

static void
add_choice (JsonBuilder *b, const char *key, const char *const *names,
    int value)
{
  json_builder_set_member_name (b, key);
  json_builder_add_string_value (b, names[value]);
}

static void
add_channels (JsonBuilder *b, const char *key, const double *v, int n)
{
  json_builder_set_member_name (b, key);
  json_builder_begin_array (b);
  for (int i = 0; i < n; i++)
    json_builder_add_double_value (b, v[i]);
  json_builder_end_array (b);
}

char *
hy_sidecar_to_json (const hy_sidecar *s)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "sidecar_version");
  json_builder_add_int_value (b, 1);
  if (s->set & HY_SIDECAR_INPUT_NAME && s->input_name) {
    json_builder_set_member_name (b, "input_name");
    json_builder_add_string_value (b, s->input_name);
  }
  if (s->set & HY_SIDECAR_INPUT_SIZE) {
    json_builder_set_member_name (b, "input_size");
    if (s->input_width == HY_SIDECAR_SIZE_FRAME) {
      json_builder_add_string_value (b, "frame");
    } else {
      json_builder_begin_array (b);
      json_builder_add_int_value (b, s->input_width);
      json_builder_add_int_value (b, s->input_height);
      json_builder_end_array (b);
    }
  }
  if (s->set & HY_SIDECAR_COLOR_ORDER)
    add_choice (b, "color_order", color_names, s->bgr);
  if (s->set & HY_SIDECAR_SCALE)
    add_choice (b, "scale", scale_names, s->unit_scale);
  if (s->set & HY_SIDECAR_MEAN)
    add_channels (b, "mean", s->mean, s->n_mean);
  if (s->set & HY_SIDECAR_STD)
    add_channels (b, "std", s->std, s->n_std);
  if (s->set & HY_SIDECAR_RESIZE)
    add_choice (b, "resize", resize_names,
        s->resize == HY_RESIZE_LETTERBOX);
  if (s->set & HY_SIDECAR_INTERPOLATION)
    add_choice (b, "interpolation", interp_names,
        s->interpolation == HY_INTERP_NEAREST);
  if (s->set & HY_SIDECAR_OUTPUT)
    add_choice (b, "output", output_names, s->output);
  if (s->set & HY_SIDECAR_ACTIVATION)
    add_choice (b, "activation", activation_names, s->activation);
  if (s->set & HY_SIDECAR_THRESHOLD) {
    json_builder_set_member_name (b, "threshold");
    json_builder_add_double_value (b, s->threshold);
  }
  if (s->set & HY_SIDECAR_IOU_THRESHOLD) {
    json_builder_set_member_name (b, "iou_threshold");
    json_builder_add_double_value (b, s->iou_threshold);
  }
  if (s->set & HY_SIDECAR_TOP_K) {
    json_builder_set_member_name (b, "top_k");
    json_builder_add_int_value (b, s->top_k);
  }
  if (s->set & HY_SIDECAR_PARAMS && s->params_file) {
    json_builder_set_member_name (b, "params");
    json_builder_add_string_value (b, s->params_file);
  }
  if (s->set & HY_SIDECAR_LABELS && s->labels) {
    json_builder_set_member_name (b, "labels");
    json_builder_begin_array (b);
    for (char **l = s->labels; *l; l++)
      json_builder_add_string_value (b, *l);
    json_builder_end_array (b);
  } else if (s->set & HY_SIDECAR_LABELS && s->labels_file) {
    json_builder_set_member_name (b, "labels");
    json_builder_add_string_value (b, s->labels_file);
  }
  /* Notes last, as read: they are JSON already. */
  if (s->notes_json) {
    g_autoptr (JsonParser) p = json_parser_new ();
    if (json_parser_load_from_data (p, s->notes_json, -1, NULL)
        && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (p))) {
      JsonObject *notes = json_node_get_object (json_parser_get_root (p));
      g_autoptr (GList) members = json_object_get_members (notes);
      for (GList * m = members; m; m = m->next) {
        json_builder_set_member_name (b, m->data);
        json_builder_add_value (b,
            json_node_copy (json_object_get_member (notes, m->data)));
      }
    }
  }
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 2);
  json_generator_set_root (gen, root);
  char *text = json_generator_to_data (gen, NULL);
  char *with_newline = g_strconcat (text, "\n", NULL);
  g_free (text);
  return with_newline;
}

gboolean
hy_sidecar_save (const hy_sidecar *s, const char *path, GError **error)
{
  g_autofree char *text = hy_sidecar_to_json (s);
  GError *local = NULL;
  /* g_file_set_contents writes a temporary file and renames it. */
  if (!g_file_set_contents (path, text, -1, &local)) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO,
        "cannot write the sidecar %s: %s", path, local->message);
    g_error_free (local);
    return FALSE;
  }
  return TRUE;
}

/* One label a line, as the element's labels= reads them. */
static char **
labels_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!hy_file_read_bounded (path, "labels file", LABELS_MAX_BYTES, &text,
          &len, error))
    return NULL;
  if (!g_utf8_validate (text, (gssize) len, NULL)) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "labels file %s is not UTF-8 text", path);
    return NULL;
  }
  if (len && text[len - 1] == '\n')
    text[--len] = '\0';
  if (!len) {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
        "labels file %s is empty", path);
    return NULL;
  }
  char **lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++)
    g_strchomp (*l);
  return lines;
}

gboolean
hy_sidecar_save_for_prefix (const hy_sidecar *s, const char *prefix,
    GError **error)
{
  g_return_val_if_fail (s && prefix, FALSE);
  hy_sidecar copy = *s;
  g_auto (GStrv) labels = NULL;
  if (s->set & HY_SIDECAR_LABELS && !s->labels && s->labels_file) {
    labels = labels_load (s->labels_file, error);
    if (!labels) {
      g_prefix_error (error, "sidecar labels: ");
      return FALSE;
    }
    copy.labels = labels;
    copy.labels_file = NULL;
  }
  copy.set &= ~(unsigned) HY_SIDECAR_PARAMS;
  copy.params_file = NULL;
  g_autofree char *path = g_strconcat (prefix, SIDECAR_SUFFIX, NULL);
  return hy_sidecar_save (&copy, path, error);
}
