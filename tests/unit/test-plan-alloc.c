/*
 * test-plan-alloc.c — hybrid mode's promises, checked from outside:
 *
 *  - after a few warm-up forwards, 100 more forwards allocate nothing at
 *    the default thread count (this program defines malloc & co. as
 *    counting wrappers around glibc's, so every allocation in the process
 *    is seen: ours, GLib's, OpenBLAS's, from any thread, the kernels'
 *    workers included).  OpenBLAS's own are told apart in the message:
 *    its threaded level-3 driver would malloc on every call it splits
 *    (Debian's build defines USE_ALLOC_HEAP), which is why the kernels
 *    keep it single-threaded and split products themselves;
 *  - hybrid outputs equal imperative ones within 1e-5 relative;
 *  - switching input shapes A → B → A plans twice, not three times (the
 *    way back allocates nothing and lands in A's arena), and the plan
 *    cache forgets the least recently used shape beyond its size;
 *  - the planned arena stays within 5% of the lower bound;
 *  - in precision bf16 and with HYBRIDINFER_DNNL=1 (convolutions through
 *    oneDNN, whose execute allocates on every call), nothing allocates
 *    outside oneDNN's dnnl_primitive_execute (this program wraps it to
 *    tell its allocations apart); those inside are reported with the
 *    calls and arguments that explain them, and must not grow from one
 *    run of forwards to the next; bf16 is skipped, saying why, on a CPU
 *    without AVX512_BF16;
 *  - int8 (quantize_net_v2 exports made by real MXNet 1.9.1 at test time,
 *    in the directory HY_INT8_FIXTURES names): its quantized convolutions
 *    run on oneDNN's int8 kernels by default, so the same holds as in
 *    bf16; with HYBRIDINFER_DNNL=0 (our reference kernels) nothing
 *    allocates at all.  The hybrid outputs are MXNet's.
 *
 * Models: tests/fixtures/seed_mlp and seed_net, and from the directory in
 * HY_ZOO_FIXTURES (when set) the zoo models present there.  Under
 * AddressSanitizer, which owns malloc itself, the counting is skipped and
 * the rest still runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "hybrid.h"
#include "hybrid-npy.h"
#include "qlut-chain.h"

#if defined(__SANITIZE_ADDRESS__)
#define HY_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) \
    || __has_feature(thread_sanitizer)
#define HY_SANITIZED 1
#endif
#endif
#if defined(__GLIBC__) && !defined(HY_SANITIZED)
#define HY_COUNT_ALLOCATIONS 1
#endif

#define WARM_UP_FORWARDS 3
#define COUNTED_FORWARDS 100
#define MODE_TOL 1e-5
#define ARENA_SLACK 1.05

/* ---- counting allocator ------------------------------------------------- */

static gint counting;           /* atomic: count only between start/stop */
static gint allocations;        /* by anything but OpenBLAS and oneDNN */
static gint blas_allocations;   /* called from OpenBLAS's own code */

/* Set while this thread is inside oneDNN's dnnl_primitive_execute (the
 * wrapper below): what is allocated there is oneDNN's own, counted apart
 * from everything else, which must stay at zero in bf16 too. */
static __thread int in_dnnl_execute;
static gint dnnl_allocations;   /* inside dnnl_primitive_execute */
static gint dnnl_executes;      /* its calls */
static gint dnnl_args;          /* their arguments, all together */

/* Where OpenBLAS is mapped (0, 0 when it is not loaded). */
static uintptr_t blas_lo, blas_hi;

static int
find_blas (struct dl_phdr_info *info, size_t size, void *data)
{
  if (!info->dlpi_name || !strstr (info->dlpi_name, "openblas"))
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    uintptr_t hi = lo + ph->p_memsz;
    blas_lo = blas_lo ? MIN (blas_lo, lo) : lo;
    blas_hi = MAX (blas_hi, hi);
  }
  return 1;
}

#ifdef HY_COUNT_ALLOCATIONS
/* glibc's own entry points: no dlsym, so nothing to bootstrap. */
extern void *__libc_malloc (size_t size);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *ptr, size_t size);
extern void *__libc_memalign (size_t alignment, size_t size);
extern void *__libc_valloc (size_t size);
extern void *__libc_pvalloc (size_t size);
extern void __libc_free (void *ptr);

void *memalign (size_t alignment, size_t size);
void *valloc (size_t size);
void *pvalloc (size_t size);

static inline void
count_one (void *caller)
{
  if (!g_atomic_int_get (&counting))
    return;
  uintptr_t c = (uintptr_t) caller;
  if (in_dnnl_execute)
    g_atomic_int_inc (&dnnl_allocations);
  else if (c >= blas_lo && c < blas_hi)
    g_atomic_int_inc (&blas_allocations);
  else
    g_atomic_int_inc (&allocations);
}

#define COUNT_ONE() count_one (__builtin_return_address (0))

void *
malloc (size_t size)
{
  COUNT_ONE ();
  return __libc_malloc (size);
}

void *
calloc (size_t n, size_t size)
{
  COUNT_ONE ();
  return __libc_calloc (n, size);
}

void *
realloc (void *ptr, size_t size)
{
  COUNT_ONE ();
  return __libc_realloc (ptr, size);
}

void
free (void *ptr)
{
  __libc_free (ptr);
}

void *
aligned_alloc (size_t alignment, size_t size)
{
  COUNT_ONE ();
  return __libc_memalign (alignment, size);
}

void *
memalign (size_t alignment, size_t size)
{
  COUNT_ONE ();
  return __libc_memalign (alignment, size);
}

void *
valloc (size_t size)
{
  COUNT_ONE ();
  return __libc_valloc (size);
}

void *
pvalloc (size_t size)
{
  COUNT_ONE ();
  return __libc_pvalloc (size);
}

