/*
 * file-read.h — opening the files a user names, safely.
 *
 * A path given as model=, params=, labels= or --input can name anything: a
 * directory, a FIFO (open() blocks until a writer comes), /dev/zero (reads
 * never end).  These helpers open without blocking, look at what the path
 * is, and refuse everything but a regular file with a message naming the
 * path and what it is.  Whole-file reads are bounded too: see
 * hy_file_read_bounded in hybrid.h.
 */
#ifndef HY_FILE_READ_H
#define HY_FILE_READ_H

#include <glib.h>

/* A regular file open for reads at offsets into memory the caller owns.
 * It is never mapped: another process may cut or rewrite it while it is
 * read (`cp` over a model), which a mapping answers with SIGBUS.  A read
 * that finds the file shorter than it was at open fails, and
 * hy_file_check_unchanged, called once everything is read, fails when its
 * size, mtime or ctime moved since the open; both errors (HY_ERROR_IO)
 * name the path and say that the file changed while it was read. */
typedef struct hy_file hy_file;

/* Opens a regular file without blocking; `what` names it in messages
 * ("params file").  Anything else is refused as hy_file_read_bounded
 * refuses it, and so is a file too large to address. */
hy_file *hy_file_open (const char *path, const char *what, GError **error);
/* The size at open: what reads may ask for. */
gsize hy_file_size (const hy_file *file);
const char *hy_file_path (const hy_file *file);
/* Reads exactly `length` bytes at `offset` into `buf`. */
gboolean hy_file_read_at (hy_file *file, void *buf, gsize length,
    guint64 offset, GError **error);
gboolean hy_file_check_unchanged (hy_file *file, GError **error);
/* Ends the parse of a file: takes `read_error` (the parse's error, NULL if
 * it succeeded) and returns TRUE only if there was none and the file is
 * unchanged.  A change replaces a format error, which it may well have
 * caused (a rewritten file parses into garbage), with one saying that the
 * file changed; a failed read (HY_ERROR_IO) is kept, as it says why. */
gboolean hy_file_end_read (hy_file *file, GError *read_error,
    GError **error);
void hy_file_close (hy_file *file);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (hy_file, hy_file_close)

/* Tests only: called before each hy_file_read_at with the range it is
 * about to read, so that a test can change the file at an exact point.
 * Set it while no file is being read; NULL removes it. */
typedef void (*hy_file_read_hook) (const char *path, guint64 offset,
    gsize length, gpointer user_data);
void hy_file_set_read_hook (hy_file_read_hook hook, gpointer user_data);

#endif
