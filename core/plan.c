/*
 * plan.c — a hybridized model: the optimised graph, one arena, and a flat
 * list of kernel calls whose tensors point into it.
 *
 * Building a plan (once per input shape):
 *
 *  1. The model's graph is copied and the passes run on the copy.
 *  2. Every node output (a "value") gets a storage: a bound weight, a
 *     caller's input, a slot of the arena, or nothing (an input that is
 *     never read).  Views — Reshape, Flatten, expand_dims, squeeze and the
 *     identities — share their input's storage and cost no call at all; an
 *     inplace op writes into input 0's storage when that storage dies at
 *     this very node.
 *  3. Each arena storage lives from the step that first writes it to the
 *     last step that reads any value sharing it (graph outputs: to the
 *     end), and the planner (planner.h) packs them.
 *  4. Every value gets a hy_tensor struct pointing into its storage, and
 *     each call lists those structs.
 *
 * Running is then a loop over the calls, handed to the backend (which may
 * record the loop once and replay it: a CUDA graph).  On a host-memory
 * backend the caller's inputs are not copied: the structs of input
 * variables, and of views of them, are re-pointed at the caller's data on
 * each forward.  Graph outputs always get an arena slot of their own (a
 * copy is appended when an output would otherwise be an input or a
 * weight), so what the caller reads stays ours.
 *
 * On a device backend the arena is device memory, the weights are
 * uploaded once when the plan is built, each input gets an arena slot of
 * its own that the forward uploads into, and each output a host mirror
 * the forward downloads into: one copy in and one out per forward.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/plan-impl.h"
#include "core/planner.h"
#include "core/plan-chain.h"
#include "core/plan-segment.h"
#include "core/backend.h"
#include "kernels/params/quantized.h"

typedef enum storage_kind {
  STORAGE_NONE,                 /* an input nobody reads (a label) */
  STORAGE_ARENA,
  STORAGE_INPUT,                /* the caller's data, re-pointed per run */
  STORAGE_CONST,                /* a weight or folded constant */
} storage_kind;

typedef struct storage {
  storage_kind kind;
  int input;                    /* STORAGE_INPUT: model input index */
  float *data;                  /* STORAGE_CONST */
  size_t bytes;                 /* STORAGE_ARENA: */
  int first;                    /*   the step that writes it first */
  int last;                     /*   the last step that reads it */
  size_t offset;
} storage;

/* Sizes as the planner counts them. */
#define HY_ALIGN_UP(bytes) \
  (((bytes) + HY_PLANNER_ALIGN - 1) & ~(size_t) (HY_PLANNER_ALIGN - 1))

/* Graph outputs live past the last node; output copies run at `n_nodes`. */
#define STEP_AFTER_ALL(g) ((int) hy_graph_n_nodes (g) + 1)

/* The state of one build; freed when the plan is done. */
typedef struct plan_builder {
  const hy_model *model;
  hy_graph *graph;
  hy_backend *backend;
  gboolean host_memory;         /* the backend's tensors are host memory */
  guint *first_value;           /* per node: index of its output 0 */
  guint n_values;
  int *value_last;              /* per value: the last step that reads it */
  gboolean *fusable;            /* per node: the second of a pair the
                                 * backend may run as one call, its first's
                                 * inputs kept live through it */
  size_t *private_bytes;        /* per value: its bytes in the backend's
                                 * own layout, or 0 (plan-segment.h) */
  int *chain_last;              /* per node: the last node of the chain
                                 * it starts, or -1 (plan-chain.h); NULL
                                 * where there are none */
  int *value_storage;           /* per value: index into storages */
  GArray *storages;             /* storage */
  GArray *call_nodes;           /* guint per call: its node, or G_MAXUINT
                                 * for an output copy */
  GArray *copies;               /* output_copy, in call order */
  int views;
  guint quantized_input_node;   /* a quantize node a caller may skip
                                 * (plan-quantized-input.c), or
                                 * G_MAXUINT */
  int quantized_input;          /* the model input it reads */
} plan_builder;

/* A graph output copied into the arena after the last node. */
typedef struct output_copy {
  guint source;                 /* the value copied */
  guint value;                  /* the copy: n_values + its rank */
  int storage;
} output_copy;

static guint
value_of (const plan_builder *b, const hy_entry *e)
{
  return b->first_value[e->node] + e->index;
}

static storage *
storage_of (const plan_builder *b, guint value)
{
  return &g_array_index (b->storages, storage, b->value_storage[value]);
}

static int
add_storage (plan_builder *b, storage s)
{
  g_array_append_val (b->storages, s);
  return (int) b->storages->len - 1;
}

static size_t
shape_bytes (const hy_shape *s)
{
  return (size_t) hy_shape_numel (s) * sizeof (float);
}

/* Storages the arena holds: op outputs, and on a device backend the
 * slots inputs are uploaded into. */
static gboolean
in_arena (const plan_builder *b, const storage *s)
{
  return s->kind == STORAGE_ARENA
      || (s->kind == STORAGE_INPUT && !b->host_memory);
}

