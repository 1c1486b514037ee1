/* Bounded reads of regular files only (see input.h). */
#include "config.h"

#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static int regular_or_why(mode_t m)
{
	if (S_ISREG(m))
		return 0;
	return S_ISDIR(m) ? -EISDIR : -EINVAL;
}

int gdr_input_check(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return regular_or_why(st.st_mode);
}

int gdr_input_open(const char *path, int *fd)
{
	struct stat st;
	int r, f;

	*fd = -1;
	/* stat first: opening a device node can have effects of its own (a tape rewinds). */
	if (stat(path, &st) < 0)
		return -errno;
	r = regular_or_why(st.st_mode);
	if (r)
		return r;
	/* O_NONBLOCK: should the path become a FIFO after the stat, open does not wait. */
	f = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (f < 0)
		return -errno;
	if (fstat(f, &st) < 0 || (r = regular_or_why(st.st_mode))) {
		r = r ? r : -errno;
		close(f);
		return r;
	}
	*fd = f;
	return 0;
}

const char *gdr_input_strerror(const char *path, int err, char *buf, size_t len)
{
	struct stat st;
	const char *what = "not a regular file";

	if (err == -EFBIG) {
		snprintf(buf, len, "larger than %u MiB: not an input this tool reads",
			 GDR_INPUT_XML_MAX >> 20);
		return buf;
	}
	if (err != -EINVAL && err != -EISDIR) {
		snprintf(buf, len, "%s", strerror(-err));
		return buf;
	}
	if (stat(path, &st) == 0) {
		if (S_ISFIFO(st.st_mode))
			what = "a FIFO";
		else if (S_ISDIR(st.st_mode))
			what = "a directory";
		else if (S_ISCHR(st.st_mode))
			what = "a character device";
		else if (S_ISBLK(st.st_mode))
			what = "a block device";
		else if (S_ISSOCK(st.st_mode))
			what = "a socket";
	}
	if (strcmp(what, "not a regular file"))
		snprintf(buf, len, "is %s, not a regular file", what);
	else
		snprintf(buf, len, "not a regular file");
	return buf;
}

static ssize_t read_fd(int fd, char *buf, size_t want)
{
	size_t total = 0;

	while (total < want) {
		ssize_t n = read(fd, buf + total, want - total);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		total += (size_t)n;
	}
	return (ssize_t)total;
}

ssize_t gdr_input_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, r;

	if (len == 0)
		return -EINVAL;
	r = gdr_input_open(path, &fd);
	if (r)
		return r;
	n = read_fd(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

int gdr_input_read_all(const char *path, size_t max, char **out, size_t *outlen)
{
	size_t cap = 64 * 1024, len = 0;
	char *buf = NULL, *nb;
	ssize_t n;
	int fd, r;

	*out = NULL;
	*outlen = 0;
	r = gdr_input_open(path, &fd);
	if (r)
		return r;
	/* Grow as the file is read, not from st_size: /proc files say 0, and files change. */
	if (cap > max + 1)
		cap = max + 1;
	buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (len == cap) {
			cap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				r = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		n = read_fd(fd, buf + len, cap - len);
		if (n < 0) {
			r = (int)n;
			goto fail;
		}
		len += (size_t)n;
		if (len > max) {
			r = -EFBIG;
			goto fail;
		}
		if (len < cap)
			break;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;

fail:
	close(fd);
	free(buf);
	return r;
}
