/*
 * blas.c — the dense products (see blas.h): single-threaded OpenBLAS calls,
 * split over the context's threads by blocks of C.
 *
 * OpenBLAS's own threading is kept off: Debian's 0.3.21 allocates its job
 * array on every call it splits (USE_ALLOC_HEAP), and its heuristics run
 * an MLP's small products at half speed on two threads.  Splitting C into
 * one block of whole rows or whole columns per thread keeps each output's
 * sum over k in one call, in the order a single call would take.
 */
#include <string.h>

#include <cblas.h>
#include <glib.h>

#include "kernels/cpu/conv/blas.h"
#include "kernels/cpu/conv/gemv.h"
#include "kernels/cpu/conv/sgemm-packed.h"

/* Blocks of C start at multiples of this many rows or columns: whole
 * cache lines, and whole tiles of OpenBLAS's micro-kernels and of the
 * packed kernel's panels (HY_PACKED_ROW_ALIGN rows). */
#define BLOCK_ALIGN 16
_Static_assert (BLOCK_ALIGN % HY_PACKED_ROW_ALIGN == 0,
    "row blocks must start on the packed kernel's tiles");

/* Columns of C up to which a product is split by rows even where it has
 * fewer rows than columns, when C's rows are not whole cache lines:
 * column blocks then share a line in most rows, which both threads
 * write — once per K block and again in the epilogue.  On a 14×14 map
 * (196 columns) that cost MobileNetV2's 384 → 64 product on two threads
 * more than split rows' reading all of B: alone (pointwise-bench) 1.31×
 * its one-thread speed split by columns, 1.73× by rows; in the forward's
 * profile its 14×14 projections 10-14 % less time (docs/PERFORMANCE.md,
 * "Issue 11 on the Xeon, continued").  On wider rows the shared lines
 * are few. */
#define SHARED_LINE_MAX_COLS 256

/* Matrix-vector products up to this size run in gemv.c; larger ones,
 * which stream from beyond the L2 cache, in OpenBLAS (level with ours
 * there, and tuned for it). */
#define OWN_GEMV_MAX_MACS (512 * 1024)

/* Weak: the build may link a BLAS that is not OpenBLAS. */
extern void openblas_set_num_threads (int n) __attribute__ ((weak));
extern int blas_thread_shutdown_ (void) __attribute__ ((weak));

void
hy_blas_use_one_thread (void)
{
  /* Once per process: executors made on several threads at once must not
   * reconfigure OpenBLAS while another one runs a product. */
  static gsize once = 0;
  if (!g_once_init_enter (&once))
    return;
  if (openblas_set_num_threads)
    openblas_set_num_threads (1);
  /* OpenBLAS starts its worker threads when it loads, and each spins on
   * sched_yield for about 2^28 cycles before it sleeps: a tenth of a
   * second in which, on a 2-core machine, it takes a core from our own
   * pool.  With one thread it never uses them again, so they are stopped
   * (OpenBLAS starts them anew if anyone asks it for more threads). */
  if (blas_thread_shutdown_)
    blas_thread_shutdown_ ();
  g_once_init_leave (&once, 1);
}

static inline blasint
at_least_1 (int64_t v)
{
  return (blasint) (v > 1 ? v : 1);
}

/* y = M·x + beta·y with M (rows, k) stored row-major, rows ld apart. */
static void
gemv_n (int64_t rows, int64_t k, const float *m, int64_t ld, const float *x,
    int64_t incx, float beta, float *y, int64_t incy)
{
  if (incx == 1 && rows * k <= OWN_GEMV_MAX_MACS)
    hy_gemv_rows (rows, k, m, ld, x, beta, y, incy);
  else
    cblas_sgemv (CblasRowMajor, CblasNoTrans, (blasint) rows, (blasint) k,
        1.0f, m, at_least_1 (ld), x, (blasint) incx, beta, y,
        (blasint) incy);
}