/* How many node inputs and graph outputs read each value. */
static int *
count_readers (const plan_builder *b)
{
  const hy_graph *g = b->graph;
  int *readers = g_new0 (int, MAX (b->n_values, 1));
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    const hy_node *node = hy_graph_node (g, i);
    for (guint k = 0; k < node->n_inputs; k++)
      readers[value_of (b, &node->inputs[k])]++;
  }
  for (guint h = 0; h < g->n_heads; h++)
    readers[value_of (b, &g->heads[h])]++;
  return readers;
}

/* The calibrated _contrib_quantize_v2 that alone reads a model input (no
 * other node, no graph output), on a host-memory backend: a caller may
 * write its outputs itself and skip it (plan-quantized-input.c).  Its
 * outputs then live from step 0, so that no value before it shares their
 * memory: they are written before the forward starts.  G_MAXUINT if
 * there is none (the first found when there are several). */
static guint
find_quantized_input (const plan_builder *b, int *input)
{
  const hy_graph *g = b->graph;
  if (!b->host_memory)
    return G_MAXUINT;
  int *readers = count_readers (b);
  guint found = G_MAXUINT;
  for (guint i = 0; i < hy_graph_n_nodes (g) && found == G_MAXUINT; i++) {
    const hy_node *node = hy_graph_node (g, i);
    if (!node->op || node->op->id != HY_OP_QUANTIZE_V2 || node->n_inputs < 1
        || node->n_outputs != 3
        || !((const hy_quantize_params *) node->params)->calibrated)
      continue;
    const hy_node *src = hy_graph_node (g, node->inputs[0].node);
    if (!src->op && src->var_kind == HY_VAR_INPUT && !src->value
        && (*input = hy_model_input_index (b->model, src->name)) >= 0
        && readers[value_of (b, &node->inputs[0])] == 1)
      found = i;
  }
  g_free (readers);
  return found;
}

/* The plan's call for node `node` (find_quantized_input), which a caller
 * may skip (plan-quantized-input.c), with the node's own params: a
 * backend may have given the call params of its own. */
static void
mark_quantized_input (hy_plan *plan, guint node, int input,
    const hy_quantize_params *params)
{
  plan->has_quantized_input = FALSE;
  if (node == G_MAXUINT)
    return;
  plan->quantized_input_params = *params;
  for (int c = 0; c < plan->n_calls; c++) {
    /* a call fused with the one before it no longer runs alone */
    if (plan->call_nodes[c] != node || plan->call_first_nodes[c] != G_MAXUINT
        || plan->calls[c].n_out != 3)
      continue;
    plan->quantized_input = input;
    plan->quantized_input_call = c;
    plan->has_quantized_input = TRUE;
    return;
  }
}

/* The op node that reads node i's only output, and reads it once, as its
 * data (input 0); -1 if there is none. */
static int
sole_data_reader (const plan_builder *b, const int *readers, guint i)
{
  const hy_graph *g = b->graph;
  const hy_node *node = hy_graph_node (g, i);
  const hy_entry out = { i, 0 };
  if (node->n_outputs != 1 || readers[value_of (b, &out)] != 1)
    return -1;
  for (guint j = i + 1; j < hy_graph_n_nodes (g); j++) {
    const hy_node *r = hy_graph_node (g, j);
    for (guint k = 0; k < r->n_inputs; k++)
      if (r->inputs[k].node == i)
        return r->op && k == 0 ? (int) j : -1;
  }
  return -1;
}

/* Where the backend may run an op node and the node that alone reads its
 * output as one call (plan-fuse.c), the first's inputs stay live until
 * the second has run: the fused call reads them while it writes the
 * second's output, which must not take their place.  So do the inputs of
 * a chain's earlier calls, where the first is itself fusable with the
 * call before it. */
static void
keep_inputs_of_fusable_pairs (plan_builder *b)
{
  const hy_backend_iface *iface = b->backend->iface;
  if (!iface->fuse_calls || !iface->may_fuse)
    return;
  hy_graph *g = b->graph;
  int *readers = count_readers (b);
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    const hy_node *second = hy_graph_node (g, i);
    if (!second->op || second->n_inputs < 1 || second->n_outputs < 1)
      continue;
    const hy_entry *e = &second->inputs[0];
    const hy_node *first = hy_graph_node (g, e->node);
    if (!first->op || first->n_inputs < 1 || first->n_outputs != 1
        || e->index != 0 || readers[value_of (b, e)] != 1)
      continue;
    const hy_node *data = hy_graph_node (g, first->inputs[0].node);
    const hy_call_shape a = {
      first->op->id, first->params,
      &data->shapes[first->inputs[0].index], &first->shapes[0],
      b->fusable[e->node], NULL,
    };
    const int n = sole_data_reader (b, readers, i);
    const hy_node *third = n < 0 ? NULL : hy_graph_node (g, (guint) n);
    const hy_call_shape next = {
      third ? third->op->id : 0, third ? third->params : NULL,
      &second->shapes[0], third ? &third->shapes[0] : NULL, TRUE, NULL,
    };
    const hy_call_shape c = {
      second->op->id, second->params, &first->shapes[0], &second->shapes[0],
      FALSE, third ? &next : NULL,
    };
    if (!iface->may_fuse (b->backend, &a, &c))
      continue;
    b->fusable[i] = TRUE;
    /* Up the chain: a call fused with its own first reads that one's
     * inputs too. */
    for (guint f = e->node;; f = hy_graph_node (g, f)->inputs[0].node) {
      const hy_node *node = hy_graph_node (g, f);
      for (guint k = 0; k < node->n_inputs; k++) {
        const guint v = value_of (b, &node->inputs[k]);
        b->value_last[v] = MAX (b->value_last[v], (int) i);
      }
      if (!b->fusable[f])
        break;
    }
  }
  g_free (readers);
}

