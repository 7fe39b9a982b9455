/*
 * conv-strategy.c — which algorithm runs a convolution on the CPU, and
 * which consecutive convolutions run as one: the order and the rules, each
 * with why, in one place.  Each kernel's own header says what it can run
 * (its _runs / _new refuse the rest); whether it pays is decided here.
 *
 * One call, alone: the first algorithm of the table below that takes it
 * runs it.
 *
 *   oneDNN        HYBRIDINFER_DNNL=1 only; what oneDNN's own check takes
 *   Winograd      3×3 stride 1, 32 channels and filters or more: F(4×4) on
 *                 maps of 16 and more a side, F(2×2) on smaller ones where
 *                 its weights are small next to its tiles, or fit in L3
 *   few channels  up to 4 input channels (a network's first layer), 8
 *                 filters and rows of 16 outputs or more
 *   packed        what conv.c lowers to GEMMs, 8 output positions or more
 *   conv.c's own  the rest: its depthwise loop (the AVX-512 kernel where
 *                 it runs), else OpenBLAS's products
 *
 * Consecutive calls as one (conv-pw-dw.h), where oneDNN is off and each
 * call alone would run on the packed or the depthwise kernel:
 *
 *   expansion + depthwise    the expansion writes 1.5 MiB an image or
 *                            more, or the projection after them pays
 *   ... + projection         a thread's band gives its product 64 columns
 *   depthwise + projection   where that projection would pay
 *
 * Switches, read once per process: HYBRIDINFER_WINOGRAD,
 * HYBRIDINFER_FEW_CHANNELS and HYBRIDINFER_PW_DW are 0 for never, 1 for
 * wherever the kernel can run whatever the rule says (tests, comparisons),
 * unset for the rule.  HYBRIDINFER_PACKED_GEMM=0 and HYBRIDINFER_DEPTHWISE=0
 * turn those kernels off altogether (sgemm-packed.h, depthwise-avx512.h;
 * with the packed kernel go Winograd and the fused calls, which run on
 * it); HYBRIDINFER_DNNL=1 turns oneDNN on (conv-dnnl.h).
 *
 * Inside an algorithm, its own choices stay with it: the packed kernel's
 * tile layout and whether it builds its column panels itself (conv.c),
 * the depthwise kernel's rows (depthwise-avx512.c).
 */
#include "kernels/cpu/conv/conv-strategy.h"

#include <string.h>

#include "kernels/cpu/conv/conv-few-channels.h"
#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/conv/conv-pw-dw.h"
#include "kernels/cpu/conv/conv-winograd.h"
#include "kernels/cpu/cpu-features.h"
#ifdef HY_HAVE_DNNL
#include "kernels/cpu/conv/conv-dnnl.h"
#include "kernels/cpu/conv/conv-dnnl-chain.h"
#endif

/* ---- the switches --------------------------------------------------- */

typedef enum conv_switch {
  SWITCH_OFF,                   /* =0: never */
  SWITCH_ALL,                   /* =1: wherever the kernel can run */
  SWITCH_RULE,                  /* unset: where the rule says it pays */
} conv_switch;

static conv_switch
switch_of (const char *name, gint *cache)
{
  gint v = g_atomic_int_get (cache);
  if (v < 0) {
    const char *env = g_getenv (name);
    v = env && !strcmp (env, "0") ? SWITCH_OFF
        : env && !strcmp (env, "1") ? SWITCH_ALL : SWITCH_RULE;
    g_atomic_int_set (cache, v);
  }
  return (conv_switch) v;
}

static conv_switch
winograd_switch (void)
{
  static gint cache = -1;
  return switch_of ("HYBRIDINFER_WINOGRAD", &cache);
}

static conv_switch
few_channels_switch (void)
{
  static gint cache = -1;
  return switch_of ("HYBRIDINFER_FEW_CHANNELS", &cache);
}

static conv_switch
pw_dw_switch (void)
{
  static gint cache = -1;
  return switch_of ("HYBRIDINFER_PW_DW", &cache);
}

