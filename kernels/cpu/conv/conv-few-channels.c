/*
 * conv-few-channels.c — see conv-few-channels.h.
 *
 * The phase buffer of a band: for channel c, padded row r (input row
 * r − pad_h, counted from the band's first) and column phase
 * q < stride_w, a row of `phase_w` floats
 * whose float k is input column k·stride_w + q − pad_w (0 outside the
 * input).  Output column ox's tap j then reads phase j mod stride_w at
 * ox + j div stride_w, so 16 consecutive outputs read 16 consecutive
 * floats, and every tap's offset from an output vector's first input is
 * the same for all output vectors (tap_off).
 *
 * The work goes in bands of output rows, each whole on one thread: the
 * thread copies the band's input rows into its own phase buffer (a few
 * dozen KB, in L1 and L2, where a whole image's was 700 KB written to
 * and read back from L3: 28 % of the kernel's time on MobileNetV2's
 * first layer), then runs the band's tiles.  Output vectors ("slots")
 * are the band's rows cut in vectors of 16 columns, the last one of a
 * row masked; a tile is 6 consecutive slots, which may span two rows,
 * and runs every group of 4 filters over its slots.
 */
#include "kernels/cpu/conv/conv-few-channels.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/conv/epilogue-avx512.h"
#include "kernels/cpu/lane-mask.h"

/* The register tile: FILTERS_T filters × SLOTS_T vectors of outputs, 24
 * accumulators, the 4 broadcast weights and an input vector: 29 of the
 * 32 registers.  Per tap 10 loads for 24 FMAs; 8 × 3 would need 8 weight
 * registers (33 in all) or a load per FMA. */
#define FILTERS_T 4
#define SLOTS_T 6

/* What the kernel takes at all (conv-strategy.c says where it pays). */
#define MAX_KERNEL 11
#define MAX_TAPS 1024

/* Output rows per band, at least (rounded up to whole tiles: 12 rows of
 * 112 outputs): few enough for the band's input rows to stay in L2 (7×7
 * stride 2 on 224: 3 × 29 rows of 2 × 128 floats, 89 KB), enough that
 * the rows two bands both read (kernel − stride) add little to the
 * copy. */
#define BAND_ROWS 8

struct hy_conv_few_channels {
  hy_conv_params p;
  int64_t channels, filters;
  int64_t in_h, in_w, out_h, out_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  int64_t taps;                 /* channels · kernel_h · kernel_w */
  int64_t groups;               /* of FILTERS_T filters, the last padded */
  int64_t vectors_w;            /* output vectors per row */
  int64_t phase_w;              /* floats per phase row */
  int64_t band_rows;            /* output rows per band */
  int64_t bands;                /* per image */
  int64_t rows;                 /* a band's padded input rows */
  int64_t row_stride;           /* floats from a padded row to the next */
  int64_t channel_stride;       /* ... from a channel to the next */
  int64_t *tap_off;             /* per tap, from a slot's first input */
  float *weights;               /* [group][tap][FILTERS_T] */
};

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* prfchw: PREFETCHW, which every AVX-512 CPU has. */
#define AVX512 __attribute__ ((target ("avx512f,prfchw")))
#define FC_INLINE static inline __attribute__ ((always_inline)) AVX512

/* The phase rows of a band whose first output row is oy0 and which
 * reads `rows` padded input rows, from image x into buf. */
