/*
 * emulate-qconv-plain.cu — the parts of the CUDA unfused
 * _contrib_quantized_conv that run on the host (kernels/cuda/
 * qconv-plain.cuh): the data and weights packed into int8 NHWC with
 * channels padded to multiples of 4, the int32 NHWC sums unpacked into
 * the NCHW output, and the sums' range; compared with the CPU kernel
 * (kernels/cpu/quantized/conv-plain.c) bit for bit.
 *
 * cuDNN's int8 convolution itself is stood in for by a plain loop over
 * the packed NHWC operands (exact int32 sums, the padding channels
 * included, which hold zeros): what it checks is that the layouts, the
 * padding and the unpacking give the CPU's integers.  Channel counts on
 * and off multiples of 4, strides, padding, dilation, 1×1 and rectangular
 * kernels; hostile weights (NaN, past int8, halves) and ranges (0, inf,
 * NaN).  One line per case; exit 1 on a failure.  No GPU needed.
 */
#include <vector>

#include "kernels/cuda/qconv-plain.cuh"
#include "emulate-harness.h"

static const float hostile[] = {
  NAN, 300.0f, -1e9f, 0.5f, 1.5f, -2.5f, 127.0f, -128.0f, INFINITY,
};

/* What the launches compute, with cuDNN's sums done here. */
static void
emulate (emu *e)
{
  const hy_quantized_conv_plain_params *p =
      (const hy_quantized_conv_plain_params *) e->params;
  const hy_conv_params *cp = &p->conv;
  const hy_cuda_qconv_geom g = hy_cuda_qconv_geom_of (&e->in[0]->shape,
      &e->in[1]->shape, &e->got[0]->shape);
  std::vector<int8_t> x8 (g.N * g.H * g.W * g.Cp);
  std::vector<int8_t> w8 (g.OCp * g.KH * g.KW * g.Cp);
  std::vector<int32_t> y32 (g.N * g.OH * g.OW * g.OCp);
  for (size_t i = 0; i < x8.size (); i++)
    x8[i] = hy_cuda_qconv_pack_data_at (&g, e->in[0]->data, (int64_t) i);
  for (size_t i = 0; i < w8.size (); i++)
    w8[i] = hy_cuda_qconv_pack_weight_at (&g, e->in[1]->data, (int64_t) i);
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t oh = 0; oh < g.OH; oh++)
      for (int64_t ow = 0; ow < g.OW; ow++)
        for (int64_t oc = 0; oc < g.OCp; oc++) {
          int64_t acc = 0;
          for (int64_t kh = 0; kh < g.KH; kh++)
            for (int64_t kw = 0; kw < g.KW; kw++) {
              const int64_t ih = oh * cp->stride[0] - cp->pad[0]
                  + kh * cp->dilate[0];
              const int64_t iw = ow * cp->stride[1] - cp->pad[1]
                  + kw * cp->dilate[1];
              if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W)
                continue;
              for (int64_t c = 0; c < g.Cp; c++)
                acc += (int64_t) x8[((n * g.H + ih) * g.W + iw) * g.Cp + c]
                    * w8[((oc * g.KH + kh) * g.KW + kw) * g.Cp + c];
            }
          y32[((n * g.OH + oh) * g.OW + ow) * g.OCp + oc] =
              (int32_t) (uint32_t) acc;
        }
  for (int64_t i = 0; i < numel (e->got[0]); i++)
    e->got[0]->data[i] = hy_cuda_qconv_unpack_at (&g, y32.data (), i);
  hy_cuda_qconv_range (e->in[2]->data, e->in[3]->data, e->in[4]->data,
      e->in[5]->data, e->got[1]->data, e->got[2]->data);
}

static bool
same (float w, float g)
{
  if (isnan (w) || isnan (g))
    return isnan (w) && isnan (g);
  return memcmp (&w, &g, sizeof w) == 0;
}

static void
check (emu_kv kv, hy_shape x, hy_shape w, const float ranges[4],
    bool hostile_weights)
{
  static guint32 seed = 1;
  const hy_shape in[6] = { x, w, S (1), S (1), S (1), S (1) };
  emu e;
  emu_data_dtype = HY_DTYPE_INT8;
  const bool ok = emu_open (&e, "_contrib_quantized_conv", kv, in, 6);
  emu_data_dtype = HY_DTYPE_FLOAT32;
  if (!ok)
    return;
  GRand *rand = g_rand_new_with_seed (seed++);
  for (int64_t i = 0; i < numel (e.in[0]); i++)
    e.in[0]->data[i] = (float) g_rand_int_range (rand, -128, 128);
  for (int64_t i = 0; i < numel (e.in[1]); i++)
    e.in[1]->data[i] = hostile_weights && i % 7 == 3
        ? hostile[g_rand_int_range (rand, 0, G_N_ELEMENTS (hostile))]
        : (float) g_rand_int_range (rand, -128, 128);
  g_rand_free (rand);
  for (int k = 0; k < 4; k++)
    e.in[2 + k]->data[0] = ranges[k];
  const size_t len = strlen (e.name);
  g_snprintf (e.name + len, sizeof e.name - len, " ranges [%g, %g] [%g, %g]%s",
      ranges[0], ranges[1], ranges[2], ranges[3],
      hostile_weights ? " hostile weights" : "");
  emu_run_cpu (&e);
  emulate (&e);
  char why[256] = "";
  bool good = true;
  for (int j = 0; j < e.n_out && good; j++)
    for (int64_t i = 0; i < numel (e.want[j]) && good; i++)
      if (!same (e.want[j]->data[i], e.got[j]->data[i])) {
        snprintf (why, sizeof why, "output %d at %" G_GINT64_FORMAT
            ": got %.9g, want %.9g", j, (gint64) i, e.got[j]->data[i],
            e.want[j]->data[i]);
        good = false;
      }
  emu_report (good, e.name, good ? 0.0 : INFINITY, why);
  emu_close (&e);
}

int
main (void)
{
  const float ranges[][4] = {
    { 0.0f, 2.5f, -0.7f, 0.9f }, { -1.0f, 1.0f, -1.0f, 1.0f },
    { 0.0f, 0.0f, -0.5f, 0.5f }, { -INFINITY, 1.0f, -1.0f, 1.0f },
    { NAN, 1.0f, -1.0f, NAN }, { -1e30f, 1e30f, -1e30f, 1e30f },
  };
  const emu_kv shapes_kv[] = {
    KV ("kernel", "(3, 3)", "num_filter", "16", "pad", "(1, 1)",
        "no_bias", "True"),
    KV ("kernel", "(3, 2)", "num_filter", "6", "stride", "(2, 1)",
        "pad", "(1, 0)", "dilate", "(2, 1)", "no_bias", "True"),
    KV ("kernel", "(1, 1)", "num_filter", "5", "no_bias", "True"),
  };
  const int64_t filters[] = { 16, 6, 5 }, kh[] = { 3, 3, 1 },
      kw[] = { 3, 2, 1 };
  const int64_t channels[] = { 8, 3, 5, 1 };
  for (size_t k = 0; k < G_N_ELEMENTS (shapes_kv); k++)
    for (size_t c = 0; c < G_N_ELEMENTS (channels); c++)
      for (size_t r = 0; r < G_N_ELEMENTS (ranges); r++) {
        const int64_t C = channels[c];
        check (shapes_kv[k], S (2, C, 9, 7), S (filters[k], C, kh[k], kw[k]),
            ranges[r], r % 2 == 1);
      }
  return emu_summary ();
}
