/*
 * alloc-count.h — counts every heap allocation in the process, for the
 * element tests' "nothing allocated per frame" checks.
 *
 * Include it in exactly one file of a test program: it defines malloc,
 * calloc, realloc and the aligned variants as counting wrappers around
 * glibc's own entry points (so allocations by GLib, GStreamer and OpenBLAS
 * are all seen).  Under a sanitizer, which owns malloc itself, nothing is
 * wrapped and hy_alloc_can_count() is FALSE: callers skip the check.
 */
#ifndef HY_ALLOC_COUNT_H
#define HY_ALLOC_COUNT_H

#include <errno.h>
#include <stddef.h>

#include <glib.h>

#if defined(__SANITIZE_ADDRESS__)
#define HY_ALLOC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) \
    || __has_feature(thread_sanitizer)
#define HY_ALLOC_SANITIZED 1
#endif
#endif
#if defined(__GLIBC__) && !defined(HY_ALLOC_SANITIZED)
#define HY_ALLOC_COUNTING 1
#endif

static gint hy_alloc_counting;  /* atomic: count only while set */
static gint hy_alloc_count;

#ifdef HY_ALLOC_COUNTING
extern void *__libc_malloc (size_t size);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *ptr, size_t size);
extern void *__libc_memalign (size_t alignment, size_t size);
extern void __libc_free (void *ptr);

void *memalign (size_t alignment, size_t size);

static inline void
hy_alloc_note (void)
{
  if (g_atomic_int_get (&hy_alloc_counting))
    g_atomic_int_inc (&hy_alloc_count);
}

void *
malloc (size_t size)
{
  hy_alloc_note ();
  return __libc_malloc (size);
}

void *
calloc (size_t n, size_t size)
{
  hy_alloc_note ();
  return __libc_calloc (n, size);
}

void *
realloc (void *ptr, size_t size)
{
  hy_alloc_note ();
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
  hy_alloc_note ();
  return __libc_memalign (alignment, size);
}

void *
memalign (size_t alignment, size_t size)
{
  hy_alloc_note ();
  return __libc_memalign (alignment, size);
}

int
posix_memalign (void **out, size_t alignment, size_t size)
{
  hy_alloc_note ();
  if (alignment % sizeof (void *) || (alignment & (alignment - 1)))
    return EINVAL;
  void *p = __libc_memalign (alignment, size);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}
#endif

static inline gboolean
hy_alloc_can_count (void)
{
#ifdef HY_ALLOC_COUNTING
  return TRUE;
#else
  return FALSE;
#endif
}

static inline void
hy_alloc_start (void)
{
  g_atomic_int_set (&hy_alloc_count, 0);
  g_atomic_int_set (&hy_alloc_counting, 1);
}

/* Allocations since hy_alloc_start. */
static inline int
hy_alloc_stop (void)
{
  g_atomic_int_set (&hy_alloc_counting, 0);
  return g_atomic_int_get (&hy_alloc_count);
}

#endif /* HY_ALLOC_COUNT_H */