/* Numbers the values and finds each one's last reader. */
static void
compute_liveness (plan_builder *b)
{
  hy_graph *g = b->graph;
  guint n = hy_graph_n_nodes (g);
  b->first_value = g_new (guint, n);
  for (guint i = 0; i < n; i++) {
    b->first_value[i] = b->n_values;
    b->n_values += hy_graph_node (g, i)->n_outputs;
  }
  b->value_last = g_new (int, b->n_values);
  b->fusable = g_new0 (gboolean, MAX (n, 1));
  b->value_storage = g_new (int, b->n_values);
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < hy_graph_node (g, i)->n_outputs; k++)
      b->value_last[b->first_value[i] + k] = (int) i;
  for (guint i = 0; i < n; i++) {
    const hy_node *node = hy_graph_node (g, i);
    for (guint k = 0; node->op && k < node->n_inputs; k++) {
      guint v = value_of (b, &node->inputs[k]);
      b->value_last[v] = MAX (b->value_last[v], (int) i);
    }
  }
  for (guint h = 0; h < g->n_heads; h++)
    b->value_last[value_of (b, &g->heads[h])] = STEP_AFTER_ALL (g);
  keep_inputs_of_fusable_pairs (b);
}

static void
assign_variable (plan_builder *b, guint i, const hy_node *node)
{
  storage s = { .kind = STORAGE_NONE };
  if (node->value) {
    s.kind = STORAGE_CONST;
    s.data = node->value->data;
    s.bytes = hy_tensor_nbytes (node->value);
  } else if (node->var_kind == HY_VAR_INPUT) {
    s.input = hy_model_input_index (b->model, node->name);
    s.kind = s.input >= 0 ? STORAGE_INPUT : STORAGE_NONE;
    if (s.kind == STORAGE_INPUT && !b->host_memory) {
      /* Uploaded before the first call: live from step 0. */
      s.bytes = shape_bytes (&node->shapes[0]);
      s.first = 0;
      s.last = b->value_last[b->first_value[i]];
    }
  }
  b->value_storage[b->first_value[i]] = add_storage (b, s);
}

/* An inplace op may write into input 0's storage when nothing reads that
 * storage after this node, the sizes match, and no other input of the
 * node reads it too (add_n(x, y, x) would read x after overwriting it). */
static gboolean
can_write_in_place (const plan_builder *b, guint i, const hy_node *node)
{
  if (!node->op->def->inplace || node->n_inputs < 1)
    return FALSE;
  guint in0 = value_of (b, &node->inputs[0]);
  const storage *s = storage_of (b, in0);
  if (s->kind != STORAGE_ARENA || s->last != (int) i
      || s->bytes != shape_bytes (&node->shapes[0])
      || b->private_bytes[in0] || b->private_bytes[b->first_value[i]])
    return FALSE;
  for (guint k = 1; k < node->n_inputs; k++)
    if (b->value_storage[value_of (b, &node->inputs[k])]
        == b->value_storage[in0])
      return FALSE;
  return TRUE;
}

/* Makes `value` share the storage of `source`, extending its life. */
static void
alias (plan_builder *b, guint value, guint source)
{
  b->value_storage[value] = b->value_storage[source];
  storage *s = storage_of (b, source);
  if (in_arena (b, s))
    s->last = MAX (s->last, b->value_last[value]);
}

static void
assign_op (plan_builder *b, guint i, const hy_node *node)
{
  guint out0 = b->first_value[i];
  if (hy_op_is_view (node->op->id) && node->n_inputs >= 1
      && node->n_outputs == 1) {
    guint in0 = value_of (b, &node->inputs[0]);
    const hy_node *src = hy_graph_node (b->graph, node->inputs[0].node);
    if (storage_of (b, in0)->kind != STORAGE_NONE
        && shape_bytes (&src->shapes[node->inputs[0].index])
        == shape_bytes (&node->shapes[0])) {
      alias (b, out0, in0);
      b->views++;
      return;
    }
  }

  for (guint k = 0; k < node->n_outputs; k++) {
    guint v = out0 + k;
    if (k == 0 && can_write_in_place (b, i, node)) {
      alias (b, v, value_of (b, &node->inputs[0]));
      continue;
    }
    /* A value in the backend's own layout takes the bytes of that
     * layout (bf16: half a plane's). */
    storage s = {
      .kind = STORAGE_ARENA,
      .bytes = b->private_bytes[v] ? b->private_bytes[v]
          : shape_bytes (&node->shapes[k]),
      .first = i == b->quantized_input_node ? 0 : (int) i,
      .last = b->value_last[v],
    };
    b->value_storage[v] = add_storage (b, s);
  }
  g_array_append_val (b->call_nodes, i);
}

/* Graph outputs that are not in the arena (an input, a weight, or a view
 * of one) get an arena copy made after every node. */
