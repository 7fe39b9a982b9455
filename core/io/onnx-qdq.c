/*
 * onnx-qdq.c — QuantizeLinear and DequantizeLinear (opsets 11-19), the
 * ops of a "QDQ" int8 model (onnxruntime.quantization's quantize_static,
 * NNCF, OpenVINO): the quantization written around float ops.
 *
 * Nothing here runs integers.  A DequantizeLinear of a constant (the int8
 * weights, the int32 biases) is folded at load into float weights, as ONNX
 * Runtime computes them: (q - zero_point) · scale in float.  A
 * QuantizeLinear of activations is held back (its integers are no graph
 * value) until the DequantizeLinear that reads it, and the pair becomes
 * one _hy_quantize_dequantize op: the float values the pair gives, bit for
 * bit.  Anything else that would read the integers is refused, naming it.
 *
 * ONNX's rules: a scale is one float (the tensor) or, from opset 13, a
 * vector of one per index of `axis` (default 1); the zero point is of the
 * quantized type, uint8 when absent, and has the scale's shape.  Rounding
 * is half to even, then saturation to the type's range.
 */
#include <math.h>
#include <string.h>

#include "core/io/onnx-import.h"
#include "core/io/onnx-tensor.h"

/* A node's scale and zero point, checked against ONNX's rules. */
typedef struct qparams {
  int dtype;                    /* the integers': ONNX_UINT8, _INT8, _INT32 */
  gint64 n;                     /* 1: the whole tensor; else per axis */
  int axis;                     /* normalised, when per axis */
  int ndim;                     /* of the data, when per axis */
  const float *scale;           /* n, the constant's */
  float *zero_point;            /* n (owned) */
  const gint64 *zero_ints;      /* n, the constant's exact ints, or NULL */
} qparams;

static void
qparams_clear (qparams *q)
{
  g_clear_pointer (&q->zero_point, g_free);
}

static gboolean
is_float_const (const hy_onnx_value *v)
{
  /* dtype 0: a Constant node's value_float(s) */
  return v->dtype == ONNX_FLOAT || (v->dtype == 0 && !v->is_int);
}

/* Reads inputs 1 (scale) and 2 (zero point) and the attributes.  `data`
 * is the shape of what is quantized, needed only for a per-axis scale
 * (NULL: ask for it then).  `dtype`: the integers' type when known (a
 * DequantizeLinear's input), else 0 (QuantizeLinear: the zero point's, or
 * uint8). */
static gboolean
read_qparams (hy_onnx_importer *imp, const hy_shape *data, int dtype,
    qparams *q, GError **error)
{
  const Onnx__NodeProto *node = imp->node;
  memset (q, 0, sizeof *q);
  if (hy_onnx_attr_int (node, "block_size", 0) != 0)
    return hy_onnx_refuse (imp, error, "block quantization (attribute block_size, "
        "opset 21) is not supported; one scale per tensor or per axis is");
  if (hy_onnx_attr_int (node, "output_dtype", 0) != 0)
    return hy_onnx_refuse (imp, error, "attribute output_dtype (opset 21) is not "
        "supported; the zero point's type (int8 or uint8) gives the "
        "output's");
  hy_onnx_value *scale = hy_onnx_input_const (imp, 1, error);
  if (!scale)
    return FALSE;
  if (!is_float_const (scale))
    return hy_onnx_refuse (imp, error, "scale '%s' is of type %s; float is "
        "supported", hy_onnx_input_name (imp, 1),
        hy_onnx_dtype_name (scale->dtype));
  q->n = hy_shape_numel (&scale->shape);
  q->scale = scale->f;
  if (scale->shape.ndim > 1 || q->n < 1)
    return hy_onnx_refuse (imp, error, "scale '%s' has %d dimensions and %"
        G_GINT64_FORMAT " values: one value, or a vector of one per index "
        "of the axis, is supported (not block quantization)",
        hy_onnx_input_name (imp, 1), scale->shape.ndim, q->n);
  hy_onnx_value *zp = NULL;
  if (hy_onnx_input_name (imp, 2)
      && !(zp = hy_onnx_input_const (imp, 2, error)))
    return FALSE;
  if (zp) {
    if (!zp->is_int || (zp->dtype != ONNX_UINT8 && zp->dtype != ONNX_INT8
            && zp->dtype != ONNX_INT32))
      return hy_onnx_refuse (imp, error, "zero point '%s' is of type %s; int8 and "
          "uint8 are supported", hy_onnx_input_name (imp, 2),
          hy_onnx_dtype_name (zp->dtype));
    if (dtype && zp->dtype != dtype)
      return hy_onnx_refuse (imp, error, "zero point '%s' is of type %s, the "
          "quantized input of type %s: they must be alike",
          hy_onnx_input_name (imp, 2), hy_onnx_dtype_name (zp->dtype),
          hy_onnx_dtype_name (dtype));
    if (hy_shape_numel (&zp->shape) != q->n || zp->shape.ndim > 1)
      return hy_onnx_refuse (imp, error, "zero point '%s' has %" G_GINT64_FORMAT
          " values, the scale %" G_GINT64_FORMAT ": they must be alike",
          hy_onnx_input_name (imp, 2), hy_shape_numel (&zp->shape), q->n);
    dtype = zp->dtype;
  }
  q->dtype = dtype ? dtype : ONNX_UINT8;
  if (q->dtype == ONNX_INT32 && !(imp->node->op_type
          && !strcmp (imp->node->op_type, "DequantizeLinear")))
    return hy_onnx_refuse (imp, error, "QuantizeLinear to int32 is not supported; "
        "int8 and uint8 are");
  q->zero_point = g_new0 (float, q->n);
  for (gint64 i = 0; zp && i < q->n; i++)
    q->zero_point[i] = (float) zp->ints[i];
  q->zero_ints = zp ? zp->ints : NULL;
  if (q->n == 1)
    return TRUE;
  if (imp->opset < 13) {
    qparams_clear (q);
    return hy_onnx_refuse (imp, error, "a scale per axis needs opset 13 (this "
        "model's is %d)", imp->opset);
  }
  hy_shape shape;
  if (!data) {
    if (!hy_onnx_input_shape (imp, 0, &shape, error)) {
      qparams_clear (q);
      return FALSE;
    }
    data = &shape;
  }
  gint64 axis = hy_onnx_attr_int (node, "axis", 1);
  if (axis < -data->ndim || axis >= data->ndim
      || data->dims[axis < 0 ? axis + data->ndim : axis] != q->n) {
    qparams_clear (q);
    return hy_onnx_refuse (imp, error, "%" G_GINT64_FORMAT " scales per axis %"
        G_GINT64_FORMAT ", of data of %d dimensions: the axis must hold as "
        "many indices", q->n, axis, data->ndim);
  }
  q->axis = (int) (axis < 0 ? axis + data->ndim : axis);
  q->ndim = data->ndim;
  return TRUE;
}

