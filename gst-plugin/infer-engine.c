/*
 * infer-engine.c — a session on its own thread, shared by name
 * (infer-engine.h).
 *
 * One lock per engine guards the batch being gathered (which client holds
 * which slot, how many are converted) and every client's frame in flight.
 * A batch is gathered only while no forward runs: the clients convert
 * straight into the session's one input tensor, so a slot is written only
 * between two forwards.  For the models this is for, converting a frame
 * costs a small fraction of its share of the forward (a 720p frame to
 * 224×224, ~0.3 ms, against ~15 ms of ResNet-18 per frame), which is what
 * the gathering phase adds to each batch.
 */
#include <string.h>

#include "infer-engine.h"

typedef struct _GstHybridEngine GstHybridEngine;

/* What an engine was made from: clients must agree on all of it. */
typedef struct {
  gchar *model, *params, *labels, *device, *input_name;
  gchar **labels_inline;
  hy_precision precision;
  int input_width, input_height, batch;
  GstHybridOutput output;
  GstHybridActivation activation;
} GstHybridEngineKey;

struct _GstHybridEngine {
  gchar *name;                  /* NULL: private to one client */
  GstHybridEngineKey key;
  GstHybridSession *session;
  int batch;
  GThread *thread;

  GMutex lock;
  GCond cond;                   /* any change below: broadcast */
  gboolean quit;
  guint n_clients;
  guint n_active;               /* clients whose stream flows: a partial
                                 * batch waits for their frames only */
  gboolean running;             /* a forward runs: no slot may be written */
  GstHybridEngineClient **slots;        /* the batch being gathered */
  int reserved;                 /* slots taken */
  int committed;                /* slots whose frame is converted */
  gint64 deadline;              /* monotonic us; 0: none */
};

struct _GstHybridEngineClient {
  GstHybridEngine *engine;
  GstHybridPrep prep;
  hy_frame_plan *plan;

  /* The frame in flight; engine lock. */
  int slot;                     /* -1: none */
  gboolean done;                /* its batch ran: result or error is set */
  gboolean active;              /* counted in n_active */
  gint64 start_us;
  GstHybridEngineRequest request;
  GstHybridResult *result;
  GError *error;
};

/* Named engines: name → GstHybridEngine. */
static GMutex registry_lock;
static GHashTable *registry;

/* ---- the key --------------------------------------------------------------- */

static void
key_init (GstHybridEngineKey *k, const GstHybridSessionConfig *c)
{
  k->model = g_strdup (c->model_path);
  k->params = g_strdup (c->params_path);
  k->labels = g_strdup (c->labels_path);
  k->labels_inline = g_strdupv ((gchar **) c->labels);
  k->device = g_strdup (c->device ? c->device : "auto");
  k->input_name = g_strdup (c->input_name);
  k->precision = c->precision;
  k->input_width = c->input_width;
  k->input_height = c->input_height;
  k->batch = c->batch;
  k->output = c->output;
  k->activation = c->activation;
}

static void
key_clear (GstHybridEngineKey *k)
{
  g_free (k->model);
  g_free (k->params);
  g_free (k->labels);
  g_strfreev (k->labels_inline);
  g_free (k->device);
  g_free (k->input_name);
}

static gboolean
same_strv (gchar **a, const char *const *b)
{
  if (!a || !b)
    return !a && !b;
  return g_strv_equal ((const gchar * const *) a, (const gchar * const *) b);
}

/* What `c` asks for that the engine was not made for, or NULL. */
static const char *
key_difference (const GstHybridEngineKey *k, const GstHybridSessionConfig *c)
{
  if (g_strcmp0 (k->model, c->model_path))
    return "model";
  if (g_strcmp0 (k->params, c->params_path))
    return "params";
  if (g_strcmp0 (k->labels, c->labels_path)
      || !same_strv (k->labels_inline, c->labels))
    return "labels";
  if (g_strcmp0 (k->device, c->device ? c->device : "auto"))
    return "device";
  if (g_strcmp0 (k->input_name, c->input_name))
    return "input-name";
  if (k->precision != c->precision)
    return "precision";
  if (k->input_width != c->input_width || k->input_height != c->input_height)
    return "input-size";
  if (k->batch != c->batch)
    return "batch-size";
  if (k->output != c->output)
    return "output";
  if (k->activation != c->activation)
    return "output-activation";
  return NULL;
}