/* HYBRIDINFER_BF16_CHAIN=0: bf16 keeps the fp32 chains, =1: oneDNN's bf16
 * chain wherever it runs (to measure one against the other). */
static conv_switch
bf16_chain_switch (void)
{
  static gint cache = -1;
  return switch_of ("HYBRIDINFER_BF16_CHAIN", &cache);
}

static bool
dnnl_on (void)
{
#ifdef HY_HAVE_DNNL
  return hy_conv_dnnl_enabled ();
#else
  return false;
#endif
}

/* ---- where each algorithm pays --------------------------------------- */

/* Winograd: which form pays, if any (docs/PERFORMANCE.md, "Winograd"):
 * enough channels for the transforms to be a small part of the products,
 * and enough tiles for the products to fill the kernel's tiles.  Then
 * F(4×4) on maps of 16 and more a side, and F(2×2) below: the transforms
 * put a tile row's tiles across the vector's 16 lanes, and F(4×4) has 4
 * tiles a row on 14×14 (the lanes mostly idle, and 31 % of the tiles'
 * outputs past the map's edge), F(2×2) 7, with none past it.  conv-bench
 * --winograd, one thread, against the packed kernel:
 *   56×56, 28×28 (64-256 channels)  F(4×4) 2.3-3.0×  F(2×2) 1.7-1.9×
 *   19×19 (512)                     F(4×4) 2.2-2.3×  F(2×2) 1.6-1.7×
 *   14×14 (64-256), batch 1 or 8    F(4×4) 0.7-1.9×  F(2×2) 1.8-2.0×
 *   7×7 (512), batch 1              F(4×4) 0.71×     F(2×2) 1.31×
 *   7×7 (512), batch 8              F(4×4) 1.41×     F(2×2) 1.41×
 * But F(2×2)'s U, 1.8× the weights, is read from memory by every forward
 * where it is large against the tiles that share it: on 7×7 maps at
 * batch 1 (16 tiles, 16.8 MB of U for 512 channels) it ran at 68-72 % of
 * two threads' ceiling in ResNet-50's profile, where the packed kernel
 * ran the same layers at 75 % (0.61 against 0.59 ms).  So F(2×2) takes a
 * layer where U is at most U2_BYTES_PER_TILE per tile (14×14 at
 * batch 1: 86 KB; 7×7 at batch 8: 128 KiB) — or where the last-level
 * cache holds U many times over (U2_LLC_SHARE), so that the forwards
 * read it from there rather than from memory.  On a Xeon with 480 MB of
 * L3 (docs/PERFORMANCE.md, "Issue 11 on the Xeon, continued"), F(2×2)
 * on the 7×7 maps at batch 1 ran those layers 14 % faster in the profile
 * and ResNet-18's forward 3 % faster (ResNet-50's 2 %); Zen 5's 32 MB of
 * L3 per CCD keeps the rule above.
 *
 * Before the packed kernel, which would take these layers otherwise: 36
 * multiply-adds per tile and channel pair instead of 144 (F(2×2): 16
 * instead of 36).  Its rounding is not a direct sum's, within the
 * conformance tolerance (conv-winograd.h). */
#define U2_BYTES_PER_TILE (128 * 1024)
#define U2_LLC_SHARE 16

static int
winograd_tile_that_pays (int64_t batch, int64_t channels, int64_t filters,
    int64_t out_h, int64_t out_w)
{
  /* F(2×2)'s 2×2 tiles, and its U: 4×4 transformed filters × channels
   * matrices. */
  const int64_t tiles2 = batch * ((out_h + 1) / 2) * ((out_w + 1) / 2);
  if (channels < 32 || filters < 32)
    return 0;
  if (out_h >= 16 && out_w >= 16)
    return 4;
  const int64_t u2_bytes = (int64_t) 4 * 4 * channels * filters
      * (int64_t) sizeof (float);
  return tiles2 >= 16 && (u2_bytes <= U2_BYTES_PER_TILE * tiles2
      || u2_bytes <= hy_cpu_features_get ()->l3_bytes / U2_LLC_SHARE)
      ? 2 : 0;
}

