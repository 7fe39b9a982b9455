/*
 * sgemm-packed.c — the packed-A GEMM of sgemm-packed.h.
 *
 * A is packed in blocks of KC columns (k), each block in panels of MR rows
 * stored k-major: the MR weights one step of k multiplies are adjacent.
 * The microkernel keeps an MR × NR tile of C in 24 zmm registers,
 * broadcasts each weight once and multiplies it into three 16-float
 * vectors of B's row: 24 independent FMA chains, 11 loads per 24 FMAs.
 *
 * B is read where it lies (no copy): the loops put a block's m-tiles
 * innermost, so the KC × NR slice of B one tile column reads stays in L1
 * while the row tiles of A (up to A_BLOCK_FLOATS of them, kept in L2)
 * stream past it.  Columns are done
 * NC at a time, NC sized so that the C block they make (rows × NC) stays
 * in L2 between the K blocks that add into it; the epilogue then runs on
 * that block before the next is begun.  A last tile narrower than NR
 * uses masked loads and stores.
 */
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "kernels/cpu/conv/sgemm-packed.h"

#define MR 8                    /* rows of a wide tile */
#define NR 48                   /* three zmm vectors */
/* k per block: the B slice a tile column reads (KC × NR floats, 24 KiB)
 * then fills half of Zen 4/5's 48 KiB L1 data cache, C's tile and A's
 * panel beside it.  Measured against 256 (the whole L1): 128 was 3-15 %
 * faster on most of ResNet-50's shapes (docs/PERFORMANCE.md). */
#ifndef KC
#define KC 128
#endif
/* The narrow layout's k per block: its B slice (KC_NARROW rows of at most
 * 8 floats, a cache line or two each) fills half of L1, and C's tile,
 * transposed in registers, is added to C once per block: the larger the
 * block, the less that costs. */
/* How many k steps ahead the narrow tile asks for its weights' next
 * lines (one line per panel per step).  Weights stream from memory at
 * batch 1: on a 7×7 map with 84-189 MB of weights cycled (more than the
 * L3), 32 steps took the kernel from 193 to 212 GFLOP/s, and fetching
 * the next block into L2 during the current one (gemm_narrow) to 230;
 * 16 or 64 steps did less. */
#ifndef PREFETCH_NARROW
#define PREFETCH_NARROW 32
#endif
#ifndef KC_NARROW
#define KC_NARROW 256
#endif
_Static_assert (NR == HY_PACKED_PANEL_COLS
    && KC * NR <= HY_PACKED_PANEL_FLOATS
    && KC_NARROW * 16 <= HY_PACKED_PANEL_FLOATS,
    "panels as sgemm-packed.h promises them");

/* Floats of C kept in L2 between K blocks (a quarter of 1 MiB). */
#ifndef C_BLOCK_FLOATS
#define C_BLOCK_FLOATS (64 * 1024)
#endif
/* Floats of A kept in L2 while the tile columns of a block pass by (a
 * quarter of 1 MiB). */
#ifndef A_BLOCK_FLOATS
#define A_BLOCK_FLOATS (64 * 1024)
#endif

/* Floats of A one row block of the narrow layout's given panels may hold
 * (512 KiB: a quarter of a 2 MiB L2, half of a 1 MiB one). */
#ifndef PANEL_A_BLOCK_FLOATS
#define PANEL_A_BLOCK_FLOATS (128 * 1024)
#endif

static inline int64_t
round_up (int64_t v, int64_t to)
{
  return (v + to - 1) / to * to;
}

/* Rows per panel and k per block of each layout. */
static int64_t
panel_rows (hy_packed_layout layout)
{
  return layout == HY_PACKED_NARROW ? 16 : MR;
}

static int64_t
k_block (hy_packed_layout layout)
{
  return layout == HY_PACKED_NARROW ? KC_NARROW : KC;
}

size_t
hy_packed_a_floats (hy_packed_layout layout, int64_t m, int64_t k)
{
  return (size_t) (round_up (m, panel_rows (layout)) * k);
}

