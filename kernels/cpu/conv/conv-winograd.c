/*
 * conv-winograd.c — see conv-winograd.h.
 *
 * With d an α×α input block (α = 6 for F(4×4, 3×3), 4 for F(2×2, 3×3)),
 * g a 3×3 filter and Bᵀ, G, Aᵀ the form's matrices below, a tile's
 * outputs are Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A.  Over C channels and K filters,
 * with U = G g Gᵀ (K × C per transform position ξ, packed once) and
 * V = Bᵀ d B (C × tiles per ξ):
 *   M_ξ = U_ξ · V_ξ   for the α² positions ξ,
 * and each filter's tile is Aᵀ M A.
 *
 * The work goes a block of tile rows at a time (one image's), sized so
 * that V and M stay in the caches, in three parallel loops: the input
 * transform over channels, the α² products, the output transform (and
 * the fused epilogue, on the block's rows still in cache) over filters.
 * Only the transforms differ between the forms.
 *
 * Vectors run along a tile row, one tile per lane: in F(4×4) a lane's 6
 * input columns are 4 apart from its neighbour's, so each input row is
 * loaded as 5 plain vectors (80 floats cover 16 tiles' 66) and dealt out
 * by permutes; the outputs' 4 columns per lane are put back together the
 * same way (F(2×2): 4 columns 2 apart, 3 vectors).  Lanes in the padding
 * are masked off: masked-off lanes are never read, so loads that start
 * before a row or end past the plane are safe, and read as 0.
 */
#include "kernels/cpu/conv/conv-winograd.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/lane-mask.h"
#include "kernels/cpu/conv/sgemm-packed.h"

/* Tile and transform sizes of the two forms. */
#define TILE4 4
#define ALPHA4 6
#define TILE2 2
#define ALPHA2 4
#define MAX_N_XI (ALPHA4 * ALPHA4)

/* How blocks are cut and shared out.  Every block reads all of U, so
 * with U small (up to SMALL_U_BYTES: 64 channels and filters), each
 * thread takes whole blocks of its own, of up to THREAD_BLOCK_BYTES of V
 * and M: half the L2 of the Zen 5 it was measured on (conv-bench
 * --winograd, one thread: 3-13 % faster than 256 KiB or 1 MiB on
 * ResNet's 56×56 and 28×28 layers).  With a larger U, blocks small
 * enough for that would read it from memory again and again (ResNet-18's
 * 14×14 layers, 9.4 MB of U for 4 tiles a block, ran no faster than the
 * packed kernel): the blocks are then up to SHARED_BLOCK_BYTES (a whole
 * map at batch 1 on ResNet's 28×28 and 14×14 layers), or a quarter of U
 * where that is more (512 filters: U is 38 MB; one block instead of two
 * was 1.35× the packed kernel instead of 1.25× on 7×7 maps at batch 8,
 * one thread), and each of their steps is split over the threads
 * (hybridinfer bench --profile, ResNet-18 b1, 2 threads: 0.21 ms a 28×28
 * layer instead of 0.28, 0.43 a 14×14 one instead of 0.61; on 56×56 the
 * other way round, 0.22 against 0.50).  Blocks cross from one image into
 * the next, so that small maps make blocks of many tiles too. */
#define SMALL_U_BYTES (1024 * 1024)
#define THREAD_BLOCK_BYTES (512 * 1024)
#define SHARED_BLOCK_BYTES (4 * 1024 * 1024)

/* The products always take the packed kernel's narrow tiles (48 filters
 * × up to 8 tiles): a block has tens of tiles, where the wide ones (8 ×
 * 48) were up to 2× slower (28×28 maps), and never more than 7 % faster
 * (56×56, 112×112). */
#define LAYOUT HY_PACKED_NARROW

struct hy_conv_winograd {
  hy_conv_params p;
  int tile, alpha, n_xi;        /* F(tile×tile, 3×3): alpha = tile + 2 */
  int64_t channels, filters;
  int64_t in_h, in_w, out_h, out_w, pad_h, pad_w;
  int64_t tiles_h, tiles_w;
  int64_t block_rows;           /* tile rows per block, at most */
  bool blocks_per_thread;       /* whole blocks on each thread, or each
                                 * block's steps split over them */
  size_t u_floats;              /* one position's packed U */
  float *u;                     /* n_xi packed (filters, channels) */
};