static gboolean
add_output_copies (plan_builder *b, GError **error)
{
  hy_graph *g = b->graph;
  for (guint h = 0; h < g->n_heads; h++) {
    guint v = value_of (b, &g->heads[h]);
    const hy_node *src = hy_graph_node (g, g->heads[h].node);
    storage_kind kind = storage_of (b, v)->kind;
    if (kind == STORAGE_ARENA)
      continue;
    if (kind == STORAGE_NONE) {
      g_set_error (error, HY_ERROR, HY_ERROR_MISSING,
          "output %u is variable '%s', which is neither an input nor a "
          "parameter", h, src->name);
      return FALSE;
    }
    storage s = {
      .kind = STORAGE_ARENA,
      .bytes = shape_bytes (&src->shapes[g->heads[h].index]),
      .first = (int) hy_graph_n_nodes (g),
      .last = STEP_AFTER_ALL (g),
    };
    output_copy copy = { v, b->n_values + b->copies->len, add_storage (b, s) };
    g_array_append_val (b->copies, copy);
    guint none = G_MAXUINT;
    g_array_append_val (b->call_nodes, none);
  }
  return TRUE;
}

/* What allocating every op output (and output copy) on its own would
 * take: imperative mode's way, with no views and no in-place writes.  The
 * planner's own naive figure counts storages, after those merges. */
static size_t
naive_bytes (const plan_builder *b)
{
  size_t total = 0;
  for (guint i = 0; i < hy_graph_n_nodes (b->graph); i++) {
    const hy_node *node = hy_graph_node (b->graph, i);
    for (guint k = 0; node->op && k < node->n_outputs; k++)
      total += HY_ALIGN_UP (shape_bytes (&node->shapes[k]));
  }
  for (guint c = 0; c < b->copies->len; c++) {
    const output_copy *copy = &g_array_index (b->copies, output_copy, c);
    total += HY_ALIGN_UP (g_array_index (b->storages, storage,
            copy->storage).bytes);
  }
  return total;
}

/* Packs the arena storages and allocates the arena. */
static gboolean
place_storages (hy_plan *plan, plan_builder *b, GError **error)
{
  GArray *st = b->storages;
  hy_buffer_request *req = g_new0 (hy_buffer_request, st->len);
  size_t *offsets = g_new0 (size_t, st->len);
  guint n_req = 0;
  for (guint i = 0; i < st->len; i++) {
    const storage *s = &g_array_index (st, storage, i);
    if (in_arena (b, s))
      req[n_req++] = (hy_buffer_request) { s->bytes, s->first, s->last };
  }
  hy_arena_figures fig;
  hy_planner_place (req, n_req, offsets, &fig);
  plan->memory.arena_bytes = (gint64) fig.arena_bytes;
  plan->memory.naive_bytes = (gint64) naive_bytes (b);
  plan->memory.lower_bound_bytes = (gint64) fig.lower_bound_bytes;

  n_req = 0;
  for (guint i = 0; i < st->len; i++) {
    storage *s = &g_array_index (st, storage, i);
    if (in_arena (b, s))
      s->offset = offsets[n_req++];
  }
  g_free (req);
  g_free (offsets);

  size_t arena_bytes = MAX (fig.arena_bytes, (size_t) HY_PLANNER_ALIGN);
  plan->arena = plan->backend->iface->alloc (plan->backend, arena_bytes,
      error);
  if (!plan->arena)
    return FALSE;
  /* Every slot is written before it is read; zeroing only makes a stray
   * read deterministic. */
  if (plan->backend->iface->host_memory)
    memset (plan->arena, 0, arena_bytes);
  return TRUE;
}

/* Device backends: every weight and folded constant the calls read goes
 * into one device block, uploaded once, and its value structs are
 * re-pointed there. */
static gboolean
upload_consts (hy_plan *plan, plan_builder *b, GError **error)
{
  hy_backend *be = plan->backend;
  GArray *st = b->storages;
  size_t total = 0;
  for (guint i = 0; i < st->len; i++) {
    storage *s = &g_array_index (st, storage, i);
    if (s->kind == STORAGE_CONST) {
      s->offset = total;
      total += HY_ALIGN_UP (s->bytes);
    }
  }
  if (total == 0)
    return TRUE;
  plan->consts = be->iface->alloc (be, total, error);
  if (!plan->consts)
    return FALSE;
  for (guint i = 0; i < st->len; i++) {
    const storage *s = &g_array_index (st, storage, i);
    if (s->kind == STORAGE_CONST && s->bytes > 0
        && !be->iface->upload (be, (char *) plan->consts + s->offset, s->data,
            s->bytes, error))
      return FALSE;
  }
  plan->memory.weight_bytes = (gint64) total;
  return TRUE;
}

static hy_tensor *
tensor_of (hy_plan *plan, plan_builder *b, guint value)
{
  return storage_of (b, value)->kind == STORAGE_NONE
      ? NULL : &plan->values[value];
}

