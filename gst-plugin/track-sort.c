/*
 * track-sort.c — SORT: a Kalman filter per track, IoU assignment, births
 * and deaths by counts (track-sort.h).
 *
 * The filter.  The state is (cx, cy, w, h) and their velocities per
 * frame; the motion is constant velocity and a detection measures the
 * four positions.  The noises are those DeepSORT uses, proportional to
 * the object's size (a twentieth of it for positions and measurements, a
 * hundred-and-sixtieth for velocities), so that a 20-pixel ball and a
 * 300-pixel car are followed alike.  With one size for all four
 * coordinates, no coupling in the motion and a measurement of each
 * position alone, the 8-state filter falls apart into four 2-state
 * filters (position, velocity) that share one covariance: a track keeps
 * four means and one symmetric 2x2 covariance, and the arithmetic is a
 * handful of multiplications, exactly what the 8x8 matrices would give.
 */
#include "track-sort.h"

#include <stdlib.h>
#include <string.h>

#include "track-assign.h"

/* DeepSORT's noise weights, relative to the object's size. */
#define STD_POSITION (1.0 / 20.0)
#define STD_VELOCITY (1.0 / 160.0)
/* A pair the assignment may take but the tracker refuses: far above any
 * sum of real costs (each at most 1), so the assignment first matches as
 * many acceptable pairs as it can, then the best of them. */
#define REFUSED 1e6

enum { CX, CY, W, H };

typedef struct {
  TrackSortTrack pub;
  double pos[4], vel[4];
  double p00, p01, p11;         /* the shared covariance */
} Track;

struct TrackSort {
  TrackSortConfig config;
  uint32_t next_id;
  unsigned n_tracks;
  Track tracks[TRACK_SORT_MAX_TRACKS];
  TrackAssign *assign;
  double cost[TRACK_SORT_MAX_TRACKS * TRACK_SORT_MAX_DETECTIONS];
  int track_to_det[TRACK_SORT_MAX_TRACKS];
  bool det_matched[TRACK_SORT_MAX_DETECTIONS];
};

static bool
config_valid (const TrackSortConfig *c)
{
  return c->min_hits >= 1 && c->min_hits <= 1000 && c->max_age <= 100000
      && c->iou_threshold > 0.0f && c->iou_threshold <= 1.0f;
}

TrackSort *
track_sort_new (const TrackSortConfig *config)
{
  if (!config || !config_valid (config))
    return NULL;
  TrackSort *t = calloc (1, sizeof *t);
  if (!t)
    return NULL;
  t->assign = track_assign_new (TRACK_SORT_MAX_TRACKS
      > TRACK_SORT_MAX_DETECTIONS ? TRACK_SORT_MAX_TRACKS
      : TRACK_SORT_MAX_DETECTIONS);
  if (!t->assign) {
    free (t);
    return NULL;
  }
  t->config = *config;
  track_sort_reset (t);
  return t;
}

void
track_sort_free (TrackSort *t)
{
  if (!t)
    return;
  track_assign_free (t->assign);
  free (t);
}

void
track_sort_reset (TrackSort *t)
{
  t->n_tracks = 0;
  t->next_id = 1;
}

void
track_sort_clear (TrackSort *t)
{
  t->n_tracks = 0;
}

bool
track_sort_configure (TrackSort *t, const TrackSortConfig *config)
{
  if (!config_valid (config))
    return false;
  t->config = *config;
  return true;
}

float
track_box_iou (const TrackBox *a, const TrackBox *b)
{
  float iw = (a->x + a->w < b->x + b->w ? a->x + a->w : b->x + b->w)
      - (a->x > b->x ? a->x : b->x);
  float ih = (a->y + a->h < b->y + b->h ? a->y + a->h : b->y + b->h)
      - (a->y > b->y ? a->y : b->y);
  if (iw <= 0.0f || ih <= 0.0f)
    return 0.0f;
  float inter = iw * ih;
  float uni = a->w * a->h + b->w * b->h - inter;
  return uni > 0.0f ? inter / uni : 0.0f;
}

/* The size the noises scale with: the larger side, at least a pixel. */
static double
track_scale (const Track *k)
{
  double s = k->pos[W] > k->pos[H] ? k->pos[W] : k->pos[H];
  return s > 1.0 ? s : 1.0;
}

static void
publish_box (Track *k)
{
  /* velocities may shrink a coasting box: never below a pixel */
  if (k->pos[W] < 1.0)
    k->pos[W] = 1.0;
  if (k->pos[H] < 1.0)
    k->pos[H] = 1.0;
  k->pub.box.w = (float) k->pos[W];
  k->pub.box.h = (float) k->pos[H];
  k->pub.box.x = (float) (k->pos[CX] - k->pos[W] / 2.0);
  k->pub.box.y = (float) (k->pos[CY] - k->pos[H] / 2.0);
}

static void
track_start (Track *k, const TrackDetection *d)
{
  memset (k, 0, sizeof *k);
  k->pos[CX] = d->box.x + d->box.w / 2.0;
  k->pos[CY] = d->box.y + d->box.h / 2.0;
  k->pos[W] = d->box.w;
  k->pos[H] = d->box.h;
  double s = track_scale (k);
  /* unsure of the place, and much more of the speed: nothing seen yet */
  k->p00 = (2.0 * STD_POSITION * s) * (2.0 * STD_POSITION * s);
  k->p11 = (10.0 * STD_VELOCITY * s) * (10.0 * STD_VELOCITY * s);
  k->pub.class_id = d->class_id;
  k->pub.hits = 1;
  publish_box (k);
}

