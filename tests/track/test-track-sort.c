/*
 * test-track-sort.c — the tracker's logic alone (gst-plugin/track-sort.h,
 * track-assign.h): the assignment against brute force, and each rule of
 * SORT on scripted motion whose right answer is known by construction.
 */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "gst-plugin/track-assign.h"
#include "gst-plugin/track-sort.h"

static const TrackSortConfig default_config = {
  .min_hits = 3, .max_age = 5, .iou_threshold = 0.3f,
};

/* The least total over every injective map of the smaller side. */
static double
brute_force (const double *cost, unsigned rows, unsigned cols, unsigned r,
    guint32 used_cols)
{
  if (r == rows)
    return 0.0;
  double best = INFINITY;
  gboolean any = FALSE;
  for (unsigned c = 0; c < cols; c++) {
    if (used_cols & (1u << c))
      continue;
    any = TRUE;
    double v = cost[r * cols + c] + brute_force (cost, rows, cols, r + 1,
        used_cols | (1u << c));
    best = MIN (best, v);
  }
  /* more rows than columns: this row may go without */
  if (rows > cols) {
    unsigned assigned = (unsigned) __builtin_popcount (used_cols);
    if (rows - r > cols - assigned || !any)
      best = MIN (best, brute_force (cost, rows, cols, r + 1, used_cols));
  }
  return best;
}

static void
test_assignment_is_optimal (void)
{
  GRand *rand = g_rand_new_with_seed (7);
  TrackAssign *a = track_assign_new (8);
  double cost[64];
  int row_to_col[8];
  for (int trial = 0; trial < 400; trial++) {
    unsigned rows = (unsigned) g_rand_int_range (rand, 1, 7);
    unsigned cols = (unsigned) g_rand_int_range (rand, 1, 7);
    for (unsigned i = 0; i < rows * cols; i++)
      /* whole numbers make ties, the hard case for a path search */
      cost[i] = trial % 2 ? g_rand_double (rand)
          : (double) g_rand_int_range (rand, 0, 4);
    int pairs = track_assign_solve (a, cost, rows, cols, row_to_col);
    g_assert_cmpint (pairs, ==, (int) MIN (rows, cols));
    double total = 0.0;
    guint32 seen = 0;
    for (unsigned r = 0; r < rows; r++) {
      if (row_to_col[r] < 0)
        continue;
      g_assert_cmpint (row_to_col[r], <, (int) cols);
      g_assert_false (seen & (1u << row_to_col[r]));
      seen |= 1u << row_to_col[r];
      total += cost[r * cols + (unsigned) row_to_col[r]];
    }
    g_assert_cmpfloat_with_epsilon (total,
        brute_force (cost, rows, cols, 0, 0), 1e-9);
  }
  g_assert_cmpint (track_assign_solve (a, cost, 9, 2, row_to_col), ==, -1);
  track_assign_free (a);
  g_rand_free (rand);
}

static TrackDetection
det_at (float cx, float cy, float size, int class_id)
{
  TrackDetection d = {
    .box = {cx - size / 2, cy - size / 2, size, size},
    .class_id = class_id,
  };
  return d;
}

/* Two balls of one class cross head-on, overlapping for several frames
 * (IoU up to 1 when they coincide): each keeps its id after the crossing,
 * which greedy matching by IoU does not guarantee. */
static void
test_crossing_keeps_ids (void)
{
  TrackSort *t = track_sort_new (&default_config);
  guint32 id_a = 0, id_b = 0;
  for (int f = 0; f < 60; f++) {
    TrackDetection d[2] = {
      det_at (20.0f + 4.0f * f, 100.0f, 30.0f, 0),
      det_at (260.0f - 4.0f * f, 104.0f, 30.0f, 0),
    };
    track_sort_update (t, d, 2);
    if (f == 5) {
      id_a = d[0].track_id;
      id_b = d[1].track_id;
      g_assert_cmpuint (id_a, !=, 0);
      g_assert_cmpuint (id_b, !=, 0);
      g_assert_cmpuint (id_a, !=, id_b);
    }
    if (f > 5) {
      g_assert_cmpuint (d[0].track_id, ==, id_a);
      g_assert_cmpuint (d[1].track_id, ==, id_b);
    }
  }
  track_sort_free (t);
}

/* Ids after min_hits matched results, none for a one-frame false box,
 * and consecutive ids for the tracks reported. */
static void
test_min_hits (void)
{
  TrackSort *t = track_sort_new (&default_config);
  for (int f = 0; f < 6; f++) {
    TrackDetection d[2] = {
      det_at (50.0f + f, 50.0f, 20.0f, 0),
      det_at (200.0f, 150.0f + 40.0f * f, 20.0f, 0),  /* never twice alike */
    };
    track_sort_update (t, d, 2);
    g_assert_cmpuint (d[0].track_id, ==, f + 1 >= 3 ? 1 : 0);
    g_assert_cmpuint (d[1].track_id, ==, 0);
  }
  TrackDetection d = det_at (56.0f, 50.0f, 20.0f, 0);
  TrackDetection other = det_at (400.0f, 400.0f, 20.0f, 0);
  for (int f = 0; f < 3; f++) {
    TrackDetection two[2] = { d, other };
    track_sort_update (t, two, 2);
    g_assert_cmpuint (two[1].track_id, ==, f == 2 ? 2 : 0);
  }
  track_sort_free (t);
}

/* A confirmed track survives max_age results without a match and takes
 * its object back; one more and the object gets a new id. */
