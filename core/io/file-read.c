/*
 * file-read.c — whole-file and offset reads of user-given paths, refusing
 * what is not a regular file and (whole reads) what is larger than a limit;
 * and the nesting check JSON readers run before json-glib recurses, and the
 * wording of json-glib's parse errors.
 *
 * g_file_get_contents and g_mapped_file_new trust the path: on a FIFO they
 * block in open() until some writer appears, on /dev/zero a read grows
 * until memory runs out, on a directory the mmap fails with "No such
 * device".  Opening with O_NONBLOCK never waits, and fstat on the open
 * descriptor says what it really is (no window between a stat and the
 * open for the path to change).
 *
 * Nothing is memory-mapped: a mapping of a file that another process cuts
 * (`cp new.params m-0000.params` truncates, then writes) raises SIGBUS on
 * the next touch of a page past the new end.  hy_file reads with pread
 * into memory the caller owns, so a cut shows as a short read, and a
 * rewrite as a size or time that differs from the one at open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hybrid.h"
#include "core/io/file-read.h"

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
 * regular file; *st gets what fstat says of it.  Returns the descriptor or
 * -1. */
static int
open_regular (const char *path, const char *what, struct stat *st,
    GError **error)
{
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int saved = errno;
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot open the %s: %s",
        path, what, g_strerror (saved));
    return -1;
  }
  if (fstat (fd, st) != 0) {
    int saved = errno;
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: %s", path,
        g_strerror (saved));
    close (fd);
    return -1;
  }
  if (!S_ISREG (st->st_mode)) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO,
        "%s is %s: a %s must be a regular file", path, kind_of (st->st_mode),
        what);
    close (fd);
    return -1;
  }
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
  struct stat st;
  int fd = open_regular (path, what, &st, error);
  if (fd < 0)
    return FALSE;
  goffset size = st.st_size;
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

/* ---- reads at offsets, noticing changes ------------------------------- */

struct hy_file {
  int fd;
  char *path;
  char *what;
  struct stat at_open;
};

static hy_file_read_hook read_hook;
static gpointer read_hook_data;

void
hy_file_set_read_hook (hy_file_read_hook hook, gpointer user_data)
{
  read_hook = hook;
  read_hook_data = user_data;
}

hy_file *
hy_file_open (const char *path, const char *what, GError **error)
{
  g_return_val_if_fail (path && what, NULL);
  struct stat st;
  int fd = open_regular (path, what, &st, error);
  if (fd < 0)
    return NULL;
  /* Its bytes are read into memory: their offsets must be addresses. */
  if ((guint64) st.st_size > G_MAXSIZE) {
    set_too_large (error, path, what, (guint64) st.st_size, FALSE,
        G_MAXSIZE);
    close (fd);
    return NULL;
  }
  hy_file *file = g_new0 (hy_file, 1);
  file->fd = fd;
  file->path = g_strdup (path);
  file->what = g_strdup (what);
  file->at_open = st;
  return file;
}

gsize
hy_file_size (const hy_file *file)
{
  return (gsize) file->at_open.st_size;
}

const char *
hy_file_path (const hy_file *file)
{
  return file->path;
}

gboolean
hy_file_read_at (hy_file *file, void *buf, gsize length, guint64 offset,
    GError **error)
{
  if (read_hook)
    read_hook (file->path, offset, length, read_hook_data);
  gsize done = 0;
  while (done < length) {
    ssize_t n = pread (file->fd, (char *) buf + done, length - done,
        (off_t) (offset + done));
    if (n < 0) {
      int saved = errno;
      if (saved == EINTR)
        continue;
      g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: cannot read the %s at "
          "byte %" G_GUINT64_FORMAT ": %s", file->path, file->what,
          offset + done, g_strerror (saved));
      return FALSE;
    }
    if (n == 0) {
      /* The size was checked at open: the file has been cut since, as
       * `cp` does before it writes the new contents. */
      g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: the %s changed while "
          "it was read: %" G_GSIZE_FORMAT " bytes expected at byte %"
          G_GUINT64_FORMAT ", %" G_GSIZE_FORMAT " read", file->path,
          file->what, length, offset, done);
      return FALSE;
    }
    done += (gsize) n;
  }
  return TRUE;
}

static gboolean
same_time (const struct timespec *a, const struct timespec *b)
{
  return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

gboolean
hy_file_check_unchanged (hy_file *file, GError **error)
{
  struct stat now;
  if (fstat (file->fd, &now) != 0) {
    int saved = errno;
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: %s", file->path,
        g_strerror (saved));
    return FALSE;
  }
  const struct stat *then = &file->at_open;
  if (now.st_size != then->st_size) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: the %s changed while it "
        "was read: it was %" G_GINT64_FORMAT " bytes, it is now %"
        G_GINT64_FORMAT, file->path, file->what, (gint64) then->st_size,
        (gint64) now.st_size);
    return FALSE;
  }
  /* Rewritten in place to the same size: every write moves the mtime and
   * the ctime (which, unlike the mtime, no one can set back: `cp -p`
   * restores the mtime).  Since Linux 6.13, ext4, XFS, Btrfs and tmpfs
   * give a write after our fstat a newer time; with coarse timestamps a
   * rewrite within the clock tick of the open goes unseen. */
  if (!same_time (&now.st_mtim, &then->st_mtim)
      || !same_time (&now.st_ctim, &then->st_ctim)) {
    g_set_error (error, HY_ERROR, HY_ERROR_IO, "%s: the %s changed while it "
        "was read (it was modified; its size is still %" G_GINT64_FORMAT
        " bytes)", file->path, file->what, (gint64) now.st_size);
    return FALSE;
  }
  return TRUE;
}

gboolean
hy_file_end_read (hy_file *file, GError *read_error, GError **error)
{
  /* A failed read already says why, a short one that the file changed. */
  if (read_error && g_error_matches (read_error, HY_ERROR, HY_ERROR_IO)) {
    g_propagate_error (error, read_error);
    return FALSE;
  }
  GError *changed = NULL;
  if (!hy_file_check_unchanged (file, &changed)) {
    g_clear_error (&read_error);
    g_propagate_error (error, changed);
    return FALSE;
  }
  if (read_error) {
    g_propagate_error (error, read_error);
    return FALSE;
  }
  return TRUE;
}

void
hy_file_close (hy_file *file)
{
  if (!file)
    return;
  close (file->fd);
  g_free (file->path);
  g_free (file->what);
  g_free (file);
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
