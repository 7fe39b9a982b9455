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

/* Maps a regular file read-only.  `what` names the file in messages ("params
 * file").  A file of 0 bytes maps to length 0. */
GMappedFile *hy_file_map_regular (const char *path, const char *what,
    GError **error);

#endif