/* The Winograd form that runs `call`, 4 or 2, or 0 for none. */
static int
winograd_tile (const hy_call *call)
{
  const conv_switch sw = winograd_switch ();
  if (sw == SWITCH_OFF || !hy_conv_winograd_runs (call->params, call->in,
          call->n_in, call->out[0], hy_call_input_const (call, 1)))
    return 0;
  const hy_shape *x = &call->in[0]->shape, *y = &call->out[0]->shape;
  const int pays = winograd_tile_that_pays (x->dims[0], x->dims[1],
      y->dims[1], y->dims[2], y->dims[3]);
  return pays ? pays : sw == SWITCH_ALL ? 4 : 0;
}

/* Few channels: up to 4 input channels, an image's first layer (3 colour
 * channels), where the packed kernel's K (channels × taps: 27 or 147) is
 * too short for it — its stride-2 gather of each column panel took
 * 29-59 % of its time on ResNet's 7×7 and the MobileNets' 3×3 first
 * layers, where the direct kernel runs ResNet's at 79-88 % of the FMA
 * ceiling (docs/PERFORMANCE.md, "First layers") — with rows of at least
 * a vector of outputs (16), and 8 filters or more. */
static bool
few_channels_takes (const hy_call *call)
{
  const conv_switch sw = few_channels_switch ();
  if (sw == SWITCH_OFF || !hy_conv_few_channels_runs (call->params,
          call->in, call->n_in, call->out[0], hy_call_input_const (call, 1)))
    return false;
  const hy_shape *x = &call->in[0]->shape, *y = &call->out[0]->shape;
  return sw == SWITCH_ALL || (x->dims[1] <= 4 && y->dims[1] >= 8
      && y->dims[3] >= 16);
}

/* Packed weights: any product with enough output positions for the
 * kernel's tiles.  It was faster than OpenBLAS, which repacks the weights
 * on every call, on every ResNet-50 layer measured (docs/PERFORMANCE.md,
 * "Packed weights"); below PACKED_MIN_COLS positions an image OpenBLAS
 * keeps the product (its matrix-vector products for a single column, and
 * no packed copy of the weights for products that small). */
#define PACKED_MIN_COLS 8

static bool
packed_takes (const hy_call *call)
{
  if (!hy_conv_packed_runs (call->params, call->in, call->n_in,
          call->out[0], hy_call_input_const (call, 1)))
    return false;
  const hy_shape *y = &call->out[0]->shape;
  int64_t positions = 1;
  for (int i = 2; i < y->ndim; i++)
    positions *= y->dims[i];
  return positions >= PACKED_MIN_COLS;
}

/* ---- one call: the table ------------------------------------------- */

typedef struct conv_algorithm {
  /* Whether it runs `call` alone: its switch, what its kernel can run,
   * and its rule.  Sets nothing up. */
  bool (*takes) (const hy_call *call);
  /* Its set-up for `call` (weights transformed once): the kernel's
   * params, or NULL where it declines after all (oneDNN with no direct
   * kernel for the shape, memory for the weights' copy): the next row is
   * asked then.  NULL for conv.c's own, which needs none. */
  void *(*make) (hy_cpu_ctx *ctx, const hy_call *call, GError **error);
  hy_kernel_ptr kernel;
  void (*free) (void *params);
  const char *(*name) (const hy_call *call);
} conv_algorithm;

#ifdef HY_HAVE_DNNL
static bool
dnnl_takes (const hy_call *call)
{
  /* Only building the primitive tells whether oneDNN has a direct kernel
   * for the shape: hy_conv_dnnl_new decides the rest. */
  return dnnl_on ();
}

static void *
dnnl_make (hy_cpu_ctx *ctx, const hy_call *call, GError **error)
{
  return hy_conv_dnnl_new (ctx, call->params, call->in, call->n_in,
      call->out[0], hy_call_input_const (call, 1), error);
}

static void
dnnl_free (void *params)
{
  hy_conv_dnnl_free (params);
}

