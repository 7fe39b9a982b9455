/*
 * hybrid.h — the public API of the hybridinfer core.
 *
 * Load a Gluon export (`prefix-symbol.json` + `prefix-NNNN.params`), infer
 * its shapes, and run it imperatively (node by node, every output
 * inspectable) or hybridized (a compiled plan over one arena).
 *
 * Conventions: every fallible call takes a GError ** (HY_ERROR domain) and
 * returns NULL/FALSE on failure; messages name the file, node and op.
 * Objects come in _new/_load and _free pairs; the caller owns what a _new or
 * _load returns.  Tensors returned by accessors stay owned by the object
 * they came from and live until its next forward or its _free.
 */
#ifndef HYBRID_H
#define HYBRID_H

#include <math.h>

#include <glib.h>

#include "hybrid-tensor.h"

G_BEGIN_DECLS

#define HY_ERROR (hy_error_quark ())
GQuark hy_error_quark (void);

typedef enum hy_error_code {
  HY_ERROR_IO,                  /* a file could not be read or written */
  HY_ERROR_FORMAT,              /* a file is malformed or truncated */
  HY_ERROR_UNSUPPORTED,         /* an op, dtype or feature we do not run */
  HY_ERROR_SHAPE,               /* shapes do not fit */
  HY_ERROR_INVALID,             /* a bad argument or attribute value */
  HY_ERROR_MISSING,             /* a parameter or input is missing */
  HY_ERROR_BACKEND,             /* a device, driver or library call failed */
  HY_ERROR_NO_MEMORY,           /* an allocation the input's size asked for
                                 * failed (the message says what and how
                                 * much) */
} hy_error_code;

/* ---- files ------------------------------------------------------------- */

/* Reads the whole of a file a user named (a symbol file, a labels file),
 * refusing what would block or never end: anything but a regular file (a
 * FIFO, /dev/zero, a directory) and a file of more than max_bytes (at most
 * G_MAXSIZE / 2), each with an error naming the path, what it is, its size
 * and the limit.  `what` names the file in messages ("labels file").  The
 * contents get a terminating NUL not counted in *length (which may be
 * NULL); free them with g_free. */
gboolean hy_file_read_bounded (const char *path, const char *what,
    gsize max_bytes, char **contents, gsize *length, GError **error);

/* Refuses JSON text nested more than max_depth arrays/objects deep before
 * a recursive parser (json-glib) overflows its stack on it; brackets in
 * strings do not count.  The error names `source`, the limit and the byte
 * where it was passed; `note` (may be NULL) is added in parentheses. */
gboolean hy_json_check_nesting (const char *json, gsize length,
    int max_depth, const char *source, const char *note, GError **error);

/* Sets *error (HY_ERROR_FORMAT) from a json-glib parse error, naming
 * `source` and the line and column instead of json-glib's "<data>". */
void hy_json_set_parse_error (GError **error, const char *source,
    const GError *json_error);

/* ---- tensors sized by input ---------------------------------------------- */

/* hy_tensor_new, or NULL + an error (HY_ERROR_NO_MEMORY) naming what
 * needed it ("the input tensor", "node 'conv0' output 0"), the shape and
 * the MiB, when the memory cannot be had or the size cannot exist. */
hy_tensor *hy_tensor_try_new (const hy_shape *shape, const char *what,
    GError **error);

/* ---- models ------------------------------------------------------------ */

typedef struct hy_model hy_model;

/* Loads a symbol file and its parameters.  params_path NULL picks the
 * newest `prefix-NNNN.params` beside the symbol file (none: a model without
 * weights is an error only if it has unbound parameters). */
hy_model *hy_model_load (const char *symbol_path, const char *params_path,
    GError **error);
void hy_model_free (hy_model *model);

/* The newest `prefix-NNNN.params` beside `prefix-symbol.json`; NULL + error
 * when there is none.  Free with g_free. */
char *hy_model_find_params (const char *symbol_path, GError **error);

const char *hy_model_symbol_path (const hy_model *model);
const char *hy_model_params_path (const hy_model *model);

/* A loaded model is read-only: nothing changes it after hy_model_load, so
 * any number of threads may share one, each with its own executor.  Shapes
 * that depend on the input (set per executor or per hy_shapes) never live
 * in the model. */

/* Data inputs (variables with no parameter), in graph order. */
int hy_model_n_inputs (const hy_model *model);
const char *hy_model_input_name (const hy_model *model, int i);
/* The input's shape as the symbol file declares it (__shape__); ndim -1
 * when it declares none. */
