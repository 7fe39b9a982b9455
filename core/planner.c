/*
 * planner.c — offline arena packing for buffers with known lifetimes.
 *
 * Every strategy is the same greedy loop with a different visiting order:
 * take the next buffer, look at the already placed buffers whose lifetimes
 * intersect its own (walked by offset), and put it in a gap between them or
 * after the last.  Orders tried (Pisarchyk & Lee, "Efficient Memory
 * Management for Deep Neural Net Inference", 2020; TFLite's arena planner):
 *
 *  - greedy by size: biggest first.  Big buffers fix the arena's shape,
 *    small ones fill the holes they leave.
 *  - greedy by breadth: the step with the most live bytes first, its
 *    buffers biggest first, then the next busiest step.  The peak step's
 *    buffers get packed tightly together, since they are what the lower
 *    bound counts.
 *  - greedy by area (size × lifetime): long-lived big buffers first, so
 *    they sit at the bottom and short-lived ones share the space above.
 *
 * each placed best fit (the smallest gap that holds it; first fit, the
 * lowest gap, never did better on the model zoo).  Each order is then
 * improved by hill climbing: the buffer that ends highest, or one alive
 * beside it, moves to the front of the order, and the move that lowers
 * the arena (or, failing that, keeps it) is taken.  DenseNet's growing
 * concatenations need this: every plain order leaves its arena one small
 * buffer above the lower bound.  The smallest arena wins; ties go to the
 * earlier try, so results are deterministic.  An arena at the lower bound
 * ends the search.
 *
 * Every placement is quadratic in the number of buffers, which is a few
 * hundred for a network once views and in-place writes have merged what
 * they can, and the climb's placements are budgeted: milliseconds, once
 * per input shape.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "core/planner.h"

typedef struct placed_buffer {
  size_t offset;
  size_t size;
  int first;
  int last;
} placed_buffer;

/* A sort key: qsort has no context argument, so keys carry what they
 * compare. */
typedef struct order_key {
  size_t size;
  int64_t primary;              /* compared first, bigger first */
  int first;
  guint index;
} order_key;

static size_t
round_up (size_t size)
{
  return (size + HY_PLANNER_ALIGN - 1) & ~(size_t) (HY_PLANNER_ALIGN - 1);
}

static gboolean
lifetimes_intersect (int a_first, int a_last, int b_first, int b_last)
{
  return a_first <= b_last && b_first <= a_last;
}

/* Copies the requests with sizes rounded up; a request that ends before
 * it starts is read as living one step. */
static void
normalise (const hy_buffer_request *requests, size_t n,
    hy_buffer_request *req, size_t *size)
{
  for (size_t i = 0; i < n; i++) {
    req[i] = requests[i];
    req[i].last_use = MAX (req[i].last_use, req[i].first_use);
    size[i] = round_up (req[i].size);
  }
}