/* The forms' G (alpha × 3). */
static const double G4[ALPHA4][3] = {
  { 1.0 / 4, 0, 0 },
  { -1.0 / 6, -1.0 / 6, -1.0 / 6 },
  { -1.0 / 6, 1.0 / 6, -1.0 / 6 },
  { 1.0 / 24, 1.0 / 12, 1.0 / 6 },
  { 1.0 / 24, -1.0 / 12, 1.0 / 6 },
  { 0, 0, 1 },
};
static const double G2[ALPHA2][3] = {
  { 1, 0, 0 },
  { 0.5, 0.5, 0.5 },
  { 0.5, -0.5, 0.5 },
  { 0, 0, 1 },
};

/* G g Gᵀ of one 3×3 filter, in double: F(4×4)'s fractions (1/6, 1/24)
 * are not floats, so the filter is rounded once, at the end. */
static void
filter_transform (const double (*G)[3], int alpha, const float *g, float *u,
    int64_t u_stride)
{
  double gg[ALPHA4][3];
  for (int i = 0; i < alpha; i++)
    for (int j = 0; j < 3; j++)
      gg[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
  for (int i = 0; i < alpha; i++)
    for (int j = 0; j < alpha; j++)
      u[(i * alpha + j) * u_stride] = (float) (gg[i][0] * G[j][0]
          + gg[i][1] * G[j][1] + gg[i][2] * G[j][2]);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__ ((target ("avx512f")))
#define WG_INLINE static inline __attribute__ ((always_inline)) AVX512

/* F(4×4, 3×3)'s Bᵀ on six vectors (a column of six rows, or a row of six
 * columns):
 *   t0 = 4d0 − 5d2 + d4        t3 = −2d1 − d2 + 2d3 + d4
 *   t1 = −4d1 − 4d2 + d3 + d4   t4 = 2d1 − d2 − 2d3 + d4
 *   t2 = 4d1 − 4d2 − d3 + d4    t5 = 4d1 − 5d3 + d5 */
WG_INLINE void
input_1d_f4 (const __m512 d[ALPHA4], __m512 t[ALPHA4])
{
  const __m512 four = _mm512_set1_ps (4.0f), five = _mm512_set1_ps (5.0f);
  const __m512 two = _mm512_set1_ps (2.0f);
  t[0] = _mm512_fmadd_ps (four, d[0], _mm512_fnmadd_ps (five, d[2], d[4]));
  const __m512 p = _mm512_fnmadd_ps (four, d[2], d[4]);
  const __m512 q = _mm512_fnmadd_ps (four, d[1], d[3]);
  t[1] = _mm512_add_ps (p, q);
  t[2] = _mm512_sub_ps (p, q);
  const __m512 r = _mm512_sub_ps (d[4], d[2]);
  const __m512 s = _mm512_mul_ps (two, _mm512_sub_ps (d[3], d[1]));
  t[3] = _mm512_add_ps (r, s);
  t[4] = _mm512_sub_ps (r, s);
  t[5] = _mm512_fmadd_ps (four, d[1], _mm512_fnmadd_ps (five, d[3], d[5]));
}

/* F(4×4, 3×3)'s Aᵀ on six vectors:
 *   o0 = m0 + m1 + m2 + m3 + m4    o2 = m1 + m2 + 4(m3 + m4)
 *   o1 = m1 − m2 + 2(m3 − m4)      o3 = m1 − m2 + 8(m3 − m4) + m5 */
WG_INLINE void
output_1d_f4 (const __m512 m[ALPHA4], __m512 o[TILE4])
{
  const __m512 a = _mm512_add_ps (m[1], m[2]);
  const __m512 b = _mm512_sub_ps (m[1], m[2]);
  const __m512 c = _mm512_add_ps (m[3], m[4]);
  const __m512 d = _mm512_sub_ps (m[3], m[4]);
  o[0] = _mm512_add_ps (_mm512_add_ps (m[0], a), c);
  o[1] = _mm512_fmadd_ps (_mm512_set1_ps (2.0f), d, b);
  o[2] = _mm512_fmadd_ps (_mm512_set1_ps (4.0f), c, a);
  o[3] = _mm512_add_ps (_mm512_fmadd_ps (_mm512_set1_ps (8.0f), d, b), m[5]);
}

/* Lane l of the result is float 4l + j of the 64 in q[0..3]. */
WG_INLINE __m512
every_fourth (const __m512 q[4], int j)
{
  /* (4l + j) mod 32: the same index picks lanes 0-7 out of q[0..1] and
   * lanes 8-15 out of q[2..3]. */
  const __m512i idx = _mm512_add_epi32 (_mm512_set_epi32 (28, 24, 20, 16,
          12, 8, 4, 0, 28, 24, 20, 16, 12, 8, 4, 0), _mm512_set1_epi32 (j));
  const __m512 lo = _mm512_permutex2var_ps (q[0], idx, q[1]);
  const __m512 hi = _mm512_permutex2var_ps (q[2], idx, q[3]);
  return _mm512_mask_blend_ps (0xff00, lo, hi);
}

/* One channel's V for up to 16 tiles of a tile row, F(4×4, 3×3): plane
 * is the channel's input, row0/col0 the input row and column of the first
 * tile's block (negative in the padding), v its V at position 0
 * (positions xi_stride floats apart). */
WG_INLINE void
input_tiles_f4 (const float *plane, int64_t in_h, int64_t in_w, int64_t row0,
    int64_t col0, int n, float *v, int64_t xi_stride)
{
  /* The 4n + 2 input columns the tiles read, in 5 vectors. */
  __mmask16 load[5];
  for (int s = 0; s < 5; s++)
    load[s] = hy_lanes_within (col0 + 16 * s, 0, in_w)
        & hy_lanes_within (col0 + 16 * s, col0, col0 + TILE4 * n + 2);
  /* Bᵀ down the columns first, 80 columns at a time; then along each of
   * the six transformed rows, tile by tile. */
  __m512 col_t[ALPHA4][5];
  for (int s = 0; s < 5; s++) {
    __m512 d[ALPHA4], t[ALPHA4];
    for (int i = 0; i < ALPHA4; i++) {
      const int64_t r = row0 + i;
      d[i] = r >= 0 && r < in_h && load[s]
          ? _mm512_maskz_loadu_ps (load[s], plane + r * in_w + col0 + 16 * s)
          : _mm512_setzero_ps ();
    }
    input_1d_f4 (d, t);
    for (int i = 0; i < ALPHA4; i++)
      col_t[i][s] = t[i];
  }
  const __mmask16 store = hy_lanes_within (0, 0, n);
  for (int i = 0; i < ALPHA4; i++) {
    const __m512 *q = col_t[i];
    /* The same 64 floats from column 4 on: lanes' columns 4 and 5. */
    const __m512 q4[4] = {
      _mm512_castsi512_ps (_mm512_alignr_epi32 (_mm512_castps_si512 (q[1]),
              _mm512_castps_si512 (q[0]), 4)),
      _mm512_castsi512_ps (_mm512_alignr_epi32 (_mm512_castps_si512 (q[2]),
              _mm512_castps_si512 (q[1]), 4)),
      _mm512_castsi512_ps (_mm512_alignr_epi32 (_mm512_castps_si512 (q[3]),
              _mm512_castps_si512 (q[2]), 4)),
      _mm512_castsi512_ps (_mm512_alignr_epi32 (_mm512_castps_si512 (q[4]),
              _mm512_castps_si512 (q[3]), 4)),
    };
    const __m512 d[ALPHA4] = {
      every_fourth (q, 0), every_fourth (q, 1), every_fourth (q, 2),
      every_fourth (q, 3), every_fourth (q4, 0), every_fourth (q4, 1),
    };
    __m512 t[ALPHA4];
    input_1d_f4 (d, t);
    for (int j = 0; j < ALPHA4; j++)
      _mm512_mask_storeu_ps (v + (i * ALPHA4 + j) * xi_stride, store, t[j]);
  }
}

/* Lanes' 4 columns, o[c][l] of lane (tile) l, back in order: 64 floats,
 * column 4l + c, in y[0..3]. */
WG_INLINE void
interleave_columns (const __m512 o[TILE4], __m512 y[4])
{
  /* Pairs (o0[l], o1[l]) and (o2[l], o3[l]), tiles 0-7 then 8-15 ... */
  const __m512i pair_lo = _mm512_set_epi32 (23, 7, 22, 6, 21, 5, 20, 4,
      19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i pair_hi = _mm512_add_epi32 (pair_lo, _mm512_set1_epi32 (8));
  const __m512 a_lo = _mm512_permutex2var_ps (o[0], pair_lo, o[1]);
  const __m512 a_hi = _mm512_permutex2var_ps (o[0], pair_hi, o[1]);
  const __m512 b_lo = _mm512_permutex2var_ps (o[2], pair_lo, o[3]);
  const __m512 b_hi = _mm512_permutex2var_ps (o[2], pair_hi, o[3]);
  /* ... then a pair of each per tile: 4 tiles per vector. */
  const __m512i quad_lo = _mm512_set_epi32 (23, 22, 7, 6, 21, 20, 5, 4,
      19, 18, 3, 2, 17, 16, 1, 0);
  const __m512i quad_hi = _mm512_add_epi32 (quad_lo, _mm512_set1_epi32 (8));
  y[0] = _mm512_permutex2var_ps (a_lo, quad_lo, b_lo);
  y[1] = _mm512_permutex2var_ps (a_lo, quad_hi, b_lo);
  y[2] = _mm512_permutex2var_ps (a_hi, quad_lo, b_hi);
  y[3] = _mm512_permutex2var_ps (a_hi, quad_hi, b_hi);
}

/* One filter's outputs of up to 16 tiles of a tile row, F(4×4, 3×3): m
 * is its M at
 * position 0 (positions xi_stride floats apart), y the output at the first
 * tile's top-left, `rows` and `cols` the outputs inside the map. */
WG_INLINE void
output_tiles_f4 (const float *m, int64_t xi_stride, int n, float *y,
    int64_t out_w, int rows, int64_t cols)
{
  const __mmask16 lanes = hy_lanes_within (0, 0, n);
  __m512 col_t[TILE4][ALPHA4];
  for (int j = 0; j < ALPHA4; j++) {
    __m512 v[ALPHA4], o[TILE4];
    for (int i = 0; i < ALPHA4; i++)
      v[i] = _mm512_maskz_loadu_ps (lanes, m + (i * ALPHA4 + j) * xi_stride);
    output_1d_f4 (v, o);
    for (int r = 0; r < TILE4; r++)
      col_t[r][j] = o[r];
  }
  __mmask16 store[4];
  for (int s = 0; s < 4; s++)
    store[s] = hy_lanes_within (16 * s, 0, cols);
  for (int r = 0; r < rows; r++) {
    __m512 o[TILE4], out[4];
    output_1d_f4 (col_t[r], o);
    interleave_columns (o, out);
    for (int s = 0; s < 4; s++)
      if (store[s])
        _mm512_mask_storeu_ps (y + r * out_w + 16 * s, store[s], out[s]);
  }
}

/* F(2×2, 3×3)'s Bᵀ on four vectors:
 *   t0 = d0 − d2   t1 = d1 + d2   t2 = d2 − d1   t3 = d1 − d3 */
WG_INLINE void
input_1d_f2 (const __m512 d[ALPHA2], __m512 t[ALPHA2])
{
  t[0] = _mm512_sub_ps (d[0], d[2]);
  t[1] = _mm512_add_ps (d[1], d[2]);
  t[2] = _mm512_sub_ps (d[2], d[1]);
  t[3] = _mm512_sub_ps (d[1], d[3]);
}

/* F(2×2, 3×3)'s Aᵀ on four vectors:
 *   o0 = m0 + m1 + m2   o1 = m1 − m2 − m3 */
WG_INLINE void
output_1d_f2 (const __m512 m[ALPHA2], __m512 o[TILE2])
{
  o[0] = _mm512_add_ps (_mm512_add_ps (m[0], m[1]), m[2]);
  o[1] = _mm512_sub_ps (_mm512_sub_ps (m[1], m[2]), m[3]);
}

/* Lane l of the result is float 2l + j of the 32 in q0, q1. */
WG_INLINE __m512
every_second (__m512 q0, __m512 q1, int j)
{
  const __m512i idx = _mm512_add_epi32 (_mm512_set_epi32 (30, 28, 26, 24,
          22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0), _mm512_set1_epi32 (j));
  return _mm512_permutex2var_ps (q0, idx, q1);
}

/* input_tiles_f4's F(2×2, 3×3) twin: a lane's 4 input columns are 2 apart
 * from its neighbour's, so 16 tiles read 34 columns, in 3 vectors. */
WG_INLINE void
input_tiles_f2 (const float *plane, int64_t in_h, int64_t in_w, int64_t row0,
    int64_t col0, int n, float *v, int64_t xi_stride)
{
  __mmask16 load[3];
  for (int s = 0; s < 3; s++)
    load[s] = hy_lanes_within (col0 + 16 * s, 0, in_w)
        & hy_lanes_within (col0 + 16 * s, col0, col0 + TILE2 * n + 2);
  __m512 col_t[ALPHA2][3];
  for (int s = 0; s < 3; s++) {
    __m512 d[ALPHA2], t[ALPHA2];
    for (int i = 0; i < ALPHA2; i++) {
      const int64_t r = row0 + i;
      d[i] = r >= 0 && r < in_h && load[s]
          ? _mm512_maskz_loadu_ps (load[s], plane + r * in_w + col0 + 16 * s)
          : _mm512_setzero_ps ();
    }
    input_1d_f2 (d, t);
    for (int i = 0; i < ALPHA2; i++)
      col_t[i][s] = t[i];
  }
  const __mmask16 store = hy_lanes_within (0, 0, n);
  for (int i = 0; i < ALPHA2; i++) {
    const __m512 *q = col_t[i];
    /* The same floats from column 2 on: lanes' columns 2 and 3. */
    const __m512 q2_0 = _mm512_castsi512_ps (_mm512_alignr_epi32
        (_mm512_castps_si512 (q[1]), _mm512_castps_si512 (q[0]), 2));
    const __m512 q2_1 = _mm512_castsi512_ps (_mm512_alignr_epi32
        (_mm512_castps_si512 (q[2]), _mm512_castps_si512 (q[1]), 2));
    const __m512 d[ALPHA2] = {
      every_second (q[0], q[1], 0), every_second (q[0], q[1], 1),
      every_second (q2_0, q2_1, 0), every_second (q2_0, q2_1, 1),
    };
    __m512 t[ALPHA2];
    input_1d_f2 (d, t);
    for (int j = 0; j < ALPHA2; j++)
      _mm512_mask_storeu_ps (v + (i * ALPHA2 + j) * xi_stride, store, t[j]);
  }
}

/* output_tiles_f4's F(2×2, 3×3) twin: 2 columns a lane, 32 a row. */
WG_INLINE void
output_tiles_f2 (const float *m, int64_t xi_stride, int n, float *y,
    int64_t out_w, int rows, int64_t cols)
{
  const __mmask16 lanes = hy_lanes_within (0, 0, n);
  __m512 col_t[TILE2][ALPHA2];
  for (int j = 0; j < ALPHA2; j++) {
    __m512 v[ALPHA2], o[TILE2];
    for (int i = 0; i < ALPHA2; i++)
      v[i] = _mm512_maskz_loadu_ps (lanes, m + (i * ALPHA2 + j) * xi_stride);
    output_1d_f2 (v, o);
    for (int r = 0; r < TILE2; r++)
      col_t[r][j] = o[r];
  }
  const __m512i pair_lo = _mm512_set_epi32 (23, 7, 22, 6, 21, 5, 20, 4,
      19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i pair_hi = _mm512_add_epi32 (pair_lo, _mm512_set1_epi32 (8));
  const __mmask16 store[2] = {
    hy_lanes_within (0, 0, cols), hy_lanes_within (16, 0, cols),
  };
  for (int r = 0; r < rows; r++) {
    __m512 o[TILE2];
    output_1d_f2 (col_t[r], o);
    if (store[0])
      _mm512_mask_storeu_ps (y + r * out_w, store[0],
          _mm512_permutex2var_ps (o[0], pair_lo, o[1]));
    if (store[1])
      _mm512_mask_storeu_ps (y + r * out_w + 16, store[1],
          _mm512_permutex2var_ps (o[0], pair_hi, o[1]));
  }
}

#else

#define AVX512

#endif

/* One block: tile rows [row0, row1) of the batch's, counted on from one
 * image's last to the next one's first (row g is image g / tiles_h's
 * row g % tiles_h), so that on small maps a block spans images. */
typedef struct block_job {
  const hy_conv_winograd *conv;
  const float *x;
  float *y;
  const float *res;             /* NULL: none */
  const float *bias, *bn;
  bool epilogue;
  int64_t row0, row1;
  int64_t tiles;                /* V's and M's rows: a full block's */
  int64_t cols;                 /* this block's tiles */
  float *v, *m;
} block_job;

static AVX512 void
input_channels (void *arg, int64_t begin, int64_t end, int thread)
{
#if defined(__x86_64__) && defined(__GNUC__)
  const block_job *j = arg;
  const hy_conv_winograd *w = j->conv;
  const int64_t xi_stride = w->channels * j->tiles;
  const int64_t in_plane = w->in_h * w->in_w;
  for (int64_t c = begin; c < end; c++) {
    float *vc = j->v + c * j->tiles;
    for (int64_t g = j->row0; g < j->row1; g++) {
      const int64_t b = g / w->tiles_h, ty = g % w->tiles_h;
      const float *plane = j->x + (b * w->channels + c) * in_plane;
      for (int64_t tx = 0; tx < w->tiles_w; tx += 16) {
        const int n = (int) (w->tiles_w - tx < 16 ? w->tiles_w - tx : 16);
        const int64_t t = (g - j->row0) * w->tiles_w + tx;
        const int64_t row0 = w->tile * ty - w->pad_h;
        const int64_t col0 = w->tile * tx - w->pad_w;
        if (w->tile == TILE4)
          input_tiles_f4 (plane, w->in_h, w->in_w, row0, col0, n, vc + t,
              xi_stride);
        else
          input_tiles_f2 (plane, w->in_h, w->in_w, row0, col0, n, vc + t,
              xi_stride);
      }
    }
  }
#endif
}

static void
products (void *arg, int64_t begin, int64_t end, int thread)
{
  const block_job *j = arg;
  const hy_conv_winograd *w = j->conv;
  for (int64_t xi = begin; xi < end; xi++)
    hy_packed_gemm (LAYOUT, w->u + xi * w->u_floats, w->filters,
        w->channels, 0, w->filters, j->v + xi * w->channels * j->tiles,
        j->tiles, j->cols, j->m + xi * w->filters * j->tiles, j->tiles,
        false, 0, NULL, NULL, NULL);
}

/* The fused epilogue on filter f's outputs of the block, image by image:
 * each image's rows of it are contiguous, and still in cache. */
static void
block_epilogue (const block_job *j, int64_t f)
{
  const hy_conv_winograd *w = j->conv;
  const int64_t plane = w->out_h * w->out_w;
  const hy_epilogue_channels ch = { j->bias, j->bn, w->filters };
  const hy_epilogue_channels own = hy_epilogue_channels_from (&ch, f);
  for (int64_t g = j->row0; g < j->row1;) {
    const int64_t b = g / w->tiles_h, ty = g % w->tiles_h;
    const int64_t image_end = (b + 1) * w->tiles_h;
    const int64_t next = j->row1 < image_end ? j->row1 : image_end;
    const int64_t out_row0 = w->tile * ty;
    const int64_t out_row1 = w->tile * (ty + next - g) < w->out_h
        ? w->tile * (ty + next - g) : w->out_h;
    const int64_t at = (b * w->filters + f) * plane + out_row0 * w->out_w;
    hy_epilogue_rows (&w->p.fused, j->y + at, j->res ? j->res + at : NULL,
        1, (out_row1 - out_row0) * w->out_w, plane, &own);
    g = next;
  }
}

static AVX512 void
output_filters (void *arg, int64_t begin, int64_t end, int thread)
{
#if defined(__x86_64__) && defined(__GNUC__)
  const block_job *j = arg;
  const hy_conv_winograd *w = j->conv;
  const int64_t xi_stride = w->filters * j->tiles;
  const int64_t plane = w->out_h * w->out_w;
  for (int64_t f = begin; f < end; f++) {
    const float *mf = j->m + f * j->tiles;
    for (int64_t g = j->row0; g < j->row1; g++) {
      const int64_t b = g / w->tiles_h, ty = g % w->tiles_h;
      float *yf = j->y + (b * w->filters + f) * plane;
      for (int64_t tx = 0; tx < w->tiles_w; tx += 16) {
        const int n = (int) (w->tiles_w - tx < 16 ? w->tiles_w - tx : 16);
        const int64_t t = (g - j->row0) * w->tiles_w + tx;
        const int tile = w->tile;
        const int64_t rows = w->out_h - tile * ty;
        const int64_t cols = w->out_w - tile * tx;
        float *at = yf + tile * (ty * w->out_w + tx);
        const int in_rows = (int) (rows < tile ? rows : tile);
        const int64_t in_cols = cols < tile * n ? cols : tile * n;
        if (tile == TILE4)
          output_tiles_f4 (mf + t, xi_stride, n, at, w->out_w, in_rows,
              in_cols);
        else
          output_tiles_f2 (mf + t, xi_stride, n, at, w->out_w, in_rows,
              in_cols);
      }
    }
    if (j->epilogue)
      block_epilogue (j, f);
  }
#endif
}

bool
hy_conv_winograd_runs (const hy_conv_params *p, const hy_tensor *const *in,
    int n_in, const hy_tensor *out, gboolean weights_const)
{
  if (!hy_cpu_features_get ()->avx512f || !hy_packed_gemm_supported ()
      || !weights_const || n_in < 2 || p->n_spatial != 2
      || p->num_group != 1)
    return false;
  for (int i = 0; i < 2; i++)
    if (p->kernel[i] != 3 || p->stride[i] != 1 || p->dilate[i] != 1
        || p->pad[i] < 0 || p->pad[i] > 2)
      return false;
  const hy_shape *x = &in[0]->shape, *y = &out->shape;
  return x->dims[0] != 0 && x->dims[1] != 0 && y->dims[1] != 0
      && y->dims[2] != 0 && y->dims[3] != 0;
}

hy_conv_winograd *
hy_conv_winograd_new (const hy_conv_params *p, const hy_tensor *const *in,
    int n_in, const hy_tensor *out, gboolean weights_const)
{
  return hy_conv_winograd_new_tile (p, in, n_in, out, weights_const, TILE4);
}

hy_conv_winograd *
hy_conv_winograd_new_tile (const hy_conv_params *p,
    const hy_tensor *const *in, int n_in, const hy_tensor *out,
    gboolean weights_const, int tile)
{
  if ((tile != TILE2 && tile != TILE4)
      || !hy_conv_winograd_runs (p, in, n_in, out, weights_const))
    return NULL;
  const hy_shape *x = &in[0]->shape, *y = &out->shape;
  const int64_t channels = x->dims[1], filters = y->dims[1];

  hy_conv_winograd *w = g_new0 (hy_conv_winograd, 1);
  w->p = *p;
  w->channels = channels;
  w->filters = filters;
  w->in_h = x->dims[2];
  w->in_w = x->dims[3];
  w->out_h = y->dims[2];
  w->out_w = y->dims[3];
  w->pad_h = p->pad[0];
  w->pad_w = p->pad[1];
  w->tile = tile;
  w->alpha = tile + 2;
  w->n_xi = w->alpha * w->alpha;
  w->tiles_h = (w->out_h + tile - 1) / tile;
  w->tiles_w = (w->out_w + tile - 1) / tile;
  /* As many tile rows per block as fit (see SMALL_U_BYTES). */
  const int64_t u_bytes = (int64_t) w->n_xi * filters * channels
      * (int64_t) sizeof (float);
  const int64_t per_row = (int64_t) w->n_xi * (channels + filters)
      * w->tiles_w * (int64_t) sizeof (float);
  w->blocks_per_thread = u_bytes <= SMALL_U_BYTES;
  const int64_t shared_bytes = SHARED_BLOCK_BYTES > u_bytes / 4
      ? SHARED_BLOCK_BYTES : u_bytes / 4;
  const int64_t rows = (w->blocks_per_thread ? THREAD_BLOCK_BYTES
      : shared_bytes) / per_row;
  w->block_rows = rows < 1 ? 1 : rows;

  /* U, (filters, channels) per position, then packed. */
  float *u = malloc ((size_t) (w->n_xi * filters * channels)
      * sizeof (float));
  w->u_floats = hy_packed_a_floats (LAYOUT, filters, channels);
  w->u = aligned_alloc (64, ((w->u_floats * w->n_xi * sizeof (float)) + 63)
      & ~(size_t) 63);
  if (!u || !w->u) {
    free (u);
    hy_conv_winograd_free (w);
    return NULL;                /* the packed kernel then runs it */
  }
  const float *weight = in[1]->data;
  const int64_t xi_stride = filters * channels;
  for (int64_t f = 0; f < filters; f++)
    for (int64_t c = 0; c < channels; c++)
      filter_transform (tile == TILE4 ? G4 : G2, w->alpha,
          weight + (f * channels + c) * 9, u + f * channels + c, xi_stride);
  for (int xi = 0; xi < w->n_xi; xi++)
    hy_packed_a_pack (LAYOUT, w->u + xi * w->u_floats, filters, channels,
        u + xi * xi_stride, channels);
  free (u);
  return w;
}

void
hy_conv_winograd_free (hy_conv_winograd *conv)
{
  if (!conv)
    return;
  free (conv->u);
  g_free (conv);
}

const char *
hy_conv_winograd_kernel_name (const hy_conv_winograd *conv)
{
  return conv->tile == TILE4 ? "winograd-4x4" : "winograd-2x2";
}

/* Whether n blocks share out evenly enough over the threads, each
 * thread taking whole blocks. */
static bool
blocks_share_out (int64_t n, int threads)
{
  return n % threads == 0 || n >= 4 * threads;
}

/* Where blocks run, and their scratch. */
typedef struct run_job {
  const hy_conv_winograd *conv;
  const float *x, *bias, *bn, *res;
  float *y;
  bool epilogue;
  int64_t rows;                 /* the batch's tile rows */
  int64_t block_rows;
  int64_t tiles;                /* V's and M's rows */
  float *scratch;               /* V then M, per thread or shared */
  size_t scratch_stride;        /* bytes between threads' */
  size_t v_floats;
} run_job;

static block_job
block_at (const run_job *r, int64_t block, float *scratch)
{
  const int64_t row0 = block * r->block_rows;
  const int64_t row1 = row0 + r->block_rows < r->rows
      ? row0 + r->block_rows : r->rows;
  const block_job j = {
    .conv = r->conv, .x = r->x, .y = r->y, .res = r->res,
    .bias = r->bias, .bn = r->bn, .epilogue = r->epilogue,
    .row0 = row0, .row1 = row1,
    /* A short last block keeps the full block's strides. */
    .tiles = r->tiles, .cols = (row1 - row0) * r->conv->tiles_w,
    .v = scratch, .m = scratch + r->v_floats,
  };
  return j;
}

/* Blocks [begin, end), each whole on the calling thread. */
static void
blocks_on_thread (void *arg, int64_t begin, int64_t end, int thread)
{
  const run_job *r = arg;
  float *scratch = (float *) ((char *) r->scratch
      + (size_t) thread * r->scratch_stride);
  for (int64_t i = begin; i < end; i++) {
    const block_job j = block_at (r, i, scratch);
    input_channels ((void *) &j, 0, r->conv->channels, thread);
    products ((void *) &j, 0, r->conv->n_xi, thread);
    output_filters ((void *) &j, 0, r->conv->filters, thread);
  }
}

void
hy_cpu_convolution_winograd (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_conv_winograd *w = params;
  const hy_conv_params *p = &w->p;
  const hy_epilogue_operands o = hy_epilogue_operands_of (p->no_bias,
      &p->fused, in);
  const int threads = hy_cpu_n_threads (ctx);
  run_job r = {
    .conv = w, .x = in[0]->data, .bias = o.bias, .bn = o.bn, .res = o.res,
    .y = out[0]->data, .epilogue = hy_epilogue_is_set (&p->fused) || o.bias,
    .rows = in[0]->shape.dims[0] * w->tiles_h,
  };
  /* Blocks of as even a size as they come. */
  r.block_rows = w->block_rows < r.rows ? w->block_rows : r.rows;
  r.block_rows = (r.rows + (r.rows + r.block_rows - 1) / r.block_rows - 1)
      / ((r.rows + r.block_rows - 1) / r.block_rows);
  /* Each thread its own blocks, whole, where the rule says so and they
   * share out (cut finer until they do); else one block at a time, each
   * of its three steps split over the threads. */
  bool per_thread = false;
  for (int64_t rows = r.block_rows;
      threads > 1 && w->blocks_per_thread && rows >= 1; rows--) {
    if (blocks_share_out ((r.rows + rows - 1) / rows, threads)) {
      per_thread = true;
      r.block_rows = rows;
      break;
    }
  }
  const int64_t blocks = (r.rows + r.block_rows - 1) / r.block_rows;
  r.tiles = r.block_rows * w->tiles_w;
  /* V and M, with a vector's slack after each for the masked loads'
   * addresses. */
  r.v_floats = (size_t) (w->n_xi * w->channels * r.tiles) + 16;
  const size_t floats = r.v_floats + (size_t) (w->n_xi * w->filters * r.tiles)
      + 16;
  if (per_thread) {
    r.scratch = hy_cpu_workspace_per_thread (ctx, floats * sizeof (float),
        &r.scratch_stride);
    hy_cpu_parallel_each (ctx, blocks, blocks_on_thread, &r);
    return;
  }
  r.scratch = hy_cpu_workspace (ctx, floats * sizeof (float));
  /* A channel's transform costs about 40 vector operations per 16
   * tiles, a filter's about as many: items that small are not worth a
   * thread each. */
  const int64_t grain = hy_cpu_grain (w->n_xi * r.tiles);
  for (int64_t i = 0; i < blocks; i++) {
    const block_job j = block_at (&r, i, r.scratch);
    hy_cpu_parallel_for (ctx, w->channels, grain, input_channels,
        (void *) &j);
    hy_cpu_parallel_each (ctx, w->n_xi, products, (void *) &j);
    hy_cpu_parallel_for (ctx, w->filters, grain, output_filters,
        (void *) &j);
  }
}