hy_shape hy_model_input_shape (const hy_model *model, int i);
int hy_model_input_index (const hy_model *model, const char *name);

int hy_model_n_outputs (const hy_model *model);
/* Output shapes for the declared input shapes; ndim -1 when an input
 * declares none (use a hy_shapes or an executor for other shapes). */
hy_shape hy_model_output_shape (const hy_model *model, int i);
const char *hy_model_output_name (const hy_model *model, int i);

/* ---- shapes: one set of input shapes and what it implies ----------------- */

/* Every node's output shapes for one assignment of input shapes, kept
 * apart from the (shared, read-only) model.  Starts from the declared
 * shapes.  `model` must outlive it. */
typedef struct hy_shapes hy_shapes;

hy_shapes *hy_shapes_new (const hy_model *model);
void hy_shapes_free (hy_shapes *shapes);
/* Dimensions must be positive; an unknown name is an error. */
gboolean hy_shapes_set_input (hy_shapes *shapes, const char *name,
    const hy_shape *shape, GError **error);
hy_shape hy_shapes_input (const hy_shapes *shapes, int i);
/* Infers every node's shapes from the input shapes (once per change);
 * errors name the node and op where a shape does not fit. */
gboolean hy_shapes_infer (hy_shapes *shapes, GError **error);
gboolean hy_shapes_inferred (const hy_shapes *shapes);
/* After hy_shapes_infer; ndim -1 before. */
hy_shape hy_shapes_output (const hy_shapes *shapes, int i);
/* Node i's output shapes (hy_model_node's n_outputs of them). */
const hy_shape *hy_shapes_node (const hy_shapes *shapes, int i);
const hy_model *hy_shapes_model (const hy_shapes *shapes);

/* Like hy_model_load, but an unknown or unimplemented op does not fail the
 * load: each is listed as "node (op)" in *unsupported (NULL-terminated; free
 * with g_strfreev; NULL when there are none).  Such a model can be
 * inspected, not run. */
hy_model *hy_model_load_for_inspection (const char *symbol_path,
    const char *params_path, char ***unsupported, GError **error);

/* The graph alone, for inspection without the weights (a model whose
 * params file is large or not at hand): no params file is read; each
 * parameter's shape is the one the symbol file declares or the one the op
 * reading it requires (MXNet's shape inference does the same).  Unknown
 * ops are listed as by hy_model_load_for_inspection.  Shapes can be
 * inferred; executors refuse such a model. */
hy_model *hy_model_load_graph_only (const char *symbol_path,
    char ***unsupported, GError **error);
/* Whether the model was loaded graph-only (hy_model_load_graph_only). */
gboolean hy_model_is_weightless (const hy_model *model);

/* A read-only view of one graph node, for tools and debugging. */
typedef struct hy_node_desc {
  const char *name;
  const char *op;               /* canonical name; as written if unknown;
                                 * "null" for variables */
  const char *kind;             /* "op", "input", "param", "aux", "unused" */
  gboolean supported;           /* op nodes: we can run it */
  int n_inputs;
  int n_outputs;
  const hy_shape *shapes;       /* n_outputs: for the declared input shapes
                                 * (hy_model_node) or the executor's (node
                                 * hooks); ndim -1 when not known */
} hy_node_desc;

int hy_model_n_nodes (const hy_model *model);
gboolean hy_model_node (const hy_model *model, int i, hy_node_desc *out);
/* Name of the node feeding input k of node i; *output_index gets which of
 * its outputs (may be NULL). */
const char *hy_model_node_input (const hy_model *model, int i, int k,
    int *output_index);

/* Parameter count and bytes (float32) of everything bound. */
gint64 hy_model_param_count (const hy_model *model);
gint64 hy_model_param_bytes (const hy_model *model);

/* Writes the model as MXNet 1.9.1 would export it: `prefix-symbol.json`
 * and `prefix-%04d.params` (arg:/aux: keys, float32).  Real MXNet loads
 * both, so this also upgrades legacy files. */
gboolean hy_model_export (const hy_model *model, const char *prefix,
    int epoch, GError **error);

/* Writes the model as an ONNX file (opset 13, float32 weights as
 * initializers) that ONNX Runtime runs with the same outputs.  Shapes are
 * static: the inputs get the shapes `shapes` holds (inferred; NULL: the
 * declared ones, an error when an input declares none), and every
 * Reshape's target is written as the numbers they give.  An op without an
 * ONNX form is refused (HY_ERROR_UNSUPPORTED) naming the node and the op,
 * and no file is left at `path`.  Without protobuf-c at build time,
 * refused saying what to install. */
