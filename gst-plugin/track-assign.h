/*
 * track-assign.h — the minimum-cost assignment of rows to columns
 * (the Hungarian method, shortest augmenting paths with potentials,
 * O(n² m) for n ≤ m), plain C.
 *
 * Optimal rather than greedy because greedy matching by IoU breaks on
 * crossings: where two objects overlap, the best IoU of one track may be
 * the only acceptable box of the other, and taking it first leaves that
 * track unmatched (a lost track and, a frame later, a new id).  With the
 * few dozen boxes of a frame the exact answer costs microseconds.
 */
#ifndef TRACK_ASSIGN_H
#define TRACK_ASSIGN_H

typedef struct TrackAssign TrackAssign;

/* Work arrays for problems up to max_side rows and columns; NULL when
 * out of memory. */
TrackAssign *track_assign_new (unsigned max_side);
void track_assign_free (TrackAssign *assign);

/* cost: n_rows x n_cols, row-major (finite values).  Assigns
 * min (n_rows, n_cols) pairs of least total cost: row_to_col[r] is row
 * r's column, or -1 when it has none (more rows than columns).  Returns
 * the number of pairs, or -1 when the problem is larger than max_side.
 * Allocates nothing. */
int track_assign_solve (TrackAssign *assign, const double *cost,
    unsigned n_rows, unsigned n_cols, int *row_to_col);

#endif /* TRACK_ASSIGN_H */