static AVX512 void
fill_band (const hy_conv_few_channels *w, const float *x, int64_t oy0,
    int64_t rows, float *buf)
{
  const __m512i even = _mm512_set_epi32 (30, 28, 26, 24, 22, 20, 18, 16,
      14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32 (even, _mm512_set1_epi32 (1));
  for (int64_t i = 0; i < w->channels * rows; i++) {
    const int64_t c = i / rows, r = i % rows;
    const int64_t row = oy0 * w->stride_h + r - w->pad_h;
    float *dst = buf + c * w->channel_stride + r * w->row_stride;
    if (row < 0 || row >= w->in_h) {
      memset (dst, 0, (size_t) w->row_stride * sizeof (float));
      continue;
    }
    const float *src = x + (c * w->in_h + row) * w->in_w;
    if (w->stride_w == 1) {
      for (int64_t k = 0; k < w->phase_w; k += 16) {
        const int64_t col = k - w->pad_w;
        _mm512_store_ps (dst + k, _mm512_maskz_loadu_ps (hy_lanes_within
                (col, 0, w->in_w), src + col));
      }
      continue;
    }
    /* 32 input columns from 2k − pad_w on: the even ones are phase 0's
     * floats k to k + 15, the odd ones phase 1's. */
    for (int64_t k = 0; k < w->phase_w; k += 16) {
      const int64_t col = 2 * k - w->pad_w;
      __m512 lo, hi;
      if (col >= 0 && col + 32 <= w->in_w) {    /* most: no mask to make */
        lo = _mm512_loadu_ps (src + col);
        hi = _mm512_loadu_ps (src + col + 16);
      } else {
        lo = _mm512_maskz_loadu_ps (hy_lanes_within (col, 0, w->in_w),
            src + col);
        hi = _mm512_maskz_loadu_ps (hy_lanes_within (col + 16, 0, w->in_w),
            src + col + 16);
      }
      _mm512_store_ps (dst + k, _mm512_permutex2var_ps (lo, even, hi));
      _mm512_store_ps (dst + w->phase_w + k, _mm512_permutex2var_ps (lo, odd,
              hi));
    }
  }
}

/* Bands of the batch, on threads of their own. */
typedef struct tile_job {
  const hy_conv_few_channels *conv;
  const float *x;
  float *y;
  const float *res;             /* laid out as y; NULL: none */
  int64_t items;                /* bands of the batch */
  float *buf;                   /* the threads' phase buffers */
  size_t buf_stride;            /* bytes from a thread's to the next */
  const float *bias, *bn;       /* NULL: none */
  bool late_epilogue;           /* sigmoid, tanh: by epilogue.h */
  bool epilogue;                /* any at all */
} tile_job;

/* The epilogue and store of one filter's accumulators. */
FC_INLINE void
store_filter (const tile_job *j, int64_t f, const __m512 acc[SLOTS_T],
    const int64_t out_off[SLOTS_T], const __mmask16 store[SLOTS_T])
{
  const hy_conv_few_channels *w = j->conv;
  const hy_fused_epilogue *e = &w->p.fused;
  const int64_t plane = f * w->out_h * w->out_w;
  float *y = j->y + plane;
  if (!j->epilogue || j->late_epilogue) {
#pragma GCC unroll 6
    for (int s = 0; s < SLOTS_T; s++)
      _mm512_mask_storeu_ps (y + out_off[s], store[s], acc[s]);
    if (!j->epilogue)
      return;
    const hy_epilogue_channels ch = { j->bias, j->bn, w->filters };
    const hy_epilogue_channels own = hy_epilogue_channels_from (&ch, f);
    for (int s = 0; s < SLOTS_T; s++)
      if (store[s])
        hy_epilogue_rows (e, y + out_off[s], j->res ? j->res + plane
            + out_off[s] : NULL, 1, __builtin_popcount (store[s]), 0, &own);
    return;
  }
  const __m512 bias = _mm512_set1_ps (j->bias ? j->bias[f] : 0.0f);
  const __m512 alpha = _mm512_set1_ps (e->alpha);
  const __m512 beta = _mm512_set1_ps (e->beta);
  __m512 mean = _mm512_setzero_ps (), scale = mean, shift = mean;
  if (j->bn) {
    mean = _mm512_set1_ps (j->bn[f]);
    scale = _mm512_set1_ps (j->bn[f + w->filters]);
    shift = _mm512_set1_ps (j->bn[f + 2 * w->filters]);
  }
#pragma GCC unroll 6
  for (int s = 0; s < SLOTS_T; s++) {
    __m512 v = _mm512_add_ps (acc[s], bias);
    if (j->bn)
      v = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (v, mean), scale),
          shift);
    if (j->res)
      v = _mm512_add_ps (v, _mm512_maskz_loadu_ps (store[s], j->res + plane
              + out_off[s]));
    _mm512_mask_storeu_ps (y + out_off[s], store[s],
        hy_avx512_act (e->act, v, alpha, beta));
  }
}

/* Input rows to fetch while a band computes: `bytes` of each of
 * `channels` planes, the first from start, the next channel_bytes on. */
typedef struct prefetch_span {
  const char *start;
  int64_t bytes, channel_bytes, channels;
} prefetch_span;

