/* Output files: atomic replace of regular files, in-place writes of the rest, whole-row appends. */
#include "config.h"

#include "writer.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int gdr_out_fd(const char *path)
{
	static const char *const prefixes[] = { "/dev/fd/", "/proc/self/fd/" };
	char *end;
	long n;

	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	for (size_t i = 0; i < GDR_ARRAY_SIZE(prefixes); i++) {
		size_t l = strlen(prefixes[i]);

		if (strncmp(path, prefixes[i], l) || path[l] < '0' || path[l] > '9')
			continue;
		errno = 0;
		n = strtol(path + l, &end, 10);
		if (!*end && !errno && n <= INT_MAX)
			return (int)n;
	}
	return -1;
}

/* why = the formatted message, ": ", the errno text; returns -err. */
static int fail(char *why, size_t wlen, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *why, size_t wlen, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(why, wlen, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < wlen)
		snprintf(why + n, wlen - (size_t)n, ": %s", strerror(err));
	return -err;
}

/* One write(2): a row must land whole or not at all. A short write reads as a full disk. */
static int write_once(int fd, const char *buf, size_t len)
{
	ssize_t n;

	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -ENOSPC;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Before writing to stdout or stderr directly: what stdio holds goes first. */
static void flush_stdio(int fd)
{
	if (fd == 1)
		fflush(stdout);
	else if (fd == 2)
		fflush(stderr);
}

static int fd_writable(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	return (fl & O_ACCMODE) == O_RDONLY ? -EBADF : 0;
}

/* Directory part of path into dir ("." for a bare name, "/" for "/x"). */
static void dir_of(const char *path, char *dir, size_t len)
{
	char *slash;

	gdr_strlcpy(dir, path, len);
	slash = strrchr(dir, '/');
	if (!slash)
		gdr_strlcpy(dir, ".", len);
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
}

/* A new file will be created in path's directory: it must exist and take it. */
static int dir_check(const char *path, char *why, size_t wlen)
{
	char dir[4096];
	struct stat st;

	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &st))
		return fail(why, wlen, errno, "%s: directory %s", path, dir);
	if (!S_ISDIR(st.st_mode))
		return fail(why, wlen, ENOTDIR, "%s: %s", path, dir);
	if (access(dir, W_OK | X_OK))
		return fail(why, wlen, errno, "%s: directory %s is not writable", path, dir);
	return 0;
}

/*
 * What writing path means, found without opening it: *fd >= 0 one of our
 * descriptors; *regular = 1 replace the regular file real (a symlink
 * resolved), or create real when *exists is 0; *regular = 0 write in place.
 */
struct target {
	int fd;
	int regular;
	int exists;
	struct stat st;
	char real[PATH_MAX];
};

static int resolve(const char *path, struct target *t, char *why, size_t wlen)
{
	memset(t, 0, sizeof(*t));
	t->fd = gdr_out_fd(path);
	if (t->fd >= 0) {
		int r = fd_writable(t->fd);

		if (r)
			return fail(why, wlen, -r, "%s: descriptor not open for writing", path);
		return 0;
	}
	if (!*path)
		return fail(why, wlen, ENOENT, "(empty file name)");
	if (stat(path, &t->st) == 0) {
		t->exists = 1;
		if (S_ISDIR(t->st.st_mode))
			return fail(why, wlen, EISDIR, "%s", path);
		if (!S_ISREG(t->st.st_mode)) {
			if (access(path, W_OK))
				return fail(why, wlen, errno, "%s", path);
			return 0;
		}
		t->regular = 1;
		if (!realpath(path, t->real))
			return fail(why, wlen, errno, "%s: realpath", path);
		return dir_check(t->real, why, wlen);
	}
	if (errno != ENOENT)
		return fail(why, wlen, errno, "%s", path);
	if (lstat(path, &t->st) == 0 && S_ISLNK(t->st.st_mode))
		return fail(why, wlen, ENOENT,
			    "%s: a symbolic link to a file that does not exist "
			    "(not followed; remove the link or name the file itself)",
			    path);
	t->regular = 1;
	if (strlen(path) >= sizeof(t->real))
		return fail(why, wlen, ENAMETOOLONG, "%.64s...", path);
	gdr_strlcpy(t->real, path, sizeof(t->real));
	return dir_check(path, why, wlen);
}