/* y = Mᵀ·x + beta·y with M (k, cols) stored row-major, rows ld apart. */
static void
gemv_t (int64_t k, int64_t cols, const float *m, int64_t ld, const float *x,
    int64_t incx, float beta, float *y, int64_t incy)
{
  cblas_sgemv (CblasRowMajor, CblasTrans, (blasint) k, (blasint) cols, 1.0f,
      m, at_least_1 (ld), x, (blasint) incx, beta, y, (blasint) incy);
}

/* OpenBLAS 0.3.21 sends a plain (untransposed) product of at most 10⁶
 * multiply-adds on AVX-512 cores (SkylakeX, Cooperlake) to a small-matrix
 * kernel that mallocs a scratch copy of A whenever C has 1 to 8 columns
 * beyond a multiple of 16 and k >= 32.  Those last columns are done as
 * matrix-vector products instead, which allocate nothing. */
#define SMALL_KERNEL_MAX_MACS 1000000
#define SMALL_KERNEL_TILE 16

static int64_t
columns_to_peel (const hy_gemm *g, int64_t rows, int64_t cols)
{
  const int64_t rest = cols % SMALL_KERNEL_TILE;
  if (g->trans_a || g->trans_b || rest == 0 || rest > SMALL_KERNEL_TILE / 2
      || g->k < 32 || rows * cols * g->k > SMALL_KERNEL_MAX_MACS)
    return 0;
  return rest;
}

static void
sgemm_call (const hy_gemm *g, int64_t rows, int64_t cols, const float *a,
    int64_t lda, const float *b, int64_t ldb, float *c)
{
  cblas_sgemm (CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,
      g->trans_b ? CblasTrans : CblasNoTrans, (blasint) rows,
      (blasint) cols, (blasint) g->k, 1.0f, a, at_least_1 (lda), b,
      at_least_1 (ldb), g->beta, c, at_least_1 (g->ldc));
}

/* Rows [r0, r0 + rows) × columns [c0, c0 + cols) of C (k >= 1). */
static void
gemm_block (const hy_gemm *g, int64_t r0, int64_t rows, int64_t c0,
    int64_t cols, int thread)
{
  const int64_t lda = g->trans_a ? g->m : g->k;
  const int64_t ldb = g->trans_b ? g->k : g->n;
  const float *a = g->a + (g->trans_a ? r0 : r0 * lda);
  const float *b = !g->b ? NULL : g->b + (g->trans_b ? c0 * ldb : c0);
  float *c = g->c + r0 * g->ldc + c0;

  if (g->packed_a && g->b_panel) {
    hy_packed_gemm_panels (g->packed_layout, g->packed_a, g->m, g->k, r0, rows, g->b_panel,
        g->b_panel_arg, thread, cols, c, g->ldc, g->beta != 0.0f, c0, g->then,
        g->then_arg, g->packed_epi);
    return;
  }
  if (g->packed_a) {
    /* It runs `then` itself, on blocks still in cache. */
    hy_packed_gemm (g->packed_layout, g->packed_a, g->m, g->k, r0, rows, b, ldb, cols, c,
        g->ldc, g->beta != 0.0f, c0, g->then, g->then_arg, g->packed_epi);
    return;
  }

  /* A single row or column of A (or B) is a vector, strided when it
   * cuts across the storage's rows. */
  if (rows == 1) {
    const int64_t incx = g->trans_a ? lda : 1;
    if (g->trans_b)             /* c = B(cols, k) · a */
      gemv_n (cols, g->k, b, ldb, a, incx, g->beta, c, 1);
    else                        /* c = B(k, cols)ᵀ · a */
      gemv_t (g->k, cols, b, ldb, a, incx, g->beta, c, 1);
  } else if (cols == 1) {
    const int64_t incx = g->trans_b ? 1 : ldb;
    if (g->trans_a)             /* c = A(k, rows)ᵀ · b */
      gemv_t (g->k, rows, a, lda, b, incx, g->beta, c, g->ldc);
    else                        /* c = A(rows, k) · b */
      gemv_n (rows, g->k, a, lda, b, incx, g->beta, c, g->ldc);
  } else {
    const int64_t peel = columns_to_peel (g, rows, cols), main = cols - peel;
    if (main > 0)
      sgemm_call (g, rows, main, a, lda, b, ldb, c);
    /* Untransposed here: column j of B is strided, row i of A is not. */
    for (int64_t j = main; j < cols; j++)
      gemv_n (rows, g->k, a, lda, b + j, ldb, g->beta, c + j, g->ldc);
  }
  if (g->then)
    g->then (g->then_arg, r0, rows, c0, cols);
}