/* Part `part` of `parts` of the span, into L2. */
FC_INLINE void
prefetch_part (const prefetch_span *pf, int64_t part, int64_t parts)
{
  const int64_t lo = pf->bytes * part / parts & ~(int64_t) 63;
  const int64_t hi = pf->bytes * (part + 1) / parts;
  for (int64_t c = 0; c < pf->channels; c++)
    for (int64_t at = lo; at < hi; at += 64)
      _mm_prefetch (pf->start + c * pf->channel_bytes + at, _MM_HINT_T1);
}

/* The output lines of the band's slots [first, last] (whose first
 * output is at out_off0 of every filter's plane), of every filter, into
 * L1 for writing, a tile ahead.  A tile's stores go to as many places as
 * there are filters, too many for the hardware's prefetchers to follow,
 * and the first layer's output is often no longer in any cache (ResNet-18's
 * 45 MB of weights pass through L3 every forward).  hybridinfer bench
 * --profile, one thread, rounds in alternation: ResNet-18's conv0 1-4 %
 * faster.  The prefetches cost 2.3 / taps of a tile's time: on the
 * MobileNets' 27 taps they were 2-4 % slower, so short tiles go
 * without. */
#define PREFETCHW_MIN_TAPS 64
FC_INLINE void
prefetch_outputs (const tile_job *j, int64_t out_off0, int64_t first,
    int64_t last)
{
  const hy_conv_few_channels *w = j->conv;
  const int64_t plane = w->out_h * w->out_w;
  const int64_t lo = out_off0 + first / w->vectors_w * w->out_w
      + first % w->vectors_w * 16;
  const int64_t hi = out_off0 + last / w->vectors_w * w->out_w
      + last % w->vectors_w * 16 + 16;
  for (int64_t f = 0; f < w->filters; f++)
    for (int64_t at = lo; at < hi + 15; at += 16)
      __builtin_prefetch (j->y + f * plane + at, 1, 3);
}

/* The tiles of a band of `slots` slots, whose phase rows are in buf and
 * whose first output is at out_off0 of every filter's plane; each tile
 * fetches its share of pf. */
FC_INLINE void
run_tiles (const tile_job *j, const float *buf, int64_t slots,
    int64_t out_off0, const prefetch_span *pf)
{
  const int64_t tiles = (slots + SLOTS_T - 1) / SLOTS_T;
  const hy_conv_few_channels *w = j->conv;
  const int64_t taps = w->taps;
  const int64_t *tap_off = w->tap_off;
  for (int64_t tile = 0; tile * SLOTS_T < slots; tile++) {
    prefetch_part (pf, tile, tiles);
    if (w->taps >= PREFETCHW_MIN_TAPS && (tile + 1) * SLOTS_T < slots)
      prefetch_outputs (j, out_off0, (tile + 1) * SLOTS_T,
          ((tile + 2) * SLOTS_T < slots ? (tile + 2) * SLOTS_T : slots) - 1);
    const float *base[SLOTS_T];
    int64_t out_off[SLOTS_T];
    __mmask16 store[SLOTS_T];
    for (int s = 0; s < SLOTS_T; s++) {
      /* Past the band's last slot: the first one again, not stored. */
      const int64_t slot = tile * SLOTS_T + s < slots ? tile * SLOTS_T + s
          : tile * SLOTS_T;
      const int64_t oy = slot / w->vectors_w;
      const int64_t ox = slot % w->vectors_w * 16;
      base[s] = buf + oy * w->stride_h * w->row_stride + ox;
      out_off[s] = out_off0 + oy * w->out_w + ox;
      store[s] = tile * SLOTS_T + s < slots
          ? hy_lanes_within (ox, 0, w->out_w) : 0;
    }
    for (int64_t g = 0; g < w->groups; g++) {
      const float *wg = w->weights + g * taps * FILTERS_T;
      __m512 acc[FILTERS_T][SLOTS_T];
      for (int k = 0; k < FILTERS_T; k++)
        for (int s = 0; s < SLOTS_T; s++)
          acc[k][s] = _mm512_setzero_ps ();
      for (int64_t t = 0; t < taps; t++) {
        const int64_t off = tap_off[t];
        const float *wt = wg + t * FILTERS_T;
        const __m512 w0 = _mm512_set1_ps (wt[0]);
        const __m512 w1 = _mm512_set1_ps (wt[1]);
        const __m512 w2 = _mm512_set1_ps (wt[2]);
        const __m512 w3 = _mm512_set1_ps (wt[3]);
#pragma GCC unroll 6
        for (int s = 0; s < SLOTS_T; s++) {
          const __m512 x = _mm512_loadu_ps (base[s] + off);
          acc[0][s] = _mm512_fmadd_ps (x, w0, acc[0][s]);
          acc[1][s] = _mm512_fmadd_ps (x, w1, acc[1][s]);
          acc[2][s] = _mm512_fmadd_ps (x, w2, acc[2][s]);
          acc[3][s] = _mm512_fmadd_ps (x, w3, acc[3][s]);
        }
      }
#pragma GCC unroll 4
      for (int k = 0; k < FILTERS_T; k++) {
        const int64_t f = g * FILTERS_T + k;
        if (f < w->filters)
          store_filter (j, f, acc[k], out_off, store);
      }
    }
  }
}