void
hy_packed_a_pack (hy_packed_layout layout, float *dst, int64_t m, int64_t k,
    const float *a, int64_t lda)
{
  const int64_t pr = panel_rows (layout), kb = k_block (layout);
  const int64_t mp = round_up (m, pr);
  for (int64_t k0 = 0; k0 < k; k0 += kb) {
    const int64_t kc = k - k0 < kb ? k - k0 : kb;
    for (int64_t m0 = 0; m0 < mp; m0 += pr) {
      /* Rows past m are zeros: a tile's last rows are computed and not
       * stored. */
      float *panel = dst + k0 * mp + m0 * kc;
      for (int64_t kk = 0; kk < kc; kk++)
        for (int64_t i = 0; i < pr; i++)
          panel[kk * pr + i] = m0 + i < m ? a[(m0 + i) * lda + k0 + kk]
              : 0.0f;
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "kernels/cpu/conv/epilogue-avx512.h"
#include "kernels/cpu/cpu-features.h"

#define AVX512 __attribute__ ((target ("avx512f,fma")))
/* The tile's loops must unroll fully: only then do its accumulators live
 * in registers. */
#define UNROLL _Pragma ("GCC unroll 8")

bool
hy_packed_gemm_supported (void)
{
  static int supported = -1;
  if (g_atomic_int_get (&supported) < 0) {
    const char *env = g_getenv ("HYBRIDINFER_PACKED_GEMM");
    int on = hy_cpu_features_get ()->avx512f && !(env && !strcmp (env,
            "0"));
    g_atomic_int_set (&supported, on);
  }
  return g_atomic_int_get (&supported) == 1;
}

bool
hy_packed_epilogue_fits (hy_fused_act act)
{
  return hy_avx512_act_fits (act);
}

/* The epilogue on one row of a tile, v[0 … nv) (the last vector's lanes
 * `last`), row `row` of the whole C: epilogue.h's y = act (bn (y + bias)
 * + res), step by step (never fused: a multiply then an add, as the
 * scalar pass rounds them).  Its tests are made once per row, not per
 * vector. */
static inline __attribute__ ((always_inline)) AVX512 void
finish_row (const hy_packed_epilogue *e, int nv, __m512 v[], int64_t row,
    const float *res, __mmask16 last)
{
  const __m512 bias = _mm512_set1_ps (e->bias ? e->bias[row] : 0.0f);
  UNROLL for (int j = 0; j < nv; j++)
    v[j] = _mm512_add_ps (v[j], bias);
  if (e->bn) {
    const float *bn = e->bn + row;
    const __m512 mean = _mm512_set1_ps (bn[0]);
    const __m512 scale = _mm512_set1_ps (bn[e->bn_stride]);
    const __m512 shift = _mm512_set1_ps (bn[2 * e->bn_stride]);
    UNROLL for (int j = 0; j < nv; j++)
      v[j] = _mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (v[j], mean),
              scale), shift);
  }
  if (res)
    UNROLL for (int j = 0; j < nv; j++)
      v[j] = _mm512_add_ps (v[j], _mm512_maskz_loadu_ps (j == nv - 1 ? last
              : (__mmask16) 0xffff, res + 16 * j));
  if (e->act == HY_FUSED_ACT_NONE)
    return;
  const __m512 alpha = _mm512_set1_ps (e->alpha);
  const __m512 beta = _mm512_set1_ps (e->beta);
  switch (e->act) {
#define ACT_CASE(act) \
    case act: \
      UNROLL for (int j = 0; j < nv; j++) \
        v[j] = hy_avx512_act (act, v[j], alpha, beta); \
      break
    ACT_CASE (HY_FUSED_ACT_RELU);
    ACT_CASE (HY_FUSED_ACT_CLIP);
    ACT_CASE (HY_FUSED_ACT_HARD_SIGMOID);
    ACT_CASE (HY_FUSED_ACT_HARD_SWISH);
#undef ACT_CASE
    default:
      break;
  }
}

/* One MR × (16·nv) tile of C over kc steps of k; `last` masks the columns
 * of the tile's last vector, `rows` the rows stored.  With `epi` (the
 * last K block), the epilogue runs on the sums before they are stored:
 * `row` is the tile's first row in the whole C, `res` the residual at the
 * tile's first value (or NULL). */
static inline __attribute__ ((always_inline)) AVX512 void
tile_as (int nv, int64_t kc, const float *restrict a,
    const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc,
    int rows, __mmask16 last, bool accumulate,
    const hy_packed_epilogue *epi, int64_t row, const float *res)
{
  __m512 acc[MR][3];
  UNROLL for (int i = 0; i < MR; i++)
    UNROLL for (int j = 0; j < nv; j++)
      acc[i][j] = _mm512_setzero_ps ();
  for (int64_t kk = 0; kk < kc; kk++, a += MR, b += ldb) {
    __m512 bv[3];
    UNROLL for (int j = 0; j < nv; j++)
      bv[j] = j == nv - 1 ? _mm512_maskz_loadu_ps (last, b + 16 * j)
          : _mm512_loadu_ps (b + 16 * j);
    UNROLL for (int i = 0; i < MR; i++) {
      const __m512 av = _mm512_set1_ps (a[i]);
      UNROLL for (int j = 0; j < nv; j++)
        acc[i][j] = _mm512_fmadd_ps (av, bv[j], acc[i][j]);
    }
  }
  UNROLL for (int i = 0; i < MR; i++) {
    if (i >= rows)
      break;
    float *ci = c + i * ldc;
    __m512 v[3];
    UNROLL for (int j = 0; j < nv; j++) {
      const __mmask16 mask = j == nv - 1 ? last : (__mmask16) 0xffff;
      v[j] = acc[i][j];
      if (accumulate)
        v[j] = _mm512_add_ps (_mm512_maskz_loadu_ps (mask, ci + 16 * j),
            v[j]);
    }
    if (epi)
      finish_row (epi, nv, v, row + i, res ? res + i * ldc : NULL, last);
    UNROLL for (int j = 0; j < nv; j++)
      _mm512_mask_storeu_ps (ci + 16 * j, j == nv - 1 ? last
          : (__mmask16) 0xffff, v[j]);
  }
}

typedef void (*tile_fn) (int64_t kc, const float *a, const float *b,
    int64_t ldb, float *c, int64_t ldc, int rows, __mmask16 last,
    bool accumulate, const hy_packed_epilogue *epi, int64_t row,
    const float *res);

#define TILE(nv) \
  static AVX512 void \
  tile_##nv (int64_t kc, const float *a, const float *b, int64_t ldb, \
      float *c, int64_t ldc, int rows, __mmask16 last, bool accumulate, \
      const hy_packed_epilogue *epi, int64_t row, const float *res) \
  { \
    tile_as (nv, kc, a, b, ldb, c, ldc, rows, last, accumulate, epi, row, \
        res); \
  }
