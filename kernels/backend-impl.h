/*
 * backend-impl.h — what a device must provide, for those who implement one
 * (ggml's ggml-backend-impl.h plays this part): memory, copies to and from
 * the host, a kernel per op, and a way to run a list of kernel calls.  The
 * CPU backend (kernels/cpu/cpu-backend.c) and the CUDA backend
 * (kernels/cuda/cuda-backend.c) each fill one hy_backend_iface; the core
 * reaches kernels only through it and never includes a device header.
 * It sits in kernels/ beside the op contract (ops.def, params/): both
 * halves build on it, and what the core does with a backend is in
 * core/backend.h.  Not public: users pick a device with hy_device
 * (hybrid.h).
 *
 * Kernels keep their backend's own signature (hy_cpu_kernel_fn,
 * hy_cuda_kernel_fn): a call stores its kernel as an opaque function
 * pointer that only the backend that handed it out calls, cast back.
 */
#ifndef HY_BACKEND_IMPL_H
#define HY_BACKEND_IMPL_H

#include <glib.h>

#include <stdint.h>

#include "hybrid.h"
#include "hybrid-frame.h"
#include "kernels/hy-ops.h"

typedef void (*hy_kernel_ptr) (void);

/* One kernel call: a node of a plan, or an imperative step. */
typedef struct hy_call {
  hy_kernel_ptr fn;
  const void *params;           /* the node's params, or prepared state */
  const hy_tensor *const *in;
  hy_tensor *const *out;
  int n_in;
  int n_out;
  hy_op_id op;                  /* HY_OP_COUNT: a plain copy */
  /* A bitset of n_in bits (hy_call_input_const reads it; NULL: none):
   * bit k set, in[k] already holds its value when prepare_call runs and
   * keeps it for as long as the call lives (a weight, a folded constant;
   * every input of an imperative step), so a backend may transform it
   * once there (reorder weights into a blocked layout).  Sized by the
   * call's inputs, whatever their number (add_n, Concat of hundreds), and
   * owned by whoever made the call: a plan allocates them when it is
   * built, never per forward. */
  const uint32_t *const_inputs;
  /* Bit k set: in[k] (private_inputs) or out[k] (private_outputs) is held
   * in the backend's own layout, not as fp32 planes (a bf16 segment,
   * core/plan-segment.c): the value's producer and all its readers run on
   * the backend's own kernels, which alone read it.  Zero outside plans.
   * Only the ops a segment takes (convolution, pooling, add: a handful of
   * inputs each) are ever marked, so 32 bits hold them. */
  uint32_t private_inputs;
  uint32_t private_outputs;
  /* Of those, the ones held at 4 bytes an element (fp32 in the backend's
   * layout) rather than narrower (bf16). */
  uint32_t private_wide_inputs;
  uint32_t private_wide_outputs;
} hy_call;

/* Words of a const_inputs bitset for n inputs. */
static inline int
hy_const_bits_words (int n_in)
{
  return n_in > 0 ? (n_in + 31) / 32 : 0;
}

static inline void
hy_const_bits_set (uint32_t *bits, int k)
{
  bits[k / 32] |= (uint32_t) 1 << (k % 32);
}

/* in[k] holds its value for the call's life (hy_call.const_inputs). */
static inline gboolean
hy_call_input_const (const hy_call *call, int k)
{
  return call->const_inputs && k >= 0 && k < call->n_in
      && (call->const_inputs[k / 32] >> (k % 32) & 1u);
}

/* What a call will be, before its tensors exist (hy_backend_iface's
 * may_fuse): its op, params, data input shape and output shape. */
typedef struct hy_call_shape {
  hy_op_id op;
  const void *params;
  const hy_shape *in0;
  const hy_shape *out0;
  /* This call may already run fused with the one before it (that pair
   * was fusable): a chain of three is offered a pair at a time. */
  gboolean fused_with_previous;
  /* A pair's second only: the op node that alone reads its output, as
   * its data (the chain's possible next link), or NULL — so that a pair
   * may be fused for what the three would gain. */
  const struct hy_call_shape *next;
} hy_call_shape;

typedef struct hy_backend hy_backend;

