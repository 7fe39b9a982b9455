/*
 * cmd-bench.c — `hybridinfer bench`: times forwards of a model on generated
 * inputs and reports latency, throughput and the memory of the plan.
 *
 *   hybridinfer bench --model M-symbol.json --shape 1x3x224x224 [--json]
 *
 * Inputs are pseudo-random but deterministic, so two runs (or two modes)
 * time exactly the same work.  tests/bench/compare.py drives this against
 * MXNet and ONNX Runtime; docs/PERFORMANCE.md has the numbers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-glib/json-glib.h>

#include "cli.h"

/* What the engine runs on when --threads is not given. */
static int
default_threads (void)
{
  const char *env = g_getenv ("HYBRIDINFER_THREADS");
  gint64 v = env ? g_ascii_strtoll (env, NULL, 10) : 0;
  return v > 0 && v <= G_MAXINT ? (int) v : (int) g_get_num_processors ();
}

typedef struct bench_args {
  char *model, *params, *device, *mode, *precision;
  char **shapes;
  int iterations, warmup, threads;
  gboolean json, profile;
  char *qdq;
} bench_args;

typedef struct time_summary {
  double min_ms, median_ms, p90_ms;
} time_summary;

/* hy_device_stats per timed forward (fractions when not every forward
 * does the same). */
typedef struct device_counts {
  double allocations, graph_launches, direct_calls;
  double uploads, upload_bytes, downloads, download_bytes;
} device_counts;

typedef struct bench_result {
  time_summary wall;
  /* CPU time of the whole process (every thread) per forward: on a busy
   * machine a single-threaded run's CPU time still says how long the
   * forward takes on an idle one, while its wall time does not. */
  time_summary cpu;
  double throughput;
  gint64 batch;
  gboolean have_plan_memory;    /* arena and lower bound are known */
  hy_memory_stats memory;
  device_counts device;
  const hy_layer_profile *layers; /* --profile: the executor's */
  int n_layers;
} bench_result;

static void
bench_args_clear (bench_args *a)
{
  g_free (a->model);
  g_free (a->params);
  g_free (a->qdq);
  g_free (a->device);
  g_free (a->mode);
  g_free (a->precision);
  g_strfreev (a->shapes);
}

/* The --shape options, then a check that every input has a shape. */
static gboolean
apply_shapes (hy_shapes *shapes, char **specs, GError **error)
{
  const hy_model *model = hy_shapes_model (shapes);
  if (!hy_cli_apply_shapes (shapes, specs, error))
    return FALSE;
  /* Inputs are generated, so every one of them needs a shape. */
  for (int i = 0; i < hy_model_n_inputs (model); i++) {
    if (hy_shapes_input (shapes, i).ndim < 0) {
      g_set_error (error, HY_ERROR, HY_ERROR_MISSING,
          "input '%s' has no declared shape (__shape__): give one with "
          "--shape %s=DIMS (like 1x3x224x224)", hy_model_input_name (model, i),
          hy_model_input_name (model, i));
      return FALSE;
    }
  }
  return TRUE;
}

/* splitmix64: tiny, fast and the same on every machine. */
static guint64
next_random (guint64 *state)
{
  guint64 z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1): the top 24 bits are exact in a float. */
static void
fill_random (hy_tensor *t, guint64 seed)
{
  gint64 n = hy_shape_numel (&t->shape);
  for (gint64 i = 0; i < n; i++)
    t->data[i] = (float) (next_random (&seed) >> 40) / (float) (1 << 23)
        - 1.0f;
}

static void
free_inputs (hy_tensor **inputs, int n)
{
  for (int i = 0; inputs && i < n; i++)
    hy_tensor_free (inputs[i]);
  g_free (inputs);
}

/* Random inputs of the given shapes; NULL + error when one does not fit
 * in memory. */
static hy_tensor **
make_inputs (const hy_shapes *shapes, GError **error)
{
  const hy_model *model = hy_shapes_model (shapes);
  int n = hy_model_n_inputs (model);
  hy_tensor **inputs = g_new0 (hy_tensor *, MAX (n, 1));
  for (int i = 0; i < n; i++) {
    hy_shape s = hy_shapes_input (shapes, i);
    g_autofree char *what = g_strdup_printf ("input '%s'",
        hy_model_input_name (model, i));
    if (!(inputs[i] = hy_tensor_try_new (&s, what, error))) {
      free_inputs (inputs, n);
      return NULL;
    }
    fill_random (inputs[i], 0x5EED0000u + (guint64) i);
  }
  return inputs;
}