/* Points every value's tensor struct at its storage. */
static void
bind_values (hy_plan *plan, plan_builder *b)
{
  hy_graph *g = b->graph;
  guint n_copies = b->copies->len;
  plan->values = g_new0 (hy_tensor, b->n_values + n_copies);
  plan->bindings = g_new0 (input_binding, b->n_values);
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    const hy_node *node = hy_graph_node (g, i);
    for (guint k = 0; k < node->n_outputs; k++) {
      guint v = b->first_value[i] + k;
      const storage *s = storage_of (b, v);
      hy_tensor *t = &plan->values[v];
      t->shape = node->shapes[k];
      if (in_arena (b, s))
        t->data = (float *) ((char *) plan->arena + s->offset);
      else if (s->kind == STORAGE_CONST)
        t->data = plan->consts
            ? (float *) ((char *) plan->consts + s->offset) : s->data;
      /* Host memory: every struct viewing an input is re-pointed per
       * forward; device memory: each input is uploaded once, through
       * its variable's own struct. */
      if (s->kind == STORAGE_INPUT && (b->host_memory || !node->op))
        plan->bindings[plan->n_bindings++] = (input_binding) { t, s->input };
    }
  }
  for (guint c = 0; c < n_copies; c++) {
    const output_copy *copy = &g_array_index (b->copies, output_copy, c);
    const storage *s = &g_array_index (b->storages, storage, copy->storage);
    hy_tensor *t = &plan->values[copy->value];
    t->shape = plan->values[copy->source].shape;
    t->data = (float *) ((char *) plan->arena + s->offset);
  }
}

/* A value held in the backend's layout at 4 bytes an element. */
static gboolean
is_wide (const hy_plan *plan, const plan_builder *b, guint v)
{
  return b->private_bytes[v] >= shape_bytes (&plan->values[v].shape);
}

/* The plan's figures for the values held in the backend's layout: a
 * call that writes one from planes enters a segment (its data converted
 * on the way in), one that reads one and writes planes leaves it. */
static void
count_segment_edges (hy_plan *plan, const hy_call *call)
{
  if (call->private_outputs && !(call->private_inputs & 1u))
    plan->memory.segment_entries++;
  if (call->private_inputs && !call->private_outputs)
    plan->memory.segment_exits++;
}

static gboolean
build_calls (hy_plan *plan, plan_builder *b, GError **error)
{
  hy_graph *g = b->graph;
  guint n_calls = b->call_nodes->len, n_in = 0, n_out = 0, n_copies = 0;
  for (guint c = 0; c < n_calls; c++) {
    guint i = g_array_index (b->call_nodes, guint, c);
    n_in += i == G_MAXUINT ? 1 : hy_graph_node (g, i)->n_inputs;
    n_out += i == G_MAXUINT ? 1 : hy_graph_node (g, i)->n_outputs;
  }
  plan->calls = g_new0 (hy_call, n_calls);
  plan->call_nodes = g_new (guint, MAX (n_calls, 1));
  plan->call_first_nodes = g_new (guint, MAX (n_calls, 1));
  for (guint c = 0; c < n_calls; c++) {
    plan->call_nodes[c] = g_array_index (b->call_nodes, guint, c);
    plan->call_first_nodes[c] = G_MAXUINT;
  }
  /* Every call's bitset of constant inputs, one block: sized by its
   * inputs, made once here. */
  guint n_words = 0;
  for (guint c = 0; c < n_calls; c++) {
    guint i = g_array_index (b->call_nodes, guint, c);
    if (i != G_MAXUINT)
      n_words += (guint) hy_const_bits_words ((int) hy_graph_node (g, i)->n_inputs);
  }
  plan->call_const_bits = g_new0 (uint32_t, MAX (n_words, 1));
  uint32_t *const_bits = plan->call_const_bits;
  plan->call_in = g_new0 (const hy_tensor *, n_in + 1);
  plan->call_out = g_new0 (hy_tensor *, n_out + 1);
  const hy_tensor **in = plan->call_in;
  hy_tensor **out = plan->call_out;

  for (guint c = 0; c < n_calls; c++) {
    guint i = g_array_index (b->call_nodes, guint, c);
    hy_call *call = &plan->calls[c];
    call->in = in;
    call->out = out;
    if (i == G_MAXUINT) {
      const output_copy *copy = &g_array_index (b->copies, output_copy,
          n_copies++);
      call->fn = plan->backend->iface->copy_kernel;
      call->op = HY_OP_COUNT;
      *in++ = &plan->values[copy->source];
      *out++ = &plan->values[copy->value];
      call->n_in = call->n_out = 1;
      continue;
    }
    const hy_node *node = hy_graph_node (g, i);
    call->fn = plan->backend->iface->kernel_for (node->op->id);
    if (!call->fn) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "node '%s' (op %s): the %s backend has no kernel for this op",
          node->name, node->op->name, plan->backend->iface->name);
      return FALSE;
    }
    call->op = node->op->id;
    call->params = node->params;
    call->n_in = (int) node->n_inputs;
    call->n_out = (int) node->n_outputs;
    call->const_inputs = const_bits;
    for (guint k = 0; k < node->n_inputs; k++) {
      const guint v = value_of (b, &node->inputs[k]);
      if (storage_of (b, v)->kind == STORAGE_CONST)
        hy_const_bits_set (const_bits, (int) k);
      if (k < 32 && b->private_bytes[v]) {
        call->private_inputs |= (uint32_t) 1 << k;
        if (is_wide (plan, b, v))
          call->private_wide_inputs |= (uint32_t) 1 << k;
      }
      *in++ = tensor_of (plan, b, v);
    }
    for (guint k = 0; k < node->n_outputs; k++) {
      const guint v = b->first_value[i] + k;
      if (k < 32 && b->private_bytes[v]) {
        call->private_outputs |= (uint32_t) 1 << k;
        if (is_wide (plan, b, v))
          call->private_wide_outputs |= (uint32_t) 1 << k;
      }
      *out++ = &plan->values[v];
    }
    const_bits += hy_const_bits_words (call->n_in);
    count_segment_edges (plan, call);
  }
  plan->n_calls = (int) n_calls;

  plan->n_outputs = (int) g->n_heads;
  plan->outputs = g_new0 (const hy_tensor *, g->n_heads + 1);
  for (guint h = 0, c = 0; h < g->n_heads; h++) {
    guint v = value_of (b, &g->heads[h]);
    if (storage_of (b, v)->kind == STORAGE_ARENA)
      plan->outputs[h] = &plan->values[v];
    else      /* copies were made in head order */
      plan->outputs[h] = &plan->values[g_array_index (b->copies,
              output_copy, c++).value];
  }
  return TRUE;
}