TILE (1)
TILE (2)
TILE (3)
#undef TILE

static const tile_fn tiles[4] = { NULL, tile_1, tile_2, tile_3 };

/* The narrow layout's tile: up to 48 rows of C (mv vectors, one per
 * 16-row panel of A, panels `panel` floats apart) × nt columns, each
 * weight vector multiplied by B's values broadcast.  The accumulators
 * hold C transposed (one vector per column); they are turned back 16 × 8
 * at a time in registers and added to C's rows with masked stores. */
static inline __attribute__ ((always_inline)) AVX512 void
tile_narrow_as (int mv, int nt, int64_t kc, const float *restrict a,
    int64_t panel, const float *restrict b, int64_t ldb,
    float *restrict c, int64_t ldc, int rows, bool accumulate,
    const float *pf, int64_t pf_lines)
{
  __m512 acc[8][3];
  UNROLL for (int t = 0; t < 8; t++)
    UNROLL for (int j = 0; j < mv; j++)
      acc[t][j] = _mm512_setzero_ps ();
  for (int64_t kk = 0; kk < kc; kk++, a += 16, b += ldb) {
    if (kk < pf_lines)
      _mm_prefetch ((const char *) (pf + 16 * kk), _MM_HINT_T1);
    __m512 av[3];
    UNROLL for (int j = 0; j < mv; j++) {
#if PREFETCH_NARROW
      _mm_prefetch ((const char *) (a + j * panel + 16 * PREFETCH_NARROW),
          _MM_HINT_T0);
#endif
      av[j] = _mm512_load_ps (a + j * panel);
    }
    UNROLL for (int t = 0; t < nt; t++) {
      const __m512 bv = _mm512_set1_ps (b[t]);
      UNROLL for (int j = 0; j < mv; j++)
        acc[t][j] = _mm512_fmadd_ps (av[j], bv, acc[t][j]);
    }
  }
  const __mmask16 lo = (__mmask16) ((1u << nt) - 1);
  const __mmask16 hi = (__mmask16) (lo << 8);
  /* Lanes 4q..4q+3 of a and then of b, for two rows each: 0-3, 16-19,
   * 4-7, 20-23 (rows 4·0+e and 4·1+e), and the same from lane 2 on. */
  const __m512i pick_lo = _mm512_set_epi32 (23, 22, 21, 20, 7, 6, 5, 4,
      19, 18, 17, 16, 3, 2, 1, 0);
  const __m512i pick_hi = _mm512_set_epi32 (31, 30, 29, 28, 15, 14, 13, 12,
      27, 26, 25, 24, 11, 10, 9, 8);
  UNROLL for (int j = 0; j < mv; j++) {
    /* r[t][i] is C[16j + i][t]. */
    const __m512 t0 = _mm512_unpacklo_ps (acc[0][j], acc[1][j]);
    const __m512 t1 = _mm512_unpackhi_ps (acc[0][j], acc[1][j]);
    const __m512 t2 = _mm512_unpacklo_ps (acc[2][j], acc[3][j]);
    const __m512 t3 = _mm512_unpackhi_ps (acc[2][j], acc[3][j]);
    const __m512 t4 = _mm512_unpacklo_ps (acc[4][j], acc[5][j]);
    const __m512 t5 = _mm512_unpackhi_ps (acc[4][j], acc[5][j]);
    const __m512 t6 = _mm512_unpacklo_ps (acc[6][j], acc[7][j]);
    const __m512 t7 = _mm512_unpackhi_ps (acc[6][j], acc[7][j]);
    /* u[e], lane q: columns 0-3 of row 4q + e; u[4 + e]: columns 4-7. */
    __m512 u[8];
    u[0] = _mm512_shuffle_ps (t0, t2, _MM_SHUFFLE (1, 0, 1, 0));
    u[1] = _mm512_shuffle_ps (t0, t2, _MM_SHUFFLE (3, 2, 3, 2));
    u[2] = _mm512_shuffle_ps (t1, t3, _MM_SHUFFLE (1, 0, 1, 0));
    u[3] = _mm512_shuffle_ps (t1, t3, _MM_SHUFFLE (3, 2, 3, 2));
    u[4] = _mm512_shuffle_ps (t4, t6, _MM_SHUFFLE (1, 0, 1, 0));
    u[5] = _mm512_shuffle_ps (t4, t6, _MM_SHUFFLE (3, 2, 3, 2));
    u[6] = _mm512_shuffle_ps (t5, t7, _MM_SHUFFLE (1, 0, 1, 0));
    u[7] = _mm512_shuffle_ps (t5, t7, _MM_SHUFFLE (3, 2, 3, 2));
    UNROLL for (int e = 0; e < 4; e++) {
      /* Rows e, 4 + e in the low and high halves; then 8 + e, 12 + e. */
      const __m512 w[2] = {
        _mm512_permutex2var_ps (u[e], pick_lo, u[4 + e]),
        _mm512_permutex2var_ps (u[e], pick_hi, u[4 + e]),
      };
      UNROLL for (int h = 0; h < 4; h++) {
        const int i = 16 * j + 4 * h + e;
        if (i >= rows)
          continue;
        /* The high half goes in through lanes 8-15 of an address 8
         * floats early: masked-off lanes are never touched. */
        float *row = c + i * ldc - (h % 2 ? 8 : 0);
        const __mmask16 mask = h % 2 ? hi : lo;
        __m512 v = w[h / 2];
        if (accumulate)
          v = _mm512_add_ps (_mm512_maskz_loadu_ps (mask, row), v);
        _mm512_mask_storeu_ps (row, mask, v);
      }
    }
  }
}

