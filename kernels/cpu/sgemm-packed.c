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

#include "sgemm-packed.h"

#define MR HY_PACKED_MR
#define NR 48                   /* three zmm vectors */
/* k per block: the B slice a tile column reads (KC × NR floats, 24 KiB)
 * then fills half of Zen 4/5's 48 KiB L1 data cache, C's tile and A's
 * panel beside it.  Measured against 256 (the whole L1): 128 was 3-15 %
 * faster on most of ResNet-50's shapes (docs/PERFORMANCE.md). */
#ifndef KC
#define KC 128
#endif
/* Floats of C kept in L2 between K blocks (a quarter of 1 MiB). */
#ifndef C_BLOCK_FLOATS
#define C_BLOCK_FLOATS (64 * 1024)
#endif
/* Floats of A kept in L2 while the tile columns of a block pass by (a
 * quarter of 1 MiB). */
#ifndef A_BLOCK_FLOATS
#define A_BLOCK_FLOATS (64 * 1024)
#endif

static inline int64_t
round_up (int64_t v, int64_t to)
{
  return (v + to - 1) / to * to;
}

size_t
hy_packed_a_floats (int64_t m, int64_t k)
{
  return (size_t) (round_up (m, MR) * k);
}

void
hy_packed_a_pack (float *dst, int64_t m, int64_t k, const float *a,
    int64_t lda)
{
  const int64_t mp = round_up (m, MR);
  for (int64_t k0 = 0; k0 < k; k0 += KC) {
    const int64_t kc = k - k0 < KC ? k - k0 : KC;
    for (int64_t m0 = 0; m0 < mp; m0 += MR) {
      /* Rows past m are zeros: a tile's last rows are computed and not
       * stored. */
      float *panel = dst + k0 * mp + m0 * kc;
      for (int64_t kk = 0; kk < kc; kk++)
        for (int i = 0; i < MR; i++)
          panel[kk * MR + i] = m0 + i < m ? a[(m0 + i) * lda + k0 + kk]
              : 0.0f;
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__ ((target ("avx512f,fma")))
/* The tile's loops must unroll fully: only then do its accumulators live
 * in registers. */
#define UNROLL _Pragma ("GCC unroll 8")

bool
hy_packed_gemm_supported (void)
{
  static int supported = -1;
  if (g_atomic_int_get (&supported) < 0) {
    __builtin_cpu_init ();
    const char *env = g_getenv ("HYBRIDINFER_PACKED_GEMM");
    int on = __builtin_cpu_supports ("avx512f") && !(env && !strcmp (env,
            "0"));
    g_atomic_int_set (&supported, on);
  }
  return g_atomic_int_get (&supported) == 1;
}

/* One MR × (16·nv) tile of C over kc steps of k; `last` masks the columns
 * of the tile's last vector, `rows` the rows stored. */
static inline __attribute__ ((always_inline)) AVX512 void
tile_as (int nv, int64_t kc, const float *restrict a,
    const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc,
    int rows, __mmask16 last, bool accumulate)
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
    UNROLL for (int j = 0; j < nv; j++) {
      const __mmask16 mask = j == nv - 1 ? last : (__mmask16) 0xffff;
      __m512 v = acc[i][j];
      if (accumulate)
        v = _mm512_add_ps (_mm512_maskz_loadu_ps (mask, ci + 16 * j), v);
      _mm512_mask_storeu_ps (ci + 16 * j, mask, v);
    }
  }
}

typedef void (*tile_fn) (int64_t kc, const float *a, const float *b,
    int64_t ldb, float *c, int64_t ldc, int rows, __mmask16 last,
    bool accumulate);

#define TILE(nv) \
  static AVX512 void \
  tile_##nv (int64_t kc, const float *a, const float *b, int64_t ldb, \
      float *c, int64_t ldc, int rows, __mmask16 last, bool accumulate) \
  { \
    tile_as (nv, kc, a, b, ldb, c, ldc, rows, last, accumulate); \
  }
TILE (1)
TILE (2)
TILE (3)
#undef TILE

static const tile_fn tiles[4] = { NULL, tile_1, tile_2, tile_3 };

AVX512 void
hy_packed_gemm (const float *packed, int64_t m, int64_t k, int64_t row0,
    int64_t rows, const float *b, int64_t ldb, int64_t cols, float *c,
    int64_t ldc, bool accumulate, int64_t col0, hy_packed_then_fn then,
    void *then_arg)
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
          const float *b_tile = b + k0 * ldb + j0 + jt;
          float *c_tile = c + j0 + jt;
          const tile_fn tile = tiles[nv];
          for (int64_t mt = m0; mt < m1; mt += MR)
            tile (kc, a_block + (row0 + mt) * kc, b_tile, ldb,
                c_tile + mt * ldc, ldc, (int) (rows - mt < MR ? rows - mt : MR),
                last, add);
        }
      }
    }
    if (then)
      then (then_arg, row0, rows, col0 + j0, jn);
  }
}

#else /* not x86-64: never chosen, but correct */

bool
hy_packed_gemm_supported (void)
{
  return false;
}

void
hy_packed_gemm (const float *packed, int64_t m, int64_t k, int64_t row0,
    int64_t rows, const float *b, int64_t ldb, int64_t cols, float *c,
    int64_t ldc, bool accumulate, int64_t col0, hy_packed_then_fn then,
    void *then_arg)
{
  const int64_t mp = round_up (m, MR);
  for (int64_t i = 0; i < rows; i++) {
    const int64_t r = row0 + i;
    for (int64_t j = 0; j < cols; j++) {
      float s = accumulate ? c[i * ldc + j] : 0.0f;
      for (int64_t k0 = 0; k0 < k; k0 += KC) {
        const int64_t kc = k - k0 < KC ? k - k0 : KC;
        const float *panel = packed + k0 * mp + r / MR * MR * kc;
        float part = 0.0f;
        for (int64_t kk = 0; kk < kc; kk++)
          part += panel[kk * MR + r % MR] * b[(k0 + kk) * ldb + j];
        s = k0 > 0 || accumulate ? s + part : part;
      }
      c[i * ldc + j] = s;
    }
  }
  if (then)
    then (then_arg, row0, rows, col0, cols);
}

#endif
