/*
 * frame-convert.h — a frame plan's conversion on the CPU (hybrid-frame.h:
 * hy_frame_plan_convert): the sampling tables and row buffers made once
 * from the plan's derived numbers, then one pass per frame that allocates
 * nothing.  Single-threaded: the converter keeps its sampled rows.
 */
#ifndef HY_CPU_FRAME_CONVERT_H
#define HY_CPU_FRAME_CONVERT_H

#include <stdint.h>

#include "kernels/frame/frame-desc.h"

typedef struct hy_cpu_frame_converter hy_cpu_frame_converter;

/* `d` (the plan's) must outlive the converter. */
hy_cpu_frame_converter *hy_cpu_frame_converter_new (const hy_frame_desc *d);
void hy_cpu_frame_converter_free (hy_cpu_frame_converter *conv);

/* hy_frame_plan_convert: dst_channels x dst_height x dst_width floats. */
void hy_cpu_frame_convert (const hy_cpu_frame_converter *conv,
    const uint8_t *const planes[3], const int strides[3], float *dst);

/* hy_frame_plan_convert_quantized: dst_height x dst_width x dst_channels
 * bytes. */
void hy_cpu_frame_convert_quantized (const hy_cpu_frame_converter *conv,
    const uint8_t *const planes[3], const int strides[3],
    const hy_input_quantization *q, uint8_t *dst);

#endif /* HY_CPU_FRAME_CONVERT_H */