static const char *
dnnl_name (const hy_call *call)
{
  return hy_conv_dnnl_is_bf16 (call->params) ? "onednn-bf16" : "onednn";
}
#endif

static bool
winograd_takes (const hy_call *call)
{
  return winograd_tile (call) != 0;
}

static void *
winograd_make (hy_cpu_ctx *ctx, const hy_call *call, GError **error)
{
  return hy_conv_winograd_new_tile (call->params, call->in, call->n_in,
      call->out[0], hy_call_input_const (call, 1), winograd_tile (call));
}

static void
winograd_free (void *params)
{
  hy_conv_winograd_free (params);
}

static const char *
winograd_name (const hy_call *call)
{
  return hy_conv_winograd_kernel_name (call->params);
}

static void *
few_channels_make (hy_cpu_ctx *ctx, const hy_call *call, GError **error)
{
  return hy_conv_few_channels_new (call->params, call->in, call->n_in,
      call->out[0], hy_call_input_const (call, 1));
}

static void
few_channels_free (void *params)
{
  hy_conv_few_channels_free (params);
}

static const char *
few_channels_name (const hy_call *call)
{
  return "few-channels";
}

static void *
packed_make (hy_cpu_ctx *ctx, const hy_call *call, GError **error)
{
  return hy_conv_packed_new (call->params, call->in, call->n_in,
      call->out[0], hy_call_input_const (call, 1));
}

static void
packed_free (void *params)
{
  hy_conv_packed_free (params);
}

static const char *
packed_name (const hy_call *call)
{
  return hy_conv_packed_kernel_name (call->params);
}

static bool
own_takes (const hy_call *call)
{
  return true;
}

static const char *
own_name (const hy_call *call)
{
  return hy_cpu_convolution_is_depthwise (call->params, call->in[0],
      call->out[0]) ? "depthwise" : "openblas";
}

static const conv_algorithm algorithms[] = {
#ifdef HY_HAVE_DNNL
  /* oneDNN, first where it is asked for (HYBRIDINFER_DNNL=1: to compare
   * its kernels with ours on whole networks).  Off by default: oneDNN
   * 2.6's execute allocates on every call, and hybrid mode promises no
   * allocation per forward.  It takes what it has a direct kernel for,
   * and 1×1 convolutions only when wide and on maps of 14×14 or less
   * (conv-dnnl.c, measured against conv.c). */
  { dnnl_takes, dnnl_make, (hy_kernel_ptr) hy_cpu_convolution_dnnl,
    dnnl_free, dnnl_name },
#endif
  /* Winograd (above): fewer multiply-adds than any direct sum where it
   * pays, so before the packed kernel. */
  { winograd_takes, winograd_make,
    (hy_kernel_ptr) hy_cpu_convolution_winograd, winograd_free,
    winograd_name },
  /* First layers (above): where the packed kernel's column gather costs
   * as much as its products, so before it.  No layer both this and
   * Winograd's rules take (4 channels or fewer against 32 or more). */
  { few_channels_takes, few_channels_make,
    (hy_kernel_ptr) hy_cpu_convolution_few_channels, few_channels_free,
    few_channels_name },
  /* Packed weights (above): every other GEMM convolution. */
  { packed_takes, packed_make, (hy_kernel_ptr) hy_cpu_convolution_packed,
    packed_free, packed_name },
  /* conv.c's own kernel, as the op table gives it: depthwise convolutions
   * (its loop: a GEMM of K = 9 is mostly overhead) and what the packed
   * kernel does not take or cannot run (1-D or small maps, weights that
   * may change, no AVX-512). */
  { own_takes, NULL, NULL, NULL, own_name },
};

/* The algorithm that would run `call` alone. */
static const conv_algorithm *
alone (const hy_call *call)
{
  const conv_algorithm *a = algorithms;
  while (!a->takes (call))
    a++;                        /* the last row takes every call */
  return a;
}

/* The algorithm that runs a prepared or fused call: its kernel's row,
 * else conv.c's own (the last row). */
