/*
 * plan-chain.h — chains of calls between two values held in the
 * backend's layout that the backend runs as one call
 * (hy_backend_iface.chain_link and fuse_chain): on the CPU, an int8
 * model's float ops between a dequantize and a quantize_v2, as one look
 * up on bytes (kernels/cpu/quantized/qlut-bytes.h).
 */
#ifndef HY_PLAN_CHAIN_H
#define HY_PLAN_CHAIN_H

#include <stddef.h>

#include "core/plan-segment.h"

/* A hard sigmoid has three; a backend may take fewer. */
#define HY_PLAN_MAX_CHAIN_LINKS 8

/* Per node, for the first node of a chain, its last node; -1 elsewhere.
 * A chain: a dequantize whose data is held in the backend's layout, then
 * op nodes the backend takes as links (at most HY_PLAN_MAX_CHAIN_LINKS),
 * then a calibrated quantize_v2 whose output 0 is held so; each reads
 * the one before as its data, the only reader of that value (no graph output).
 * The chain's first inputs are kept live (value_last) until its last
 * node, which the fused call writes while it reads them.  NULL where the
 * backend has no such chains.  Freed with g_free. */
int *hy_plan_find_chains (const hy_segment_input *in,
    const size_t *private_bytes, int *value_last);

#endif /* HY_PLAN_CHAIN_H */
