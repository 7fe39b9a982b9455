/*
 * roi-align.c — CPU kernel of _contrib_ROIAlign.
 *
 * Per ROI, the bilinear taps of every sample of every bin are worked out
 * once (four input offsets and weights, as MXNet's pre-calculation does:
 * samples beyond one pixel outside the map weigh nothing, those inside
 * are clamped to the last row or column), then each channel sums its
 * bins' samples in MXNet's order and divides by the sample count (a ROI
 * with no samples, from a NaN or empty aligned box, gives NaN).  The
 * arithmetic is float, in MXNet's order.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/vision.h"

void hy_cpu_roi_align (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct tap4 {
  int64_t pos[4];
  float w[4];
} tap4;

typedef struct roi_job {
  const hy_roi_align_params *p;
  const float *x, *rois;
  float *y;
  int64_t n, c_in, c_out, h, w;
  int64_t grid_max;             /* the most samples per bin of any ROI */
  char *scratch;
  size_t scratch_stride;
} roi_job;

/* The sample grid of one axis (sample_ratio, or the bin's size rounded
 * up; a NaN or negative size gives none). */
static int64_t
grid_of (int sample_ratio, float roi_size, int64_t pooled)
{
  if (sample_ratio > 0)
    return sample_ratio;
  float g = ceilf (roi_size / (float) pooled);
  return g >= 1.0f && g < 1e9f ? (int64_t) g : 0;
}

/* One ROI in feature-map coordinates. */
typedef struct roi_geom {
  float x0, y0, rw, rh;
  int64_t gh, gw;
} roi_geom;

static roi_geom
roi_geometry (const hy_roi_align_params *p, const float *roi)
{
  const float off = p->aligned ? 0.5f : 0.0f;
  roi_geom g;
  g.x0 = roi[1] * p->spatial_scale - off;
  g.y0 = roi[2] * p->spatial_scale - off;
  g.rw = (roi[3] * p->spatial_scale - off) - g.x0;
  g.rh = (roi[4] * p->spatial_scale - off) - g.y0;
  if (!p->aligned) {
    g.rw = fmaxf (g.rw, 1.0f);
    g.rh = fmaxf (g.rh, 1.0f);
  }
  g.gh = grid_of (p->sample_ratio, g.rh, p->pooled_h);
  g.gw = grid_of (p->sample_ratio, g.rw, p->pooled_w);
  return g;
}