static AVX512 void
run_bands (void *arg, int64_t begin, int64_t end, int thread)
{
  const tile_job *j = arg;
  const hy_conv_few_channels *w = j->conv;
  float *buf = (float *) ((char *) j->buf + (size_t) thread * j->buf_stride);
  const int64_t in_image = w->channels * w->in_h * w->in_w;
  const int64_t out_image = w->filters * w->out_h * w->out_w;
  for (int64_t i = begin; i < end; i++) {
    const int64_t b = i / w->bands;
    const int64_t oy0 = i % w->bands * w->band_rows;
    const int64_t n = w->out_h - oy0 < w->band_rows ? w->out_h - oy0
        : w->band_rows;
    fill_band (w, j->x + b * in_image, oy0, (n - 1) * w->stride_h
        + w->kernel_h, buf);
    tile_job band = *j;
    band.y = j->y + b * out_image;
    band.res = j->res ? j->res + b * out_image : NULL;
    /* The next band's input rows, which this thread is likely to take
     * next (else the other thread, sharing L3), fetched while this one
     * computes: the input is often cold (in memory: the first layer's,
     * read once per forward), and each band's copy stalled on it (40 %
     * of the kernel's time in MobileNetV3's forward). */
    prefetch_span pf = { NULL, 0, w->in_h * w->in_w * sizeof (float),
      w->channels };
    if (i + 1 < j->items) {
      const int64_t nb = (i + 1) / w->bands;
      const int64_t ny0 = (i + 1) % w->bands * w->band_rows;
      int64_t r0 = ny0 * w->stride_h - w->pad_h, r1 = r0 + w->rows;
      r0 = r0 < 0 ? 0 : r0;
      r1 = r1 > w->in_h ? w->in_h : r1;
      if (r1 > r0) {
        pf.start = (const char *) (j->x + nb * in_image + r0 * w->in_w);
        pf.bytes = (r1 - r0) * w->in_w * (int64_t) sizeof (float);
      }
    }
    run_tiles (&band, buf, n * w->vectors_w, oy0 * w->out_w, &pf);
  }
}

#else

#define AVX512

#endif

bool
hy_conv_few_channels_runs (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const)
{
  if (!hy_cpu_features_get ()->avx512f || !weights_const || n_in < 2
      || p->n_spatial != 2 || p->num_group != 1)
    return false;
  for (int i = 0; i < 2; i++)
    if (p->kernel[i] < 1 || p->kernel[i] > MAX_KERNEL || p->dilate[i] != 1
        || p->stride[i] < 1 || p->stride[i] > 2 || p->pad[i] < 0)
      return false;
  const hy_shape *x = &in[0]->shape, *y = &out->shape;
  const int64_t channels = x->dims[1], filters = y->dims[1];
  return x->dims[0] != 0 && channels != 0 && filters != 0 && y->dims[2] != 0
      && y->dims[3] != 0
      && channels * p->kernel[0] * p->kernel[1] <= MAX_TAPS;
}