static const conv_algorithm *
running (const hy_call *call)
{
  const size_t n = G_N_ELEMENTS (algorithms);
  for (size_t i = 0; i + 1 < n; i++)
    if (call->fn == algorithms[i].kernel)
      return &algorithms[i];
  return &algorithms[n - 1];
}

#ifdef HY_HAVE_DNNL
/* In bf16, where oneDNN's bf16 convolution pays against our fp32 kernels,
 * its layout passes included.  Measured per call (Xeon, one thread, CPU
 * ms, fp32 against bf16, docs/PRECISION.md): 1×1 convolutions on maps
 * larger than 28×28 lost, ResNet-50's on 56×56 0.29-1.42 against
 * 0.43-1.93, MobileNetV3-Large's on 56×56 0.11 against 0.24, while those
 * on 28×28 and smaller maps won (ResNet-50 0.44-1.84 against 0.32-1.16)
 * but for MobileNetV3's of 40-120 channels (0.03-0.07 against 0.09-0.12,
 * kept in bf16: one rule per map size); a first layer of at most 4
 * channels with a 3×3 kernel lost to the few-channels kernel (the
 * MobileNets': 0.20 against 0.52), ResNet's 7×7 won (1.94 against
 * 1.45).  HYBRIDINFER_BF16_CHAIN=1 (bf16 wherever it runs) also lifts
 * this. */
#define BF16_POINTWISE_MAX_MAP (28 * 28)

static bool
bf16_pays (const hy_call *call)
{
  const hy_conv_params *p = call->params;
  if (bf16_chain_switch () == SWITCH_ALL || p->n_spatial != 2)
    return true;
  const hy_shape *x = &call->in[0]->shape, *y = &call->out[0]->shape;
  if (p->kernel[0] == 1 && p->kernel[1] == 1
      && y->dims[2] * y->dims[3] > BF16_POINTWISE_MAX_MAP)
    return false;
  return !(p->kernel[0] <= 3 && p->kernel[1] <= 3
      && few_channels_takes (call) && x->dims[1] <= 4);
}
#endif

gboolean
hy_conv_prepare_call (hy_cpu_ctx *ctx, hy_call *call, GError **error)
{
  for (const conv_algorithm *a = algorithms; a->make; a++) {
#ifdef HY_HAVE_DNNL
    /* In bf16 (cpu-kernel.h) oneDNN is asked first whatever the switch
     * says: it is what computes in bf16.  What it declines (depthwise,
     * grouped) runs in fp32 below. */
    const bool bf16_dnnl = ctx->bf16 && a->kernel
        == (hy_kernel_ptr) hy_cpu_convolution_dnnl && bf16_pays (call);
#else
    const bool bf16_dnnl = false;
#endif
    if (!bf16_dnnl && !a->takes (call))
      continue;
    GError *local = NULL;
    void *params = a->make (ctx, call, &local);
    if (local) {
      g_propagate_error (error, local);
      return FALSE;
    }
    if (params) {
      call->fn = a->kernel;
      call->params = params;
      return TRUE;
    }
  }
  return TRUE;
}

void
hy_conv_release_call (hy_call *call)
{
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_pw_dw) {
    hy_conv_pw_dw_free ((hy_conv_pw_dw *) call->params);
    return;
  }
#ifdef HY_HAVE_DNNL
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_dnnl_chain) {
    hy_conv_dnnl_chain_free ((hy_conv_dnnl_chain *) call->params);
    return;
  }
#endif
  const conv_algorithm *a = running (call);
  if (a->free)
    a->free ((void *) call->params);
}

const char *
hy_conv_kernel_name (const hy_call *call)
{
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_pw_dw)
    return hy_conv_pw_dw_kernel_name (call->params);
#ifdef HY_HAVE_DNNL
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_dnnl_chain)
    return hy_conv_dnnl_chain_kernel_name (call->params);
#endif
  return running (call)->name (call);
}

/* ---- consecutive calls as one ---------------------------------------- */

/* Whether `call` alone would run on the packed kernel: a fused call runs
 * each of its pointwise convolutions there, and must compute what they
 * would alone, bit for bit.  (Its depthwise layer's, conv.c's own with
 * the AVX-512 kernel, conv-pw-dw.h checks.) */