gboolean hy_model_export_onnx (const hy_model *model,
    const hy_shapes *shapes, const char *path, GError **error);

/* ---- running ----------------------------------------------------------- */

typedef enum hy_mode {
  HY_MODE_HYBRID,               /* compiled plan, preplanned memory */
  HY_MODE_IMPERATIVE,           /* node by node, each output fresh */
} hy_mode;

typedef enum hy_device_kind {
  HY_DEVICE_CPU,
  HY_DEVICE_CUDA,
} hy_device_kind;

typedef struct hy_device {
  hy_device_kind kind;
  int index;
} hy_device;

/* Parses "cpu", "cuda", "cuda:N" or "auto" (auto resolves to the best
 * working device and *auto_note says which and why). */
gboolean hy_device_parse (const char *text, hy_device *out, GError **error);
gboolean hy_device_resolve_auto (const char *text, hy_device *out,
    char **note, GError **error);
/* Why `device` cannot run models here (no CUDA in this build, no driver,
 * no such GPU), or NULL when it can.  Free the result with g_free. */
char *hy_device_unavailable_reason (hy_device device);
/* TRUE when this machine offers no GPU at all — no NVIDIA driver, no CUDA
 * device, or a build without the CUDA backend: a CPU machine's normal
 * state, not a GPU that is there but cannot be used (a driver too old for
 * this build, a device error). */
gboolean hy_device_no_gpu (void);

/* Arithmetic precision.  fp16 runs on a CUDA device only: convolutions
 * and matrix products read fp16 copies of their inputs and weights and
 * accumulate in fp32 (tensor cores); everything else, and every tensor
 * between layers, stays fp32.  Outputs then match fp32 to about 1e-2
 * relative instead of 1e-4.  bf16 runs on the CPU only, and only on one
 * with AVX512_BF16 (refused elsewhere, never emulated): convolutions read
 * bf16 copies of their input and weights (the weights converted once, when
 * a plan is made) and accumulate in fp32 through oneDNN; everything else
 * stays fp32 (docs/PRECISION.md). */
typedef enum hy_precision {
  HY_PRECISION_FP32,
  HY_PRECISION_FP16,
  HY_PRECISION_BF16,
} hy_precision;

/* "fp32", "fp16" or "bf16". */
gboolean hy_precision_parse (const char *text, hy_precision *out,
    GError **error);

typedef struct hy_executor hy_executor;

/* How an executor runs.  A zeroed struct means: the CPU, hybridized,
 * fp32, HYBRIDINFER_THREADS threads (else one per CPU). */
typedef struct hy_executor_options {
  hy_device device;
  hy_mode mode;
  hy_precision precision;
  int threads;                  /* CPU compute threads, the caller's
                                 * included; <= 0: the default */
} hy_executor_options;

/* Prepares to run `model`, which must outlive the executor and which it
 * only reads: executors on one model may run on different threads at
 * once.  `options` NULL: all defaults. */
hy_executor *hy_executor_new_with_options (const hy_model *model,
    const hy_executor_options *options, GError **error);
/* The same with default threads and precision. */
hy_executor *hy_executor_new (const hy_model *model, hy_device device,
    hy_mode mode, GError **error);
void hy_executor_free (hy_executor *exec);
hy_mode hy_executor_mode (const hy_executor *exec);
/* Sets the precision of later forwards (plans are rebuilt); fp16 on a
 * device that cannot run it is an error naming the device. */
gboolean hy_executor_set_precision (hy_executor *exec,
    hy_precision precision, GError **error);
gboolean hy_executor_set_mode (hy_executor *exec, hy_mode mode,
    GError **error);

/* The executor's input shapes (starting from the declared ones) and what
 * they imply; a forward sets them from its inputs. */
gboolean hy_executor_set_input_shape (hy_executor *exec, const char *name,
    const hy_shape *shape, GError **error);
const hy_shapes *hy_executor_shapes (const hy_executor *exec);
/* Output i's shape for the current input shapes (inferring them if
 * needed); ndim -1 + error when they do not fit. */
hy_shape hy_executor_output_shape (hy_executor *exec, int i, GError **error);

/* Runs one forward.  inputs[i] feeds hy_model_input_name(i); a shape that
 * differs from the last one re-infers (and, hybrid, re-plans) once.  The
 * inputs are only read. */
