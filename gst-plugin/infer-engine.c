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
 *
 * A partial batch waits for the clients whose streams flow (the engine
 * has a list of its clients): those with a frame on the way (waiting for
 * a slot), and those that handed a frame over or got one back less than
 * their quiet_us ago.  The engine's thread wakes when the first of them
 * goes quiet, so a stream that stops without an EOS (a prerolled sink,
 * a camera that hangs) holds the others back for one bound, not for ever.
 */
#include <string.h>

#include <glib/gstdio.h>

#include "infer-engine.h"
#include "property-parse.h"

typedef struct _GstHybridEngine GstHybridEngine;

/* A file named in a key: two paths naming one file (relative and
 * absolute, through a link) are the same file. */
typedef struct {
  gchar *path;                  /* canonical; NULL: none */
  gboolean found;               /* stat() saw it: dev and ino say which */
  dev_t dev;
  ino_t ino;
} GstHybridEngineFile;

/* What an engine was made from, resolved: clients must agree on all of
 * it. */
typedef struct {
  GstHybridEngineFile model, params, labels;
  gchar *device, *input_name;
  gchar **labels_inline;        /* packed: one block */
  hy_precision precision;
  hy_qdq_mode qdq;
  int input_width, input_height;        /* the size its session runs */
  int default_width, default_height;    /* the model's default size */
  int batch;
  GstHybridOutput output;
  gfloat iou_threshold;
  GstHybridActivation activation;
} GstHybridEngineKey;

/* How long a client that has sent no frame yet counts as flowing after
 * joining: its first frame's quiet_us is not known yet, and a source may
 * take a moment to start. */
#define FIRST_FRAME_US (1000 * G_TIME_SPAN_MILLISECOND)

struct _GstHybridEngine {
  gchar *name;                  /* NULL: private to one client */
  GstHybridEngineKey key;
  GstHybridSession *session;
  int batch;
  GThread *thread;

  GMutex lock;
  GCond cond;                   /* any change below: broadcast */
  gboolean quit;
  GPtrArray *clients;           /* every client: whose frames a partial
                                 * batch may wait for */
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

  /* The frame in flight and the stream's state; engine lock. */
  int slot;                     /* -1: none */
  gboolean done;                /* its batch ran: result or error is set */
  gboolean active;              /* the stream flows: off at EOS and
                                 * pausing, on with its next frame */
  gboolean flushing;            /* gst_hybrid_engine_client_set_flushing */
  gboolean waiting;             /* its thread waits for a free slot */
  gint64 seen_us;               /* a frame handed over or back, last */
  gint64 quiet_us;              /* its request's: counted until
                                 * seen_us + quiet_us */
  gint64 start_us;
  GstHybridEngineRequest request;
  GstHybridResult *result;
  GError *error;
};

/* The plan c's frame in flight is converted and read with: its request's
 * (a crop's), else the client's for its caps. */
static const hy_frame_plan *
plan_of (const GstHybridEngineClient *c)
{
  return c->request.plan ? c->request.plan : c->plan;
}

/* Named engines: name → GstHybridEngine. */
static GMutex registry_lock;
static GHashTable *registry;

/* ---- the key --------------------------------------------------------------- */

static void
file_init (GstHybridEngineFile *f, const char *path)
{
  GStatBuf st;
  memset (f, 0, sizeof *f);
  if (!path)
    return;
  f->path = g_canonicalize_filename (path, NULL);
  if (g_stat (f->path, &st) == 0) {
    f->found = TRUE;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
  }
}

static gboolean
same_file (const GstHybridEngineFile *a, const GstHybridEngineFile *b)
{
  if (!a->path || !b->path)
    return !a->path && !b->path;
  if (a->found && b->found)
    return a->dev == b->dev && a->ino == b->ino;
  return !strcmp (a->path, b->path);
}

/* The params file a config loads: the one it names, else the newest
 * beside its model (none: a model without weights). */