int
posix_memalign (void **out, size_t alignment, size_t size)
{
  COUNT_ONE ();
  if (alignment % sizeof (void *) || (alignment & (alignment - 1)))
    return EINVAL;
  void *p = __libc_memalign (alignment, size);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}
#endif

/* oneDNN's own, found at start-up (NULL where it is not loaded). */
typedef int (*dnnl_execute_fn) (void *primitive, void *stream, int nargs,
    const void *args);
static dnnl_execute_fn real_dnnl_execute;

/* Interposes oneDNN's entry point (the executable's definition comes
 * first in the dynamic lookup, so libhybrid's calls land here): marks
 * the thread as inside oneDNN for the count and counts the calls and
 * their arguments, which is what oneDNN 2.6 allocates per call for
 * (docs/PRECISION.md, "Allocations").  Declared by hand, as the test
 * builds without oneDNN's headers too. */
int dnnl_primitive_execute (void *primitive, void *stream, int nargs,
    const void *args);
int
dnnl_primitive_execute (void *primitive, void *stream, int nargs,
    const void *args)
{
  if (!real_dnnl_execute)
    g_error ("dnnl_primitive_execute called, oneDNN not found");
  in_dnnl_execute = 1;
  int status = real_dnnl_execute (primitive, stream, nargs, args);
  in_dnnl_execute = 0;
  if (g_atomic_int_get (&counting)) {
    g_atomic_int_inc (&dnnl_executes);
    g_atomic_int_add (&dnnl_args, nargs);
  }
  return status;
}

static void
start_counting (void)
{
  g_atomic_int_set (&allocations, 0);
  g_atomic_int_set (&blas_allocations, 0);
  g_atomic_int_set (&dnnl_allocations, 0);
  g_atomic_int_set (&dnnl_executes, 0);
  g_atomic_int_set (&dnnl_args, 0);
  g_atomic_int_set (&counting, 1);
}

/* Allocations by anything but OpenBLAS and oneDNN's execute since
 * start_counting; *blas gets OpenBLAS's own (may be NULL). */
static int
stop_counting (int *blas)
{
  g_atomic_int_set (&counting, 0);
  if (blas)
    *blas = g_atomic_int_get (&blas_allocations);
  return g_atomic_int_get (&allocations);
}

/* Whether fp32 convolutions run through oneDNN (HYBRIDINFER_DNNL=1), whose
 * execute allocates on every call (kernels/cpu/conv/conv-dnnl.h): then the
 * steady-state count fails only on allocations outside that call, those
 * inside are reported, and the other counts are not taken; everything
 * else is still checked. */
#ifdef HY_COUNT_ALLOCATIONS
static gboolean
dnnl_on (void)
{
  const char *dnnl = g_getenv ("HYBRIDINFER_DNNL");
  return dnnl && strcmp (dnnl, "1") == 0;
}
#endif

static gboolean
can_count (void)
{
#ifdef HY_COUNT_ALLOCATIONS
  return !dnnl_on ();
#else
  return FALSE;
#endif
}

/* ---- fixtures ------------------------------------------------------------ */

typedef struct loaded_case {
  char *name;
  hy_model *model;
  GPtrArray *inputs;            /* hy_tensor *, in model input order */
} loaded_case;