gboolean hy_executor_forward (hy_executor *exec,
    const hy_tensor *const *inputs, int n_inputs, GError **error);
/* Output i of the last forward; owned by the executor. */
const hy_tensor *hy_executor_output (const hy_executor *exec, int i);

/* ---- an input quantized by the caller ----------------------------------
 * MXNet's int8 exports start data → _contrib_quantize_v2 → the first
 * quantized convolution.  A caller that computes the input's floats
 * itself (a video frame, hybrid-frame.h) can round them to the quantize
 * node's bytes in the same pass, straight where the plan keeps that
 * node's output, and run the forward without it: no float copy of the
 * input is written or read.  The plan keeps that output as bytes where
 * every reader is one of oneDNN's int8 convolutions (docs/PRECISION.md,
 * "int8"). */

/* How model input `input` is quantized, and where its bytes go. */
typedef struct hy_input_quantization {
  float scale;                  /* steps per real unit: 127.5 (uint8:
                                 * 255.5) over the calibrated range */
  gboolean is_uint8;            /* bytes 0..255; else int8, -128..127 */
  void *data;                   /* batch x H x W x C bytes (NHWC), in the
                                 * plan: valid while the executor keeps its
                                 * mode, precision and input shapes */
} hy_input_quantization;

/* One input float as the quantize node stores it: x · scale rounded to
 * nearest even and saturated, NaN as 127 (int8) or 0 (uint8): MXNet
 * 1.9.1's oneDNN reorder, and our kernel, bit for bit. */
static inline int
hy_input_quantize (const hy_input_quantization *q, float x)
{
  const float v = x * q->scale;
  const float lo = q->is_uint8 ? 0.0f : -128.0f;
  const float hi = q->is_uint8 ? 255.0f : 127.0f;
  if (v != v)
    return q->is_uint8 ? 0 : 127;
  const float r = rintf (v);
  return (int) (r < lo ? lo : r > hi ? hi : r);
}

/* TRUE and *out filled when, in the plan for the current input shapes
 * (made now if need be), input `input` is read by a calibrated
 * _contrib_quantize_v2 alone whose output is held as bytes: hybrid mode,
 * on the CPU, the batch run as a whole.  FALSE, *error untouched, when it
 * is not so (imperative mode, another device, another reader,
 * HYBRIDINFER_DNNL=0: the caller then passes floats as usual); FALSE +
 * error when the plan cannot be made. */
gboolean hy_executor_input_quantization (hy_executor *exec, int input,
    hy_input_quantization *out, GError **error);

/* A forward at the executor's current input shapes whose quantized input
 * is already written where hy_executor_input_quantization said: its
 * quantize node is skipped, and the tensor given for that input is not
 * read (the others are read as hy_executor_forward reads them).  FALSE +
 * error where the plan has no such input. */
gboolean hy_executor_forward_quantized (hy_executor *exec,
    const hy_tensor *const *inputs, int n_inputs, GError **error);
int hy_executor_n_outputs (const hy_executor *exec);

/* Memory of a hybridized plan: the arena actually used, the naive sum of
 * every intermediate (what allocating each output separately costs), and
 * the lower bound (the most bytes live at any one time).  On a device,
 * also the weights the plan uploaded (0 on the CPU, which reads the
 * model's own).  A CPU batch may run image by image on a plan for one
 * image (docs/ARCHITECTURE.md): the figures are then that plan's, and
 * images_per_run says so; or only its first calls so (per_image_calls),
 * the rest on the whole batch: the figures are then the sums of both
 * plans'. */
typedef struct hy_memory_stats {
  gint64 arena_bytes;
  gint64 naive_bytes;
  gint64 lower_bound_bytes;
  gint64 weight_bytes;
  gint64 images_per_run;        /* 1: image by image; 0: the whole batch */
  gint64 per_image_calls;       /* the calls run image by image: all of
                                 * them (images_per_run 1), the first few
                                 * (the rest on the whole batch), or 0 */
  /* bf16 segments (docs/PRECISION.md): values held between calls in the
   * backend's own layout (bf16 nhwc on the CPU), and the calls that
   * convert at a segment's edges, fp32 planes in or out. */
  gint64 segment_values;
  gint64 segment_entries;
  gint64 segment_exits;
} hy_memory_stats;

/* The memory figures of the plan for the current input shapes (hybrid mode,
 * after a forward or hy_executor_prepare); FALSE when there is none. */
