/*
 * test-file-read.c — reading user-given paths (core/io/file-read.c):
 * hy_file_read_bounded reads regular files up to a limit and refuses the
 * rest at once, naming the path, what it is, its size and the limit;
 * hy_file_open refuses what is not a regular file likewise, and its
 * reads at offsets fail, saying so, when the file is cut or rewritten
 * after the open.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "hybrid.h"
#include "core/io/file-read.h"

typedef struct {
  char *dir, *file, *fifo;
} fixture;

static void
fixture_set_up (fixture *f, gconstpointer data)
{
  f->dir = g_dir_make_tmp ("hy-file-read-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->file = g_build_filename (f->dir, "ten.txt", NULL);
  g_assert_true (g_file_set_contents (f->file, "0123456789", 10, NULL));
  f->fifo = g_build_filename (f->dir, "fifo", NULL);
  g_assert_cmpint (mkfifo (f->fifo, 0600), ==, 0);
}

static void
fixture_tear_down (fixture *f, gconstpointer data)
{
  g_unlink (f->file);
  g_unlink (f->fifo);
  g_rmdir (f->dir);
  g_free (f->file);
  g_free (f->fifo);
  g_free (f->dir);
}

static void
test_regular (fixture *f, gconstpointer data)
{
  GError *error = NULL;
  char *text = NULL;
  gsize len = 0;
  /* Exactly at the limit is allowed. */
  g_assert_true (hy_file_read_bounded (f->file, "test file", 10, &text, &len,
          &error));
  g_assert_no_error (error);
  g_assert_cmpuint (len, ==, 10);
  g_assert_cmpstr (text, ==, "0123456789");     /* NUL-terminated */
  g_free (text);

  /* One byte over: refused before reading, naming size and limit. */
  g_assert_false (hy_file_read_bounded (f->file, "test file", 9, &text, &len,
          &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_assert_null (text);
  g_assert_nonnull (strstr (error->message, f->file));
  g_assert_nonnull (strstr (error->message,
          "10 bytes is too large for a test file"));
  g_assert_nonnull (strstr (error->message, "9 bytes"));
  g_clear_error (&error);

  g_autofree char *missing = g_build_filename (f->dir, "absent", NULL);
  g_assert_false (hy_file_read_bounded (missing, "test file", 9, &text, NULL,
          &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, missing));
  g_clear_error (&error);
}

/* /proc files are regular but say 0 bytes: read to the end, bounded. */
static void
test_size_is_a_hint (fixture *f, gconstpointer data)
{
  GError *error = NULL;
  char *text = NULL;
  gsize len = 0;
  g_assert_true (hy_file_read_bounded ("/proc/self/status", "status file",
          1 << 20, &text, &len, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (len, >, 0);
  g_assert_cmpuint (strlen (text), ==, len);
  g_assert_nonnull (strstr (text, "Name:"));
  g_free (text);

  g_assert_false (hy_file_read_bounded ("/proc/self/status", "status file",
          16, &text, &len, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message,
          "at least 17 bytes is too large for a status file"));
  g_clear_error (&error);
}

static void
test_not_regular (fixture *f, gconstpointer data)
{
  const struct {
    const char *path, *says;
  } cases[] = {
    {"/dev/zero", "/dev/zero is a character device: a test file must be a "
          "regular file"},
    {f->fifo, "is a FIFO: a test file must be a regular file"},
    {f->dir, "is a directory: a test file must be a regular file"},
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    GError *error = NULL;
    char *text = NULL;
    /* Neither reads /dev/zero nor waits for a FIFO's writer. */
    g_assert_false (hy_file_read_bounded (cases[i].path, "test file",
            G_MAXSIZE / 2, &text, NULL, &error));
    g_assert_error (error, HY_ERROR, HY_ERROR_IO);
    g_assert_nonnull (strstr (error->message, cases[i].path));
    g_assert_nonnull (strstr (error->message, cases[i].says));
    g_clear_error (&error);

    g_assert_null (hy_file_open (cases[i].path, "test file", &error));
    g_assert_error (error, HY_ERROR, HY_ERROR_IO);
    g_assert_nonnull (strstr (error->message, cases[i].says));
    g_clear_error (&error);
  }
}

static void
test_read_at (fixture *f, gconstpointer data)
{
  GError *error = NULL;
  g_autoptr (hy_file) file = hy_file_open (f->file, "test file", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hy_file_size (file), ==, 10);
  g_assert_cmpstr (hy_file_path (file), ==, f->file);
  char buf[11] = "";
  g_assert_true (hy_file_read_at (file, buf, 4, 3, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (buf, ==, "3456");
  g_assert_true (hy_file_read_at (file, buf, 10, 0, &error));
  g_assert_cmpstr (buf, ==, "0123456789");
  g_assert_true (hy_file_check_unchanged (file, &error));
  g_assert_no_error (error);
}

/* Cut after the open, as `cp` cuts a file before writing it anew: a read
 * past the new end is a short read, reported, not a signal. */
static void
test_cut_after_open (fixture *f, gconstpointer data)
{
  GError *error = NULL;
  g_autoptr (hy_file) file = hy_file_open (f->file, "test file", &error);
  g_assert_no_error (error);
  g_assert_cmpint (truncate (f->file, 6), ==, 0);
  char buf[10];
  g_assert_false (hy_file_read_at (file, buf, 8, 2, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_autofree char *want = g_strdup_printf ("%s: the test file changed while "
      "it was read: 8 bytes expected at byte 2, 4 read", f->file);
  g_assert_cmpstr (error->message, ==, want);
  g_clear_error (&error);

  g_assert_false (hy_file_check_unchanged (file, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_free (want);
  want = g_strdup_printf ("%s: the test file changed while it was read: it "
      "was 10 bytes, it is now 6", f->file);
  g_assert_cmpstr (error->message, ==, want);
  g_clear_error (&error);
}

/* Rewritten in place to the same size: reads succeed, the check after
 * them does not. */
static void
test_rewritten_after_open (fixture *f, gconstpointer data)
{
  GError *error = NULL;
  g_autoptr (hy_file) file = hy_file_open (f->file, "test file", &error);
  g_assert_no_error (error);
  /* Past the timestamp granularity of kernels without fine-grained
   * timestamps (a jiffy: at most 10 ms), so the write moves the mtime. */
  g_usleep (20 * 1000);
  FILE *w = fopen (f->file, "r+");
  g_assert_nonnull (w);
  g_assert_cmpint (fputs ("ABCDEFGHIJ", w), >=, 0);
  g_assert_cmpint (fclose (w), ==, 0);
  char buf[10];
  g_assert_true (hy_file_read_at (file, buf, 10, 0, &error));
  g_assert_false (hy_file_check_unchanged (file, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, f->file));
  g_assert_nonnull (strstr (error->message, "the test file changed while it "
          "was read (it was modified; its size is still 10 bytes)"));
  g_clear_error (&error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/file-read/regular", fixture, NULL, fixture_set_up,
      test_regular, fixture_tear_down);
  g_test_add ("/file-read/size-is-a-hint", fixture, NULL, fixture_set_up,
      test_size_is_a_hint, fixture_tear_down);
  g_test_add ("/file-read/not-regular", fixture, NULL, fixture_set_up,
      test_not_regular, fixture_tear_down);
  g_test_add ("/file-read/read-at", fixture, NULL, fixture_set_up,
      test_read_at, fixture_tear_down);
  g_test_add ("/file-read/cut-after-open", fixture, NULL, fixture_set_up,
      test_cut_after_open, fixture_tear_down);
  g_test_add ("/file-read/rewritten-after-open", fixture, NULL,
      fixture_set_up, test_rewritten_after_open, fixture_tear_down);
  return g_test_run ();
}