static double
now_ms (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Sorts `times` in place. */
static time_summary
summarize (double *times, int n)
{
  qsort (times, n, sizeof *times, compare_doubles);
  return (time_summary) {
    .min_ms = times[0],
    .median_ms = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2,
    /* Nearest rank: the smallest time that 90% of forwards do not beat. */
    .p90_ms = times[(int) ceil (0.9 * n) - 1],
  };
}

/* What allocating every op output separately costs: needs shapes only, so
 * it is known in imperative mode too. */
static gint64
naive_bytes_from_shapes (const hy_shapes *shapes)
{
  const hy_model *model = hy_shapes_model (shapes);
  gint64 total = 0;
  for (int i = 0; i < hy_model_n_nodes (model); i++) {
    hy_node_desc d;
    if (!hy_model_node (model, i, &d) || strcmp (d.kind, "op"))
      continue;
    const hy_shape *s = hy_shapes_node (shapes, i);
    for (int k = 0; k < d.n_outputs; k++)
      if (s[k].ndim >= 0)
        total += hy_shape_numel (&s[k]) * (gint64) sizeof (float);
  }
  return total;
}

/* The device's counts per timed forward. */
static void
per_forward (const hy_device_stats *before, const hy_device_stats *after,
    int n, device_counts *out)
{
  double k = n > 0 ? 1.0 / n : 0;
  out->allocations = (after->allocations - before->allocations) * k;
  out->uploads = (after->uploads - before->uploads) * k;
  out->upload_bytes = (after->upload_bytes - before->upload_bytes) * k;
  out->downloads = (after->downloads - before->downloads) * k;
  out->download_bytes = (after->download_bytes - before->download_bytes) * k;
  out->graph_launches = (after->graph_launches - before->graph_launches) * k;
  out->direct_calls = (after->direct_calls - before->direct_calls) * k;
}

static gboolean
run_bench (hy_executor *exec, const hy_shapes *shapes, const bench_args *a,
    bench_result *r, GError **error)
{
  const hy_model *model = hy_shapes_model (shapes);
  int n_inputs = hy_model_n_inputs (model);
  hy_tensor **inputs = make_inputs (shapes, error);
  if (!inputs)
    return FALSE;
  const hy_tensor *const *in = (const hy_tensor *const *) inputs;
  const int n = a->iterations;
  double *wall = g_new (double, n), *cpu = g_new (double, n);
  gboolean ok = TRUE;

  for (int i = 0; ok && i < a->warmup; i++)
    ok = hy_executor_forward (exec, in, n_inputs, error);
  hy_device_stats before;
  hy_executor_device_stats (exec, &before);
  double total = 0;
  for (int i = 0; ok && i < n; i++) {
    double c0 = now_ms (CLOCK_PROCESS_CPUTIME_ID), t0 = now_ms (CLOCK_MONOTONIC);
    ok = hy_executor_forward (exec, in, n_inputs, error);
    wall[i] = now_ms (CLOCK_MONOTONIC) - t0;
    cpu[i] = now_ms (CLOCK_PROCESS_CPUTIME_ID) - c0;
    total += wall[i];
  }
  if (ok) {
    hy_device_stats after;
    hy_executor_device_stats (exec, &after);
    per_forward (&before, &after, n, &r->device);
    r->wall = summarize (wall, n);
    r->cpu = summarize (cpu, n);
    hy_shape s0 = n_inputs > 0 ? inputs[0]->shape : (hy_shape) { 0 };
    r->batch = s0.ndim > 0 ? s0.dims[0] : 1;
    r->throughput = total > 0 ? r->batch * n / (total / 1e3) : 0;
    r->have_plan_memory = hy_executor_memory (exec, &r->memory);
    /* After the timed forwards, so that timing each call apart does not
     * change what they measured. */
    if (a->profile)
      ok = hy_executor_profile (exec, in, n_inputs, MAX (n / 4, 3),
          &r->layers, &r->n_layers, error);
    if (!r->have_plan_memory)
      r->memory = (hy_memory_stats) {
        .naive_bytes = naive_bytes_from_shapes (shapes) };
  }
  free_inputs (inputs, n_inputs);
  g_free (wall);
  g_free (cpu);
  return ok;
}

static void
add_bytes (JsonBuilder *b, const char *member, gboolean known, gint64 v)
{
  json_builder_set_member_name (b, member);
  if (known)
    json_builder_add_int_value (b, v);
  else
    json_builder_add_null_value (b);
}

static void
add_times (JsonBuilder *b, const char *member, const time_summary *t)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "min");
  json_builder_add_double_value (b, t->min_ms);
  json_builder_set_member_name (b, "median");
  json_builder_add_double_value (b, t->median_ms);
  json_builder_set_member_name (b, "p90");
  json_builder_add_double_value (b, t->p90_ms);
  json_builder_end_object (b);
}