static void
track_predict (Track *k)
{
  for (int c = 0; c < 4; c++)
    k->pos[c] += k->vel[c];
  double s = track_scale (k);
  double qp = STD_POSITION * s, qv = STD_VELOCITY * s;
  /* P = F P F' + Q with F = [1 1; 0 1] */
  k->p00 += 2.0 * k->p01 + k->p11 + qp * qp;
  k->p01 += k->p11;
  k->p11 += qv * qv;
  publish_box (k);
}

static void
track_correct (Track *k, const TrackBox *b)
{
  double z[4] = { b->x + b->w / 2.0, b->y + b->h / 2.0, b->w, b->h };
  double r = STD_POSITION * track_scale (k);
  double innovation_var = k->p00 + r * r;
  double gain_pos = k->p00 / innovation_var, gain_vel = k->p01 / innovation_var;
  for (int c = 0; c < 4; c++) {
    double innovation = z[c] - k->pos[c];
    k->pos[c] += gain_pos * innovation;
    k->vel[c] += gain_vel * innovation;
  }
  /* P = (I - K H) P, H = [1 0] */
  double p00 = k->p00, p01 = k->p01;
  k->p00 = (1.0 - gain_pos) * p00;
  k->p01 = (1.0 - gain_pos) * p01;
  k->p11 -= gain_vel * p01;
  publish_box (k);
}

void
track_sort_predict (TrackSort *t)
{
  for (unsigned i = 0; i < t->n_tracks; i++)
    track_predict (&t->tracks[i]);
}

static void
confirm_if_due (TrackSort *t, Track *k)
{
  if (!k->pub.id && k->pub.hits >= t->config.min_hits)
    k->pub.id = t->next_id++;
}

static void
remove_track (TrackSort *t, unsigned i)
{
  t->tracks[i] = t->tracks[--t->n_tracks];
  t->track_to_det[i] = t->track_to_det[t->n_tracks];
}

void
track_sort_update (TrackSort *t, TrackDetection *dets, unsigned n_dets)
{
  unsigned n = n_dets < TRACK_SORT_MAX_DETECTIONS ? n_dets
      : TRACK_SORT_MAX_DETECTIONS;
  for (unsigned j = 0; j < n_dets; j++)
    dets[j].track_id = 0;
  track_sort_predict (t);

  /* cost = 1 - IoU within a class, refused below the threshold */
  for (unsigned i = 0; i < t->n_tracks; i++) {
    const Track *k = &t->tracks[i];
    for (unsigned j = 0; j < n; j++) {
      double c = REFUSED;
      if (dets[j].class_id == k->pub.class_id) {
        float iou = track_box_iou (&k->pub.box, &dets[j].box);
        if (iou >= t->config.iou_threshold)
          c = 1.0 - iou;
      }
      t->cost[(size_t) i * n + j] = c;
    }
  }
  track_assign_solve (t->assign, t->cost, t->n_tracks, n, t->track_to_det);
  for (unsigned j = 0; j < n; j++)
    t->det_matched[j] = false;
  /* refused pairs are no match (before tracks move between slots) */
  for (unsigned i = 0; i < t->n_tracks; i++) {
    int j = t->track_to_det[i];
    if (j >= 0 && t->cost[(size_t) i * n + (unsigned) j] >= REFUSED)
      t->track_to_det[i] = -1;
  }

  for (unsigned i = 0; i < t->n_tracks;) {
    Track *k = &t->tracks[i];
    int j = t->track_to_det[i];
    if (j >= 0) {
      track_correct (k, &dets[j].box);
      k->pub.hits++;
      k->pub.misses = 0;
      confirm_if_due (t, k);
      dets[j].track_id = k->pub.id;
      t->det_matched[j] = true;
      i++;
      continue;
    }
    /* A tentative track missing once was most likely a false detection;
     * a confirmed one coasts on its prediction up to max_age results. */
    k->pub.hits = 0;
    k->pub.misses++;
    if (!k->pub.id || k->pub.misses > t->config.max_age)
      remove_track (t, i);      /* the last one moved into slot i */
    else
      i++;
  }

  for (unsigned j = 0; j < n; j++) {
    if (t->det_matched[j] || t->n_tracks == TRACK_SORT_MAX_TRACKS)
      continue;
    Track *k = &t->tracks[t->n_tracks++];
    track_start (k, &dets[j]);
    confirm_if_due (t, k);
    dets[j].track_id = k->pub.id;
  }
}

unsigned
track_sort_n_tracks (const TrackSort *t)
{
  return t->n_tracks;
}

const TrackSortTrack *
track_sort_track (const TrackSort *t, unsigned index)
{
  return index < t->n_tracks ? &t->tracks[index].pub : NULL;
}

uint32_t
track_sort_ids_given (const TrackSort *t)
{
  return t->next_id - 1;
}

const TrackSortTrack *
track_sort_find (const TrackSort *t, uint32_t id)
{
  if (!id)
    return NULL;
  for (unsigned i = 0; i < t->n_tracks; i++)
    if (t->tracks[i].pub.id == id)
      return &t->tracks[i].pub;
  return NULL;
}