static bool
alone_runs_packed (const hy_call *call)
{
  return alone (call)->kernel == (hy_kernel_ptr) hy_cpu_convolution_packed;
}

/* An expansion and the depthwise layer after it: where the expansion's
 * output is PW_DW_MIN_BYTES an image or more, the size from which its
 * planes no longer stay in a core's cache between the two calls.
 * Measured pair by pair on MobileNetV2's profile (docs/PERFORMANCE.md,
 * "Pointwise + depthwise"; Xeon): fused, the expansions of 1.6 and 4.8 MB
 * an image ran 1.07-1.17× (one thread) and 1.32-1.33× (two) faster than
 * apart, those of 1.8 MB 0.96-0.97× and 0.98-1.11×, every smaller one
 * 0.84-1.02× (one thread).  Or where the projection after them pays
 * taken in as well.  The planner keeps the expansion's inputs live
 * through the depthwise layer for such pairs: MobileNetV2's arena grew
 * from 5.74 to 6.51 MiB with the pairs alone. */
#define PW_DW_MIN_BYTES (3 << 19)

/* The block's projection taken in (three calls as one): where a thread's
 * band gives its product PROJ_MIN_BAND_COLS columns or more (at batch 1
 * each of two threads takes half the rows).  MobileNetV2 b1, two threads,
 * every block's three calls as one against apart (docs/PERFORMANCE.md,
 * "Expansion, depthwise and projection as one"): blocks on 56×56 and
 * 28×28 maps and those on 14×14 (bands of 98 columns a thread) 5-26 %
 * faster, those of 576 channels on 14×14 level, those on 7×7 maps
 * (bands of 21-28 columns, mostly tile edges) 19-34 % slower.  A
 * depthwise layer and its projection without an expansion pay where that
 * projection would. */
#define PROJ_MIN_BAND_COLS 64

/* Whether the projection after the depthwise layer dw (x into y) pays
 * taken in. */
static bool
projection_pays (const hy_conv_params *dw, const hy_shape *x,
    const hy_shape *y)
{
  const int64_t rows = MIN (hy_conv_pw_dw_band_rows (dw, x, y),
      (y->dims[2] + 1) / 2);
  return pw_dw_switch () == SWITCH_ALL
      || rows * y->dims[3] >= PROJ_MIN_BAND_COLS;
}

bool
hy_conv_may_fuse (const hy_call_shape *first, const hy_call_shape *second)
{
  /* oneDNN, when it is on, takes each alone. */
  if (dnnl_on () || first->op != HY_OP_CONVOLUTION
      || second->op != HY_OP_CONVOLUTION || pw_dw_switch () == SWITCH_OFF)
    return false;
  /* A call already in a chain can only take the next call in: a pair's
   * depthwise layer its projection. */
  if (first->fused_with_previous)
    return hy_conv_pw_dw_can_take (first->params, first->in0, first->out0,
        second->params)
        && projection_pays (first->params, first->in0, first->out0);
  if (hy_conv_pw_dw_chain_runs (first->params, first->in0, first->out0,
          second->params))
    return projection_pays (first->params, first->in0, first->out0);
  const hy_shape *mid = first->out0;
  if (!hy_conv_pw_dw_pair_runs (first->params, first->in0, mid,
          second->params, second->out0))
    return false;
  const hy_call_shape *next = second->next;
  return pw_dw_switch () == SWITCH_ALL
      || hy_shape_numel (mid) / mid->dims[0] * (int64_t) sizeof (float)
      >= PW_DW_MIN_BYTES
      || (next && next->op == HY_OP_CONVOLUTION
          && hy_conv_pw_dw_is_projection (next->params, second->out0)
          && projection_pays (second->params, mid, second->out0));
}