static void
print_json (const bench_args *a, const char *device, const char *mode,
    int threads, const bench_result *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "model");
  json_builder_add_string_value (b, a->model);
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, device);
  json_builder_set_member_name (b, "mode");
  json_builder_add_string_value (b, mode);
  json_builder_set_member_name (b, "batch");
  json_builder_add_int_value (b, r->batch);
  json_builder_set_member_name (b, "iterations");
  json_builder_add_int_value (b, a->iterations);
  json_builder_set_member_name (b, "warmup");
  json_builder_add_int_value (b, a->warmup);
  g_autofree char *cpu_name = hy_cli_cpu_name ();
  json_builder_set_member_name (b, "cpu");
  json_builder_add_string_value (b, cpu_name);
  json_builder_set_member_name (b, "threads");
  json_builder_add_int_value (b, threads);
  json_builder_set_member_name (b, "blas_threads");
  json_builder_add_int_value (b, hy_blas_n_threads ());
  json_builder_set_member_name (b, "blas_core");
  json_builder_add_string_value (b, hy_blas_core_name ());
  add_times (b, "latency_ms", &r->wall);
  add_times (b, "cpu_ms", &r->cpu);
  json_builder_set_member_name (b, "throughput_per_s");
  json_builder_add_double_value (b, r->throughput);
  add_bytes (b, "arena_bytes", r->have_plan_memory, r->memory.arena_bytes);
  add_bytes (b, "naive_bytes", TRUE, r->memory.naive_bytes);
  add_bytes (b, "lower_bound_bytes", r->have_plan_memory,
      r->memory.lower_bound_bytes);
  add_bytes (b, "weight_bytes", TRUE, r->memory.weight_bytes);
  json_builder_set_member_name (b, "image_by_image");
  json_builder_add_boolean_value (b, r->memory.images_per_run == 1);
  json_builder_set_member_name (b, "calls_image_by_image");
  json_builder_add_int_value (b, r->memory.per_image_calls);
  json_builder_set_member_name (b, "segment_values");
  json_builder_add_int_value (b, r->memory.segment_values);
  json_builder_set_member_name (b, "segment_reorders");
  json_builder_add_int_value (b, r->memory.segment_entries
      + r->memory.segment_exits);
  const device_counts *d = &r->device;
  const struct { const char *name; double v; } per[] = {
    { "allocations", d->allocations }, { "graph_launches", d->graph_launches },
    { "direct_calls", d->direct_calls }, { "uploads", d->uploads },
    { "upload_bytes", d->upload_bytes }, { "downloads", d->downloads },
    { "download_bytes", d->download_bytes },
  };
  json_builder_set_member_name (b, "per_forward");
  json_builder_begin_object (b);
  for (guint i = 0; i < G_N_ELEMENTS (per); i++) {
    json_builder_set_member_name (b, per[i].name);
    json_builder_add_double_value (b, per[i].v);
  }
  json_builder_end_object (b);
  if (r->layers) {
    const char *isa;
    json_builder_set_member_name (b, "fma_peak_gflops_per_core");
    json_builder_add_double_value (b, hy_cli_fma_peak_gflops (&isa));
    json_builder_set_member_name (b, "layers");
    json_builder_begin_array (b);
    for (int i = 0; i < r->n_layers; i++) {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "node");
      json_builder_add_string_value (b, r->layers[i].node);
      json_builder_set_member_name (b, "op");
      json_builder_add_string_value (b, r->layers[i].op);
      json_builder_set_member_name (b, "ms");
      json_builder_add_double_value (b, r->layers[i].ms);
      json_builder_set_member_name (b, "cpu_ms");
      json_builder_add_double_value (b, r->layers[i].cpu_ms);
      json_builder_set_member_name (b, "flop");
      json_builder_add_double_value (b, r->layers[i].flop);
      if (r->layers[i].kernel) {
        json_builder_set_member_name (b, "kernel");
        json_builder_add_string_value (b, r->layers[i].kernel);
      }
      json_builder_end_object (b);
    }
    json_builder_end_array (b);
  }
  json_builder_end_object (b);

  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
