/*
 * cuda-kernel.h — the contract between the core and the CUDA kernels: the
 * CPU contract (kernels/cpu/cpu-kernel.h) on device memory.
 *
 * A kernel runs one op on contiguous float32 tensors in device memory
 * whose shapes the core has already inferred and validated.  It enqueues
 * its work on ctx->stream and returns at once: it never synchronises,
 * never allocates and never fails out loud.  A failed CUDA, cuBLAS or
 * cuDNN call is recorded in ctx (the first one wins, with the call, file
 * and line) and reported by the backend when the forward ends; that keeps
 * a whole forward capturable as one CUDA graph.  A kernel that cannot use
 * its input's values (MXNet raises on them) records that on the device
 * (refusal.h) and the forward fails the same way, naming the call.
 *
 * Families that need set-up (cuDNN descriptors and algorithm choice,
 * cuBLAS layouts) also define hy_cuda_prepare_<family>: it runs once per
 * call when a plan is built, may fail with a message, and returns the
 * state that kernel then receives in place of the params (the state
 * starts with a copy of the params pointer for that purpose).
 *
 * Every file here is compiled by nvcc for sm_90 plus PTX; the entry points
 * are extern "C" so the C core can call them.
 */
#ifndef HY_CUDA_KERNEL_H
#define HY_CUDA_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <cudnn.h>

#include "hybrid-tensor.h"
#include "kernels/hy-ops.h"
#include "kernels/cuda/refusal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HY_CUDA_ERROR_LEN 320

typedef struct hy_cuda_ctx {
  int device;
  cudaStream_t stream;
  cublasHandle_t cublas;
  cudnnHandle_t cudnn;
  int sm_count;                 /* multiprocessors: sizes grids */
  /* Convolutions and matrix products compute from fp16 copies of their
   * operands, accumulating in fp32 (hy_precision); read when a call is
   * prepared. */
  bool fp16;

  /* Device scratch shared by every call (cuDNN workspaces): sized when
   * plans are built, as the largest any prepared call asked for. */
  void *workspace;
  size_t workspace_size;

  /* The first failure since hy_cuda_ctx_take_error; "" when none. */
  char error[HY_CUDA_ERROR_LEN];

  /* Kernels that refuse their input's values (refusal.h) write the record
   * through its device view; the backend reads it through the host view
   * after a run.  `call`: the index of the call being enqueued, for the
   * record. */
  hy_cuda_refusal *refusal;
  hy_cuda_refusal *refusal_device;
  int call;
} hy_cuda_ctx;

typedef void (*hy_cuda_kernel_fn) (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* Plan-time set-up of one call: *state (freed by the family's
 * hy_cuda_release_<family>) replaces the params for the kernel;
 * *workspace is the device scratch the call needs (0 if none).  in and out
 * carry the shapes; their data pointers are the ones the call will use. */
typedef gboolean (*hy_cuda_prepare_fn) (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error);
typedef void (*hy_cuda_release_fn) (void *state);

/* Moves the first failure recorded in ctx into *error; FALSE if there
 * was one (cuda-error.c). */
gboolean hy_cuda_ctx_take_error (hy_cuda_ctx *ctx, GError **error);
/* Moves a refusal recorded by the finished stream's kernels into *error
 * (HY_ERROR_INVALID) and *call, emptying the record; FALSE if there was
 * one. */
gboolean hy_cuda_ctx_take_refusal (hy_cuda_ctx *ctx, int *call,
    GError **error);
/* Records a failure (the first one only).  `what` is the call's text. */
void hy_cuda_ctx_fail (hy_cuda_ctx *ctx, const char *what, const char *msg,
    const char *file, int line);

/* Checked calls: on failure, record and go on (kernels cannot return). */
#define HY_CUDA_CHECK(ctx, call) \
  do { \
    cudaError_t hy_err_ = (call); \
    if (hy_err_ != cudaSuccess) \
      hy_cuda_ctx_fail ((ctx), #call, cudaGetErrorString (hy_err_), \
          __FILE__, __LINE__); \
  } while (0)

#define HY_CUBLAS_CHECK(ctx, call) \
  do { \
    cublasStatus_t hy_st_ = (call); \
    if (hy_st_ != CUBLAS_STATUS_SUCCESS) \
      hy_cuda_ctx_fail ((ctx), #call, cublasGetStatusString (hy_st_), \
          __FILE__, __LINE__); \
  } while (0)

#define HY_CUDNN_CHECK(ctx, call) \
  do { \
    cudnnStatus_t hy_st_ = (call); \
    if (hy_st_ != CUDNN_STATUS_SUCCESS) \
      hy_cuda_ctx_fail ((ctx), #call, cudnnGetErrorString (hy_st_), \
          __FILE__, __LINE__); \
  } while (0)

/* After a <<<...>>> launch: a bad configuration shows up here. */
#define HY_CUDA_CHECK_LAUNCH(ctx) HY_CUDA_CHECK ((ctx), cudaGetLastError ())

/* The same checks at plan time, where a failure is a GError and the
 * function returns FALSE. */
#define HY_CUDA_TRY(call, error) \
  do { \
    cudaError_t hy_err_ = (call); \
    if (hy_err_ != cudaSuccess) { \
      g_set_error ((error), HY_ERROR, HY_ERROR_BACKEND, \
          "%s failed at %s:%d: %s", #call, __FILE__, __LINE__, \
          cudaGetErrorString (hy_err_)); \
      return FALSE; \
    } \
  } while (0)

#define HY_CUDNN_TRY(call, error) \
  do { \
    cudnnStatus_t hy_st_ = (call); \
    if (hy_st_ != CUDNN_STATUS_SUCCESS) { \
      g_set_error ((error), HY_ERROR, HY_ERROR_BACKEND, \
          "%s failed at %s:%d: %s", #call, __FILE__, __LINE__, \
          cudnnGetErrorString (hy_st_)); \
      return FALSE; \
    } \
  } while (0)

#define HY_CUBLAS_TRY(call, error) \
  do { \
    cublasStatus_t hy_st_ = (call); \
    if (hy_st_ != CUBLAS_STATUS_SUCCESS) { \
      g_set_error ((error), HY_ERROR, HY_ERROR_BACKEND, \
          "%s failed at %s:%d: %s", #call, __FILE__, __LINE__, \
          cublasGetStatusString (hy_st_)); \
      return FALSE; \
    } \
  } while (0)

/* The kernel for an op, or NULL when the CUDA backend has none; the
 * family's prepare/release, or NULL when it needs none. */
hy_cuda_kernel_fn hy_cuda_kernel_for (hy_op_id op);
hy_cuda_prepare_fn hy_cuda_prepare_for (hy_op_id op);
hy_cuda_release_fn hy_cuda_release_for (hy_op_id op);

#ifdef __cplusplus
}
#endif

#endif /* HY_CUDA_KERNEL_H */