#ifdef HY_HAVE_DNNL
/* In bf16, the chain conv-pw-dw.c made for first and second (fused) runs
 * as oneDNN bf16 convolutions instead (conv-dnnl-chain.h) where its
 * depthwise layer reads a map of at most BF16_CHAIN_MAX_MAP positions.
 * Measured per call on MobileNetV2 b1 (Xeon, one thread, CPU ms, fp32
 * chain against oneDNN bf16 chain, docs/PRECISION.md): the blocks on
 * 28×28 and 14×14 maps 0.15-0.43 against 0.10-0.32 (1.1-2.6× faster),
 * those reading 56×56 and 112×112 maps 0.56-0.74 against 0.55-0.90
 * (level to 1.4× slower: the fp32 chain reads its input planes where
 * they lie and keeps its bands in cache, the bf16 chain lays out and
 * converts a whole image first); MobileNetV3-Large's first blocks, on
 * 112×112 and 56×56 maps, 0.19-0.49 against 0.49-0.65. */
#define BF16_CHAIN_MAX_MAP (28 * 28)

static void
bf16_chain (hy_cpu_ctx *ctx, const hy_call *first, const hy_call *second,
    hy_call *fused)
{
  /* The depthwise layer is second (after an expansion) or first. */
  const hy_conv_params *p1 = first->params;
  const hy_shape *dw_in = p1->num_group > 1 ? &first->in[0]->shape
      : &second->in[0]->shape;
  if (!ctx->bf16 || bf16_chain_switch () == SWITCH_OFF
      || (bf16_chain_switch () == SWITCH_RULE
          && dw_in->dims[2] * dw_in->dims[3] > BF16_CHAIN_MAX_MAP))
    return;
  hy_conv_dnnl_chain *chain = hy_conv_dnnl_chain_new (ctx, first, second);
  if (!chain)
    return;
  hy_conv_pw_dw_free ((hy_conv_pw_dw *) fused->params);
  fused->fn = (hy_kernel_ptr) hy_cpu_convolution_dnnl_chain;
  fused->params = chain;
}
#endif

bool
hy_conv_fuse_calls (hy_cpu_ctx *ctx, const hy_call *first,
    const hy_call *second, hy_call *fused)
{
  /* The planner offers only pairs hy_conv_may_fuse said pay; what is left
   * is that each pointwise call of the chain would run packed alone. */
  if (dnnl_on () || pw_dw_switch () == SWITCH_OFF
      || first->op != HY_OP_CONVOLUTION || second->op != HY_OP_CONVOLUTION)
    return false;
#ifdef HY_HAVE_DNNL
  if (first->fn == (hy_kernel_ptr) hy_cpu_convolution_dnnl_chain) {
    /* The same projections the fp32 chain would take in. */
    hy_conv_dnnl_chain *chain = (hy_conv_dnnl_chain *) first->params;
    if (!alone_runs_packed (second)
        || !hy_conv_pw_dw_is_projection (second->params,
            &first->out[0]->shape)
        || !hy_conv_dnnl_chain_take_projection (ctx, chain, first, second))
      return false;
    fused->fn = first->fn;
    fused->params = chain;
    return true;
  }
#endif
  if (first->fn == (hy_kernel_ptr) hy_cpu_convolution_pw_dw) {
    /* The call is fused already: it may take the projection in too. */
    hy_conv_pw_dw *pair = (hy_conv_pw_dw *) first->params;
    if (!alone_runs_packed (second)
        || !hy_conv_pw_dw_take_projection (pair, first, second))
      return false;
    fused->fn = first->fn;
    fused->params = pair;
    return true;
  }
  /* A depthwise layer and its projection, or an expansion and the
   * depthwise layer after it. */
  const bool from_depthwise = hy_conv_pw_dw_chain_runs (first->params,
      &first->in[0]->shape, &first->out[0]->shape, second->params);
  if (!alone_runs_packed (from_depthwise ? second : first))
    return false;
  hy_conv_pw_dw *conv = hy_conv_pw_dw_new (first, second);
  if (!conv)
    return false;
  fused->fn = (hy_kernel_ptr) hy_cpu_convolution_pw_dw;
  fused->params = conv;
#ifdef HY_HAVE_DNNL
  bf16_chain (ctx, first, second, fused);
#endif
  return true;
}