/* Lets the backend set every call up (cuDNN algorithms, descriptors),
 * and run pairs of them as one where it can (plan-fuse.c): those whose
 * second node is marked in `fusable` (keep_inputs_of_fusable_pairs). */
static gboolean
prepare_calls (hy_plan *plan, const gboolean *fusable, GError **error)
{
  hy_backend *be = plan->backend;
  for (; be->iface->prepare_call && plan->n_prepared < plan->n_calls;
      plan->n_prepared++) {
    if (hy_plan_fuse_next (plan, plan->n_prepared, fusable)) {
      /* The fused call may take the next one in as well. */
      while (hy_plan_fuse_next (plan, plan->n_prepared, fusable))
        ;
      continue;
    }
    if (!be->iface->prepare_call (be, &plan->calls[plan->n_prepared], error))
      return FALSE;
  }
  return TRUE;
}

/* Device backends: a host tensor per graph output to download into. */
static gboolean
make_host_outputs (hy_plan *plan, GError **error)
{
  if (plan->backend->iface->host_memory)
    return TRUE;
  plan->host_outputs = g_new0 (hy_tensor *, plan->n_outputs + 1);
  for (int h = 0; h < plan->n_outputs; h++) {
    g_autofree char *what = g_strdup_printf ("the host copy of output %d",
        h);
    plan->host_outputs[h] = hy_tensor_try_new (&plan->outputs[h]->shape,
        what, error);
    if (!plan->host_outputs[h])
      return FALSE;
  }
  return TRUE;
}

static void
builder_clear (plan_builder *b)
{
  g_free (b->first_value);
  g_free (b->value_last);
  g_free (b->fusable);
  g_free (b->private_bytes);
  g_free (b->chain_last);
  g_free (b->value_storage);
  g_array_unref (b->storages);
  g_array_unref (b->call_nodes);
  g_array_unref (b->copies);
}

hy_plan *
hy_plan_build (const hy_shapes *shapes, hy_backend *backend, GError **error)
{
  const hy_model *model = hy_shapes_model (shapes);
  if (!hy_shapes_inferred (shapes)) {
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "cannot plan '%s': its shapes are not inferred yet",
        hy_model_symbol_path (model));
    return NULL;
  }
  hy_plan *plan = g_new0 (hy_plan, 1);
  plan->backend = backend;
  plan->owned = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  plan->fused_args = g_ptr_array_new_with_free_func (g_free);
  plan->graph = hy_graph_copy (hy_shapes_graph (shapes));
  if (!hy_passes_run (plan->graph, plan->owned, &plan->pass_stats, error)) {
    hy_plan_free (plan);
    return NULL;
  }

  plan_builder b = {
    .model = model,
    .graph = plan->graph,
    .backend = backend,
    .host_memory = backend->iface->host_memory,
    .storages = g_array_new (FALSE, TRUE, sizeof (storage)),
    .call_nodes = g_array_new (FALSE, FALSE, sizeof (guint)),
    .copies = g_array_new (FALSE, FALSE, sizeof (output_copy)),
  };
  compute_liveness (&b);
  b.quantized_input_node = find_quantized_input (&b, &b.quantized_input);
  const hy_segment_input seg = {
    b.graph, backend, b.first_value, b.n_values, b.value_last,
    STEP_AFTER_ALL (b.graph), b.fusable,
  };
  b.private_bytes = hy_plan_private_values (&seg);
  b.chain_last = hy_plan_find_chains (&seg, b.private_bytes, b.value_last);
  plan->value_private = g_new0 (guint8, b.n_values + 1);
  plan->n_value_private = b.n_values;
  for (guint v = 0; v < b.n_values; v++)
    if (b.private_bytes[v]) {
      plan->value_private[v] = 1;
      plan->memory.segment_values++;
    }
  for (guint i = 0; i < hy_graph_n_nodes (b.graph); i++) {
    const hy_node *node = hy_graph_node (b.graph, i);
    if (node->op)
      assign_op (&b, i, node);
    else
      assign_variable (&b, i, node);
  }
  gboolean ok = add_output_copies (&b, error);
  plan->pass_stats.views += b.views;
  ok = ok && place_storages (plan, &b, error);
  ok = ok && (b.host_memory || upload_consts (plan, &b, error));
  if (ok) {
    bind_values (plan, &b);
    ok = build_calls (plan, &b, error)
        && prepare_calls (plan, b.fusable, error);
  }
  if (ok)
    hy_plan_fuse_chains (plan, b.chain_last);
  if (ok)
    mark_quantized_input (plan, b.quantized_input_node,
        b.quantized_input, b.quantized_input_node == G_MAXUINT ? NULL
        : hy_graph_node (b.graph, b.quantized_input_node)->params);
  builder_clear (&b);
  if (!ok || !make_host_outputs (plan, error)) {
    hy_plan_free (plan);
    return NULL;
  }
  return plan;
}