static void
test_max_age (void)
{
  for (unsigned gap = 5; gap <= 6; gap++) {
    TrackSort *t = track_sort_new (&default_config);
    TrackDetection d = det_at (100.0f, 100.0f, 40.0f, 0);
    for (int f = 0; f < 4; f++)
      track_sort_update (t, &d, 1);
    guint32 id = d.track_id;
    g_assert_cmpuint (id, ==, 1);
    for (unsigned f = 0; f < gap; f++) {
      track_sort_update (t, NULL, 0);
      if (f < default_config.max_age)
        g_assert_nonnull (track_sort_find (t, id));
      else
        g_assert_null (track_sort_find (t, id));
    }
    track_sort_update (t, &d, 1);
    if (gap <= default_config.max_age) {
      g_assert_cmpuint (d.track_id, ==, id);
    } else {
      g_assert_cmpuint (d.track_id, ==, 0);     /* a new, tentative track */
      g_assert_null (track_sort_find (t, id));
    }
    track_sort_free (t);
  }
}

/* Detections every 4th frame only (a detector at interval=4): on the
 * frames between, the track's box moves with the object. */
static void
test_prediction_between_results (void)
{
  TrackSort *t = track_sort_new (&default_config);
  const float vx = 3.0f, vy = -1.5f;
  guint32 id = 0;
  float worst_late = 0.0f;
  for (int f = 0; f < 80; f++) {
    float cx = 40.0f + vx * f, cy = 200.0f + vy * f;
    if (f % 4 == 0) {
      TrackDetection d = det_at (cx, cy, 30.0f, 2);
      track_sort_update (t, &d, 1);
      if (d.track_id)
        id = d.track_id;
      continue;
    }
    track_sort_predict (t);
    const TrackSortTrack *k = track_sort_find (t, id);
    if (f < 40)
      continue;
    g_assert_nonnull (k);
    float ex = k->box.x + k->box.w / 2 - cx, ey = k->box.y + k->box.h / 2 - cy;
    worst_late = MAX (worst_late, sqrtf (ex * ex + ey * ey));
    g_assert_cmpfloat (fabsf (k->box.w - 30.0f), <, 0.5f);
  }
  /* Standing still would be 9 pixels off by the third frame; the filter,
   * settled on the velocity, is within a pixel. */
  g_assert_cmpfloat (worst_late, <, 1.0f);
  track_sort_free (t);
}

/* Boxes of another class never join a track, even in the same place. */
static void
test_classes_apart (void)
{
  TrackSort *t = track_sort_new (&default_config);
  for (int f = 0; f < 10; f++) {
    TrackDetection d[2] = {
      det_at (100.0f + f, 100.0f, 40.0f, 0),
      det_at (100.0f + f, 100.0f, 40.0f, 1),
    };
    /* the order in the result changes: the class decides, not the slot */
    if (f % 2) {
      TrackDetection tmp = d[0];
      d[0] = d[1];
      d[1] = tmp;
    }
    track_sort_update (t, d, 2);
    if (f >= 2) {
      const TrackDetection *c0 = d[0].class_id == 0 ? &d[0] : &d[1];
      const TrackDetection *c1 = d[0].class_id == 0 ? &d[1] : &d[0];
      g_assert_cmpuint (c0->track_id, ==, 1);
      g_assert_cmpuint (c1->track_id, ==, 2);
    }
  }
  g_assert_cmpuint (track_sort_n_tracks (t), ==, 2);
  track_sort_free (t);
}

static void
test_config_refused (void)
{
  TrackSortConfig c = default_config;
  c.min_hits = 0;
  g_assert_null (track_sort_new (&c));
  c = default_config;
  c.iou_threshold = 0.0f;
  g_assert_null (track_sort_new (&c));
  c.iou_threshold = 1.5f;
  g_assert_null (track_sort_new (&c));
  c.iou_threshold = NAN;
  g_assert_null (track_sort_new (&c));
  TrackSort *t = track_sort_new (&default_config);
  g_assert_false (track_sort_configure (t, &c));
  track_sort_free (t);
}

/* More detections than the tracker keeps: the rest get no id, no crash. */
static void
test_capacity (void)
{
  static TrackDetection d[TRACK_SORT_MAX_DETECTIONS + 10];
  TrackSortConfig c = default_config;
  c.min_hits = 1;
  TrackSort *t = track_sort_new (&c);
  for (int f = 0; f < 3; f++) {
    for (unsigned i = 0; i < G_N_ELEMENTS (d); i++)
      d[i] = det_at (10.0f + 30.0f * (i % 60), 10.0f + 30.0f * (i / 60),
          20.0f, 0);
    track_sort_update (t, d, G_N_ELEMENTS (d));
    g_assert_cmpuint (d[0].track_id, !=, 0);
    g_assert_cmpuint (d[G_N_ELEMENTS (d) - 1].track_id, ==, 0);
  }
  g_assert_cmpuint (track_sort_n_tracks (t), ==, TRACK_SORT_MAX_TRACKS);
  track_sort_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/track-sort/assignment-is-optimal",
      test_assignment_is_optimal);
  g_test_add_func ("/track-sort/crossing-keeps-ids", test_crossing_keeps_ids);
  g_test_add_func ("/track-sort/min-hits", test_min_hits);
  g_test_add_func ("/track-sort/max-age", test_max_age);
  g_test_add_func ("/track-sort/prediction-between-results",
      test_prediction_between_results);
  g_test_add_func ("/track-sort/classes-apart", test_classes_apart);
  g_test_add_func ("/track-sort/config-refused", test_config_refused);
  g_test_add_func ("/track-sort/capacity", test_capacity);
  return g_test_run ();
}