/* ---- the engine's thread ------------------------------------------------- */

/* Engine lock held. */
static gboolean
batch_ready (const GstHybridEngine *e, gint64 now)
{
  if (e->committed == 0 || e->committed < e->reserved)
    return FALSE;
  return e->committed == e->batch || (guint) e->committed >= e->n_active
      || (e->deadline && now >= e->deadline);
}

/* Runs the gathered batch of n frames and gives each client its result.
 * Engine lock not held: `running` keeps the slots and the clients' frames
 * still. */
static void
run_batch (GstHybridEngine *e, int n)
{
  GError *error = NULL;
  gboolean ok = gst_hybrid_session_forward (e->session, HY_MODE_HYBRID,
      NULL, NULL, &error);
  gint64 now = g_get_monotonic_time ();
  for (int i = 0; i < n; i++) {
    GstHybridEngineClient *c = e->slots[i];
    if (!ok) {
      c->error = g_error_copy (error);
      continue;
    }
    gboolean grew;
    GstHybridResultFrame details = c->request.frame;
    details.latency_us = (gdouble) (now - c->start_us);
    c->result = gst_hybrid_session_result (e->session, i, c->plan, &details,
        c->request.top_k, c->request.threshold,
        &c->request.class_thresholds, &grew);
  }
  g_clear_error (&error);
}

static gpointer
engine_thread (gpointer data)
{
  GstHybridEngine *e = data;
  g_mutex_lock (&e->lock);
  while (!e->quit) {
    gint64 now = g_get_monotonic_time ();
    if (!batch_ready (e, now)) {
      if (e->deadline && e->committed && e->committed == e->reserved)
        g_cond_wait_until (&e->cond, &e->lock, e->deadline);
      else
        g_cond_wait (&e->cond, &e->lock);
      continue;
    }
    int n = e->committed;
    e->running = TRUE;
    g_mutex_unlock (&e->lock);
    run_batch (e, n);
    g_mutex_lock (&e->lock);
    for (int i = 0; i < n; i++)
      e->slots[i]->done = TRUE;
    e->reserved = e->committed = 0;
    e->deadline = 0;
    e->running = FALSE;
    g_cond_broadcast (&e->cond);
  }
  g_mutex_unlock (&e->lock);
  return NULL;
}

/* ---- making and ending engines ------------------------------------------ */

static void
engine_free (GstHybridEngine *e)
{
  if (e->thread) {
    g_mutex_lock (&e->lock);
    e->quit = TRUE;
    g_cond_broadcast (&e->cond);
    g_mutex_unlock (&e->lock);
    g_thread_join (e->thread);
  }
  gst_hybrid_session_free (e->session);
  key_clear (&e->key);
  g_free (e->slots);
  g_free (e->name);
  g_mutex_clear (&e->lock);
  g_cond_clear (&e->cond);
  g_free (e);
}

static GstHybridEngine *
engine_new (const char *name, const GstHybridSessionConfig *config,
    char **device_note, GError **error)
{
  GstHybridEngine *e = g_new0 (GstHybridEngine, 1);
  g_mutex_init (&e->lock);
  g_cond_init (&e->cond);
  e->name = g_strdup (name);
  key_init (&e->key, config);
  e->session = gst_hybrid_session_new (config, device_note, error);
  if (!e->session)
    goto fail;
  if (gst_hybrid_session_follows_frame (e->session)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "input-size=frame "
        "cannot run on an engine (skip-when-busy, shared-engine): its input "
        "has one size, set input-size to it");
    goto fail;
  }
  e->batch = gst_hybrid_session_batch (e->session);
  e->slots = g_new0 (GstHybridEngineClient *, e->batch);
  e->thread = g_thread_new (name ? name : "hybridinfer-engine",
      engine_thread, e);
  return e;