/* Bigger primary first, then bigger size, earlier start, lower index. */
static int
compare_keys (const void *pa, const void *pb)
{
  const order_key *a = pa, *b = pb;
  if (a->primary != b->primary)
    return a->primary > b->primary ? -1 : 1;
  if (a->size != b->size)
    return a->size > b->size ? -1 : 1;
  if (a->first != b->first)
    return a->first < b->first ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* Bytes live at step s, for every s that starts a buffer (the live set only
 * grows at a start, so these include every peak).  breadth[i] is the
 * figure at requests[i].first_use. */
static void
breadth_at_starts (const hy_buffer_request *req, const size_t *size,
    size_t n, size_t *breadth)
{
  for (size_t i = 0; i < n; i++) {
    const int s = req[i].first_use;
    size_t live = 0;
    for (size_t j = 0; j < n; j++)
      if (req[j].first_use <= s && s <= req[j].last_use)
        live += size[j];
    breadth[i] = live;
  }
}

/* Sorts buffers by `primary` (bigger first; ties by size, start, index). */
static void
order_by_key (const size_t *size, const hy_buffer_request *req,
    const int64_t *primary, size_t n, guint *order)
{
  order_key *keys = g_new (order_key, n);
  for (size_t i = 0; i < n; i++)
    keys[i] = (order_key) { size[i], primary ? primary[i] : 0,
      req[i].first_use, (guint) i };
  qsort (keys, n, sizeof *keys, compare_keys);
  for (size_t i = 0; i < n; i++)
    order[i] = keys[i].index;
  g_free (keys);
}

/* Busiest step first; within a step, the buffers live there that no
 * earlier step took, biggest first. */
static void
order_by_breadth (const size_t *size, const hy_buffer_request *req,
    const size_t *breadth, size_t n, guint *order)
{
  order_key *steps = g_new (order_key, n);
  order_key *live = g_new (order_key, n);
  gboolean *taken = g_new0 (gboolean, n);
  for (size_t i = 0; i < n; i++)
    steps[i] = (order_key) { 0, (int64_t) breadth[i], req[i].first_use,
      (guint) i };
  qsort (steps, n, sizeof *steps, compare_keys);

  size_t n_order = 0;
  for (size_t k = 0; k < n && n_order < n; k++) {
    const int s = steps[k].first;
    size_t n_live = 0;
    for (size_t j = 0; j < n; j++)
      if (!taken[j] && req[j].first_use <= s && s <= req[j].last_use)
        live[n_live++] = (order_key) { size[j], 0, req[j].first_use,
          (guint) j };
    qsort (live, n_live, sizeof *live, compare_keys);
    for (size_t j = 0; j < n_live; j++) {
      taken[live[j].index] = TRUE;
      order[n_order++] = live[j].index;
    }
  }
  g_free (steps);
  g_free (live);
  g_free (taken);
}

/* Places buffers best fit in `order`; returns the arena size and, in *top,
 * the position in `order` of the first buffer ending at the arena's top.
 * `placed` (n slots) is kept sorted by offset. */
static size_t
place_in_order (const hy_buffer_request *req, const size_t *size,
    const guint *order, size_t n, size_t *offsets, placed_buffer *placed,
    size_t *top)
{
  size_t n_placed = 0, arena = 0;
  *top = 0;
  for (size_t k = 0; k < n; k++) {
    const guint i = order[k];
    const size_t need = size[i];
    const int first = req[i].first_use, last = req[i].last_use;
    offsets[i] = 0;
    if (need == 0)
      continue;

    size_t cursor = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
    for (size_t j = 0; j < n_placed; j++) {
      const placed_buffer *p = &placed[j];
      if (!lifetimes_intersect (first, last, p->first, p->last))
        continue;
      if (p->offset >= cursor) {
        const size_t gap = p->offset - cursor;
        if (gap >= need && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = MAX (cursor, p->offset + p->size);
    }
    if (best == SIZE_MAX)
      best = cursor;            /* no gap holds it: above everything live */

    size_t insert_at = n_placed;
    for (size_t j = 0; j < n_placed; j++) {
      if (placed[j].offset > best) {
        insert_at = j;
        break;
      }
    }
    memmove (placed + insert_at + 1, placed + insert_at,
        (n_placed - insert_at) * sizeof *placed);
    placed[insert_at] = (placed_buffer) { best, need, first, last };
    n_placed++;
    offsets[i] = best;
    if (best + need > arena) {
      arena = best + need;
      *top = k;
    }
  }
  return arena;
}

size_t
hy_planner_lower_bound (const hy_buffer_request *requests, size_t n)
{
  if (n == 0)
    return 0;
  hy_buffer_request *req = g_new (hy_buffer_request, n);
  size_t *size = g_new (size_t, n);
  size_t *breadth = g_new (size_t, n);
  normalise (requests, n, req, size);
  breadth_at_starts (req, size, n, breadth);
  size_t bound = 0;
  for (size_t i = 0; i < n; i++)
    bound = MAX (bound, breadth[i]);
  g_free (req);
  g_free (size);
  g_free (breadth);
  return bound;
}

/* The state one search shares: the requests, scratch, and the best
 * placement found so far (written straight into the caller's offsets). */
typedef struct search {
  const hy_buffer_request *req;
  const size_t *size;
  size_t n;
  size_t bound;
  placed_buffer *placed;
  size_t *trial_offsets;
  guint *trial_order;
  size_t *best_offsets;
  size_t best_arena;
  const char *best_name;
  int evaluations_left;
} search;

/* How many placements one visiting order may try while improving: enough
 * for every zoo network, a bounded number of pair checks for huge ones. */
#define PAIR_CHECK_BUDGET 50000000.0
#define MIN_EVALUATIONS 4
#define MAX_EVALUATIONS 256

/* Places `order`; keeps the placement when it is the best yet. */
static size_t
evaluate (search *s, const guint *order, const char *name, size_t *top)
{
  s->evaluations_left--;
  size_t arena = place_in_order (s->req, s->size, order, s->n,
      s->trial_offsets, s->placed, top);
  if (arena < s->best_arena) {
    s->best_arena = arena;
    s->best_name = name;
    memcpy (s->best_offsets, s->trial_offsets, s->n * sizeof (size_t));
  }
  return arena;
}

/* `order` with the buffer at position p moved to the front, placed. */
static size_t
evaluate_move (search *s, const guint *order, size_t p, const char *name,
    size_t *top)
{
  s->trial_order[0] = order[p];
  memcpy (s->trial_order + 1, order, p * sizeof *order);
  memcpy (s->trial_order + p + 1, order + p + 1,
      (s->n - p - 1) * sizeof *order);
  return evaluate (s, s->trial_order, name, top);
}

/* Greedy placement of `order`, then hill climbing: the buffer that ends
 * highest, or one alive beside it, moves to the front of the order (placed
 * first, it gets the bottom and the others rearrange around it).  The
 * first move that lowers the arena is taken, else the best move that
 * keeps it, until no move helps or the budget is spent. */
static void
improve (search *s, guint *order, const char *name)
{
  size_t top;
  size_t arena = evaluate (s, order, name, &top);
  while (arena > s->bound && s->evaluations_left > 0) {
    const hy_buffer_request *t = &s->req[order[top]];
    size_t move = 0, move_arena = SIZE_MAX, move_top = 0;
    for (size_t k = 0; k <= s->n && s->evaluations_left > 0; k++) {
      /* k = 0 tries the top buffer itself, then every other one alive
       * while it is. */
      const size_t p = k == 0 ? top : k - 1;
      if (p == 0 || (k > 0 && p == top))
        continue;
      const hy_buffer_request *c = &s->req[order[p]];
      if (k > 0 && !lifetimes_intersect (t->first_use, t->last_use,
              c->first_use, c->last_use))
        continue;
      size_t trial_top;
      size_t trial = evaluate_move (s, order, p, name, &trial_top);
      if (trial < move_arena) {
        move = p;
        move_arena = trial;
        move_top = trial_top;
        if (trial < arena)
          break;
      }
    }
    if (move == 0 || move_arena > arena)
      break;
    guint moved = order[move];
    memmove (order + 1, order, move * sizeof *order);
    order[0] = moved;
    arena = move_arena;
    top = move_top;
  }
}

typedef enum visiting_order {
  ORDER_SIZE,
  ORDER_BREADTH,
  ORDER_AREA,
  N_ORDERS
} visiting_order;

static const char *const order_names[N_ORDERS] = {
  [ORDER_SIZE] = "greedy by size",
  [ORDER_BREADTH] = "greedy by breadth",
  [ORDER_AREA] = "greedy by area",
};

void
hy_planner_place (const hy_buffer_request *requests, size_t n,
    size_t *offsets, hy_arena_figures *figures)
{
  if (n == 0) {
    if (figures)
      *figures = (hy_arena_figures) { 0, 0, 0, "empty" };
    return;
  }
  hy_buffer_request *req = g_new (hy_buffer_request, n);
  size_t *size = g_new (size_t, n);
  size_t *breadth = g_new (size_t, n);
  int64_t *area = g_new (int64_t, n);
  guint *order = g_new (guint, n);
  size_t naive = 0, bound = 0;
  normalise (requests, n, req, size);
  breadth_at_starts (req, size, n, breadth);
  for (size_t i = 0; i < n; i++) {
    naive += size[i];
    bound = MAX (bound, breadth[i]);
    area[i] = (int64_t) size[i] * (req[i].last_use - req[i].first_use + 1);
  }

  search s = {
    .req = req,
    .size = size,
    .n = n,
    .bound = bound,
    .placed = g_new (placed_buffer, n),
    .trial_offsets = g_new (size_t, n),
    .trial_order = g_new (guint, n),
    .best_offsets = offsets,
    .best_arena = SIZE_MAX,
  };
  const int budget = (int) CLAMP (PAIR_CHECK_BUDGET / ((double) n * n),
      MIN_EVALUATIONS, MAX_EVALUATIONS);
  for (int o = 0; o < N_ORDERS && s.best_arena > bound; o++) {
    if (o == ORDER_BREADTH)
      order_by_breadth (size, req, breadth, n, order);
    else
      order_by_key (size, req, o == ORDER_AREA ? area : NULL, n, order);
    s.evaluations_left = budget;
    improve (&s, order, order_names[o]);
  }

  if (figures) {
    figures->arena_bytes = s.best_arena;
    figures->naive_bytes = naive;
    figures->lower_bound_bytes = bound;
    figures->strategy = s.best_name;
  }
  g_free (req);
  g_free (size);
  g_free (breadth);
  g_free (area);
  g_free (order);
  g_free (s.placed);
  g_free (s.trial_offsets);
  g_free (s.trial_order);
}