static void
params_init (GstHybridEngineFile *f, const GstHybridSessionConfig *c)
{
  gchar *found = c->params_path ? NULL
      : hy_model_find_params (c->model_path, NULL);
  file_init (f, c->params_path ? c->params_path : found);
  g_free (found);
}

/* Everything but the sizes, which need the session (key_set_sizes). */
static void
key_init (GstHybridEngineKey *k, const GstHybridSessionConfig *c)
{
  file_init (&k->model, c->model_path);
  params_init (&k->params, c);
  file_init (&k->labels, c->labels_path);
  k->labels_inline = c->labels ? hyg_strv_pack (c->labels, -1) : NULL;
  k->device = g_strdup (c->device ? c->device : "auto");
  k->input_name = g_strdup (c->input_name);
  k->precision = c->precision;
  k->qdq = c->qdq;
  k->batch = c->batch;
  k->output = c->output;
  k->iou_threshold = c->iou_threshold;
  k->activation = c->activation;
}

/* The input size `c` asks for, resolved against the model's default. */
static void
resolved_size (const GstHybridEngineKey *k, const GstHybridSessionConfig *c,
    int *width, int *height)
{
  *width = c->input_width;
  *height = c->input_height;
  if (c->input_width == GST_HYBRID_SESSION_SIZE_FROM_MODEL) {
    *width = k->default_width;
    *height = k->default_height;
  }
}

static void
key_set_sizes (GstHybridEngineKey *k, const GstHybridSessionConfig *c,
    const GstHybridSession *session)
{
  gst_hybrid_session_default_input_size (session, &k->default_width,
      &k->default_height);
  resolved_size (k, c, &k->input_width, &k->input_height);
}

static void
file_clear (GstHybridEngineFile *f)
{
  g_free (f->path);
}