hy_conv_few_channels *
hy_conv_few_channels_new (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const)
{
  if (!hy_conv_few_channels_runs (p, in, n_in, out, weights_const))
    return NULL;
  const hy_shape *x = &in[0]->shape, *y = &out->shape;
  const int64_t channels = x->dims[1], filters = y->dims[1];

  hy_conv_few_channels *w = g_new0 (hy_conv_few_channels, 1);
  w->p = *p;
  w->channels = channels;
  w->filters = filters;
  w->in_h = x->dims[2];
  w->in_w = x->dims[3];
  w->out_h = y->dims[2];
  w->out_w = y->dims[3];
  w->kernel_h = p->kernel[0];
  w->kernel_w = p->kernel[1];
  w->stride_h = p->stride[0];
  w->stride_w = p->stride[1];
  w->pad_h = p->pad[0];
  w->pad_w = p->pad[1];
  w->taps = channels * w->kernel_h * w->kernel_w;
  w->groups = (filters + FILTERS_T - 1) / FILTERS_T;
  w->vectors_w = (w->out_w + 15) / 16;
  /* A slot's loads reach (kernel_w − 1) div stride_w past its 16. */
  w->phase_w = (w->vectors_w * 16 + (w->kernel_w - 1) / w->stride_w + 15)
      / 16 * 16;
  /* Bands of whole tiles where the rows allow: band_rows · vectors_w a
   * multiple of SLOTS_T. */
  int64_t unit = SLOTS_T;
  for (int64_t d = SLOTS_T; d > 1; d--)
    if (SLOTS_T % d == 0 && w->vectors_w % d == 0) {
      unit = SLOTS_T / d;
      break;
    }
  w->band_rows = (BAND_ROWS + unit - 1) / unit * unit;
  if (w->band_rows > w->out_h)
    w->band_rows = w->out_h;
  w->bands = (w->out_h + w->band_rows - 1) / w->band_rows;
  w->rows = (w->band_rows - 1) * w->stride_h + w->kernel_h;
  w->row_stride = w->stride_w * w->phase_w;
  w->channel_stride = w->rows * w->row_stride;

  w->tap_off = g_new (int64_t, w->taps);
  w->weights = aligned_alloc (64, ((size_t) (w->groups * w->taps * FILTERS_T)
          * sizeof (float) + 63) & ~(size_t) 63);
  if (!w->weights) {
    hy_conv_few_channels_free (w);
    return NULL;                /* the packed kernel then runs it */
  }
  const float *weight = in[1]->data;
  for (int64_t c = 0, t = 0; c < channels; c++)
    for (int64_t i = 0; i < w->kernel_h; i++)
      for (int64_t k = 0; k < w->kernel_w; k++, t++) {
        w->tap_off[t] = c * w->channel_stride + i * w->row_stride
            + k % w->stride_w * w->phase_w + k / w->stride_w;
        for (int64_t f = 0; f < w->groups * FILTERS_T; f++)
          w->weights[(f / FILTERS_T * w->taps + t) * FILTERS_T
              + f % FILTERS_T] = f < filters ? weight[f * w->taps + t] : 0.0f;
      }
  return w;
}

void
hy_conv_few_channels_free (hy_conv_few_channels *conv)
{
  if (!conv)
    return;
  g_free (conv->tap_off);
  free (conv->weights);
  g_free (conv);
}

void
hy_cpu_convolution_few_channels (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
#if defined(__x86_64__) && defined(__GNUC__)
  const hy_conv_few_channels *w = params;
  const hy_conv_params *p = &w->p;
  const hy_epilogue_operands o = hy_epilogue_operands_of (p->no_bias,
      &p->fused, in);
  const int64_t batch = in[0]->shape.dims[0];
  tile_job j = {
    .conv = w, .x = in[0]->data, .y = out[0]->data, .res = o.res,
    .bias = o.bias, .bn = o.bn,
    /* Sigmoid and tanh have no vector form: their outputs are stored as
     * summed, and epilogue.h's loop runs the whole epilogue on them. */
    .late_epilogue = !hy_avx512_act_computes (p->fused.act),
    .epilogue = o.bias || hy_epilogue_is_set (&p->fused),
  };
  /* A band's phase rows: every slot's loads end inside them. */
  j.buf = hy_cpu_workspace_per_thread (ctx, (size_t) (w->channels
          * w->channel_stride) * sizeof (float), &j.buf_stride);
  j.items = batch * w->bands;
  hy_cpu_parallel_each (ctx, j.items, run_bands, &j);
#endif
}