/* The product cut into blocks of `block` rows (or columns) of C. */
typedef struct gemm_split {
  const hy_gemm *g;
  int64_t block;
  bool by_rows;
} gemm_split;

static void
gemm_blocks (void *arg, int64_t begin, int64_t end, int thread)
{
  const gemm_split *s = arg;
  const int64_t dim = s->by_rows ? s->g->m : s->g->n;
  for (int64_t i = begin; i < end; i++) {
    const int64_t start = i * s->block;
    const int64_t len = start + s->block < dim ? s->block : dim - start;
    if (s->by_rows)
      gemm_block (s->g, start, len, 0, s->g->n, thread);
    else
      gemm_block (s->g, 0, s->g->m, start, len, thread);
  }
}

/* C = beta·C: an empty sum leaves only that term. */
static void
scale_c (const hy_gemm *g)
{
  for (int64_t i = 0; i < g->m; i++) {
    float *row = g->c + i * g->ldc;
    if (g->beta == 0.0f)
      memset (row, 0, (size_t) g->n * sizeof *row);
    else if (g->beta != 1.0f)
      for (int64_t j = 0; j < g->n; j++)
        row[j] *= g->beta;
  }
  if (g->then)
    g->then (g->then_arg, 0, g->m, 0, g->n);
}

void
hy_gemm_run (hy_cpu_ctx *ctx, const hy_gemm *g)
{
  if (g->m <= 0 || g->n <= 0)
    return;
  if (g->k <= 0) {
    scale_c (g);
    return;
  }
  const bool vector = g->m == 1 || g->n == 1;
  const int64_t macs = g->m * g->n * g->k;
  const int threads = hy_cpu_n_threads (ctx);
  const bool rows_share_lines = g->ldc % BLOCK_ALIGN != 0
      && g->n <= SHARED_LINE_MAX_COLS && g->m >= threads * BLOCK_ALIGN;
  gemm_split s = { g, 0, g->m >= g->n || rows_share_lines };
  const int64_t dim = s.by_rows ? g->m : g->n;
  int64_t n_blocks = 1;
  if (threads > 1 && macs >= (vector ? HY_PARALLEL_MIN_MACS
          : HY_GEMM_SPLIT_MIN_MACS)) {
    const int64_t per_thread = (dim + threads - 1) / threads;
    s.block = (per_thread + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
    n_blocks = (dim + s.block - 1) / s.block;
  }
  if (n_blocks < 2) {
    gemm_block (g, 0, g->m, 0, g->n, 0);
    return;
  }
  hy_cpu_parallel_each (ctx, n_blocks, gemm_blocks, &s);
}

void
hy_sgemm (hy_cpu_ctx *ctx, bool trans_a, bool trans_b, int64_t m, int64_t n,
    int64_t k, const float *a, const float *b, float beta, float *c)
{
  const hy_gemm g = {
    .trans_a = trans_a, .trans_b = trans_b, .m = m, .n = n, .k = k,
    .a = a, .b = b, .beta = beta, .c = c, .ldc = n,
  };
  hy_gemm_run (ctx, &g);
}

void
hy_fill_cols (float *restrict c, const float *restrict values, int64_t rows,
    int64_t cols)
{
  for (int64_t r = 0; r < rows; r++)
    memcpy (c + r * cols, values, (size_t) cols * sizeof *c);
}

HY_CPU_VECTOR_CLONES void
hy_relu_inplace (float *restrict x, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
