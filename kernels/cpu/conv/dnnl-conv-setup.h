/*
 * dnnl-conv-setup.h — what the oneDNN convolutions (conv-dnnl.c, one
 * layer at a time; dnnl-segment.c, the layers of a bf16 segment) make
 * their primitives with, so that the two describe a convolution the same
 * way: one image, a slice of the filters, the scratchpad ours.
 */
#ifndef HY_CPU_DNNL_CONV_SETUP_H
#define HY_CPU_DNNL_CONV_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <oneapi/dnnl/dnnl.h>

#include "kernels/params/nn.h"

/* A set-up's context: its messages name the convolution. */
typedef struct hy_dnnl_setup {
  const char *what;             /* "3x3 convolution 64->64 on 56x56" */
  GError **error;
} hy_dnnl_setup;

/* True on success; else sets the error ("<what>: oneDNN <call> failed
 * (<status>)", out of memory as HY_ERROR_NO_MEMORY) and returns false. */
bool hy_dnnl_check (const hy_dnnl_setup *s, dnnl_status_t status,
    const char *call);

/* 64-byte aligned memory for oneDNN's buffers, rounded up to whole lines
 * (a size of 0 gives one line); free() it.  NULL when out of memory. */
void *hy_dnnl_aligned_bytes (size_t n);

/* One image of the convolution p, `filters` of its filters (a slice). */
typedef struct hy_dnnl_conv_spec {
  const hy_conv_params *p;      /* kernel, strides, dilation, padding */
  int64_t channels, filters;
  int64_t in_h, in_w, out_h, out_w;
  dnnl_data_type_t compute;     /* the input's and the weights' */
  dnnl_data_type_t dst_type;
  dnnl_format_tag_t src_tag, dst_tag;   /* the weights': oneDNN's choice */
  bool has_bias;                /* fp32, one per filter */
  const_dnnl_post_ops_t post_ops;       /* NULL: none */
} hy_dnnl_conv_spec;

/* How many slices to cut each image's filters into: whole 16-filter
 * blocks (oneDNN's), the same number in each (a divisor of the block
 * count), enough that a batch gives each of `threads` threads
 * `items_per_thread` items of (image, slice).  1 where the filters are
 * not whole blocks. */
int64_t hy_dnnl_filter_slices (int64_t filters, int64_t batch, int threads,
    int items_per_thread);

/* The primitive's description for spec, for inference, with the
 * scratchpad in user mode (the caller gives it from its workspace, so
 * that oneDNN allocates none per call).  False with an error when a step
 * fails; false without one when oneDNN has no implementation
 * (dnnl_unimplemented), which callers take as "not for oneDNN". */
bool hy_dnnl_conv_pd_create (const hy_dnnl_setup *s, dnnl_engine_t engine,
    const hy_dnnl_conv_spec *spec, dnnl_primitive_desc_t *pd);

/* The description of one slice's weights as the model has them (fp32
 * oihw), which hy_dnnl_reorder_weights reads. */
bool hy_dnnl_conv_user_weights_md (const hy_dnnl_setup *s,
    const hy_dnnl_conv_spec *spec, dnnl_memory_desc_t *md);

/* Reorders n_slices slices of oihw weights (fp32 or int8, as user_md
 * says), one after the other from `weights`, into oneDNN's layout md (and
 * type), slice i at out + i * out_stride.  Once, at set-up. */
bool hy_dnnl_reorder_weights (const hy_dnnl_setup *s, dnnl_engine_t engine,
    const void *weights, const dnnl_memory_desc_t *user_md,
    const dnnl_memory_desc_t *md, int64_t n_slices, char *out,
    size_t out_stride);

#endif /* HY_CPU_DNNL_CONV_SETUP_H */
