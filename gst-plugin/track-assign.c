/*
 * track-assign.c — the Hungarian method in its shortest-augmenting-path
 * form: rows join one at a time, each along the cheapest path of reduced
 * costs (dual potentials u, v keep every reduced cost >= 0), so after n
 * rows the assignment is optimal.  Indices count from 1 internally; slot
 * 0 is the path's virtual start.
 */
#include "track-assign.h"

#include <float.h>
#include <stdbool.h>
#include <stdlib.h>

struct TrackAssign {
  unsigned max_side;
  double *u, *v, *min_to;       /* row and column potentials, path costs */
  unsigned *row_of, *way;       /* column -> its row; path back-links */
  bool *used;
};

TrackAssign *
track_assign_new (unsigned max_side)
{
  TrackAssign *a = calloc (1, sizeof *a);
  if (!a)
    return NULL;
  size_t n = (size_t) max_side + 1;
  a->max_side = max_side;
  a->u = calloc (n, sizeof *a->u);
  a->v = calloc (n, sizeof *a->v);
  a->min_to = calloc (n, sizeof *a->min_to);
  a->row_of = calloc (n, sizeof *a->row_of);
  a->way = calloc (n, sizeof *a->way);
  a->used = calloc (n, sizeof *a->used);
  if (!a->u || !a->v || !a->min_to || !a->row_of || !a->way || !a->used) {
    track_assign_free (a);
    return NULL;
  }
  return a;
}

void
track_assign_free (TrackAssign *a)
{
  if (!a)
    return;
  free (a->u);
  free (a->v);
  free (a->min_to);
  free (a->row_of);
  free (a->way);
  free (a->used);
  free (a);
}

int
track_assign_solve (TrackAssign *a, const double *cost, unsigned n_rows,
    unsigned n_cols, int *row_to_col)
{
  if (n_rows > a->max_side || n_cols > a->max_side)
    return -1;
  for (unsigned r = 0; r < n_rows; r++)
    row_to_col[r] = -1;
  if (!n_rows || !n_cols)
    return 0;
  /* The method wants rows <= columns: solve the transpose otherwise. */
  bool transposed = n_rows > n_cols;
  unsigned n = transposed ? n_cols : n_rows;
  unsigned m = transposed ? n_rows : n_cols;
#define COST(i, j) (transposed ? cost[(size_t) ((j) - 1) * n_cols + (i) - 1] \
    : cost[(size_t) ((i) - 1) * n_cols + (j) - 1])

  for (unsigned j = 0; j <= m; j++) {
    a->v[j] = 0.0;
    a->row_of[j] = 0;
  }
  for (unsigned i = 0; i <= n; i++)
    a->u[i] = 0.0;

  for (unsigned i = 1; i <= n; i++) {
    a->row_of[0] = i;
    unsigned j0 = 0;
    for (unsigned j = 0; j <= m; j++) {
      a->min_to[j] = DBL_MAX;
      a->used[j] = false;
    }
    do {
      a->used[j0] = true;
      unsigned i0 = a->row_of[j0], j1 = 0;
      double delta = DBL_MAX;
      for (unsigned j = 1; j <= m; j++) {
        if (a->used[j])
          continue;
        double reduced = COST (i0, j) - a->u[i0] - a->v[j];
        if (reduced < a->min_to[j]) {
          a->min_to[j] = reduced;
          a->way[j] = j0;
        }
        if (a->min_to[j] < delta) {
          delta = a->min_to[j];
          j1 = j;
        }
      }
      for (unsigned j = 0; j <= m; j++) {
        if (a->used[j]) {
          a->u[a->row_of[j]] += delta;
          a->v[j] -= delta;
        } else {
          a->min_to[j] -= delta;
        }
      }
      j0 = j1;
    } while (a->row_of[j0] != 0);
    /* flip the path's pairs back to its start */
    do {
      unsigned j1 = a->way[j0];
      a->row_of[j0] = a->row_of[j1];
      j0 = j1;
    } while (j0);
  }
#undef COST

  int pairs = 0;
  for (unsigned j = 1; j <= m; j++) {
    unsigned i = a->row_of[j];
    if (!i)
      continue;
    if (transposed)
      row_to_col[j - 1] = (int) i - 1;
    else
      row_to_col[i - 1] = (int) j - 1;
    pairs++;
  }
  return pairs;
}