static void
loaded_case_free (loaded_case *c)
{
  if (!c)
    return;
  g_ptr_array_unref (c->inputs);
  hy_model_free (c->model);
  g_free (c->name);
  g_free (c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (loaded_case, loaded_case_free)

/* The model and inputs of a fixture directory (as gen_fixtures.py writes
 * it); NULL when the directory has no case. */
static loaded_case *
load_case (const char *dir)
{
  g_autofree char *case_path = g_build_filename (dir, "case.json", NULL);
  if (!g_file_test (case_path, G_FILE_TEST_EXISTS))
    return NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *sym = g_build_filename (dir, "model-symbol.json", NULL);
  g_autofree char *par = g_build_filename (dir, "model-0000.params", NULL);
  loaded_case *c = g_new0 (loaded_case, 1);
  c->name = g_path_get_basename (dir);
  c->model = hy_model_load (sym, par, &error);
  g_assert_no_error (error);

  g_autoptr (JsonParser) parser = json_parser_new ();
  json_parser_load_from_file (parser, case_path, &error);
  g_assert_no_error (error);
  JsonObject *spec = json_node_get_object (json_parser_get_root (parser));
  JsonArray *ins = json_object_get_array_member (spec, "inputs");
  int n = hy_model_n_inputs (c->model);
  g_assert_cmpint ((int) json_array_get_length (ins), ==, n);
  c->inputs = g_ptr_array_new_full (n, (GDestroyNotify) hy_tensor_free);
  g_ptr_array_set_size (c->inputs, n);
  for (int i = 0; i < n; i++) {
    JsonObject *o = json_array_get_object_element (ins, i);
    int idx = hy_model_input_index (c->model,
        json_object_get_string_member (o, "name"));
    g_assert_cmpint (idx, >=, 0);
    g_autofree char *f = g_build_filename (dir,
        json_object_get_string_member (o, "file"), NULL);
    g_ptr_array_index (c->inputs, idx) = hy_npy_load (f, &error);
    g_assert_no_error (error);
  }
  return c;
}

static const char *
fixture_dir (void)
{
  const char *d = g_getenv ("HY_SOURCE_DIR");
  static char *dir;
  if (!dir)
    dir = g_build_filename (d ? d : ".", "tests", "fixtures", NULL);
  return dir;
}

static hy_executor *
executor (hy_model *model, hy_mode mode)
{
  g_autoptr (GError) error = NULL;
  hy_device cpu = { HY_DEVICE_CPU, 0 };
  hy_executor *exec = hy_executor_new (model, cpu, mode, &error);
  g_assert_no_error (error);
  return exec;
}

/* Set: forwards quantize this tensor's floats themselves into the plan's
 * int8 input (hybrid.h, hy_input_quantization), as the element does with
 * a frame, and skip the model's quantize node; the inputs they are given
 * for that input then are never read. */
static const hy_tensor *quantize_from;

/* quantize_from's floats (N, C, H, W) as bytes N, H, W, C where the plan
 * keeps its quantize node's output, before every forward: after one, the
 * memory is the arena's again. */
static void
write_quantized_input (hy_executor *exec)
{
  hy_input_quantization q;
  g_autoptr (GError) error = NULL;
  gboolean ok = hy_executor_input_quantization (exec, 0, &q, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  const hy_shape *s = &quantize_from->shape;
  const int64_t C = s->dims[1], hw = s->dims[2] * s->dims[3];
  uint8_t *bytes = q.data;
  for (int64_t n = 0; n < s->dims[0]; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t i = 0; i < hw; i++)
        bytes[(n * hw + i) * C + c] = (uint8_t) hy_input_quantize (&q,
            quantize_from->data[(n * C + c) * hw + i]);
}

static void
forward (hy_executor *exec, GPtrArray *inputs)
{
  g_autoptr (GError) error = NULL;
  gboolean ok;
  if (quantize_from) {
    write_quantized_input (exec);
    ok = hy_executor_forward_quantized (exec,
        (const hy_tensor *const *) inputs->pdata, (int) inputs->len, &error);
  } else {
    ok = hy_executor_forward (exec,
        (const hy_tensor *const *) inputs->pdata, (int) inputs->len, &error);
  }
  g_assert_no_error (error);
  g_assert_true (ok);
}

/* max|a − b| ≤ tol · max(1, max|b|) */
static void
assert_close (const hy_tensor *a, const hy_tensor *b, double tol,
    const char *what)
{
  g_assert_nonnull (a);
  g_assert_nonnull (b);
  g_assert_true (hy_shape_equal (&a->shape, &b->shape));
  double diff = 0, ref = 0;
  for (int64_t i = 0; i < hy_shape_numel (&a->shape); i++) {
    diff = MAX (diff, fabs ((double) a->data[i] - b->data[i]));
    ref = MAX (ref, fabs ((double) b->data[i]));
  }
  if (!(diff <= tol * MAX (1.0, ref)))
    g_error ("%s: max|diff| %g over tolerance %g", what, diff,
        tol * MAX (1.0, ref));
}

static void
assert_arena_near_bound (hy_executor *exec, const char *name)
{
  hy_memory_stats m;
  g_assert_true (hy_executor_memory (exec, &m));
  g_test_message ("%s: arena %" G_GINT64_FORMAT " B, lower bound %"
      G_GINT64_FORMAT " B, naive %" G_GINT64_FORMAT " B (arena/bound %.4f)",
      name, m.arena_bytes, m.lower_bound_bytes, m.naive_bytes,
      m.lower_bound_bytes ? (double) m.arena_bytes / m.lower_bound_bytes : 1);
  g_assert_cmpint (m.arena_bytes, >=, m.lower_bound_bytes);
  g_assert_cmpint (m.arena_bytes, <=, m.naive_bytes);
  g_assert_cmpfloat ((double) m.arena_bytes, <=,
      ARENA_SLACK * (double) m.lower_bound_bytes);
}

/* ---- tests -------------------------------------------------------------- */

/* `count` forwards; returns the allocations made by anything but
 * OpenBLAS, and OpenBLAS's own in *blas. */
static int
count_forwards (hy_executor *exec, GPtrArray *inputs, int count, int *blas)
{
  start_counting ();
  for (int r = 0; r < count; r++)
    forward (exec, inputs);
  return stop_counting (blas);
}

#ifdef HY_COUNT_ALLOCATIONS
/* With convolutions through oneDNN (bf16, int8, or HYBRIDINFER_DNNL=1):
 * `count` forwards allocate nothing outside oneDNN's dnnl_primitive_execute,
 * OpenBLAS's included, which fails the test; what oneDNN allocates inside
 * is reported per forward with the calls and their arguments that
 * explain it (docs/PRECISION.md, "Allocations": oneDNN 2.6 copies the
 * arguments into a hash map per call, a node each and a bucket array,
 * and some of its kernels allocate a few more), and returned. */
static int
check_only_dnnl_allocates (hy_executor *exec, GPtrArray *inputs,
    const char *name, int count)
{
  int blas, n = count_forwards (exec, inputs, count, &blas);
  if (n + blas != 0)
    g_error ("%s: %d allocations (%d by OpenBLAS) outside oneDNN's execute "
        "in %d hybrid forwards", name, n + blas, blas, count);
  const int inside = g_atomic_int_get (&dnnl_allocations);
  const int executes = g_atomic_int_get (&dnnl_executes);
  const int args = g_atomic_int_get (&dnnl_args);
  g_test_message ("%s: 0 allocations per forward outside oneDNN's execute; "
      "%.1f inside (reported, not failed): %.1f executes with %.1f "
      "arguments (map nodes) + %.1f bucket arrays + %.1f by its kernels",
      name, (double) inside / count, (double) executes / count,
      (double) args / count, (double) executes / count,
      (double) (inside - args - executes) / count);
  return inside;
}
#endif

/* Warm up, then no allocation at all over 100 forwards; and hybrid
 * agrees with imperative. */
static void
check_steady_state (const char *dir)
{
  g_autoptr (loaded_case) c = load_case (dir);
  if (!c) {
    g_test_skip ("no fixture");
    return;
  }
  hy_executor *imp = executor (c->model, HY_MODE_IMPERATIVE);
  hy_executor *hyb = executor (c->model, HY_MODE_HYBRID);
  forward (imp, c->inputs);
  for (int r = 0; r < WARM_UP_FORWARDS; r++)
    forward (hyb, c->inputs);

  if (can_count ()) {
    int blas, n = count_forwards (hyb, c->inputs, COUNTED_FORWARDS, &blas);
    if (n + blas != 0)
      g_error ("%s: %d allocations (%d by OpenBLAS) in %d hybrid forwards",
          c->name, n + blas, blas, COUNTED_FORWARDS);
#ifdef HY_COUNT_ALLOCATIONS
  } else if (dnnl_on ()) {
    check_only_dnnl_allocates (hyb, c->inputs, c->name, COUNTED_FORWARDS);
#endif
  } else {
    g_test_message ("allocation counting is off (a sanitizer, or oneDNN)");
  }

  g_assert_cmpint (hy_executor_n_outputs (hyb), ==,
      hy_executor_n_outputs (imp));
  for (int i = 0; i < hy_executor_n_outputs (imp); i++)
    assert_close (hy_executor_output (hyb, i), hy_executor_output (imp, i),
        MODE_TOL, c->name);
  assert_arena_near_bound (hyb, c->name);
  hy_executor_free (hyb);
  hy_executor_free (imp);
}

static void
test_steady_state_fixture (gconstpointer name)
{
  g_autofree char *dir = g_build_filename (fixture_dir (), name, NULL);
  check_steady_state (dir);
}

static void
test_steady_state_zoo (gconstpointer name)
{
  const char *zoo = g_getenv ("HY_ZOO_FIXTURES");
  if (!zoo || !*zoo) {
    g_test_skip ("HY_ZOO_FIXTURES is not set");
    return;
  }
  g_autofree char *dir = g_build_filename (zoo, name, NULL);
  check_steady_state (dir);
}

/* Every zoo model present: the planned arena is within 5% of the bound
 * (planning only, no forward). */
static void
test_zoo_arenas (void)
{
  const char *zoo = g_getenv ("HY_ZOO_FIXTURES");
  g_autoptr (GDir) d = zoo && *zoo ? g_dir_open (zoo, 0, NULL) : NULL;
  if (!d) {
    g_test_skip ("HY_ZOO_FIXTURES is not set or not readable");
    return;
  }
  const char *e;
  int n = 0;
  while ((e = g_dir_read_name (d))) {
    g_autofree char *dir = g_build_filename (zoo, e, NULL);
    g_autoptr (loaded_case) c = load_case (dir);
    if (!c)
      continue;
    g_autoptr (GError) error = NULL;
    hy_executor *hyb = executor (c->model, HY_MODE_HYBRID);
    for (int i = 0; i < hy_model_n_inputs (c->model); i++) {
      hy_tensor *t = g_ptr_array_index (c->inputs, i);
      hy_executor_set_input_shape (hyb, hy_model_input_name (c->model, i),
          &t->shape, &error);
      g_assert_no_error (error);
    }
    g_assert_false (hy_executor_memory (hyb, &(hy_memory_stats) { 0 }));
    hy_executor_prepare (hyb, &error);
    g_assert_no_error (error);
    assert_arena_near_bound (hyb, c->name);
    hy_executor_free (hyb);
    n++;
  }
  if (n == 0)
    g_test_skip ("no zoo fixtures in HY_ZOO_FIXTURES");
}

/* `src` with its batch (axis 0) repeated to `batch` rows. */
static hy_tensor *
with_batch (const hy_tensor *src, int64_t batch)
{
  hy_shape s = src->shape;
  s.dims[0] = batch;
  hy_tensor *t = hy_tensor_new (&s);
  size_t row = hy_tensor_nbytes (src) / (size_t) src->shape.dims[0];
  for (int64_t b = 0; b < batch; b++)
    memcpy ((char *) t->data + b * row,
        (char *) src->data + (b % src->shape.dims[0]) * row, row);
  return t;
}

static GPtrArray *
inputs_with_batch (loaded_case *c, int64_t batch)
{
  GPtrArray *a = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  for (guint i = 0; i < c->inputs->len; i++)
    g_ptr_array_add (a, with_batch (g_ptr_array_index (c->inputs, i),
            batch));
  return a;
}

/* One forward; returns how many allocations it made outside OpenBLAS
 * (-1: not counted). */
static int
counted_forward (hy_executor *exec, GPtrArray *inputs)
{
  if (!can_count ()) {
    forward (exec, inputs);
    return -1;
  }
  return count_forwards (exec, inputs, 1, NULL);
}

/* An int8 hard sigmoid between values held as bytes, run as one look-up
 * (qlut-bytes.h, its table made in the call's own buffers): after a
 * warm-up nothing allocates, and the output is imperative mode's, every
 * op run by itself, bit for bit. */
static void
test_int8_lut_chain (void)
{
  const qlut_chain chain = QLUT_HARD_SIGMOID;
  hy_model *model = qlut_chain_model (&chain);
  g_autoptr (GPtrArray) in = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  g_ptr_array_add (in, qlut_chain_input (24, 7, 7, -5.0f, 5.0f));
  hy_executor *hyb = executor (model, HY_MODE_HYBRID);
  hy_executor *imp = executor (model, HY_MODE_IMPERATIVE);
  forward (hyb, in);
  forward (hyb, in);
  if (can_count ()) {
    int n = count_forwards (hyb, in, COUNTED_FORWARDS, NULL);
    if (n != 0)
      g_error ("int8 look-up chain: %d allocations in %d hybrid forwards",
          n, COUNTED_FORWARDS);
  }
  forward (imp, in);
  assert_close (hy_executor_output (hyb, 0), hy_executor_output (imp, 0), 0,
      "int8 look-up chain");
  hy_executor_free (imp);
  hy_executor_free (hyb);
  hy_model_free (model);
}

/* A → B → A plans twice: the way back to A reuses A's plan (its arena,
 * and no allocation), and B again reuses B's. */
static void
test_shape_switch (void)
{
  g_autofree char *dir = g_build_filename (fixture_dir (), "seed_net",
      NULL);
  g_autoptr (loaded_case) c = load_case (dir);
  g_autoptr (GPtrArray) a = inputs_with_batch (c, 2);
  g_autoptr (GPtrArray) b = inputs_with_batch (c, 5);
  hy_executor *hyb = executor (c->model, HY_MODE_HYBRID);
  hy_executor *imp = executor (c->model, HY_MODE_IMPERATIVE);

  forward (hyb, a);
  forward (hyb, a);             /* the workspace has grown for A now */
  const float *arena_a = hy_executor_output (hyb, 0)->data;
  hy_tensor *first_a = hy_tensor_copy (hy_executor_output (hyb, 0));

  int n_b = counted_forward (hyb, b);
  const float *arena_b = hy_executor_output (hyb, 0)->data;
  g_assert_true (arena_b != arena_a);
  g_assert_cmpint (hy_executor_output (hyb, 0)->shape.dims[0], ==, 5);
  if (n_b >= 0)
    g_assert_cmpint (n_b, >, 0);        /* B was planned */
  forward (imp, b);
  assert_close (hy_executor_output (hyb, 0), hy_executor_output (imp, 0),
      MODE_TOL, "shape B");

  int n_a = counted_forward (hyb, a);
  g_assert_true (hy_executor_output (hyb, 0)->data == arena_a);
  if (n_a >= 0)
    g_assert_cmpint (n_a, ==, 0);
  assert_close (hy_executor_output (hyb, 0), first_a, 0, "A again");

  int n_b2 = counted_forward (hyb, b);
  g_assert_true (hy_executor_output (hyb, 0)->data == arena_b);
  if (n_b2 >= 0)
    g_assert_cmpint (n_b2, ==, 0);

  hy_tensor_free (first_a);
  hy_executor_free (imp);
  hy_executor_free (hyb);
}

/* An ONNX data-dependent tail (_hy_onnx_tail: NonZero padded to a fixed
 * length through its Shape, as YOLOv8's nms=True export ends) fed inputs
 * whose nonzero counts differ, forward after forward on one plan: its
 * values live at capacities fixed by the input's shape, so once both have
 * run nothing is allocated, and the two counts give two outputs. */
#define TAIL_LENGTH 24
static const char tail_symbol[] =
  "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
  " {\"op\": \"_hy_onnx_tail\", \"name\": \"tail\", \"attrs\": {"
  "\"inputs\": \"1\", \"outputs\": \"12:2x24\", \"program\": "
  "\"NonZero i 0 - nz;Shape i 1 - shape;Const i 1 - one;Gather i 2,3 0 count;"
  "Const i 24 - length;Sub i 5,4 - missing;Const i 0 1 zero;"
  "Unsqueeze i 6,7 - missing1;Const i 0,0,0 3 before;Concat i 9,8 0 pads;"
  "Pad i 1,10 - padded;Cast f 11 0 rows\"}, \"inputs\": [[0, 0, 0]]}],"
  " \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}";

static hy_tensor *
tail_input (int every)
{
  hy_shape s = { .ndim = 2, .dims = { 4, 5 } };
  hy_tensor *t = hy_tensor_new (&s);
  for (int i = 0; i < 20; i++)
    t->data[i] = i % every == 0 ? (float) (i + 1) : 0.0f;
  return t;
}

static void
test_onnx_tail (void)
{
  g_autofree char *dir = g_dir_make_tmp ("plan-alloc-tail-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "tail-symbol.json", NULL);
  g_assert_true (g_file_set_contents (path, tail_symbol, -1, NULL));
  g_autoptr (GError) error = NULL;
  hy_model *model = hy_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) few = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  g_autoptr (GPtrArray) many = g_ptr_array_new_with_free_func (
      (GDestroyNotify) hy_tensor_free);
  g_ptr_array_add (few, tail_input (7));        /* 3 nonzeros */
  g_ptr_array_add (many, tail_input (1));       /* 20 */
  hy_executor *hyb = executor (model, HY_MODE_HYBRID);
  hy_executor *imp = executor (model, HY_MODE_IMPERATIVE);
  forward (hyb, few);
  forward (hyb, many);
  if (can_count ()) {
    start_counting ();
    for (int r = 0; r < COUNTED_FORWARDS / 2; r++) {
      forward (hyb, few);
      forward (hyb, many);
    }
    int n = stop_counting (NULL);
    if (n != 0)
      g_error ("onnx tail: %d allocations in %d hybrid forwards", n,
          COUNTED_FORWARDS);
  }
  const char *names[] = { "few", "many" };
  GPtrArray *feeds[] = { few, many };
  for (int k = 0; k < 2; k++) {
    forward (hyb, feeds[k]);
    forward (imp, feeds[k]);
    const hy_tensor *out = hy_executor_output (hyb, 0);
    assert_close (out, hy_executor_output (imp, 0), 0, names[k]);
    /* the nonzeros' row coordinates, then the padding's zeros: the last
     * nonzero (element 14 of few, 19 of many) is on row 2, 3 */
    int count = k ? 20 : 3;
    g_assert_cmpfloat (out->data[count - 1], ==, k ? 3.0f : 2.0f);
    for (int j = count; j < TAIL_LENGTH; j++)
      g_assert_cmpfloat (out->data[j], ==, 0.0f);
  }
  hy_executor_free (imp);
  hy_executor_free (hyb);
  hy_model_free (model);
  g_unlink (path);
  g_rmdir (dir);
}

/* Nine shapes through a cache of eight: the first one is forgotten (and
 * planned again), the second and the last are still there. */
static void
test_plan_cache_bound (void)
{
  g_autofree char *dir = g_build_filename (fixture_dir (), "seed_mlp",
      NULL);
  g_autoptr (loaded_case) c = load_case (dir);
  hy_executor *hyb = executor (c->model, HY_MODE_HYBRID);
  GPtrArray *batches[10] = { NULL };
  for (int i = 1; i <= 9; i++) {
    batches[i] = inputs_with_batch (c, i);
    forward (hyb, batches[i]);
    forward (hyb, batches[i]);
  }
  if (can_count ()) {
    g_assert_cmpint (counted_forward (hyb, batches[9]), ==, 0);
    g_assert_cmpint (counted_forward (hyb, batches[2]), ==, 0);
    g_assert_cmpint (counted_forward (hyb, batches[1]), >, 0);
  } else {
    g_test_message ("allocation counting is off (a sanitizer, or oneDNN)");
  }
  for (int i = 1; i <= 9; i++)
    g_ptr_array_unref (batches[i]);
  hy_executor_free (hyb);
}

/* prepare plans without running; memory is known then, and only in
 * hybrid mode. */
static void
test_prepare_and_memory (void)
{
  g_autofree char *dir = g_build_filename (fixture_dir (), "seed_net",
      NULL);
  g_autoptr (loaded_case) c = load_case (dir);
  g_autoptr (GError) error = NULL;
  hy_memory_stats m;
  hy_tensor *in = g_ptr_array_index (c->inputs, 0);
  hy_executor *imp = executor (c->model, HY_MODE_IMPERATIVE);
  hy_executor_set_input_shape (imp, "data", &in->shape, &error);
  g_assert_no_error (error);
  g_assert_true (hy_executor_prepare (imp, &error));
  g_assert_false (hy_executor_memory (imp, &m));
  hy_executor_free (imp);

  hy_executor *hyb = executor (c->model, HY_MODE_HYBRID);
  hy_executor_set_input_shape (hyb, "data", &in->shape, &error);
  g_assert_no_error (error);
  g_assert_false (hy_executor_memory (hyb, &m));
  g_assert_null (hy_executor_output (hyb, 0));
  g_assert_true (hy_executor_prepare (hyb, &error));
  g_assert_no_error (error);
  g_assert_true (hy_executor_memory (hyb, &m));
  g_assert_cmpint (m.arena_bytes, >, 0);
  g_assert_cmpint (m.arena_bytes, <, m.naive_bytes);

  /* Switching mode drops the plans. */
  g_assert_true (hy_executor_set_mode (hyb, HY_MODE_IMPERATIVE, &error));
  g_assert_false (hy_executor_memory (hyb, &m));
  hy_executor_free (hyb);
}

/* bf16: the convolutions through oneDNN, whose execute allocates on every
 * call (docs/PRECISION.md, "Allocations"): the count is reported, and the
 * same over two runs of forwards (nothing accumulates: no weight
 * conversion or set-up per forward); the arena stays at the bound.  On
 * the seed LeNet, and on ResNet-18 and MobileNetV2 (its bf16 chains) from
 * HY_ZOO_FIXTURES where present. */
static void
check_bf16_steady (const char *dir)
{
  g_autoptr (loaded_case) c = load_case (dir);
  if (!c) {
    g_test_skip ("no fixture here");
    return;
  }
  hy_executor *hyb = executor (c->model, HY_MODE_HYBRID);
  g_autoptr (GError) error = NULL;
  if (!hy_executor_set_precision (hyb, HY_PRECISION_BF16, &error)) {
    g_assert_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED);
    g_test_skip (error->message);
    hy_executor_free (hyb);
    return;
  }
  for (int r = 0; r < WARM_UP_FORWARDS; r++)
    forward (hyb, c->inputs);
#ifdef HY_COUNT_ALLOCATIONS
  int first = check_only_dnnl_allocates (hyb, c->inputs, c->name, 20);
  int second = check_only_dnnl_allocates (hyb, c->inputs, c->name, 20);
  g_assert_cmpint (second, <=, first + first / 10);
#endif
  assert_arena_near_bound (hyb, c->name);
  /* ResNet's convolutions, pooling and residual adds run as bf16
   * segments (docs/PRECISION.md, "bf16 segments"): values between them
   * held as bf16 nhwc in the arena, converted only at the edges. */
  hy_memory_stats m;
  g_assert_true (hy_executor_memory (hyb, &m));
  g_test_message ("%s bf16: %" G_GINT64_FORMAT " values in segments, %"
      G_GINT64_FORMAT " reorders in, %" G_GINT64_FORMAT " out", c->name,
      m.segment_values, m.segment_entries, m.segment_exits);
  if (strstr (c->name, "resnet18_v1")) {
    const char *off = g_getenv ("HYBRIDINFER_BF16_SEGMENT");
    if (!off || strcmp (off, "0") != 0) {
      g_assert_cmpint (m.segment_values, >=, 16);
      g_assert_cmpint (m.segment_entries, >=, 1);
      g_assert_cmpint (m.segment_exits, >=, 1);
      /* One segment from the first layer to the global pooling. */
      g_assert_cmpint (m.segment_entries + m.segment_exits, <=, 4);
    }
  }
  hy_executor_free (hyb);
}

static void
test_bf16_steady (void)
{
  g_autofree char *dir = g_build_filename (fixture_dir (), "seed_net", NULL);
  check_bf16_steady (dir);
}

static void
test_bf16_steady_zoo (gconstpointer name)
{
  const char *zoo = g_getenv ("HY_ZOO_FIXTURES");
  if (!zoo || !*zoo) {
    g_test_skip ("HY_ZOO_FIXTURES is not set");
    return;
  }
  g_autofree char *dir = g_build_filename (zoo, name, NULL);
  check_bf16_steady (dir);
}

/* int8: quantize_net_v2's exports (gen_int8_fixtures.py, made by real
 * MXNet 1.9.1 when the test is built).  Their quantized convolutions run
 * on oneDNN's int8 kernels unless HYBRIDINFER_DNNL=0, and oneDNN 2.6.3's
 * execute allocates on every call (docs/PRECISION.md, "int8"): then
 * nothing may allocate outside it, and what it allocates inside is
 * reported and must not grow from one run of forwards to the next.  On
 * our reference kernels nothing may allocate at all.  Either way the
 * hybrid outputs must be MXNet's. */

typedef struct int8_case {
  const char *name;
  /* Counted on the reference kernels.  They sum with scalar loops: a
   * ResNet-18 forward takes some 130 ms there, against 3-12 ms on
   * oneDNN, so the zoo nets are counted over 10 forwards, which an
   * allocation made on every forward fails just as well. */
  int reference_forwards;
} int8_case;

/* MXNet's int8 logits against ours: the layers' integers are MXNet's
 * exactly, the last fp32 scale rounds within 1e-6 (docs/PRECISION.md). */
#define INT8_VS_MXNET_TOL 1e-5

#ifdef HY_COUNT_ALLOCATIONS
static gboolean
int8_runs_on_dnnl (void)
{
  const char *v = g_getenv ("HYBRIDINFER_DNNL");
  return real_dnnl_execute && !(v && strcmp (v, "0") == 0);
}
#endif

static void
check_int8_steady (const char *dir, int reference_forwards)
{
  g_autoptr (loaded_case) c = load_case (dir);
  if (!c)
    g_error ("%s: no int8 case there (gen_int8_fixtures.py makes it)", dir);
  hy_executor *hyb = executor (c->model, HY_MODE_HYBRID);
  for (int r = 0; r < WARM_UP_FORWARDS; r++)
    forward (hyb, c->inputs);
#ifdef HY_COUNT_ALLOCATIONS
  if (int8_runs_on_dnnl ()) {
    /* 100 forwards, in two runs to compare */
    const int half = COUNTED_FORWARDS / 2;
    int first = check_only_dnnl_allocates (hyb, c->inputs, c->name, half);
    const int executes = g_atomic_int_get (&dnnl_executes);
    int second = check_only_dnnl_allocates (hyb, c->inputs, c->name, half);
    /* a count of nothing would pass whatever the kernels did */
    if (executes == 0)
      g_error ("%s: no int8 convolution ran on oneDNN (HYBRIDINFER_DNNL "
          "is not 0)", c->name);
    g_assert_cmpint (second, <=, first + first / 10);
  } else {
    const int count = reference_forwards;
    int blas, n = count_forwards (hyb, c->inputs, count, &blas);
    const int executes = g_atomic_int_get (&dnnl_executes);
    if (n + blas != 0 || executes != 0)
      g_error ("%s: %d allocations (%d by OpenBLAS) and %d oneDNN executes "
          "in %d hybrid forwards on the reference int8 kernels", c->name,
          n + blas, blas, executes, count);
    g_test_message ("%s: 0 allocations in %d forwards on the reference int8 "
        "kernels", c->name, count);
  }
#else
  (void) reference_forwards;
  g_test_message ("allocation counting is off (a sanitizer)");
#endif
  g_autoptr (GError) error = NULL;
  g_autofree char *case_path = g_build_filename (dir, "case.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  json_parser_load_from_file (parser, case_path, &error);
  g_assert_no_error (error);
  JsonArray *outs = json_object_get_array_member (
      json_node_get_object (json_parser_get_root (parser)), "outputs");
  g_assert_cmpint ((int) json_array_get_length (outs), ==,
      hy_executor_n_outputs (hyb));
  for (int i = 0; i < hy_executor_n_outputs (hyb); i++) {
    g_autofree char *f = g_build_filename (dir,
        json_array_get_string_element (outs, i), NULL);
    hy_tensor *want = hy_npy_load (f, &error);
    g_assert_no_error (error);
    assert_close (hy_executor_output (hyb, i), want, INT8_VS_MXNET_TOL,
        c->name);
    hy_tensor_free (want);
  }
  assert_arena_near_bound (hyb, c->name);
  hy_executor_free (hyb);
}

/* The same int8 exports with their input quantized by the caller, as the
 * element does with frames: where oneDNN's int8 kernels run (the quantize
 * node's output is then held as their bytes) the executor offers it, the
 * forwards skip the node and read nothing of the float input (NaN here),
 * the outputs are the plain forward's bit for bit, and nothing more is
 * allocated.  On the reference kernels it is not offered. */
static void
check_int8_quantized_input (const char *dir)
{
  g_autoptr (loaded_case) c = load_case (dir);
  if (!c)
    g_error ("%s: no int8 case there (gen_int8_fixtures.py makes it)", dir);
  hy_executor *plain = executor (c->model, HY_MODE_HYBRID);
  hy_executor *hyb = executor (c->model, HY_MODE_HYBRID);
  forward (plain, c->inputs);
  const hy_tensor *real = g_ptr_array_index (c->inputs, 0);
  hy_input_quantization q;
  g_autoptr (GError) error = NULL;
  g_assert_true (hy_executor_set_input_shape (hyb,
          hy_model_input_name (c->model, 0), &real->shape, &error));
  gboolean offered = hy_executor_input_quantization (hyb, 0, &q, &error);
  g_assert_no_error (error);
  const char *v = g_getenv ("HYBRIDINFER_DNNL");
  if (v && strcmp (v, "0") == 0) {
    g_assert_false (offered);
    g_test_message ("%s: not offered on the reference kernels", c->name);
    hy_executor_free (hyb);
    hy_executor_free (plain);
    return;
  }
  g_assert_true (offered);
  /* the float input the forwards are given: NaN, which would show */
  hy_tensor *nan_input = hy_tensor_new (&real->shape);
  for (int64_t i = 0; i < hy_shape_numel (&real->shape); i++)
    nan_input->data[i] = NAN;
  g_autoptr (GPtrArray) inputs = g_ptr_array_new ();
  g_ptr_array_add (inputs, nan_input);
  quantize_from = real;
  for (int r = 0; r < WARM_UP_FORWARDS; r++)
    forward (hyb, inputs);
#ifdef HY_COUNT_ALLOCATIONS
  if (real_dnnl_execute)
    check_only_dnnl_allocates (hyb, inputs, c->name, COUNTED_FORWARDS / 2);
#endif
  quantize_from = NULL;
  for (int i = 0; i < hy_executor_n_outputs (hyb); i++) {
    const hy_tensor *a = hy_executor_output (hyb, i);
    const hy_tensor *b = hy_executor_output (plain, i);
    g_assert_true (hy_shape_equal (&a->shape, &b->shape));
    if (memcmp (a->data, b->data, hy_tensor_nbytes (a)) != 0)
      g_error ("%s: output %d differs from the plain forward's", c->name, i);
  }
  for (int64_t i = 0; i < hy_shape_numel (&real->shape); i++)
    g_assert_true (isnan (nan_input->data[i]));
  g_test_message ("%s: input quantized by the caller (%s, scale %g), "
      "outputs the plain forward's bit for bit", c->name,
      q.is_uint8 ? "uint8" : "int8", q.scale);
  hy_tensor_free (nan_input);
  hy_executor_free (hyb);
  hy_executor_free (plain);
}

static void
test_int8_quantized_input (gconstpointer data)
{
  const int8_case *ic = data;
  g_autofree char *dir = g_build_filename (g_getenv ("HY_INT8_FIXTURES"),
      ic->name, NULL);
  check_int8_quantized_input (dir);
}

static void
test_int8_steady (gconstpointer data)
{
  const int8_case *ic = data;
  g_autofree char *dir = g_build_filename (g_getenv ("HY_INT8_FIXTURES"),
      ic->name, NULL);
  check_int8_steady (dir, ic->reference_forwards);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  dl_iterate_phdr (find_blas, NULL);
  real_dnnl_execute = (dnnl_execute_fn) dlsym (RTLD_NEXT,
      "dnnl_primitive_execute");
  g_test_add_data_func ("/plan-alloc/steady-state/seed_mlp", "seed_mlp",
      test_steady_state_fixture);
  g_test_add_data_func ("/plan-alloc/steady-state/seed_net", "seed_net",
      test_steady_state_fixture);
  /* MultiBoxDetection's per-image scratch comes from the workspace. */
  g_test_add_data_func ("/plan-alloc/steady-state/model_ssd_symbol",
      "model_ssd_symbol", test_steady_state_fixture);
  g_test_add_data_func ("/plan-alloc/steady-state/zoo_resnet18_v1_b1",
      "zoo_resnet18_v1_b1", test_steady_state_zoo);
  g_test_add_data_func ("/plan-alloc/steady-state/zoo_mobilenetv2_1.0_b1",
      "zoo_mobilenetv2_1.0_b1", test_steady_state_zoo);
  g_test_add_func ("/plan-alloc/shape-switch", test_shape_switch);
  g_test_add_func ("/plan-alloc/onnx-tail", test_onnx_tail);
  g_test_add_func ("/plan-alloc/int8-lut-chain", test_int8_lut_chain);
  g_test_add_func ("/plan-alloc/plan-cache-bound", test_plan_cache_bound);
  g_test_add_func ("/plan-alloc/prepare-and-memory", test_prepare_and_memory);
  g_test_add_func ("/plan-alloc/zoo-arenas", test_zoo_arenas);
  g_test_add_func ("/plan-alloc/bf16-steady", test_bf16_steady);
  g_test_add_data_func ("/plan-alloc/bf16-steady/zoo_resnet18_v1_b1",
      "zoo_resnet18_v1_b1", test_bf16_steady_zoo);
  g_test_add_data_func ("/plan-alloc/bf16-steady/zoo_mobilenetv2_1.0_b1",
      "zoo_mobilenetv2_1.0_b1", test_bf16_steady_zoo);
  /* int8: a small net with every fusion ResNet has, one whose concats,
   * activation and flatten stay quantized, one with unfused residual adds,
   * and ResNet-18 v1 and MobileNetV2 (its grouped convolutions on the
   * reference kernels whatever the switch), batch 1.  Only where MXNet
   * made them: the plan-alloc-int8 tests (tests/meson.build) name the
   * directory, and run nothing else. */
  const char *int8_fixtures = g_getenv ("HY_INT8_FIXTURES");
  static const int8_case int8_cases[] = {
    { "int8_small_auto_naive", COUNTED_FORWARDS },
    { "int8_branches_auto_naive", COUNTED_FORWARDS },
    { "int8_residual_auto_naive", COUNTED_FORWARDS },
    { "int8_resnet18_v1_auto_naive", 10 },
    { "int8_mobilenetv2_1.0_auto_naive", 10 },
  };
  for (size_t i = 0; int8_fixtures && *int8_fixtures
      && i < G_N_ELEMENTS (int8_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/plan-alloc/int8-steady/%s",
        int8_cases[i].name);
    g_test_add_data_func (path, &int8_cases[i], test_int8_steady);
    g_autofree char *quantized = g_strdup_printf (
        "/plan-alloc/int8-steady/%s-quantized-input", int8_cases[i].name);
    g_test_add_data_func (quantized, &int8_cases[i],
        test_int8_quantized_input);
  }
  return g_test_run ();
}