/* Values [i * inner, (i + 1) * inner) of a per-axis tensor share scale
 * i % n; for one scale, every value does. */
static gint64
inner_size (const hy_shape *shape, const qparams *q)
{
  gint64 inner = 1;
  if (q->n > 1)
    for (int d = q->axis + 1; d < shape->ndim; d++)
      inner *= shape->dims[d];
  else
    inner = hy_shape_numel (shape);
  return MAX (inner, 1);
}

static float
qmin_of (int dtype)
{
  return dtype == ONNX_UINT8 ? 0.0f : -128.0f;
}

static float
qmax_of (int dtype)
{
  return dtype == ONNX_UINT8 ? 255.0f : 127.0f;
}

/* ---- QuantizeLinear -------------------------------------------------- */

/* A constant quantized at load: ints, as the kernel's arithmetic
 * (kernels/cpu/quantized/quantize-dequantize.c) gives them. */
static gboolean
fold_quantize (hy_onnx_importer *imp, const hy_onnx_value *x, qparams *q)
{
  gint64 numel = hy_shape_numel (&x->shape);
  gint64 inner = inner_size (&x->shape, q);
  gint64 *ints = g_new (gint64, MAX (numel, 1));
  for (gint64 i = 0; i < numel; i++) {
    gint64 c = (i / inner) % q->n;
    float zp = q->zero_point[c];
    float v = fminf (fmaxf (x->f[i] / q->scale[c], qmin_of (q->dtype) - zp),
        qmax_of (q->dtype) - zp);
    ints[i] = (gint64) (nearbyintf (v) + zp);
  }
  hy_shape shape = x->shape;
  hy_onnx_set_const (imp, 0, &shape, NULL, ints);
  hy_onnx_value *made = g_hash_table_lookup (imp->values,
      imp->node->output[0]);
  if (made)
    made->dtype = q->dtype;
  return TRUE;
}

gboolean
hy_onnx_import_quantize_linear (hy_onnx_importer *imp, GError **error)
{
  hy_onnx_value *x = hy_onnx_input (imp, 0, error);
  if (!x)
    return FALSE;
  if (x->is_const && x->is_int)
    return hy_onnx_refuse (imp, error, "input '%s' holds integers; QuantizeLinear "
        "takes float data", hy_onnx_input_name (imp, 0));
  qparams q;
  if (!read_qparams (imp, x->is_const ? &x->shape : NULL, 0, &q, error))
    return FALSE;
  if (x->is_const) {
    gboolean ok = fold_quantize (imp, x, &q);
    qparams_clear (&q);
    return ok;
  }
  hy_entry data;
  if (!hy_onnx_input_entry (imp, 0, &data, error)) {
    qparams_clear (&q);
    return FALSE;
  }
  hy_onnx_quantized *rec = g_new0 (hy_onnx_quantized, 1);
  rec->node = g_strdup (HY_ONNX_NODE_NAME (imp));
  rec->data = data;
  rec->dtype = q.dtype;
  rec->axis = q.axis;
  rec->ndim = q.ndim;
  rec->n = q.n;
  rec->scale = g_memdup2 (q.scale, q.n * sizeof (float));
  rec->zero_point = g_steal_pointer (&q.zero_point);
  hy_onnx_value *v = g_new0 (hy_onnx_value, 1);
  v->quantized = rec;
  g_hash_table_replace (imp->values, g_strdup (imp->node->output[0]), v);
  return TRUE;
}

