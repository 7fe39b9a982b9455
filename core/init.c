/*
 * init.c — parameter initialisers and the generator they draw from.
 *
 * The generator is PCG32 (O'Neill's permuted congruential generator): a
 * 64-bit state, good statistics, a few lines.  Reproducing MXNet's own
 * random streams is not the goal; reproducing our own from a seed is.
 */
#include <math.h>

#include "hybrid-block.h"

#define PCG_MULTIPLIER 6364136223846793005ULL
#define PCG_INCREMENT 1442695040888963407ULL

G_LOCK_DEFINE_STATIC (rng);
static guint64 rng_state = 0x853c49e6748fea9bULL;

static guint32
pcg32_next_locked (void)
{
  guint64 old = rng_state;
  rng_state = old * PCG_MULTIPLIER + PCG_INCREMENT;
  guint32 xorshifted = (guint32) (((old >> 18u) ^ old) >> 27u);
  guint32 rot = (guint32) (old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

void
hy_random_seed (guint64 seed)
{
  G_LOCK (rng);
  /* PCG's seeding: step once around the seed so nearby seeds diverge. */
  rng_state = 0;
  pcg32_next_locked ();
  rng_state += seed;
  pcg32_next_locked ();
  G_UNLOCK (rng);
}

/* In [0, 1), with 24 random bits: every float of that form is exact. */
static float
uniform01_locked (void)
{
  return (float) (pcg32_next_locked () >> 8) * (1.0f / 16777216.0f);
}

static void
fill_uniform (float *restrict out, int64_t n, float low, float high)
{
  G_LOCK (rng);
  for (int64_t i = 0; i < n; i++)
    out[i] = low + (high - low) * uniform01_locked ();
  G_UNLOCK (rng);
}

/* Box–Muller, two normals per pair of uniforms. */
static void
fill_normal (float *restrict out, int64_t n, float sigma)
{
  G_LOCK (rng);
  for (int64_t i = 0; i < n; i += 2) {
    /* 1 - u keeps log away from 0. */
    double u1 = 1.0 - uniform01_locked ();
    double u2 = uniform01_locked ();
    double r = sqrt (-2.0 * log (u1));
    out[i] = (float) (sigma * r * cos (2.0 * G_PI * u2));
    if (i + 1 < n)
      out[i + 1] = (float) (sigma * r * sin (2.0 * G_PI * u2));
  }
  G_UNLOCK (rng);
}

static void
fill_constant (float *restrict out, int64_t n, float v)
{
  for (int64_t i = 0; i < n; i++)
    out[i] = v;
}

/* Glorot & Bengio's scaling, with MXNet's fans: a weight (out, in, k…)
 * has fan_in = in·k…, fan_out = out·k…. */
static gboolean
fill_xavier (const hy_init *init, hy_tensor *t, GError **error)
{
  const hy_shape *s = &t->shape;
  if (s->ndim < 2) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "the Xavier initialiser needs at least 2 dimensions, got shape %s "
        "(give this parameter its own initialiser, e.g. hy_init_zeros ())",
        hy_shape_format (s, buf, sizeof buf));
    return FALSE;
  }
  double receptive = 1.0;
  for (int i = 2; i < s->ndim; i++)
    receptive *= (double) s->dims[i];
  double fan_in = (double) s->dims[1] * receptive;
  double fan_out = (double) s->dims[0] * receptive;
  double factor = init->factor_type == HY_XAVIER_IN ? fan_in
      : init->factor_type == HY_XAVIER_OUT ? fan_out
      : (fan_in + fan_out) / 2.0;
  double scale = sqrt (init->value / factor);
  int64_t n = hy_shape_numel (s);
  if (init->rnd_type == HY_XAVIER_GAUSSIAN)
    fill_normal (t->data, n, (float) scale);
  else
    fill_uniform (t->data, n, (float) -scale, (float) scale);
  return TRUE;
}

gboolean
hy_init_fill (const hy_init *init, hy_tensor *tensor, GError **error)
{
  int64_t n = hy_shape_numel (&tensor->shape);
  switch (init->kind) {
    case HY_INIT_ZEROS:
      fill_constant (tensor->data, n, 0.0f);
      return TRUE;
    case HY_INIT_ONES:
      fill_constant (tensor->data, n, 1.0f);
      return TRUE;
    case HY_INIT_CONSTANT:
      fill_constant (tensor->data, n, init->value);
      return TRUE;
    case HY_INIT_UNIFORM:
      fill_uniform (tensor->data, n, -init->value, init->value);
      return TRUE;
    case HY_INIT_NORMAL:
      fill_normal (tensor->data, n, init->value);
      return TRUE;
    case HY_INIT_XAVIER:
      return fill_xavier (init, tensor, error);
    case HY_INIT_INHERIT:
      break;
  }
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "an inheriting initialiser has nothing to fill with: give "
      "hy_block_initialize () a concrete one");
  return FALSE;
}

hy_init
hy_init_inherit (void)
{
  return (hy_init) { .kind = HY_INIT_INHERIT };
}

hy_init
hy_init_zeros (void)
{
  return (hy_init) { .kind = HY_INIT_ZEROS };
}

hy_init
hy_init_ones (void)
{
  return (hy_init) { .kind = HY_INIT_ONES };
}

hy_init
hy_init_constant (float value)
{
  return (hy_init) { .kind = HY_INIT_CONSTANT, .value = value };
}

hy_init
hy_init_uniform (float scale)
{
  return (hy_init) { .kind = HY_INIT_UNIFORM, .value = scale };
}

hy_init
hy_init_normal (float sigma)
{
  return (hy_init) { .kind = HY_INIT_NORMAL, .value = sigma };
}

hy_init
hy_init_xavier_full (hy_xavier_rnd rnd_type, hy_xavier_factor factor_type,
    float magnitude)
{
  return (hy_init) { .kind = HY_INIT_XAVIER, .value = magnitude,
    .rnd_type = rnd_type, .factor_type = factor_type };
}

hy_init
hy_init_xavier (void)
{
  return hy_init_xavier_full (HY_XAVIER_UNIFORM, HY_XAVIER_AVG, 3.0f);
}

hy_init
hy_init_default (void)
{
  return hy_init_uniform (0.07f);
}
