/*
 * Every file a tool reads that it did not create: an hwloc XML export, files
 * below --root (/proc, /sys, /boot). Only regular files are read, so that a
 * FIFO, a directory or a device given by mistake (or on purpose) is refused
 * at once instead of blocking forever or reading without end; what is read
 * is bounded.
 */
#ifndef GDR_INPUT_H
#define GDR_INPUT_H

#include <stddef.h>
#include <sys/types.h>

/* Largest hwloc XML export read: about 50 times a large server's. */
#define GDR_INPUT_XML_MAX (64u << 20)

/*
 * Open path for reading. 0 with *fd set, or -errno: -EISDIR for a
 * directory, -EINVAL for anything else that is not a regular file (FIFO,
 * socket, character or block device). Never blocks on a FIFO.
 */
int gdr_input_open(const char *path, int *fd);

/* 0 when path is a regular file (stat, no open), else as gdr_input_open. */
int gdr_input_check(const char *path);

/*
 * Why gdr_input_open or gdr_input_read_all failed, for a message:
 * "is a FIFO, not a regular file", "larger than 64 MiB", or the errno text.
 * path is looked at again (lstat) to name what it is.
 */
const char *gdr_input_strerror(const char *path, int err, char *buf, size_t len);

/* Read up to len - 1 bytes of path into buf, NUL terminated. Bytes read or -errno. */
ssize_t gdr_input_read(const char *path, char *buf, size_t len);

/*
 * Read the whole of path (at most max bytes, else -EFBIG) into a malloc'd,
 * NUL-terminated buffer. 0 with *out and *outlen set, or -errno.
 */
int gdr_input_read_all(const char *path, size_t max, char **out, size_t *outlen);

#endif