print_mib (const char *label, gboolean known, gint64 bytes)
{
  if (known)
    printf ("  %-12s %.2f MiB (%" G_GINT64_FORMAT " bytes)\n", label,
        bytes / 1048576.0, bytes);
  else
    printf ("  %-12s -\n", label);
}

static void
print_text (const bench_args *a, const char *device, const char *mode,
    int threads, const bench_result *r)
{
  printf ("model       %s\n", a->model);
  printf ("device      %s, mode %s, batch %" G_GINT64_FORMAT "\n", device,
      mode, r->batch);
  g_autofree char *cpu_name = hy_cli_cpu_name ();
  printf ("cpu         %s\n", cpu_name);
  printf ("threads     %d (OpenBLAS core %s, %d OpenBLAS thread(s))\n",
      threads, hy_blas_core_name (), hy_blas_n_threads ());
  printf ("forwards    %d timed after %d warm-up\n", a->iterations, a->warmup);
  printf ("latency     min %.3f ms, median %.3f ms, p90 %.3f ms\n",
      r->wall.min_ms, r->wall.median_ms, r->wall.p90_ms);
  printf ("cpu time    min %.3f ms, median %.3f ms, p90 %.3f ms (all threads)\n",
      r->cpu.min_ms, r->cpu.median_ms, r->cpu.p90_ms);
  printf ("throughput  %.1f samples/s\n", r->throughput);
  printf ("memory%s\n", r->have_plan_memory ? ""
      : " (no compiled plan: arena and lower bound need --mode hybrid)");
  if (r->memory.images_per_run == 1)
    printf ("  the batch runs image by image: the figures are one image's "
        "plan's\n");
  else if (r->memory.per_image_calls > 0)
    printf ("  the batch runs its first %" G_GINT64_FORMAT " calls image by "
        "image: the figures are the sums of one image's plan's and the "
        "batch's\n", r->memory.per_image_calls);
  print_mib ("arena", r->have_plan_memory, r->memory.arena_bytes);
  print_mib ("naive", TRUE, r->memory.naive_bytes);
  print_mib ("lower bound", r->have_plan_memory, r->memory.lower_bound_bytes);
  if (r->memory.weight_bytes > 0)
    print_mib ("weights", TRUE, r->memory.weight_bytes);
  if (r->memory.segment_values > 0)
    printf ("  bf16 segments: %" G_GINT64_FORMAT " values held as bf16 nhwc, "
        "%" G_GINT64_FORMAT " reorders (%" G_GINT64_FORMAT " in, %"
        G_GINT64_FORMAT " out)\n", r->memory.segment_values,
        r->memory.segment_entries + r->memory.segment_exits,
        r->memory.segment_entries, r->memory.segment_exits);
  const device_counts *d = &r->device;
  printf ("per forward %g allocations, %g graph launches, %g kernel calls "
      "one by one\n", d->allocations, d->graph_launches, d->direct_calls);
  if (d->uploads > 0 || d->downloads > 0)
    printf ("            %g uploads (%.0f bytes), %g downloads (%.0f bytes)\n",
        d->uploads, d->upload_bytes, d->downloads, d->download_bytes);
}

