/*
 * track-sort.h — a SORT-class multi-object tracker, plain C (no GLib, no
 * GStreamer) so that its unit test drives it alone.
 *
 * One tracker follows one stream.  Time advances one frame per call:
 * track_sort_update() for a frame the detector ran on (predict, associate,
 * correct), track_sort_predict() for a frame it skipped (predict only).
 *
 * Each track is a constant-velocity Kalman filter on the box's centre and
 * size (cx, cy, w, h and their velocities, per frame).  Detections are
 * matched to the tracks of their own class by IoU with an optimal
 * assignment (track-assign.h); a match needs at least `iou_threshold`.
 * An unmatched detection starts a tentative track; a track is confirmed,
 * and gets its id, after `min_hits` consecutive matched results; a
 * tentative track that misses once is dropped, a confirmed one survives
 * `max_age` results without a match (ids stay with their object through
 * short occlusions and missed detections) and is then deleted.  Ids count
 * from 1 and are never reused within a stream (until track_sort_reset).
 *
 * Nothing is allocated after track_sort_new().
 */
#ifndef TRACK_SORT_H
#define TRACK_SORT_H

#include <stdbool.h>
#include <stdint.h>

/* The most tracks alive at once, and detections per result considered:
 * the work arrays are sized for them once. */
#define TRACK_SORT_MAX_TRACKS 256
#define TRACK_SORT_MAX_DETECTIONS 256

typedef struct {
  float x, y, w, h;             /* top-left corner and size, pixels */
} TrackBox;

typedef struct {
  TrackBox box;
  int class_id;
  /* out: the confirmed track it belongs to, 0 when none (yet) */
  uint32_t track_id;
} TrackDetection;

typedef struct {
  unsigned min_hits;            /* consecutive matches before an id; >= 1 */
  unsigned max_age;             /* results without a match before deletion */
  float iou_threshold;          /* the least IoU a match needs, (0, 1] */
} TrackSortConfig;

typedef struct {
  uint32_t id;                  /* 0 while tentative */
  int class_id;
  TrackBox box;                 /* the filter's estimate for this frame */
  unsigned hits;                /* matched results in a row */
  unsigned misses;              /* results in a row without a match */
} TrackSortTrack;

typedef struct TrackSort TrackSort;

/* NULL on a configuration out of range or no memory. */
TrackSort *track_sort_new (const TrackSortConfig *config);
void track_sort_free (TrackSort *tracker);
/* Forget every track; ids start again from 1. */
void track_sort_reset (TrackSort *tracker);
/* Forget every track; ids go on from the last (a new object never takes
 * an id an old one had, as after a seek in the same stream). */
void track_sort_clear (TrackSort *tracker);
/* Takes effect from the next frame; false (and no change) when out of
 * range. */
bool track_sort_configure (TrackSort *tracker, const TrackSortConfig *config);

/* A frame without a new result: every track moves along its velocity. */
void track_sort_predict (TrackSort *tracker);

/* A frame with a new result: detections[i].track_id is set for every one.
 * Past TRACK_SORT_MAX_DETECTIONS, or with no room for another track, a
 * detection gets 0. */
void track_sort_update (TrackSort *tracker, TrackDetection *detections,
    unsigned n_detections);

/* The tracks alive (tentative ones included), in no particular order. */
unsigned track_sort_n_tracks (const TrackSort *tracker);
const TrackSortTrack *track_sort_track (const TrackSort *tracker,
    unsigned index);
/* The confirmed track `id`, or NULL when it is gone. */
const TrackSortTrack *track_sort_find (const TrackSort *tracker, uint32_t id);

/* Ids given since the start (or the last reset): the last id. */
uint32_t track_sort_ids_given (const TrackSort *tracker);

float track_box_iou (const TrackBox *a, const TrackBox *b);

#endif /* TRACK_SORT_H */
