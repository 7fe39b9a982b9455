/*
 * hy-ops.h — the op ids, generated from ops.def.
 *
 * Shared by core/ (which parses and plans ops) and kernels/ (which run them).
 */
#ifndef HY_OPS_H
#define HY_OPS_H

typedef enum hy_op_id {
#define HY_OP(id, family, name, aliases) HY_OP_##id,
#include "kernels/ops.def"
#undef HY_OP
  HY_OP_COUNT
} hy_op_id;

#endif /* HY_OPS_H */