int
hy_cmd_bench (int argc, char **argv)
{
  bench_args a = { .iterations = 100, .warmup = 10, .threads = 0 };
  GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_FILENAME, &a.model,
        "Model: prefix-symbol.json or prefix.onnx", "M"},
    {"params", 'p', 0, G_OPTION_ARG_FILENAME, &a.params,
        "Params file (default: newest prefix-NNNN.params beside the model)", "P"},
    HY_CLI_QDQ_OPTION (a.qdq),
    {"shape", 's', 0, G_OPTION_ARG_STRING_ARRAY, &a.shapes,
        "Input shape (default: the model's __shape__); repeat per input",
        "[NAME=]1x3x224x224"},
    {"device", 'd', 0, G_OPTION_ARG_STRING, &a.device,
        "cpu, cuda, cuda:N or auto (default: cpu)", "DEV"},
    {"precision", 0, 0, G_OPTION_ARG_STRING, &a.precision,
        "fp32 (default), fp16 (CUDA only) or bf16 (CPU with AVX512_BF16)", "P"},
    {"mode", 0, 0, G_OPTION_ARG_STRING, &a.mode,
        "hybrid (default) or imperative", "MODE"},
    {"iterations", 'n', 0, G_OPTION_ARG_INT, &a.iterations,
        "Timed forwards (default 100)", "N"},
    {"warmup", 'w', 0, G_OPTION_ARG_INT, &a.warmup,
        "Untimed forwards first (default 10)", "N"},
    {"threads", 't', 0, G_OPTION_ARG_INT, &a.threads,
        "Compute threads (default: HYBRIDINFER_THREADS, else the CPUs)", "N"},
    {"profile", 0, 0, G_OPTION_ARG_NONE, &a.profile,
        "Also time each layer of the hybridized forward (CPU)", NULL},
    {"json", 0, 0, G_OPTION_ARG_NONE, &a.json,
        "Print one JSON object instead of text", NULL},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx =
      g_option_context_new ("- time forwards on generated inputs");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  /* Declared before the first goto: a jump past an initialised g_autofree
   * would free stack garbage at "out". */
  g_autofree char *note = NULL;
  int status = HY_EXIT_FAIL;
  hy_model *model = NULL;
  hy_shapes *shapes = NULL;
  hy_executor_options options;
  hy_executor *exec = NULL;
  bench_result r = { 0 };
  hy_mode mode;
  hy_device device;
  const char *device_name, *mode_name;
  int threads;

  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    status = hy_cli_usage (ctx, "bench: %s", error->message);
    goto out;
  }
  if (!a.model) {
    status = hy_cli_usage (ctx, "bench: --model is required");
    goto out;
  }
  if (argc > 1) {
    status = hy_cli_usage (ctx, "bench: unexpected argument '%s'", argv[1]);
    goto out;
  }
  if (a.iterations < 1 || a.warmup < 0 || a.threads < 0) {
    status = hy_cli_usage (ctx, "bench: --iterations must be at least 1, "
        "--warmup and --threads not negative");
    goto out;
  }
  hy_precision precision;
  if (!hy_cli_parse_mode (a.mode, &mode, &error)
      || !hy_precision_parse (a.precision ? a.precision : "fp32", &precision,
          &error)
      || !hy_device_resolve_auto (a.device ? a.device : "cpu", &device, &note,
          &error)) {
    status = hy_cli_fail (error);
    goto out;
  }
  if (note)
    g_printerr ("hybridinfer: %s\n", note);
  options = (hy_executor_options) {
    .device = device, .mode = mode, .precision = precision,
    .threads = a.threads,
  };
  model = hy_cli_load_model (a.model, a.params, a.qdq, &error);
  if (model)
    shapes = hy_shapes_new (model);
  if (!model || !apply_shapes (shapes, a.shapes, &error)
      || !hy_shapes_infer (shapes, &error)
      || !(exec = hy_executor_new_with_options (model, &options, &error))
      || !run_bench (exec, shapes, &a, &r, &error)) {
    status = hy_cli_fail (error);
    goto out;
  }
  threads = a.threads > 0 ? a.threads : default_threads ();
  device_name = device.kind == HY_DEVICE_CPU
      ? (precision == HY_PRECISION_BF16 ? "cpu bf16" : "cpu")
      : precision == HY_PRECISION_FP16 ? "cuda fp16" : "cuda";
  mode_name = mode == HY_MODE_HYBRID ? "hybrid" : "imperative";
  if (a.json)
    print_json (&a, device_name, mode_name, threads, &r);
  else
    print_text (&a, device_name, mode_name, threads, &r);
  if (r.layers && !a.json)
    hy_cli_print_profile (r.layers, r.n_layers, r.wall.median_ms, threads);
  status = HY_EXIT_OK;

out:
  hy_executor_free (exec);
  hy_shapes_free (shapes);
  hy_model_free (model);
  bench_args_clear (&a);
  return status;
}
