/*
 * qconv-dnnl-fused.h — a quantized convolution whose bytes oneDNN writes
 * itself: dst u8/s8 with the per-channel output scales, the int32 bias
 * and the ReLU / residual / ReLU as post-ops, the way MXNet's own
 * sg_mkldnn_conv runs it.  The scales are fixed when the primitive is
 * made (oneDNN 2.6's direct kernels take none at run time), so one of
 * these serves one (data range, residual range); conv-dnnl-int8.c makes
 * it on the first forward and uses it while the ranges stay.
 */
#ifndef HY_CPU_QUANTIZED_QCONV_DNNL_FUSED_H
#define HY_CPU_QUANTIZED_QCONV_DNNL_FUSED_H

#include <glib.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "kernels/params/quantized.h"

typedef struct hy_qconv_fused hy_qconv_fused;

/* The geometry of one convolution (NCHW in, NCHW out, as the plan says). */
typedef struct hy_qconv_geometry {
  int64_t N, C, H, W, OC, OH, OW;
} hy_qconv_geometry;

/* wq: the quantized weights (OC × C × kh × kw); bias_q, scales: per
 * output channel, as this forward's epilogue would use them; n_threads:
 * the OpenMP team it runs on; n_bands: more than 1 cuts a single image's
 * output rows into up to that many bands (on a small map, its filters
 * into that many slices), each run on one thread (our pool's), with a
 * team of one.  NULL without an error when oneDNN has
 * no kernel for it. */
hy_qconv_fused *hy_qconv_fused_new (dnnl_engine_t engine,
    const hy_quantized_conv_params *p, const hy_qconv_geometry *g,
    const int8_t *wq, const int32_t *bias_q, const float *scales,
    float sum_scale, int n_threads, int n_bands, GError **error);
/* How many bands it was cut into (1: one primitive, the whole output). */
int hy_qconv_fused_bands (const hy_qconv_fused *f);
/* One forward of band b (of every band, 0 to hy_qconv_fused_bands - 1,
 * in any order or at once): src bytes NHWC in, dst bytes NHWC out
 * (holding the residual's bytes already when there is one). */
dnnl_status_t hy_qconv_fused_run (hy_qconv_fused *f, int band,
    const void *src, void *dst);
void hy_qconv_fused_free (hy_qconv_fused *f);

#endif /* HY_CPU_QUANTIZED_QCONV_DNNL_FUSED_H */