void
hy_plan_free (hy_plan *plan)
{
  if (!plan)
    return;
  hy_plan_free (plan->per_image);
  for (int h = 0; plan->batch_outputs && h < plan->n_outputs; h++)
    hy_tensor_free (plan->batch_outputs[h]);
  g_free (plan->batch_outputs);
  g_free (plan->cut_from);
  g_free (plan->image_slices);
  g_free (plan->image_inputs);
  g_free (plan->cut_to);
  hy_backend *be = plan->backend;
  if (plan->capture)
    be->iface->release_capture (be, plan->capture);
  for (int c = 0; c < plan->n_prepared; c++)
    if (plan->calls[c].fn)      /* not dropped (hy_plan_drop_calls) */
      be->iface->release_call (be, &plan->calls[c]);
  hy_graph_free (plan->graph);
  if (plan->owned)      /* after the graph that points at them */
    g_ptr_array_unref (plan->owned);
  if (plan->arena)
    be->iface->dealloc (be, plan->arena);
  if (plan->consts)
    be->iface->dealloc (be, plan->consts);
  for (int h = 0; plan->host_outputs && h < plan->n_outputs; h++)
    hy_tensor_free (plan->host_outputs[h]);
  g_free (plan->host_outputs);
  g_free (plan->values);
  g_free (plan->calls);
  g_free (plan->call_nodes);
  g_free (plan->value_private);
  g_free (plan->call_first_nodes);
  if (plan->fused_args)
    g_ptr_array_unref (plan->fused_args);
  g_free (plan->profile);
  g_free (plan->call_in);
  g_free (plan->call_const_bits);
  g_free (plan->call_out);
  g_free (plan->bindings);
  g_free (plan->outputs);
  g_free (plan);
}

/* Points (host) or uploads (device) every input where the calls read it. */
static gboolean
bind_inputs (hy_plan *plan, const hy_tensor *const *inputs, int n_inputs,
    GError **error)
{
  hy_backend *be = plan->backend;
  const hy_backend_iface *iface = be->iface;
  for (int i = 0; i < plan->n_bindings; i++) {
    const input_binding *bind = &plan->bindings[i];
    const hy_tensor *src = inputs && bind->input < n_inputs
        ? inputs[bind->input] : NULL;
    if (iface->host_memory) {
      /* Read only: an input's storage is never a call's output. */
      bind->tensor->data = src ? src->data : NULL;
    } else if (src && !iface->upload (be, bind->tensor->data, src->data,
            hy_tensor_nbytes (bind->tensor), error)) {
      return FALSE;
    }
  }
  return TRUE;
}

/* Runs calls [first, first + n) (all of them with a capture), naming the
 * node of the call that failed when the backend can tell which. */
static gboolean
run_calls (hy_plan *plan, int first, int n, void **capture, GError **error)
{
  hy_backend *be = plan->backend;
  be->failed_call = -1;
  if (be->iface->run (be, &plan->calls[first], n, capture, error))
    return TRUE;
  int c = be->failed_call < 0 ? -1 : first + be->failed_call;
  if (c >= 0 && c < plan->n_calls && plan->call_nodes[c] != G_MAXUINT) {
    const hy_node *node = hy_graph_node (plan->graph, plan->call_nodes[c]);
    g_prefix_error (error, "node '%s' (op %s): ", node->name,
        node->op->name);
  }
  return FALSE;
}

gboolean
hy_plan_run_whole (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, GError **error)
{
  return hy_plan_run_calls (plan, inputs, n_inputs, 0, plan->n_calls, error);
}

gboolean
hy_plan_run_calls (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, int first, int end, GError **error)
{
  hy_backend *be = plan->backend;
  const hy_backend_iface *iface = be->iface;
  /* Only the whole forward is recorded (a device's graph of calls). */
  const gboolean whole = first == 0 && end == plan->n_calls;
  if (!bind_inputs (plan, inputs, n_inputs, error)
      || !run_calls (plan, first, end - first, whole ? &plan->capture : NULL,
          error))
    return FALSE;
  for (int h = 0; plan->host_outputs && end == plan->n_calls
      && h < plan->n_outputs; h++) {
    if (!iface->download (be, plan->host_outputs[h]->data,
            plan->outputs[h]->data, hy_tensor_nbytes (plan->host_outputs[h]),
            error))
      return FALSE;
  }
  return TRUE;
}