typedef struct hy_backend_iface {
  const char *name;             /* "cpu", "cuda" */
  /* Tensors live in host memory: inputs can be read where the caller has
   * them and outputs handed back as they are. */
  gboolean host_memory;

  void (*free) (hy_backend *be);

  /* The kernel for an op, or NULL when this backend has none. */
  hy_kernel_ptr (*kernel_for) (hy_op_id op);
  /* The kernel that copies in[0] to out[0] (output copies). */
  hy_kernel_ptr copy_kernel;

  /* Optional: set-up of one call before it first runs (a plan build, an
   * imperative step).  May replace call->params with prepared state that
   * release_call frees. */
  gboolean (*prepare_call) (hy_backend *be, hy_call *call, GError **error);
  void (*release_call) (hy_backend *be, hy_call *call);
  /* Optional: one call in place of two, where `second` reads `first`'s
   * only output as its data (in[0]) and nothing else reads it (the core
   * has checked), and neither is prepared: fills fused->fn and
   * fused->params (prepared state, freed by release_call), the core
   * having set fused->in (first's arguments, then second's but its
   * data), fused->out (second's) and the rest.  The fused call never
   * writes first's output.  Returns FALSE, having changed nothing, where
   * the backend runs the two apart. */
  gboolean (*fuse_calls) (hy_backend *be, const hy_call *first,
      const hy_call *second, hy_call *fused);
  /* Optional, with fuse_calls: whether fuse_calls may take such a pair,
   * from its ops, params and shapes alone (first's data and output,
   * second's output), asked while the memory is planned: the first's
   * inputs then stay live until the second has run, since the fused call
   * reads them while it writes the second's output. */
  gboolean (*may_fuse) (hy_backend *be, const hy_call_shape *first,
      const hy_call_shape *second);
  /* Optional, both or neither: values held in the backend's own layout
   * between calls (core/plan-segment.c).  private_output_bytes: the bytes
   * of `call`'s output 0 in that layout where the call can write it so
   * (in0_private: its data input is itself held so), 0 where it writes
   * fp32 planes; read_as_operand: some reader reads the value as an input
   * other than its data (a residual), where a backend may want it kept
   * wider.  reads_private: whether `call` can read its input
   * `input` in that layout.  Asked from shapes alone, before any call is
   * prepared; prepare_call then finds the call's private_inputs and
   * private_outputs set and must honour them (or fail the plan). */
  size_t (*private_output_bytes) (hy_backend *be, const hy_call_shape *call,
      gboolean in0_private, gboolean read_as_operand);
  gboolean (*reads_private) (hy_backend *be, const hy_call_shape *call,
      int input);
  /* Optional, both or neither, with values held in the backend's layout:
   * a chain of calls run as one (core/plan-chain.c) — a dequantize
   * reading such a value, float ops on data alone, a calibrated
   * quantize_v2 writing such a value, each call reading the one before
   * as its data and nothing else reading it.  chain_link: whether `link`
   * may be one of the float ops, from its op, params and shapes alone,
   * asked while the memory is planned (the dequantize's inputs then stay
   * live until the quantize_v2 has run).  fuse_chain: calls[0..n), all
   * prepared, as one call: fills fused->fn and fused->params (freed by
   * release_call), the core having set the rest (the dequantize's
   * inputs, the quantize_v2's outputs); node_params: each call's node
   * params, which prepare_call may have replaced.  FALSE, having changed
   * nothing, where the backend runs them apart. */
  gboolean (*chain_link) (hy_backend *be, const hy_call_shape *link);
  gboolean (*fuse_chain) (hy_backend *be, const hy_call *calls, int n,
      const void *const *node_params, hy_call *fused);
  /* Optional: which implementation runs a (prepared) call, for profiles,
   * where the backend chooses between several; NULL otherwise. */
  const char *(*call_kernel_name) (hy_backend *be, const hy_call *call);

  /* Runs calls in order.  `capture` (may be NULL) is a plan's slot for a
   * recorded form of the same list (a CUDA graph): filled on the first
   * run, replayed on later ones, released with release_capture.  Returns
   * FALSE with the first device failure, or a kernel's (an index out of
   * range), naming the failed call in be->failed_call where it can. */
  gboolean (*run) (hy_backend *be, const hy_call *calls, int n_calls,
      void **capture, GError **error);
  void (*release_capture) (hy_backend *be, void *capture);

  /* Device memory (host memory on the CPU), 256-byte aligned. */
  void *(*alloc) (hy_backend *be, size_t bytes, GError **error);
  void (*dealloc) (hy_backend *be, void *ptr);
  /* Blocking copies between the host and this backend's memory. */
  gboolean (*upload) (hy_backend *be, void *dst, const void *src,
      size_t bytes, GError **error);
  gboolean (*download) (hy_backend *be, void *dst, const void *src,
      size_t bytes, GError **error);

  /* Optional: computes in `precision` from the next prepared call on;
   * NULL means fp32 only. */
  gboolean (*set_precision) (hy_backend *be, hy_precision precision,
      GError **error);

  /* Optional (NULL: this backend does not stage frames; the CPU reads
   * them where they are): frame stages (hybrid-frame.h).  frame_stage_new
   * makes everything a stage of `batch` slots needs, once, to convert
   * frames as `plan` says into `input`, a plan's device input of shape
   * (batch, C, H, W) that the core found for it and that outlives the
   * stage; the stage copies what it keeps of `plan`.  frame_stage_load
   * allocates nothing and only enqueues: copy, upload and conversion
   * complete in stream order before the next run.  The core has checked
   * the slot, the shapes and the mode. */
  void *(*frame_stage_new) (hy_backend *be, const hy_frame_plan *plan,
      hy_tensor *input, int batch, GError **error);
  gboolean (*frame_stage_load) (hy_backend *be, void *stage, int slot,
      const uint8_t *const planes[3], const int strides[3], GError **error);
  void (*frame_stage_free) (hy_backend *be, void *stage);
} hy_backend_iface;

struct hy_backend {
  const hy_backend_iface *iface;
  hy_device device;
  hy_device_stats stats;        /* kept up by the backend */
  /* After run returned FALSE: the index of the call that failed, so that
   * the caller can name its node; -1 when the backend cannot tell (a
   * device that reports failures after the fact).  Callers set it to -1
   * before run. */
  int failed_call;
};

/* The backends themselves (NULL with a message on failure).  The CUDA
 * one is built as a module of its own, libhybrid-cuda.so, whose entry
 * points the core looks up when a GPU is first asked about
 * (core/cuda-module.c). */
hy_backend *hy_cpu_backend_new (int n_threads, GError **error);
hy_backend *hy_cuda_backend_new (int index, GError **error);

/* Why CUDA cannot be used here, or NULL when it can (device `index`).
 * The returned string is owned by the caller. */
char *hy_cuda_unavailable_reason (int index);
/* TRUE when the machine has no CUDA GPU at all (no driver, no device). */
bool hy_cuda_absent (void);

#endif /* HY_BACKEND_IMPL_H */