/* ---- DequantizeLinear ------------------------------------------------ */

/* A constant's integers as floats: (q - zero_point) · scale, the
 * difference taken exactly, then one float product as ONNX Runtime
 * rounds it. */
static gboolean
fold_dequantize (hy_onnx_importer *imp, const hy_onnx_value *x,
    GError **error)
{
  if (!x->is_int || (x->dtype != ONNX_INT8 && x->dtype != ONNX_UINT8
          && x->dtype != ONNX_INT32))
    return hy_onnx_refuse (imp, error, "input '%s' is of type %s; int8, uint8 and "
        "int32 are supported", hy_onnx_input_name (imp, 0),
        hy_onnx_dtype_name (x->dtype));
  qparams q;
  if (!read_qparams (imp, &x->shape, x->dtype, &q, error))
    return FALSE;
  gint64 numel = hy_shape_numel (&x->shape);
  gint64 inner = inner_size (&x->shape, &q);
  float *f = g_new (float, MAX (numel, 1));
  for (gint64 i = 0; i < numel; i++) {
    gint64 c = (i / inner) % q.n;
    gint64 zp = q.zero_ints ? q.zero_ints[c] : 0;
    f[i] = (float) (x->ints[i] - zp) * q.scale[c];
  }
  qparams_clear (&q);
  hy_shape shape = x->shape;
  hy_onnx_set_const (imp, 0, &shape, f, NULL);
  return TRUE;
}

/* The DequantizeLinear of a QuantizeLinear's output: one op for the pair,
 * when both say the same scales. */
static gboolean
import_pair (hy_onnx_importer *imp, hy_onnx_quantized *rec, GError **error)
{
  qparams q;
  /* the per-axis check needs only the rank and the axis' size */
  hy_shape data = { .ndim = rec->ndim };
  for (int d = 0; d < rec->ndim; d++)
    data.dims[d] = d == rec->axis ? rec->n : 1;
  const hy_shape *known = rec->n > 1 ? &data : NULL;
  if (!read_qparams (imp, known, rec->dtype, &q, error))
    return FALSE;
  gboolean same = q.dtype == rec->dtype && q.n == rec->n
      && (q.n == 1 || q.axis == rec->axis)
      && !memcmp (q.scale, rec->scale, q.n * sizeof (float))
      && !memcmp (q.zero_point, rec->zero_point, q.n * sizeof (float));
  qparams_clear (&q);
  if (!same)
    return hy_onnx_refuse (imp, error, "its scale, zero point or axis differ from "
        "those of QuantizeLinear '%s'; a pair that quantizes and "
        "dequantizes alike is supported", rec->node);
  if (!rec->has_fake) {
    hy_shape s = { .ndim = 1, .dims = { rec->n } };
    g_autofree char *sn = g_strdup_printf ("%s_scale", rec->node);
    g_autofree char *zn = g_strdup_printf ("%s_zero_point", rec->node);
    hy_entry in[3] = { rec->data,
      hy_onnx_add_weight (imp, sn, &s,
          g_memdup2 (rec->scale, rec->n * sizeof (float))),
      hy_onnx_add_weight (imp, zn, &s,
          g_memdup2 (rec->zero_point, rec->n * sizeof (float))) };
    g_autofree char *axis = g_strdup_printf ("%d", rec->axis);
    hy_entry e = hy_onnx_add_op (imp, "_hy_quantize_dequantize", in, 3,
        error, "axis", axis, "out_type",
        rec->dtype == ONNX_UINT8 ? "uint8" : "int8", NULL);
    if (e.node == G_MAXUINT)
      return FALSE;
    rec->fake = e;
    rec->has_fake = TRUE;
  }
  hy_onnx_set_output (imp, 0, rec->fake);
  return TRUE;
}

gboolean
hy_onnx_import_dequantize_linear (hy_onnx_importer *imp, GError **error)
{
  const char *name = hy_onnx_input_name (imp, 0);
  hy_onnx_value *x = name ? g_hash_table_lookup (imp->values, name) : NULL;
  if (x && x->quantized)
    return import_pair (imp, x->quantized, error);
  if (!x)
    return hy_onnx_input (imp, 0, error) != NULL;       /* its error */
  if (x->is_const)
    return fold_dequantize (imp, x, error);
  return hy_onnx_refuse (imp, error, "input '%s' is float data, neither a constant "
      "nor a QuantizeLinear's output (integer graph inputs are not "
      "supported)", name);
}