typedef void (*tile_narrow_fn) (int64_t kc, const float *a, int64_t panel,
    const float *b, int64_t ldb, float *c, int64_t ldc, int rows,
    bool accumulate, const float *pf, int64_t pf_lines);

#define TILE_NARROW(mv, nt) \
  static AVX512 void \
  tile_narrow_##mv##_##nt (int64_t kc, const float *a, int64_t panel, \
      const float *b, int64_t ldb, float *c, int64_t ldc, int rows, \
      bool accumulate, const float *pf, int64_t pf_lines) \
  { \
    tile_narrow_as (mv, nt, kc, a, panel, b, ldb, c, ldc, rows, accumulate, \
        pf, pf_lines); \
  }
#define TILE_NARROW_NT(mv) \
  TILE_NARROW (mv, 1) TILE_NARROW (mv, 2) TILE_NARROW (mv, 3) \
  TILE_NARROW (mv, 4) TILE_NARROW (mv, 5) TILE_NARROW (mv, 6) \
  TILE_NARROW (mv, 7) TILE_NARROW (mv, 8)
TILE_NARROW_NT (1)
TILE_NARROW_NT (2)
TILE_NARROW_NT (3)
#undef TILE_NARROW_NT
#undef TILE_NARROW

#define TILE_NARROW_ROW(mv) \
  { NULL, tile_narrow_##mv##_1, tile_narrow_##mv##_2, tile_narrow_##mv##_3, \
    tile_narrow_##mv##_4, tile_narrow_##mv##_5, tile_narrow_##mv##_6, \
    tile_narrow_##mv##_7, tile_narrow_##mv##_8 }
static const tile_narrow_fn tiles_narrow[4][9] = {
  { NULL }, TILE_NARROW_ROW (1), TILE_NARROW_ROW (2), TILE_NARROW_ROW (3),
};
#undef TILE_NARROW_ROW

/* The narrow layout's product: column tiles of at most 8, as even as
 * they come (49 = 7 × 7), B's KC_NARROW × 8 slice kept in L1 while the
 * row tiles pass. */
static AVX512 void
gemm_narrow (const float *packed, int64_t m, int64_t k, int64_t row0,
    int64_t rows, const float *b, int64_t ldb, hy_packed_b_panel_fn panel,
    void *panel_arg, int thread, int64_t cols, float *c, int64_t ldc,
    bool accumulate, int64_t col0)
{
  const int64_t mp = round_up (m, 16);
  const int64_t n_tiles = (cols + 7) / 8;
  const int64_t width = (cols + n_tiles - 1) / n_tiles;
  int64_t mc = A_BLOCK_FLOATS / KC_NARROW / 48 * 48;
  if (mc < 48)
    mc = 48;
  /* Given panels are built per tile column and row block: one row block,
   * so that each is built once per K block, where the weights' block
   * then fits in L2 all the same (up to PANEL_A_BLOCK_FLOATS).  Measured
   * on ResNet's 14×14 and 7×7 maps (conv-bench, one thread): 1.06-1.15×
   * im2col; with the row blocks above (240 rows and a remainder of 16 or
   * 32) 0.98-1.08×.  More rows than that (ResNet-50's 2048 filters of
   * 1024 channels, a whole image's product on one thread at batch 8: a
   * 2 MiB block) are cut into blocks of that size: one block of them all
   * was read from L3 again for every tile column, and its stride-2 1×1
   * layer ran at 58 % of its stride-1 neighbours' speed. */
  if (panel)
    mc = rows <= PANEL_A_BLOCK_FLOATS / KC_NARROW ? rows
        : PANEL_A_BLOCK_FLOATS / KC_NARROW / 48 * 48;
  for (int64_t k0 = 0; k0 < k; k0 += KC_NARROW) {
    const int64_t kc = k - k0 < KC_NARROW ? k - k0 : KC_NARROW;
    const float *a_block = packed + k0 * mp;
    const bool add = accumulate || k0 > 0;
    for (int64_t m0 = 0; m0 < rows; m0 += mc) {
      const int64_t m1 = rows - m0 < mc ? rows : m0 + mc;
      /* The weights a block reads come from memory (a network's do not
       * fit in the caches, and each is read once per forward): while its
       * tiles run, the next block's are fetched into L2, a few lines per
       * tile, so that only the first block waits for memory. */
      const float *next;
      int64_t next_floats;
      if (m1 < rows) {
        next = a_block + (row0 + m1) * kc;
        next_floats = ((rows - m1 < mc ? rows - m1 : mc) + 15) / 16 * 16
            * kc;
      } else {
        const int64_t kn = k - k0 - kc < KC_NARROW ? k - k0 - kc : KC_NARROW;
        next = packed + (k0 + kc) * mp + row0 * kn;
        next_floats = (m1 - m0 < rows ? mc : rows + 15) / 16 * 16 * kn;
      }
      const int64_t calls = n_tiles * ((m1 - m0 + 47) / 48);
      const int64_t per_tile = (next_floats / 16 + calls - 1) / calls;
      int64_t done = 0;
      for (int64_t jt = 0; jt < cols; jt += width) {
        const int nt = (int) (cols - jt < width ? cols - jt : width);
        int64_t ldb_tile = ldb;
        const float *b_tile = panel
            ? panel (panel_arg, thread, k0, kc, col0 + jt, nt, &ldb_tile)
            : b + k0 * ldb + jt;
        for (int64_t mt = m0; mt < m1; mt += 48) {
          const int64_t left = m1 - mt;
          const int mv = (int) (left >= 48 ? 3 : (left + 15) / 16);
          int64_t lines = next_floats / 16 - done;
          lines = lines < per_tile ? lines : per_tile;
          tiles_narrow[mv][nt] (kc, a_block + (row0 + mt) * kc, 16 * kc,
              b_tile, ldb_tile, c + mt * ldc + jt, ldc,
              (int) (left < 48 ? left : 48), add, next + 16 * done,
              lines > 0 ? lines : 0);
          done += lines > 0 ? lines : 0;
        }
      }
    }
  }
}

/* The wide layout's product, B stored (panel NULL) or given a panel at a
 * time (hy_packed_gemm_panels): the loops are the same, so are the sums.
 * With `epi`, the tiles of the last K block apply it, and `then` is not
 * called. */
static inline __attribute__ ((always_inline)) AVX512 void
gemm_wide (const float *packed, int64_t m, int64_t k, int64_t row0,
    int64_t rows, const float *b, int64_t ldb, hy_packed_b_panel_fn panel,
    void *panel_arg, int thread, int64_t cols, float *c, int64_t ldc,
    bool accumulate, int64_t col0, hy_packed_then_fn then, void *then_arg,
    const hy_packed_epilogue *epi)
{
  const int64_t mp = round_up (m, MR);
  int64_t nc = C_BLOCK_FLOATS / (rows > 0 ? rows : 1) / NR * NR;
  if (nc < NR)
    nc = NR;
  for (int64_t j0 = 0; j0 < cols; j0 += nc) {
    const int64_t jn = cols - j0 < nc ? cols - j0 : nc;
    for (int64_t k0 = 0; k0 < k; k0 += KC) {
      const int64_t kc = k - k0 < KC ? k - k0 : KC;
      const float *a_block = packed + k0 * mp;
      const bool add = accumulate || k0 > 0;
      const hy_packed_epilogue *tile_epi = k0 + kc >= k ? epi : NULL;
      int64_t mc = A_BLOCK_FLOATS / kc / MR * MR;
      if (mc < MR)
        mc = MR;
      for (int64_t m0 = 0; m0 < rows; m0 += mc) {
        const int64_t m1 = rows - m0 < mc ? rows : m0 + mc;
        for (int64_t jt = 0; jt < jn; jt += NR) {
          const int64_t width = jn - jt < NR ? jn - jt : NR;
          const int nv = (int) ((width + 15) / 16);
          const int tail = (int) (width - 16 * (nv - 1));
          const __mmask16 last = (__mmask16) ((1u << tail) - 1);
          int64_t ldb_tile = ldb;
          /* A given panel is built once per tile column and K block, and
           * read by every row tile from L1. */
          const float *b_tile = panel
              ? panel (panel_arg, thread, k0, kc, col0 + j0 + jt, width,
                  &ldb_tile)
              : b + k0 * ldb + j0 + jt;
          float *c_tile = c + j0 + jt;
          const tile_fn tile = tiles[nv];
          /* The residual is laid out as the whole C: this tile column's
           * first value is at (row0, col0 + j0 + jt). */
          const float *res = tile_epi && tile_epi->res ? tile_epi->res
              + row0 * ldc + col0 + j0 + jt : NULL;
          for (int64_t mt = m0; mt < m1; mt += MR)
            tile (kc, a_block + (row0 + mt) * kc, b_tile, ldb_tile,
                c_tile + mt * ldc, ldc, (int) (rows - mt < MR ? rows - mt : MR),
                last, add, tile_epi, row0 + mt, res ? res + mt * ldc : NULL);
        }
      }
    }
    if (then && !epi)
      then (then_arg, row0, rows, col0 + j0, jn);
  }
}

AVX512 void
hy_packed_gemm (hy_packed_layout layout, const float *packed, int64_t m,
    int64_t k, int64_t row0, int64_t rows, const float *b, int64_t ldb,
    int64_t cols, float *c, int64_t ldc, bool accumulate, int64_t col0,
    hy_packed_then_fn then, void *then_arg, const hy_packed_epilogue *epi)
{
  if (layout == HY_PACKED_NARROW) {
    gemm_narrow (packed, m, k, row0, rows, b, ldb, NULL, NULL, 0, cols, c,
        ldc, accumulate, col0);
    if (then)
      then (then_arg, row0, rows, col0, cols);
    return;
  }
  gemm_wide (packed, m, k, row0, rows, b, ldb, NULL, NULL, 0, cols, c, ldc,
      accumulate, col0, then, then_arg, epi);
}

AVX512 void
hy_packed_gemm_panels (hy_packed_layout layout, const float *packed,
    int64_t m, int64_t k, int64_t row0, int64_t rows,
    hy_packed_b_panel_fn panel, void *panel_arg, int thread, int64_t cols,
    float *c, int64_t ldc, bool accumulate, int64_t col0,
    hy_packed_then_fn then, void *then_arg, const hy_packed_epilogue *epi)
{
  if (layout == HY_PACKED_NARROW) {
    gemm_narrow (packed, m, k, row0, rows, NULL, 0, panel, panel_arg, thread,
        cols, c, ldc, accumulate, col0);
    if (then)
      then (then_arg, row0, rows, col0, cols);
    return;
  }
  gemm_wide (packed, m, k, row0, rows, NULL, 0, panel, panel_arg, thread,
      cols, c, ldc, accumulate, col0, then, then_arg, epi);
}

#else /* not x86-64: never chosen, but correct */

bool
hy_packed_gemm_supported (void)
{
  return false;
}

bool
hy_packed_epilogue_fits (hy_fused_act act)
{
  return false;
}

void
hy_packed_gemm (hy_packed_layout layout, const float *packed, int64_t m,
    int64_t k, int64_t row0, int64_t rows, const float *b, int64_t ldb,
    int64_t cols, float *c, int64_t ldc, bool accumulate, int64_t col0,
    hy_packed_then_fn then, void *then_arg, const hy_packed_epilogue *epi)
{
  const int64_t pr = panel_rows (layout), kb = k_block (layout);
  const int64_t mp = round_up (m, pr);
  for (int64_t i = 0; i < rows; i++) {
    const int64_t r = row0 + i;
    for (int64_t j = 0; j < cols; j++) {
      float s = accumulate ? c[i * ldc + j] : 0.0f;
      for (int64_t k0 = 0; k0 < k; k0 += kb) {
        const int64_t kc = k - k0 < kb ? k - k0 : kb;
        const float *panel = packed + k0 * mp + r / pr * pr * kc;
        float part = 0.0f;
        for (int64_t kk = 0; kk < kc; kk++)
          part += panel[kk * pr + r % pr] * b[(k0 + kk) * ldb + j];
        s = k0 > 0 || accumulate ? s + part : part;
      }
      c[i * ldc + j] = s;
    }
  }
  if (then)
    then (then_arg, row0, rows, col0, cols);
}

void
hy_packed_gemm_panels (hy_packed_layout layout, const float *packed,
    int64_t m, int64_t k, int64_t row0, int64_t rows,
    hy_packed_b_panel_fn panel, void *panel_arg, int thread, int64_t cols,
    float *c, int64_t ldc, bool accumulate, int64_t col0,
    hy_packed_then_fn then, void *then_arg, const hy_packed_epilogue *epi)
{
  const int64_t pr = panel_rows (layout), kb = k_block (layout);
  const int64_t mp = round_up (m, pr), nr = layout == HY_PACKED_NARROW ? 8
      : NR;
  for (int64_t jt = 0; jt < cols; jt += nr) {
    const int64_t width = cols - jt < nr ? cols - jt : nr;
    for (int64_t k0 = 0; k0 < k; k0 += kb) {
      const int64_t kc = k - k0 < kb ? k - k0 : kb;
      int64_t ldb;
      const float *b = panel (panel_arg, thread, k0, kc, col0 + jt, width,
          &ldb);
      for (int64_t i = 0; i < rows; i++) {
        const int64_t r = row0 + i;
        const float *a = packed + k0 * mp + r / pr * pr * kc + r % pr;
        for (int64_t j = 0; j < width; j++) {
          float part = 0.0f;
          for (int64_t kk = 0; kk < kc; kk++)
            part += a[kk * pr] * b[kk * ldb + j];
          float *out = c + i * ldc + jt + j;
          *out = k0 > 0 || accumulate ? *out + part : part;
        }
      }
    }
  }
  if (then)
    then (then_arg, row0, rows, col0, cols);
}

#endif