static void
roi_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const roi_job *j = arg;
  const hy_roi_align_params *p = j->p;
  const int64_t ph = p->pooled_h, pw = p->pooled_w, bins = ph * pw;
  const int64_t plane = j->h * j->w;
  tap4 *taps = (tap4 *) (j->scratch + (size_t) thread * j->scratch_stride);
  for (int64_t r = begin; r < end; r++) {
    const float *roi = j->rois + r * 5;
    float *y = j->y + r * j->c_out * bins;
    const float b = roi[0];
    /* MXNet truncates the index; a negative one (or one past the batch,
     * which MXNet would read beyond its input for) gives zeros.  Compared
     * as a float first: NaN, and a value past int64_t's range, have no
     * integer to convert to.  Below 4e18 the truncation is exact, so a
     * sane index is tested as before. */
    if (!(b >= 0.0f && b < 4e18f && (int64_t) b < j->n)) {
      memset (y, 0, (size_t) (j->c_out * bins) * sizeof (float));
      continue;
    }
    const int64_t batch = (int64_t) b;
    const roi_geom g = roi_geometry (p, roi);
    const float x0 = g.x0, y0 = g.y0;
    const float bh = g.rh / (float) ph, bw = g.rw / (float) pw;
    const int64_t gh = g.gh, gw = g.gw;
    const float count = (float) (gh * gw);
    tap4 *t = taps;
    for (int64_t i = 0; i < ph; i++) {
      for (int64_t k = 0; k < pw; k++) {
        for (int64_t iy = 0; iy < gh; iy++) {
          const float yy = y0 + (float) i * bh
              + ((float) iy + 0.5f) * bh / (float) gh;
          for (int64_t ix = 0; ix < gw; ix++, t++) {
            float xx = x0 + (float) k * bw
                + ((float) ix + 0.5f) * bw / (float) gw;
            float sy = yy;
            if (sy < -1.0f || sy > (float) j->h || xx < -1.0f
                || xx > (float) j->w) {
              *t = (tap4) { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
              continue;
            }
            if (sy <= 0)
              sy = 0;
            if (xx <= 0)
              xx = 0;
            int64_t ylo = (int64_t) sy, xlo = (int64_t) xx, yhi, xhi;
            if (ylo >= j->h - 1) {
              yhi = ylo = j->h - 1;
              sy = (float) ylo;
            } else
              yhi = ylo + 1;
            if (xlo >= j->w - 1) {
              xhi = xlo = j->w - 1;
              xx = (float) xlo;
            } else
              xhi = xlo + 1;
            const float ly = sy - (float) ylo, lx = xx - (float) xlo;
            const float hy = 1.0f - ly, hx = 1.0f - lx;
            *t = (tap4) {
              { ylo * j->w + xlo, ylo * j->w + xhi, yhi * j->w + xlo,
                yhi * j->w + xhi },
              { hy * hx, hy * lx, ly * hx, ly * lx },
            };
          }
        }
      }
    }
    const int64_t per_bin = gh * gw;
    for (int64_t c = 0; c < j->c_out; c++) {
      for (int64_t bin = 0; bin < bins; bin++) {
        const int64_t cin = p->position_sensitive ? c * bins + bin : c;
        const float *xc = j->x + (batch * j->c_in + cin) * plane;
        const tap4 *tb = taps + bin * per_bin;
        float v = 0.0f;
        for (int64_t s = 0; s < per_bin; s++)
          v += tb[s].w[0] * xc[tb[s].pos[0]] + tb[s].w[1] * xc[tb[s].pos[1]]
              + tb[s].w[2] * xc[tb[s].pos[2]] + tb[s].w[3] * xc[tb[s].pos[3]];
        y[c * bins + bin] = v / count;
      }
    }
  }
}

void
hy_cpu_roi_align (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_roi_align_params *p = params;
  const hy_shape *d = &in[0]->shape;
  const int64_t rois = in[1]->shape.dims[0];
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;
  roi_job j = {
    .p = p, .x = in[0]->data, .rois = in[1]->data, .y = out[0]->data,
    .n = d->dims[0], .c_in = d->dims[1], .c_out = out[0]->shape.dims[1],
    .h = d->dims[2], .w = d->dims[3],
  };
  /* Samples per bin: sample_ratio², or with adaptive grids the most any
   * of these ROIs needs (a scan of the ROIs, so the taps of every ROI
   * fit; the workspace grows only for a larger ROI than ever before). */
  const int64_t bins = p->pooled_h * p->pooled_w;
  j.grid_max = 1;
  if (p->sample_ratio > 0)
    j.grid_max = (int64_t) p->sample_ratio * p->sample_ratio;
  else {
    for (int64_t r = 0; r < rois; r++) {
      roi_geom g = roi_geometry (p, j.rois + r * 5);
      if (g.gh * g.gw > j.grid_max)
        j.grid_max = g.gh * g.gw;
    }
  }
  /* A size that cannot be had (from absurd ROIs) saturates, and the
   * workspace fails the forward as out of memory. */
  double bytes = (double) bins * (double) j.grid_max * sizeof (tap4);
  j.scratch = hy_cpu_workspace_per_thread (ctx,
      bytes < (double) (SIZE_MAX / 64) ? (size_t) bytes : SIZE_MAX / 64,
      &j.scratch_stride);
  hy_cpu_parallel_for (ctx, rois, 1, roi_rows, &j);
}
