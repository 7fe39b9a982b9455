/*
 * op-checks.h — what the op unit tests (test-ops-detection.c,
 * test-ops-vision.c) share: building shapes and attribute lists inline,
 * asserting an op's inferred shape or its refusal, and loading a symbol
 * written inline as a model.
 */
#ifndef HY_TEST_OP_CHECKS_H
#define HY_TEST_OP_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "hybrid.h"

/* SHAPE (2, 3) is the shape (2, 3); KV ("k", "v", ...) an attribute list
 * of key, value pairs ending in NULL. */
#define SHAPE(...) shape_of ((const int64_t[]) { __VA_ARGS__ }, \
    sizeof ((const int64_t[]) { __VA_ARGS__ }) / sizeof (int64_t))
#define KV(...) ((const char *const[]) { __VA_ARGS__, NULL })

hy_shape shape_of (const int64_t *dims, size_t n);

/* Op `op` with attributes kv (NULL: none) on inputs in[0..n_in) infers
 * the output shape written `want`, as hy_shape_format writes it. */
void expect_shape (const char *op, const char *const *kv, const hy_shape *in,
    int n_in, const char *want);

/* Parsing or shape inference refuses, with an HY_ERROR whose message
 * contains needle. */
void expect_error (const char *op, const char *const *kv, const hy_shape *in,
    int n_in, const char *needle);

/* Writes `json` as a symbol file in a new temporary folder and loads it
 * (no parameters: every variable is an input); the folder is gone when
 * this returns. */
hy_model *load_json (const char *json, GError **error);

#endif /* HY_TEST_OP_CHECKS_H */
