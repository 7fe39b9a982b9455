/*
 * hybrid-quantize.h — make an int8 model from an fp32 Gluon export, as
 * MXNet 1.9.1's quantize_net_v2 does for its oneDNN backend, written in
 * MXNet's own int8 form (`_contrib_quantize_v2`, quantized `_sg_mkldnn_conv`
 * and `_sg_mkldnn_fully_connected` with their subgraphs,
 * `_contrib_quantized_pooling`/`_flatten`, `_contrib_dequantize`), so that
 * real MXNet loads the files as well as hybridinfer does.
 *
 *   q = hy_quantizer_new (model, &options, &error);   plans the int8 graph
 *   hy_quantizer_calibrate (q, inputs, error);        once per batch
 *   hy_quantizer_save (q, "out/model", &error);       -symbol.json, -0000.params
 *
 * Calibration runs the fp32 model node by node and keeps, for every tensor
 * the int8 graph quantizes, its minimum and maximum (naive) or its
 * histogram of 8001 bins (entropy: the threshold of least KL divergence,
 * MXNet's calibrate_entropy).  docs/PRECISION.md, "Making an int8 model".
 */
#ifndef HYBRID_QUANTIZE_H
#define HYBRID_QUANTIZE_H

#include "hybrid.h"

G_BEGIN_DECLS

typedef enum hy_calib_mode {
  HY_CALIB_NAIVE,               /* the calibration data's min and max */
  HY_CALIB_ENTROPY,             /* the KL-optimal threshold */
} hy_calib_mode;

/* quantize_net_v2's quantized_dtype: what `_contrib_quantize_v2` makes of
 * fp32 data.  auto: uint8 where the calibrated range is non-negative. */
typedef enum hy_quantized_dtype {
  HY_QUANTIZED_AUTO,
  HY_QUANTIZED_INT8,
  HY_QUANTIZED_UINT8,
} hy_quantized_dtype;

typedef struct hy_quantize_options {
  hy_calib_mode calib_mode;
  hy_quantized_dtype dtype;
  /* NULL-terminated lists, or NULL.  A layer is excluded by the name of its
   * fp32 node (a convolution excluded stays fp32 with its BatchNorm and
   * activation); an op by its MXNet name ("Convolution", "Pooling",
   * "FullyConnected", "Flatten"). */
  const char *const *exclude_layers;
  const char *const *exclude_ops;
} hy_quantize_options;

gboolean hy_calib_mode_parse (const char *text, hy_calib_mode *out,
    GError **error);
gboolean hy_quantized_dtype_parse (const char *text, hy_quantized_dtype *out,
    GError **error);

typedef struct hy_quantizer hy_quantizer;

/* Plans the int8 graph of `model` (which must outlive the quantizer): which
 * layers become int8, where data is quantized and dequantized.  An excluded
 * name that is no node of the model is an error, as is a model with
 * nothing to quantize. */
hy_quantizer *hy_quantizer_new (const hy_model *model,
    const hy_quantize_options *options, GError **error);
void hy_quantizer_free (hy_quantizer *q);

/* One calibration batch: inputs[i] feeds hy_model_input_name (model, i).
 * Each call is one forward, as one batch of MXNet's calibration iterator
 * (entropy's histograms grow batch by batch, as MXNet's do). */
gboolean hy_quantizer_calibrate (hy_quantizer *q,
    const hy_tensor *const *inputs, GError **error);
int hy_quantizer_n_batches (const hy_quantizer *q);
/* How many layers run int8 in the planned graph. */
int hy_quantizer_n_quantized (const hy_quantizer *q);

/* Writes prefix-symbol.json and prefix-0000.params (after at least one
 * batch).  Weights stay float32 as MXNet keeps them, except the fully
 * connected layers', which MXNet stores as int8 with their ranges. */
gboolean hy_quantizer_save (hy_quantizer *q, const char *prefix,
    GError **error);

/* ---- ONNX QDQ models ----------------------------------------------------
 *
 * hy_model_load runs an ONNX QDQ file (QuantizeLinear/DequantizeLinear
 * around float ops) in float, each pair as ONNX Runtime computes it with
 * its optimisations off.  hy_model_quantize_qdq makes the int8 model of
 * it instead: each pair's scale and zero point become the calibrated
 * range of the tensor it reads, and the quantizer plans the int8 layers
 * from them as from calibration (docs/ONNX.md, "QDQ int8 models"). */

typedef struct hy_qdq_summary {
  int pairs;                    /* quantize-dequantize pairs in the file */
  int int8_layers;              /* convolutions and fully connected */
  int float_layers;             /* left fp32: a range they need is not in
                                 * the file */
  int shifted_ranges;           /* ranges from a zero point other than 0,
                                 * covered symmetrically */
} hy_qdq_summary;

/* Whether the model holds quantize-dequantize pairs (a QDQ file). */
gboolean hy_model_has_qdq (const hy_model *model);

/* The int8 model of a QDQ model (which it only reads; the result owns
 * its own weights).  Fails, naming the file, when no pair is left or no
 * layer can run int8.  `summary` may be NULL. */
hy_model *hy_model_quantize_qdq (const hy_model *model,
    hy_qdq_summary *summary, GError **error);

/* hy_model_quantize_qdq written as an MXNet int8 export
 * (prefix-symbol.json, prefix-0000.params), as hy_quantizer_save writes
 * one: MXNet loads and runs it. */
gboolean hy_qdq_save (const hy_model *model, const char *prefix,
    hy_qdq_summary *summary, GError **error);

/* One line: how many int8 layers, what stayed fp32 and why (g_free). */
char *hy_qdq_summary_format (const hy_qdq_summary *summary);

/* How a QDQ file runs. */
typedef enum hy_qdq_mode {
  HY_QDQ_INT8,                  /* its int8 model; float when no layer
                                 * maps onto the int8 layers */
  HY_QDQ_FLOAT,                 /* each pair in float, as written */
} hy_qdq_mode;

/* "int8" or "float". */
gboolean hy_qdq_mode_parse (const char *text, hy_qdq_mode *out,
    GError **error);

/* For a QDQ model in HY_QDQ_INT8 mode, replaces *model (freed) by its
 * int8 model; keeps it, in float, when no layer maps onto the int8
 * layers.  *note (g_free; NULL for any other model or mode) says which,
 * and why.  FALSE only on an error, *model then unchanged. */
gboolean hy_model_apply_qdq_mode (hy_model **model, hy_qdq_mode mode,
    char **note, GError **error);

/* hy_model_load, then hy_model_apply_qdq_mode. */
hy_model *hy_model_load_qdq (const char *path, const char *params_path,
    hy_qdq_mode mode, char **note, GError **error);

G_END_DECLS

#endif /* HYBRID_QUANTIZE_H */
