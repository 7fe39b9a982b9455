/*
 * deform-conv.h — parameters of _contrib_ModulatedDeformableConvolution
 * (DCNv2), 2-D only as in MXNet 1.9.1: inputs data (N, C, H, W), offset
 * (N, 2·dg·kh·kw, Ho, Wo), mask (N, dg·kh·kw, Ho, Wo), weight
 * (F, C/g, kh, kw), bias (F,) unless no_bias.  Each tap samples data
 * bilinearly at its shifted position, scaled by its mask, before the
 * usual convolution sum.
 */
#ifndef HY_PARAMS_DEFORM_CONV_H
#define HY_PARAMS_DEFORM_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/hy-ops.h"

typedef struct hy_deform_conv_params {
  hy_op_id op;
  int64_t kernel[2];
  int64_t stride[2];
  int64_t dilate[2];
  int64_t pad[2];
  int64_t num_filter;
  int64_t num_group;
  int64_t num_deformable_group;
  bool no_bias;
} hy_deform_conv_params;

#endif /* HY_PARAMS_DEFORM_CONV_H */