static void
key_clear (GstHybridEngineKey *k)
{
  file_clear (&k->model);
  file_clear (&k->params);
  file_clear (&k->labels);
  g_free (k->labels_inline);     /* packed: hyg_strv_pack */
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

/* Which file `c` names that is not the key's, or NULL. */
static const char *
file_difference (const GstHybridEngineKey *k, const GstHybridSessionConfig *c)
{
  GstHybridEngineFile model, params, labels;
  const char *what = NULL;
  file_init (&model, c->model_path);
  params_init (&params, c);
  file_init (&labels, c->labels_path);
  if (!same_file (&k->model, &model))
    what = "model";
  else if (!same_file (&k->params, &params))
    what = "params";
  else if (!same_file (&k->labels, &labels))
    what = "labels";
  file_clear (&model);
  file_clear (&params);
  file_clear (&labels);
  return what;
}

/* What `c` asks for that the engine was not made for, or NULL. */
static const char *
key_difference (const GstHybridEngineKey *k, const GstHybridSessionConfig *c)
{
  const char *what = file_difference (k, c);
  int width, height;
  if (what)
    return what;
  if (!same_strv (k->labels_inline, c->labels))
    return "labels";
  if (g_strcmp0 (k->device, c->device ? c->device : "auto"))
    return "device";
  if (g_strcmp0 (k->input_name, c->input_name))
    return "input-name";
  if (k->precision != c->precision)
    return "precision";
  if (k->qdq != c->qdq)
    return "qdq";
  resolved_size (k, c, &width, &height);
  if (k->input_width != width || k->input_height != height)
    return "input-size";
  if (k->batch != c->batch)
    return "batch-size";
  if (k->output != c->output)
    return "output";
  if (k->iou_threshold != c->iou_threshold)
    return "iou-threshold";
  if (k->activation != c->activation)
    return "output-activation";
  return NULL;
}

/* ---- the engine's thread ------------------------------------------------- */

/* c's frame is in the batch being gathered (or running).  Engine lock
 * held. */
static gboolean
in_batch (const GstHybridEngineClient *c)
{
  return c->slot >= 0 && !c->done;
}

/* Until when a partial batch waits for the next frame of c, which has
 * none in it: 0 not at all, G_MAXINT64 until it comes.  Engine lock
 * held. */
static gint64
awaited_until (const GstHybridEngineClient *c)
{
  if (!c->active || c->flushing)
    return 0;
  if (c->waiting)
    return G_MAXINT64;
  return c->seen_us + c->quiet_us;
}

/* Whether the gathered batch runs now; when not, *wake is when it will
 * without any other change (0: only on a change).  Engine lock held. */
static gboolean
batch_ready (const GstHybridEngine *e, gint64 now, gint64 *wake)
{
  gboolean awaited = FALSE;
  gint64 until = e->deadline ? e->deadline : G_MAXINT64;
  *wake = 0;
  if (e->committed == 0 || e->committed < e->reserved)
    return FALSE;
  if (e->committed == e->batch || (e->deadline && now >= e->deadline))
    return TRUE;
  for (guint i = 0; i < e->clients->len; i++) {
    const GstHybridEngineClient *c = g_ptr_array_index (e->clients, i);
    if (in_batch (c)) {
      /* a state change or a flush waits for this batch */
      if (c->flushing)
        return TRUE;
      continue;
    }
    gint64 t = awaited_until (c);
    if (t > now) {
      awaited = TRUE;
      until = MIN (until, t);
    }
  }
  if (!awaited)
    return TRUE;
  *wake = until == G_MAXINT64 ? 0 : until;
  return FALSE;
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
    c->result = gst_hybrid_session_result (e->session, i, plan_of (c),
        &details,
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
    gint64 wake;
    if (!batch_ready (e, g_get_monotonic_time (), &wake)) {
      if (wake)
        g_cond_wait_until (&e->cond, &e->lock, wake);
      else
        g_cond_wait (&e->cond, &e->lock);
      continue;
    }
    int n = e->committed;
    e->running = TRUE;
    g_mutex_unlock (&e->lock);
    run_batch (e, n);
    g_mutex_lock (&e->lock);
    /* a result handed back is a sign of life: the stream's next frame
     * is due from now on */
    gint64 now = g_get_monotonic_time ();
    for (int i = 0; i < n; i++) {
      e->slots[i]->done = TRUE;
      e->slots[i]->seen_us = now;
    }
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
  g_ptr_array_unref (e->clients);
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
  e->clients = g_ptr_array_new ();
  key_init (&e->key, config);
  e->session = gst_hybrid_session_new (config, device_note, error);
  if (!e->session)
    goto fail;
  key_set_sizes (&e->key, config, e->session);
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
          "its model, params, labels, device, precision, qdq, input-name, "
          "input-size, batch-size, output and output-activation", name,
          e->key.model.path, what);
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
  c->seen_us = g_get_monotonic_time ();
  c->quiet_us = FIRST_FRAME_US;
  g_mutex_lock (&e->lock);
  g_ptr_array_add (e->clients, c);
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
  /* nothing waits for c any more, and a batch holding its frame runs */
  c->active = FALSE;
  c->flushing = TRUE;
  g_cond_broadcast (&e->cond);
  while (in_batch (c))
    g_cond_wait (&e->cond, &e->lock);
  g_ptr_array_remove (e->clients, c);
  last = e->clients->len == 0;
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
  c->active = FALSE;
  g_cond_broadcast (&e->cond);
  g_mutex_unlock (&e->lock);
}

void
gst_hybrid_engine_client_set_flushing (GstHybridEngineClient *c,
    gboolean flushing)
{
  GstHybridEngine *e = c->engine;
  g_mutex_lock (&e->lock);
  c->flushing = flushing;
  g_cond_broadcast (&e->cond);
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

const GstHybridPrep *
gst_hybrid_engine_client_prep (const GstHybridEngineClient *c)
{
  return &c->prep;
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
  /* an int8 model's frames go in quantized (the clients then convert
   * into its int8 input); decided here, where no client converts yet */
  if (e->reserved == 0)
    gst_hybrid_session_begin_batch (e->session, HY_MODE_HYBRID);
  c->slot = e->reserved++;
  e->slots[c->slot] = c;
  c->done = FALSE;
  c->request = *request;
  c->start_us = g_get_monotonic_time ();
  c->active = TRUE;
  c->seen_us = c->start_us;
  c->quiet_us = request->quiet_us;
}

/* Converts c's frame into its slot (no lock: the slot is c's alone and no
 * forward can start before it is committed), then commits it. */
static void
load_and_commit (GstHybridEngineClient *c, const uint8_t *const planes[3],
    const int strides[3])
{
  GstHybridEngine *e = c->engine;
  gst_hybrid_session_load_with (e->session, plan_of (c), c->slot, planes,
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

/* Drops c's frame of before (try_submit's, unread, or one a flush left
 * in its batch) once its batch has run: the new frame supersedes it.
 * FALSE when c is set flushing first.  Engine lock held. */
static gboolean
drop_previous (GstHybridEngineClient *c)
{
  GstHybridEngine *e = c->engine;
  if (c->slot < 0)
    return TRUE;
  while (!c->done && !c->flushing)
    g_cond_wait (&e->cond, &e->lock);
  if (!c->done)
    return FALSE;
  g_clear_pointer (&c->result, gst_hybrid_result_unref);
  g_clear_error (&c->error);
  c->slot = -1;
  return TRUE;
}

/* Waits for a slot: no forward running and the batch not full.  The
 * stream counts as flowing meanwhile, however long the forward takes (its
 * frame is right there).  FALSE when c is set flushing first.  Engine
 * lock held. */
static gboolean
wait_for_slot (GstHybridEngineClient *c)
{
  GstHybridEngine *e = c->engine;
  c->active = TRUE;
  c->waiting = TRUE;
  while (!c->flushing && (e->running || e->reserved == e->batch))
    g_cond_wait (&e->cond, &e->lock);
  c->waiting = FALSE;
  return !c->flushing;
}

GstFlowReturn
gst_hybrid_engine_client_infer (GstHybridEngineClient *c,
    const uint8_t *const planes[3], const int strides[3],
    const GstHybridEngineRequest *request, GstHybridResult **result,
    GError **error)
{
  GstHybridEngine *e = c->engine;
  *result = NULL;
  g_mutex_lock (&e->lock);
  if (!drop_previous (c) || !wait_for_slot (c)) {
    g_mutex_unlock (&e->lock);
    return GST_FLOW_FLUSHING;
  }
  reserve (c, request);
  g_mutex_unlock (&e->lock);
  load_and_commit (c, planes, strides);
  g_mutex_lock (&e->lock);
  while (!c->done && !c->flushing)
    g_cond_wait (&e->cond, &e->lock);
  /* flushing, even if the batch ran meanwhile: the frame runs with its
   * batch (leave() or the next frame waits for it) and its result goes
   * nowhere, so a flush always ends the same way */
  GstFlowReturn ret = GST_FLOW_FLUSHING;
  if (!c->flushing) {
    *result = take (c, error);
    ret = *result ? GST_FLOW_OK : GST_FLOW_ERROR;
  }
  g_mutex_unlock (&e->lock);
  return ret;
}

gboolean
gst_hybrid_engine_client_settle (GstHybridEngineClient *c)
{
  GstHybridEngine *e = c->engine;
  g_mutex_lock (&e->lock);
  gboolean ok = drop_previous (c);
  g_mutex_unlock (&e->lock);
  return ok;
}

gboolean
gst_hybrid_engine_client_try_submit (GstHybridEngineClient *c,
    const uint8_t *const planes[3], const int strides[3],
    const GstHybridEngineRequest *request)
{
  GstHybridEngine *e = c->engine;
  g_mutex_lock (&e->lock);
  /* a frame skipped because the engine is busy still says the stream
   * flows */
  c->active = TRUE;
  c->seen_us = g_get_monotonic_time ();
  c->quiet_us = request->quiet_us;
  if (c->flushing || c->slot >= 0 || e->running || e->reserved == e->batch) {
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