int gdr_out_check(const char *path, char *why, size_t wlen)
{
	struct target t;

	return resolve(path, &t, why, wlen);
}

/* The mode a new file gets from open(..., 0666): umask applied, read without changing it. */
static mode_t new_file_mode(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned int mask = 022;
	char line[128];

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Umask: %o", &mask) == 1)
				break;
		fclose(f);
	}
	return 0666 & ~(mode_t)mask;
}

static int write_in_place(const char *path, const void *data, size_t len, char *why, size_t wlen)
{
	struct stat st;
	int fd, r;

	/* No O_CREAT, no O_TRUNC: this is a device or a FIFO, never a file to create. */
	fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail(why, wlen, errno, "%s: open", path);
	if (fstat(fd, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		close(fd);
		return fail(why, wlen, EAGAIN, "%s: changed into a regular file while being opened",
			    path);
	}
	r = write_all(fd, data, len);
	if (close(fd) && !r && errno != EINTR)
		r = -errno;
	if (r)
		return fail(why, wlen, -r, "%s: write", path);
	return 0;
}

static int fsync_dir(const char *file, char *why, size_t wlen)
{
	char dir[PATH_MAX];
	int fd, r = 0;

	dir_of(file, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* the rename is done; only its durability is unconfirmed */
	if (fsync(fd) && errno != EINVAL && errno != EROFS)
		r = fail(why, wlen, errno, "%s: fsync of directory %s after the rename", file, dir);
	close(fd);
	return r;
}

int gdr_out_replace_mem(const char *path, FILE *mem, char **buf, size_t *len, char *why,
			size_t wlen)
{
	int r;

	if (!mem || fclose(mem)) {
		snprintf(why, wlen, "%s: %s", path, strerror(ENOMEM));
		r = -ENOMEM;
	} else {
		r = gdr_out_replace(path, *buf, *len, why, wlen);
	}
	free(*buf);
	*buf = NULL;
	return r;
}

int gdr_out_replace(const char *path, const void *data, size_t len, char *why, size_t wlen)
{
	char tmp[PATH_MAX + 16], base[256];
	struct target t;
	struct stat now;
	const char *b;
	mode_t mode;
	size_t n;
	int fd, r;

	r = resolve(path, &t, why, wlen);
	if (r)
		return r;
	if (t.fd >= 0) {
		flush_stdio(t.fd);
		r = write_all(t.fd, data, len);
		return r ? fail(why, wlen, -r, "%s: write", path) : 0;
	}
	if (!t.regular)
		return write_in_place(path, data, len, why, wlen);

	/* ".NAME.XXXXXX" beside the file: the same file system, so rename is atomic. */
	dir_of(t.real, tmp, sizeof(tmp) - 16);
	b = strrchr(t.real, '/');
	b = b ? b + 1 : t.real;
	gdr_strlcpy(base, b, 200); /* NAME_MAX leaves room for the dot and the suffix */
	n = strlen(tmp);
	if ((size_t)snprintf(tmp + n, sizeof(tmp) - n, "/.%s.XXXXXX", base) >= sizeof(tmp) - n)
		return fail(why, wlen, ENAMETOOLONG, "%.64s...", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return fail(why, wlen, errno, "%s: cannot create a temporary file beside it (%s)",
			    path, tmp);
	r = write_all(fd, data, len);
	if (r) {
		fail(why, wlen, -r, "%s: write (to %s)", path, tmp);
		goto out_unlink;
	}
	/* mkstemp makes 0600: give the file the mode (and owner, as root) it had or would get. */
	mode = t.exists ? t.st.st_mode & 07777 : new_file_mode();
	if (fchmod(fd, mode)) {
		r = fail(why, wlen, errno, "%s: fchmod (%s)", path, tmp);
		goto out_unlink;
	}
	if (t.exists && geteuid() == 0 && (t.st.st_uid != 0 || t.st.st_gid != 0))
		(void)!fchown(fd, t.st.st_uid, t.st.st_gid);
	/* rename(2) must not publish a file whose data is still only in the page cache. */
	if (fsync(fd)) {
		r = fail(why, wlen, errno, "%s: fsync (%s)", path, tmp);
		goto out_unlink;
	}
	if (close(fd)) {
		fd = -1;
		r = fail(why, wlen, errno, "%s: close (%s)", path, tmp);
		goto out_unlink;
	}
	fd = -1;
	/* Whatever appeared at the name meanwhile, only a regular file is ever renamed over. */
	if (lstat(t.real, &now) == 0 && !S_ISREG(now.st_mode)) {
		r = fail(why, wlen, EEXIST, "%s: became a non-regular file while being written",
			 path);
		goto out_unlink;
	}
	if (rename(tmp, t.real)) {
		r = fail(why, wlen, errno, "%s: rename from %s", path, tmp);
		goto out_unlink;
	}
	return fsync_dir(t.real, why, wlen);

out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return r;
}

/* Appends */

static int open_append(struct gdr_append *a, int flags, char *why, size_t wlen)
{
	/* O_RDWR: the header check reads; O_APPEND: every row lands at the end even when shared. */
	a->fd = open(a->path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOCTTY | flags, 0666);
	if (a->fd < 0 && (errno == EACCES || errno == EINVAL || errno == ENXIO))
		a->fd = open(a->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | flags, 0666);
	if (a->fd < 0)
		return fail(why, wlen, errno, "%s: cannot open for appending results", a->path);
	a->own = 1;
	return 0;
}

static int room_check(struct gdr_append *a, char *why, size_t wlen)
{
	char dir[4096];
	struct statvfs vfs;
	int r;

	if (!a->need)
		return 0;
	dir_of(a->path, dir, sizeof(dir));
	r = a->own ? fstatvfs(a->fd, &vfs) : statvfs(dir, &vfs);
	/* A full disk fails now, before the run, not row by row after it. */
	if (!r && (unsigned long long)vfs.f_bavail * vfs.f_frsize < a->need) {
		snprintf(why, wlen, "%s: %s (%llu bytes free)", a->path, strerror(ENOSPC),
			 (unsigned long long)vfs.f_bavail * vfs.f_frsize);
		return -ENOSPC;
	}
	return 0;
}

static int verify_locked(struct gdr_append *a, char *why, size_t wlen)
{
	struct stat st;
	int r = 0;

	(void)flock(a->fd, LOCK_EX);
	if (fstat(a->fd, &st))
		r = fail(why, wlen, errno, "%s: fstat", a->path);
	else if (st.st_size > 0 && a->verify)
		r = a->verify(a->fd, st.st_size, a->path, why, wlen);
	(void)flock(a->fd, LOCK_UN);
	return r;
}

int gdr_append_open(struct gdr_append *a, const char *path, size_t need,
		    gdr_append_verify_fn verify, char *why, size_t wlen)
{
	struct target t;
	int r;

	memset(a, 0, sizeof(*a));
	a->need = need;
	a->verify = verify;
	if (strlen(path) >= sizeof(a->path))
		return fail(why, wlen, ENAMETOOLONG, "%.64s...", path);
	gdr_strlcpy(a->path, path, sizeof(a->path));
	r = resolve(path, &t, why, wlen);
	if (r)
		return r;
	if (t.fd >= 0) {
		a->fd = t.fd;
		a->alias = 1;
		return 0;
	}
	if (!t.regular)
		return 0; /* a FIFO or device: opened at the first row */
	a->regular = 1;
	if (!t.exists)
		return room_check(a, why, wlen);
	r = open_append(a, 0, why, wlen);
	if (!r)
		r = room_check(a, why, wlen);
	if (!r)
		r = verify_locked(a, why, wlen);
	if (r)
		gdr_append_close(a);
	return r;
}

/* The first row of a file that did not exist at open, or of a FIFO or device. */
static int open_late(struct gdr_append *a, char *why, size_t wlen)
{
	struct stat st;
	int r;

	/* O_NOFOLLOW: a link planted at the name since open is refused, not followed. */
	r = open_append(a, a->regular ? O_CREAT | O_NOFOLLOW : 0, why, wlen);
	if (r)
		return r;
	if (fstat(a->fd, &st)) {
		r = fail(why, wlen, errno, "%s: fstat", a->path);
		gdr_append_close(a);
		return r;
	}
	a->regular = S_ISREG(st.st_mode);
	return 0;
}

/* A newline when nl, head, then row[0..len): one buffer for one write(2). */
static char *join(int nl, const char *head, const char *row, size_t len, size_t *total)
{
	size_t n = (size_t)(nl != 0) + strlen(head) + len;
	char *buf = malloc(n + 1);

	if (buf)
		snprintf(buf, n + 1, "%s%s%.*s", nl ? "\n" : "", head, (int)len, row);
	*total = n;
	return buf;
}

static int append_regular(struct gdr_append *a, const char *head, const char *row, size_t len,
			  char *why, size_t wlen)
{
	struct stat st;
	char *buf = NULL, last;
	const char *out = row;
	size_t olen = len;
	int r;

	/* Two runs sharing one file must not both see it empty and both write the header. */
	(void)flock(a->fd, LOCK_EX);
	if (fstat(a->fd, &st)) {
		r = fail(why, wlen, errno, "%s: fstat", a->path);
		goto out_unlock;
	}
	if (st.st_size == 0 || !a->started) {
		int nl = 0;

		if (st.st_size > 0) {
			/* Another run may have created the file since open: it must be ours too. */
			if (a->verify) {
				r = a->verify(a->fd, st.st_size, a->path, why, wlen);
				if (r)
					goto out_unlock;
			}
			if (pread(a->fd, &last, 1, st.st_size - 1) != 1) {
				r = fail(why, wlen, errno ? errno : EIO,
					 "%s: cannot read the last byte", a->path);
				goto out_unlock;
			}
			if (last != '\n') {
				gdr_warn("%s: last line has no newline (a row cut short by a crash "
					 "or a full disk); it is left as it is and new rows start "
					 "on a new line",
					 a->path);
				nl = 1;
			}
		}
		buf = join(nl, st.st_size > 0 ? "" : head, row, len, &olen);
		if (!buf) {
			r = fail(why, wlen, ENOMEM, "%s", a->path);
			goto out_unlock;
		}
		out = buf;
	}
	r = write_once(a->fd, out, olen);
	/* A short write (disk full) leaves part of a row: cut it off again. */
	if (r && ftruncate(a->fd, st.st_size) == 0)
		fail(why, wlen, -r, "%s: write (the part written is cut off again)", a->path);
	else if (r)
		fail(why, wlen, -r, "%s: write (and the part written could not be cut off)",
		     a->path);
	else
		a->started = 1;
out_unlock:
	(void)flock(a->fd, LOCK_UN);
	free(buf);
	return r;
}

int gdr_append_row(struct gdr_append *a, const char *head, const char *row, size_t len, char *why,
		   size_t wlen)
{
	size_t total;
	char *buf;
	int r;

	if (!a->own && !a->alias) {
		r = open_late(a, why, wlen);
		if (r)
			return r;
	}
	if (a->regular)
		return append_regular(a, head, row, len, why, wlen);
	/* A stream is fresh every run: the header goes with its first row. */
	buf = join(0, a->started ? "" : head, row, len, &total);
	if (!buf)
		return fail(why, wlen, ENOMEM, "%s", a->path);
	if (a->alias)
		flush_stdio(a->fd);
	r = write_once(a->fd, buf, total);
	free(buf);
	if (r)
		return fail(why, wlen, -r, "%s: write", a->path);
	a->started = 1;
	return 0;
}

void gdr_append_close(struct gdr_append *a)
{
	if (a->own)
		close(a->fd);
	a->own = 0;
	a->alias = 0;
	a->fd = -1;
}

void gdr_out_signals(void)
{
	signal(SIGXFSZ, SIG_IGN);
}
