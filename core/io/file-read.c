/*
 * file-read.c — whole-file reads and maps of user-given paths, refusing
 * what is not a regular file and (reads) what is larger than a limit; and
 * the nesting check JSON readers run before json-glib recurses, and the
 * wording of json-glib's parse errors.
 *
 * g_file_get_contents and g_mapped_file_new trust the path: on a FIFO they
 * block in open() until some writer appears, on /dev/zero a read grows
 * until memory runs out, on a directory the mmap fails with "No such
 * device".  Opening with O_NONBLOCK never waits, and fstat on the open
 * descriptor says what it really is (no window between a stat and the
 * open for the path to change).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hybrid.h"
#include "file-read.h"

static const char *
kind_of (mode_t mode)
{
  if (S_ISDIR (mode))
    return "a directory";
  if (S_ISFIFO (mode))
    return "a FIFO";
  if (S_ISCHR (mode))
    return "a character device";
  if (S_ISBLK (mode))
    return "a block device";
  if (S_ISSOCK (mode))
    return "a socket";
  return "not a regular file";
}

/* Opens `path` for reading without blocking and checks that it is a
 * regular file; *size gets its size.  Returns the descriptor or -1. */
static int
open_regular (const char *path, const char *what, goffset *size,
    GError **error)
{
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int saved = errno;
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot open the %s: %s",
        path, what, g_strerror (saved));
    return -1;
  }
  struct stat st;
  if (fstat (fd, &st) != 0) {
    int saved = errno;
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: %s", path,
        g_strerror (saved));
    close (fd);
    return -1;
  }
  if (!S_ISREG (st.st_mode)) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO,
        "%s is %s: a %s must be a regular file", path, kind_of (st.st_mode),
        what);
    close (fd);
    return -1;
  }
  *size = st.st_size;
  return fd;
}

static void
set_too_large (GError **error, const char *path, const char *what,
    guint64 size, gboolean at_least, gsize max_bytes)
{
  g_autofree char *limit = g_format_size_full (max_bytes,
      G_FORMAT_SIZE_IEC_UNITS);
  g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
      "%s: %s%" G_GUINT64_FORMAT " bytes is too large for a %s (the limit "
      "is %s, %" G_GSIZE_FORMAT " bytes)", path, at_least ? "at least " : "",
      size, what, limit, max_bytes);
}

gboolean
hy_file_read_bounded (const char *path, const char *what, gsize max_bytes,
    char **contents, gsize *length, GError **error)
{
  g_return_val_if_fail (path && what && contents, FALSE);
  g_return_val_if_fail (max_bytes <= G_MAXSIZE / 2, FALSE);
  *contents = NULL;
  if (length)
    *length = 0;
  goffset size;
  int fd = open_regular (path, what, &size, error);
  if (fd < 0)
    return FALSE;
  if ((guint64) size > (guint64) max_bytes) {
    set_too_large (error, path, what, (guint64) size, FALSE, max_bytes);
    close (fd);
    return FALSE;
  }
  /* st_size is a hint, not a promise (the file may grow while it is read,
   * /proc files say 0): read to the end, but never past the limit. */
  gsize cap = (gsize) size + 1, len = 0;
  char *buf = g_malloc (cap + 1);
  for (;;) {
    if (len == cap) {
      if (len > max_bytes) {
        set_too_large (error, path, what, len, TRUE, max_bytes);
        goto fail;
      }
      cap = cap > (max_bytes + 1) / 2 ? max_bytes + 1 : cap * 2;
      buf = g_realloc (buf, cap + 1);
    }
    ssize_t n = read (fd, buf + len, cap - len);
    if (n < 0) {
      int saved = errno;
      if (saved == EINTR)
        continue;
      g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot read the %s: %s",
          path, what, g_strerror (saved));
      goto fail;
    }
    if (n == 0)
      break;
    len += (gsize) n;
  }
  if (len > max_bytes) {
    set_too_large (error, path, what, len, TRUE, max_bytes);
    goto fail;
  }
  close (fd);
  buf[len] = '\0';
  *contents = buf;
  if (length)
    *length = len;
  return TRUE;

fail:
  close (fd);
  g_free (buf);
  return FALSE;
}

GMappedFile *
hy_file_map_regular (const char *path, const char *what, GError **error)
{
  goffset size;
  int fd = open_regular (path, what, &size, error);
  if (fd < 0)
    return NULL;
  GError *local = NULL;
  /* The mapping outlives the descriptor. */
  GMappedFile *file = g_mapped_file_new_from_fd (fd, FALSE, &local);
  close (fd);
  if (!file) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO,
        "%s: cannot map the %s (%" G_GINT64_FORMAT " bytes) into memory: %s",
        path, what, (gint64) size, local->message);
    g_error_free (local);
  }
  return file;
}

gboolean
hy_json_check_nesting (const char *json, gsize length, int max_depth,
    const char *source, const char *note, GError **error)
{
  int depth = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < length; i++) {
    char c = json[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = FALSE;
    } else if (c == '"') {
      in_string = TRUE;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        g_set_error (error, HY_ERROR, HY_ERROR_FORMAT,
            "%s: JSON nested more than %d levels deep at byte %"
            G_GSIZE_FORMAT "%s%s%s", source, max_depth, i,
            note ? " (" : "", note ? note : "", note ? ")" : "");
        return FALSE;
      }
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
  return TRUE;
}

void
hy_json_set_parse_error (GError **error, const char *source,
    const GError *json_error)
{
  /* json-glib says "<data>:LINE:COL: Parse error: …". */
  unsigned line, column;
  int skip = 0;
  const char *detail = json_error->message;
  if (sscanf (detail, "<data>:%u:%u: %n", &line, &column, &skip) == 2
      && skip > 0) {
    detail += skip;
    if (g_str_has_prefix (detail, "Parse error: "))
      detail += strlen ("Parse error: ");
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT, "%s: not valid JSON at "
        "line %u, column %u: %s", source, line, column, detail);
  } else {
    g_set_error (error, HY_ERROR, HY_ERROR_FORMAT, "%s: not valid JSON: %s",
        source, detail);
  }
}
