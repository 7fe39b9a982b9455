/*
 * test-property-parse.c — the text values of hybridinfer's properties
 * (gst-plugin/property-parse.c): input-size, dump-frames, labels files,
 * class-thresholds.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HY_HAS_ASAN 1
#endif
#endif
#ifndef HY_HAS_ASAN
#define HY_HAS_ASAN 0
#endif

#include "hybrid.h"
#include "gst-plugin/property-parse.h"

static void
test_size (void)
{
  static const struct {
    const char *text;
    int w, h;
  } good[] = {
    {"224x224", 224, 224}, {"320X240", 320, 240}, {" 64 x 48 ", 64, 48},
    {"1x1", 1, 1}, {"16384x2", 16384, 2}, {"300\xc3\x97" "200", 300, 200},
  };
  static const char *bad[] = {
    "0x5", "5x0", "x5", "5x", "224", "-3x4", "3x-4", "abc", "", "16385x2",
    "2x3x4", "2.5x3", "99999999999999999999x2",
  };
  for (guint i = 0; i < G_N_ELEMENTS (good); i++) {
    int w = 0, h = 0;
    GError *error = NULL;
    g_assert_true (hyg_parse_size (good[i].text, &w, &h, &error));
    g_assert_no_error (error);
    g_assert_cmpint (w, ==, good[i].w);
    g_assert_cmpint (h, ==, good[i].h);
  }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    int w = -1, h = -1;
    GError *error = NULL;
    g_assert_false (hyg_parse_size (bad[i], &w, &h, &error));
    g_assert_error (error, HY_ERROR, HY_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "input-size"));
    g_assert_cmpint (w, ==, -1);
    g_error_free (error);
  }
}

static void
test_frame_set (void)
{
  GError *error = NULL;
  hyg_frame_set *all = hyg_frame_set_parse (NULL, &error);
  g_assert_no_error (error);
  g_assert_true (hyg_frame_set_contains (all, 0));
  g_assert_true (hyg_frame_set_contains (all, G_MAXUINT64));
  hyg_frame_set_free (all);

  hyg_frame_set *s = hyg_frame_set_parse ("0-9, 100 ,250-", &error);
  g_assert_no_error (error);
  for (guint64 f = 0; f < 10; f++)
    g_assert_true (hyg_frame_set_contains (s, f));
  g_assert_false (hyg_frame_set_contains (s, 10));
  g_assert_false (hyg_frame_set_contains (s, 99));
  g_assert_true (hyg_frame_set_contains (s, 100));
  g_assert_false (hyg_frame_set_contains (s, 249));
  g_assert_true (hyg_frame_set_contains (s, 250));
  g_assert_true (hyg_frame_set_contains (s, 1000000));
  hyg_frame_set_free (s);

  static const char *bad[] = { "x", "1-", "-3", "5-2", "1,,2", "1 2", "1,",
    "0-9;3", "18446744073709551616"
  };
  /* "1-" is open-ended and valid: check it apart. */
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    if (!strcmp (bad[i], "1-"))
      continue;
    s = hyg_frame_set_parse (bad[i], &error);
    if (s)
      g_error ("dump-frames '%s' parsed", bad[i]);
    g_assert_error (error, HY_ERROR, HY_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "dump-frames"));
    g_clear_error (&error);
  }
  s = hyg_frame_set_parse ("1-", &error);
  g_assert_no_error (error);
  g_assert_false (hyg_frame_set_contains (s, 0));
  g_assert_true (hyg_frame_set_contains (s, 1));
  hyg_frame_set_free (s);
}