fail:
  engine_free (e);
  return NULL;
}

GstHybridEngineClient *
gst_hybrid_engine_join (const char *name, const GstHybridSessionConfig *config,
    const GstHybridPrep *prep, char **device_note, GError **error)
{
  GstHybridEngine *e = NULL;
  *device_note = NULL;
  g_mutex_lock (&registry_lock);
  if (name) {
    if (!registry)
      registry = g_hash_table_new (g_str_hash, g_str_equal);
    e = g_hash_table_lookup (registry, name);
  }
  if (e) {
    const char *what = key_difference (&e->key, config);
    if (what) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "shared-engine '%s' "
          "already runs %s with another %s: elements on one engine share "
          "its model, params, labels, device, precision, input-name, "
          "input-size, batch-size, output and output-activation", name, e->key.model, what);
      g_mutex_unlock (&registry_lock);
      return NULL;
    }
  } else {
    /* Loading under the registry lock: a second element naming this
     * engine waits for the model rather than loading its own copy. */
    e = engine_new (name, config, device_note, error);
    if (!e) {
      g_mutex_unlock (&registry_lock);
      return NULL;
    }
    if (name)
      g_hash_table_insert (registry, e->name, e);
  }
  GstHybridEngineClient *c = g_new0 (GstHybridEngineClient, 1);
  c->engine = e;
  c->prep = *prep;
  c->slot = -1;
  c->active = TRUE;
  g_mutex_lock (&e->lock);
  e->n_clients++;
  e->n_active++;
  g_mutex_unlock (&e->lock);
  g_mutex_unlock (&registry_lock);
  return c;
}

void
gst_hybrid_engine_leave (GstHybridEngineClient *c)
{
  if (!c)
    return;
  GstHybridEngine *e = c->engine;
  gboolean last;
  g_mutex_lock (&registry_lock);
  g_mutex_lock (&e->lock);
  if (c->active)
    e->n_active--;
  c->active = FALSE;
  /* fewer clients to wait for: a batch holding c's frame can run */
  g_cond_broadcast (&e->cond);
  while (c->slot >= 0 && !c->done)
    g_cond_wait (&e->cond, &e->lock);
  last = --e->n_clients == 0;
  /* fewer clients: a partial batch may be complete now */
  g_cond_broadcast (&e->cond);
  g_mutex_unlock (&e->lock);
  if (last && e->name)
    g_hash_table_remove (registry, e->name);
  g_mutex_unlock (&registry_lock);
  if (last)
    engine_free (e);
  g_clear_pointer (&c->result, gst_hybrid_result_unref);
  g_clear_error (&c->error);
  hy_frame_plan_free (c->plan);
  g_free (c);
}

guint
gst_hybrid_engine_count (void)
{
  g_mutex_lock (&registry_lock);
  guint n = registry ? g_hash_table_size (registry) : 0;
  g_mutex_unlock (&registry_lock);
  return n;
}

/* ---- a client's frames --------------------------------------------------- */

void
gst_hybrid_engine_client_idle (GstHybridEngineClient *c)
{
  GstHybridEngine *e = c->engine;
  g_mutex_lock (&e->lock);
  if (c->active) {
    c->active = FALSE;
    e->n_active--;
    g_cond_broadcast (&e->cond);
  }
  g_mutex_unlock (&e->lock);
}

gboolean
gst_hybrid_engine_client_set_frame (GstHybridEngineClient *c,
    hy_pixel_layout layout, int width, int height, float yuv_kr,
    float yuv_kb, bool yuv_full_range, GError **error)
{
  /* The session's input shape is fixed while the engine lives: reading it
   * here needs no lock. */
  hy_frame_plan *plan = gst_hybrid_session_plan_frames (c->engine->session,
      &c->prep, layout, width, height, yuv_kr, yuv_kb, yuv_full_range,
      error);
  if (!plan)
    return FALSE;
  hy_frame_plan_free (c->plan);
  c->plan = plan;
  return TRUE;
}