static double
now_ms (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* What each call is, once: its node, op and arithmetic. */
static void
describe_calls (hy_plan *plan)
{
  plan->profile = g_new0 (hy_layer_profile, MAX (plan->n_calls, 1));
  for (int c = 0; c < plan->n_calls; c++) {
    hy_layer_profile *l = &plan->profile[c];
    if (plan->backend->iface->call_kernel_name && plan->calls[c].fn)
      l->kernel = plan->backend->iface->call_kernel_name (plan->backend,
          &plan->calls[c]);
    if (plan->call_nodes[c] == G_MAXUINT) {
      l->node = "(output copy)";
      l->op = "_copy";
      continue;
    }
    const hy_node *node = hy_graph_node (plan->graph, plan->call_nodes[c]);
    l->node = node->name;
    l->op = node->op->name;
    l->flop = hy_plan_call_flops (plan, c);
  }
}

/* The arithmetic of node i. */
static double
node_flops (const hy_plan *plan, guint i)
{
  const hy_node *node = hy_graph_node (plan->graph, i);
  if (!node->op->def->flops)
    return 0;
  const guint n_in = node->n_inputs;
  g_autofree hy_shape *in = g_new (hy_shape, MAX (n_in, 1));
  for (guint k = 0; k < n_in; k++) {
    const hy_entry *e = &node->inputs[k];
    in[k] = hy_graph_node (plan->graph, e->node)->shapes[e->index];
  }
  return node->op->def->flops (node->params, in, (int) n_in, node->shapes,
      (int) node->n_outputs);
}

double
hy_plan_call_flops (const hy_plan *plan, int c)
{
  guint node = plan->call_nodes[c];
  if (node == G_MAXUINT)
    return 0;
  double flops = node_flops (plan, node);
  /* A fused call's nodes, back to its first, each read the one before
   * as its data. */
  if (plan->call_first_nodes[c] != G_MAXUINT)
    while (node != plan->call_first_nodes[c]) {
      node = hy_graph_node (plan->graph, node)->inputs[0].node;
      flops += node_flops (plan, node);
    }
  return flops;
}

gboolean
hy_plan_profile_whole (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, int iterations, const hy_layer_profile **layers,
    int *n_layers, GError **error)
{
  return hy_plan_profile_calls (plan, inputs, n_inputs, iterations, 0,
      plan->n_calls, layers, n_layers, error);
}

gboolean
hy_plan_profile_calls (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, int iterations, int first, int end,
    const hy_layer_profile **layers, int *n_layers, GError **error)
{
  hy_backend *be = plan->backend;
  if (!be->iface->host_memory) {
    /* Device calls return before they finish: timing them one by one
     * would need a wait per call that changes what is measured. */
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a per-layer profile times calls on the CPU; the %s backend runs "
        "them asynchronously (use the device's own profiler)",
        be->iface->name);
    return FALSE;
  }
  if (!plan->profile)
    describe_calls (plan);
  for (int c = first; c < end; c++)
    plan->profile[c].ms = plan->profile[c].cpu_ms = 0;
  if (!bind_inputs (plan, inputs, n_inputs, error))
    return FALSE;
  for (int it = 0; it < iterations; it++) {
    for (int c = first; c < end; c++) {
      double c0 = now_ms (CLOCK_PROCESS_CPUTIME_ID);
      double t0 = now_ms (CLOCK_MONOTONIC);
      if (!run_calls (plan, c, 1, NULL, error))
        return FALSE;
      plan->profile[c].ms += now_ms (CLOCK_MONOTONIC) - t0;
      plan->profile[c].cpu_ms += now_ms (CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
  }
  for (int c = first; c < end; c++) {
    plan->profile[c].ms /= MAX (iterations, 1);
    plan->profile[c].cpu_ms /= MAX (iterations, 1);
  }
  *layers = plan->profile;
  *n_layers = plan->n_calls;
  return TRUE;
}

void
hy_plan_drop_calls (hy_plan *plan, int first, int end)
{
  hy_backend *be = plan->backend;
  for (int c = first; c < end && c < plan->n_prepared; c++) {
    if (plan->calls[c].fn)
      be->iface->release_call (be, &plan->calls[c]);
    plan->calls[c].fn = NULL;
    plan->calls[c].params = NULL;
  }
}

hy_tensor *
hy_plan_device_input (hy_plan *plan, int input)
{
  for (int i = 0; !plan->backend->iface->host_memory && i < plan->n_bindings;
      i++)
    if (plan->bindings[i].input == input)
      return plan->bindings[i].tensor;
  return NULL;
}

const hy_tensor *
hy_plan_output (const hy_plan *plan, int i)
{
  if (i < 0 || i >= plan->n_outputs)
    return NULL;
  return plan->host_outputs ? plan->host_outputs[i] : plan->outputs[i];
}

void
hy_plan_memory (const hy_plan *plan, hy_memory_stats *out)
{
  *out = plan->memory;
}

const hy_pass_stats *
hy_plan_pass_stats (const hy_plan *plan)
{
  return &plan->pass_stats;
}

gboolean
hy_plan_tensor_private (const hy_plan *plan, const hy_tensor *t)
{
  if (!plan->values || !plan->value_private || t < plan->values
      || t >= plan->values + plan->n_value_private)
    return FALSE;
  return plan->value_private[t - plan->values];
}

int
hy_plan_n_calls (const hy_plan *plan)
{
  return plan->n_calls;
}