static char *
write_temp (const char *contents, gssize len)
{
  char *path = NULL;
  int fd = g_file_open_tmp ("hy-labels-XXXXXX.txt", &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (g_file_set_contents (path, contents, len, NULL));
  return path;
}

/* A packed copy is one block holding its strings: the first n, or all. */
static void
test_strv_pack (void)
{
  const char *const strv[] = { "red", "", "traffic light", NULL };
  char **all = hyg_strv_pack (strv, -1);
  g_assert_cmpuint (g_strv_length (all), ==, 3);
  for (int i = 0; i < 3; i++) {
    g_assert_cmpstr (all[i], ==, strv[i]);
    g_assert_true (all[i] != strv[i]);
    g_assert_true ((char *) all[i] > (char *) all
        && all[i] < (char *) all + 4 * sizeof (char *) + 20);
  }
  g_free (all);
  char **two = hyg_strv_pack (strv, 2);
  g_assert_cmpuint (g_strv_length (two), ==, 2);
  g_assert_cmpstr (two[1], ==, "");
  g_free (two);
  char **none = hyg_strv_pack (NULL, 0);
  g_assert_null (none[0]);
  g_free (none);
}

static void
test_labels (void)
{
  GError *error = NULL;
  guint n = 0;
  char *path = write_temp ("cat\r\ndog \n\nbird\n", -1);
  char **labels = hyg_labels_load (path, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 4);
  g_assert_cmpstr (labels[0], ==, "cat");
  g_assert_cmpstr (labels[1], ==, "dog");
  g_assert_cmpstr (labels[2], ==, "");
  g_assert_cmpstr (labels[3], ==, "bird");
  g_assert_null (labels[4]);
  g_free (labels);              /* one block */
  g_unlink (path);
  g_free (path);

  /* without a final newline, and a line of blanks */
  path = write_temp ("a\n  \nb", -1);
  labels = hyg_labels_load (path, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpstr (labels[0], ==, "a");
  g_assert_cmpstr (labels[1], ==, "");
  g_assert_cmpstr (labels[2], ==, "b");
  g_assert_null (labels[3]);
  g_free (labels);
  g_unlink (path);
  g_free (path);

  path = write_temp ("", 0);
  labels = hyg_labels_load (path, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 0);
  g_assert_null (labels[0]);
  g_free (labels);
  g_unlink (path);
  g_free (path);

  path = write_temp ("ok\n\xff\xfe\n", -1);
  g_assert_null (hyg_labels_load (path, &n, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_clear_error (&error);
  g_unlink (path);
  g_free (path);

  g_assert_null (hyg_labels_load ("/nonexistent/labels.txt", &n, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "labels"));
  g_clear_error (&error);
}

/* What is not a regular file, or is too large, is refused at once by name:
 * labels=/dev/zero used to read until memory ran out, a FIFO blocked the
 * state change forever.  Run in a subprocess, with its address space
 * bounded where the sanitizers allow, so a reader that does neither fails
 * this test quickly instead of taking the machine's memory. */
static void
test_labels_not_regular_subprocess (void)
{
#if !defined(__SANITIZE_ADDRESS__) && !HY_HAS_ASAN
  struct rlimit lim = { 2UL << 30, 2UL << 30 };
  g_assert_cmpint (setrlimit (RLIMIT_AS, &lim), ==, 0);
#endif
  g_autofree char *dir = g_dir_make_tmp ("hy-labels-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_autofree char *fifo = g_build_filename (dir, "fifo", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  g_autofree char *big = g_build_filename (dir, "big.txt", NULL);
  int fd = g_open (big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ftruncate (fd, (off_t) HYG_LABELS_MAX_BYTES + 1), ==, 0);
  close (fd);

  static const struct {
    const char *name;           /* NULL: the folder itself */
    const char *says;
  } cases[] = {
    {"/dev/zero", "is a character device"}, {"fifo", "is a FIFO"},
    {NULL, "is a directory"},
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    const char *path = !cases[i].name ? dir
        : cases[i].name[0] == '/' ? cases[i].name : fifo;
    GError *error = NULL;
    guint n = 7;
    g_assert_null (hyg_labels_load (path, &n, &error));
    g_assert_error (error, HY_ERROR, HY_ERROR_IO);
    g_assert_nonnull (strstr (error->message, path));
    g_assert_nonnull (strstr (error->message, cases[i].says));
    g_assert_nonnull (strstr (error->message, "labels file"));
    g_clear_error (&error);
  }

  GError *error = NULL;
  guint n = 7;
  g_assert_null (hyg_labels_load (big, &n, &error));
  g_assert_error (error, HY_ERROR, HY_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message, big));
  g_assert_nonnull (strstr (error->message, "16777217 bytes is too large"));
  g_assert_nonnull (strstr (error->message, "16777216 bytes"));
  g_clear_error (&error);

  g_unlink (big);
  g_unlink (fifo);
  g_rmdir (dir);
}

static void
test_labels_not_regular (void)
{
  g_test_trap_subprocess ("/property-parse/labels-not-regular/subprocess",
      30 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_class_thresholds (void)
{
  static const char *const labels[] = { "person", "car", "traffic light",
    "a=b", "7", "person"
  };
  hyg_class_thresholds t;
  GError *error = NULL;

  g_assert_true (hyg_class_thresholds_parse (NULL, labels, 6, &t, &error));
  g_assert_cmpuint (t.n, ==, 0);
  g_assert_true (hyg_class_thresholds_parse ("", NULL, 0, &t, &error));
  g_assert_cmpuint (t.n, ==, 0);
  g_assert_cmpfloat (hyg_class_threshold (&t, 0, 0.5f), ==, 0.5f);
  g_assert_cmpfloat (hyg_class_threshold (NULL, 0, 0.5f), ==, 0.5f);

  /* labels (the first line that matches), then ids; a label wins over
   * the id its text spells ("7" is line 4) */
  g_assert_true (hyg_class_thresholds_parse (" person = 0.6 ,car=0.4,"
          "traffic light=-1.5e0, a=b=0.25 ,7=1,12=0.3", labels, 6, &t,
          &error));
  g_assert_no_error (error);
  g_assert_cmpuint (t.n, ==, 6);
  g_assert_cmpfloat (hyg_class_threshold (&t, 0, 0.5f), ==, 0.6f);
  g_assert_cmpfloat (hyg_class_threshold (&t, 1, 0.5f), ==, 0.4f);
  g_assert_cmpfloat (hyg_class_threshold (&t, 2, 0.5f), ==, -1.5f);
  g_assert_cmpfloat (hyg_class_threshold (&t, 3, 0.5f), ==, 0.25f);
  g_assert_cmpfloat (hyg_class_threshold (&t, 4, 0.5f), ==, 1.0f);
  g_assert_cmpfloat (hyg_class_threshold (&t, 5, 0.5f), ==, 0.5f);
  g_assert_cmpfloat (hyg_class_threshold (&t, 7, 0.5f), ==, 0.5f);
  g_assert_cmpfloat (hyg_class_threshold (&t, 12, 0.5f), ==, 0.3f);

  /* no labels: ids only */
  g_assert_true (hyg_class_thresholds_parse ("3=0.9", NULL, 0, &t, &error));
  g_assert_cmpuint (t.n, ==, 1);
  g_assert_cmpfloat (hyg_class_threshold (&t, 3, 0.5f), ==, 0.9f);

  static const struct {
    const char *text, *says;
    gboolean labelled;
  } bad[] = {
    {"person", "is not CLASS=SCORE", TRUE},
    {"person=0.6;car=0.4", "none of the model's 6 labels", TRUE},
    {"person=", "is not a number", TRUE},
    {"person=high", "is not a number", TRUE},
    {"person=0.5x", "is not a number", TRUE},
    {"person=nan", "is not a number", TRUE},
    {"person=inf", "is not a number", TRUE},
    {"person=1e39", "within float range", TRUE},
    {"dog=0.5", "none of the model's 6 labels", TRUE},
    {"=0.5", "none of the model's 6 labels", TRUE},
    {"-1=0.5", "none of the model's 6 labels", TRUE},
    {"person=0.5,0=0.7", "given twice", TRUE},
    {"person=0.5,,car=0.1", "is not CLASS=SCORE", TRUE},
    {"person=0.5", "no labels", FALSE},
    {"99999999999=0.5", "not a class id", FALSE},
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    t.n = 1;
    g_assert_false (hyg_class_thresholds_parse (bad[i].text,
            bad[i].labelled ? labels : NULL, bad[i].labelled ? 6 : 0, &t,
            &error));
    g_assert_error (error, HY_ERROR, HY_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "class-thresholds"));
    if (!strstr (error->message, bad[i].says))
      g_error ("'%s': %s", bad[i].text, error->message);
    g_assert_cmpuint (t.n, ==, 0);
    g_clear_error (&error);
  }

  /* as many classes as fit, and one more */
  GString *many = g_string_new (NULL);
  for (int i = 0; i < HYG_CLASS_THRESHOLDS_MAX; i++)
    g_string_append_printf (many, "%s%d=0.5", i ? "," : "", i);
  g_assert_true (hyg_class_thresholds_parse (many->str, NULL, 0, &t,
          &error));
  g_assert_cmpuint (t.n, ==, HYG_CLASS_THRESHOLDS_MAX);
  g_string_append (many, ",9999=0.5");
  g_assert_false (hyg_class_thresholds_parse (many->str, NULL, 0, &t,
          &error));
  g_assert_nonnull (strstr (error->message, "more than 256"));
  g_clear_error (&error);
  g_string_free (many, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/property-parse/size", test_size);
  g_test_add_func ("/property-parse/frame-set", test_frame_set);
  g_test_add_func ("/property-parse/strv-pack", test_strv_pack);
  g_test_add_func ("/property-parse/labels", test_labels);
  g_test_add_func ("/property-parse/class-thresholds",
      test_class_thresholds);
  g_test_add_func ("/property-parse/labels-not-regular",
      test_labels_not_regular);
  g_test_add_func ("/property-parse/labels-not-regular/subprocess",
      test_labels_not_regular_subprocess);
  return g_test_run ();
}