gboolean
gst_hybrid_engine_client_has_frame (const GstHybridEngineClient *c)
{
  return c->plan != NULL;
}

const GstHybridSession *
gst_hybrid_engine_client_session (const GstHybridEngineClient *c)
{
  return c->engine->session;
}

/* Takes the next slot for c's frame.  Engine lock held; a slot is free
 * and no forward runs. */
static void
reserve (GstHybridEngineClient *c, const GstHybridEngineRequest *request)
{
  GstHybridEngine *e = c->engine;
  c->slot = e->reserved++;
  e->slots[c->slot] = c;
  if (!c->active) {
    c->active = TRUE;
    e->n_active++;
  }
  c->done = FALSE;
  c->request = *request;
  c->start_us = g_get_monotonic_time ();
}

/* Converts c's frame into its slot (no lock: the slot is c's alone and no
 * forward can start before it is committed), then commits it. */
static void
load_and_commit (GstHybridEngineClient *c, const uint8_t *const planes[3],
    const int strides[3])
{
  GstHybridEngine *e = c->engine;
  gst_hybrid_session_load_with (e->session, c->plan, c->slot, planes,
      strides);
  g_mutex_lock (&e->lock);
  e->committed++;
  if (c->request.timeout_ms) {
    gint64 deadline = g_get_monotonic_time ()
        + (gint64) c->request.timeout_ms * G_TIME_SPAN_MILLISECOND;
    if (!e->deadline || deadline < e->deadline)
      e->deadline = deadline;
  }
  g_cond_broadcast (&e->cond);
  g_mutex_unlock (&e->lock);
}

/* The finished frame's outcome, and c free for the next.  Engine lock
 * held. */
static GstHybridResult *
take (GstHybridEngineClient *c, GError **error)
{
  GstHybridResult *result = c->result;
  c->result = NULL;
  if (c->error)
    g_propagate_error (error, c->error);
  c->error = NULL;
  c->slot = -1;
  return result;
}

GstHybridResult *
gst_hybrid_engine_client_infer (GstHybridEngineClient *c,
    const uint8_t *const planes[3], const int strides[3],
    const GstHybridEngineRequest *request, GError **error)
{
  GstHybridEngine *e = c->engine;
  GstHybridResult *result;
  g_mutex_lock (&e->lock);
  /* an unread frame of try_submit's: its result is superseded */
  if (c->slot >= 0) {
    while (!c->done)
      g_cond_wait (&e->cond, &e->lock);
    g_clear_pointer (&c->result, gst_hybrid_result_unref);
    g_clear_error (&c->error);
    c->slot = -1;
  }
  while (e->running || e->reserved == e->batch)
    g_cond_wait (&e->cond, &e->lock);
  reserve (c, request);
  g_mutex_unlock (&e->lock);
  load_and_commit (c, planes, strides);
  g_mutex_lock (&e->lock);
  while (!c->done)
    g_cond_wait (&e->cond, &e->lock);
  result = take (c, error);
  g_mutex_unlock (&e->lock);
  return result;
}

gboolean
gst_hybrid_engine_client_try_submit (GstHybridEngineClient *c,
    const uint8_t *const planes[3], const int strides[3],
    const GstHybridEngineRequest *request)
{
  GstHybridEngine *e = c->engine;
  g_mutex_lock (&e->lock);
  if (c->slot >= 0 || e->running || e->reserved == e->batch) {
    g_mutex_unlock (&e->lock);
    return FALSE;
  }
  reserve (c, request);
  g_mutex_unlock (&e->lock);
  load_and_commit (c, planes, strides);
  return TRUE;
}

GstHybridResult *
gst_hybrid_engine_client_take_result (GstHybridEngineClient *c,
    GError **error)
{
  GstHybridEngine *e = c->engine;
  GstHybridResult *result = NULL;
  g_mutex_lock (&e->lock);
  if (c->slot >= 0 && c->done)
    result = take (c, error);
  g_mutex_unlock (&e->lock);
  return result;
}