gboolean hy_executor_memory (const hy_executor *exec, hy_memory_stats *out);

/* What the executor's device has done since the executor was made: the
 * counts that show a steady-state forward allocates nothing and, on a GPU,
 * is one graph launch (take them before and after a run of forwards). */
typedef struct hy_device_stats {
  gint64 allocations;           /* arenas, weights, imperative outputs */
  gint64 uploads, upload_bytes;           /* host to device */
  gint64 downloads, download_bytes;       /* device to host */
  gint64 recordings;            /* plans recorded as one CUDA graph */
  gint64 graph_launches;        /* forwards run as one launch */
  gint64 direct_calls;          /* kernel calls run one by one */
} hy_device_stats;

void hy_executor_device_stats (const hy_executor *exec,
    hy_device_stats *out);

/* One call of a hybridized forward, as a profile sees it. */
typedef struct hy_layer_profile {
  const char *node;             /* the plan's node (a fused node keeps the
                                 * name of the op the others joined) */
  const char *op;               /* its op; "_copy" for an output copy */
  double ms;                    /* mean time per forward */
  double flop;                  /* arithmetic per forward (a multiply-add
                                 * is 2); 0 where memory, not arithmetic,
                                 * bounds it */
  double cpu_ms;                /* mean CPU time per forward, all threads
                                 * (with one thread, what an idle machine's
                                 * ms would be, however busy this one is) */
  const char *kernel;           /* which implementation ran it where the
                                 * backend has a choice ("packed",
                                 * "openblas", "onednn"), else NULL */
} hy_layer_profile;

/* A per-layer profile of the hybridized forward for `inputs`: runs
 * `iterations` forwards one call at a time, timing each, on the CPU (a
 * device runs calls asynchronously: an error says so).  The entries are
 * the executor's, valid until its next forward, profile or free.  The
 * calls' times add up to a forward's time less the per-forward overhead
 * of one run (a few microseconds). */
gboolean hy_executor_profile (hy_executor *exec,
    const hy_tensor *const *inputs, int n_inputs, int iterations,
    const hy_layer_profile **layers, int *n_layers, GError **error);

/* Plans for the executor's current input shapes without running (hybrid). */
gboolean hy_executor_prepare (hy_executor *exec, GError **error);

/* ---- per-node hooks (imperative mode: the debugging path) ------------- */

typedef struct hy_node_event {
  int index;                    /* node index in the graph (topological) */
  const hy_node_desc *node;
  const hy_tensor *const *outputs;  /* valid during the call only */
  int n_outputs;
  double elapsed_us;            /* the node's kernel time */
} hy_node_event;

typedef void (*hy_node_hook) (const hy_model *model,
    const hy_node_event *event, void *user_data);

/* Calls `hook` after every op node of each imperative forward (hybrid mode
 * runs fused nodes that have no one-to-one match, and calls nothing).
 * NULL removes it. */
void hy_executor_set_node_hook (hy_executor *exec, hy_node_hook hook,
    void *user_data);

/* ---- per-layer dumps (core/dump.c; docs/DEBUGGING.md) ------------------- */

typedef struct hy_dump hy_dump;

/* A dump into `dir` (created if needed).  Attached to an executor, every op
 * node output of each imperative forward is written to
 * `NNNN_<node>[_outK].npy` (NNNN: the node's graph index); the last forward
 * wins.  Write errors do not stop the forward: hy_dump_finish reports the
 * first one.  Free the executor, or remove its hook, before the dump. */
hy_dump *hy_dump_new (const char *dir, GError **error);
void hy_dump_attach (hy_dump *dump, hy_executor *exec);
/* Writes `index.json` (one entry per file, with statistics). */
gboolean hy_dump_finish (hy_dump *dump, GError **error);
void hy_dump_free (hy_dump *dump);

/* ---- CPU tuning -------------------------------------------------------- */

/* Threads OpenBLAS itself would use: 1 once a CPU executor exists (our
 * kernels split products over their own threads). */
int hy_blas_n_threads (void);
/* Name of the CPU kernel set OpenBLAS runs ("Haswell", "SkylakeX", …). */
const char *hy_blas_core_name (void);
/* The OPENBLAS_CORETYPE that would run faster on this CPU than what
 * OpenBLAS picked by itself, or NULL when it already picks the best. */
const char *hy_blas_suggested_coretype (void);

G_END_DECLS
#endif /* HYBRID_H */
