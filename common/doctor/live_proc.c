/*
 * One process as /proc shows it (below --root):
 *   status   Name, Tgid, VmPin ("%8lu kB": mm->pinned_vm, which ib_umem_get
 *            charges for every MR on host memory, and MLNX_OFED's for a
 *            peer-memory MR, but not ib_umem_dmabuf_get for a dma-buf MR)
 *   cmdline  argv, NUL-separated
 *   environ  NUL-separated; only NCCL_* is kept (ptrace access needed)
 *   maps     libcuda.so* (a GPU process), libnccl.so* (whose file holds
 *            "NCCL version X.Y.Z+cudaA.B", read through /proc/PID/root)
 *   fd       links; a dma-buf is "/dmabuf:NAME" (anon_inode:dmabuf on old
 *            kernels), and fdinfo/FD then has size, ino and exp_name; in a
 *            copied tree (no links), a file whose fdinfo has exp_name
 */
#include "config.h"

#include "input.h"
#include "live.h"
#include "text.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest libnccl read for its version string (a CUDA 12 one is ~200-400 MiB). */
#define NCCL_LIB_MAX (2ull << 30)

int gdr_live_status_field(const char *status, const char *name, char *val, size_t vlen)
{
	size_t n = strlen(name);

	for (const char *s = status; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
		if (!strncmp(s, name, n) && s[n] == ':') {
			const char *v = s + n + 1, *e;

			while (*v == '\t' || *v == ' ')
				v++;
			e = strchr(v, '\n');
			snprintf(val, vlen, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
			return 0;
		}
	}
	return -ENOENT;
}

int gdr_live_tgid(const char *root, int tid, int *tgid)
{
	char rel[64], status[4096], v[32];
	ssize_t n;

	snprintf(rel, sizeof(rel), "/proc/%d/status", tid);
	n = gdr_read_rooted(root, rel, status, sizeof(status));
	if (n < 0)
		return (int)n;
	if (gdr_live_status_field(status, "Tgid", v, sizeof(v)) || !isdigit((unsigned char)v[0]))
		return -EINVAL;
	*tgid = atoi(v);
	return 0;
}

int gdr_live_nccl_version(const char *buf, size_t len, char *ver, size_t vlen)
{
	static const char word[] = "NCCL version ";
	const char *p = buf, *end = buf + len;

	while ((p = memmem(p, (size_t)(end - p), word, sizeof(word) - 1))) {
		const char *v = p + sizeof(word) - 1, *e = v;

		/* X.Y.Z, a suffix, "+cudaA.B": printable, up to the NUL that ends the string. */
		while (e < end && e - v < 48 && isgraph((unsigned char)*e))
			e++;
		if (e > v && isdigit((unsigned char)*v) && memchr(v, '.', (size_t)(e - v))) {
			snprintf(ver, vlen, "%.*s", (int)(e - v), v);
			return 0;
		}
		p = v;
	}
	return -ENOENT;
}

/* A file's whole content joined: NULs to sep; at most len - 1 bytes, safe to print. */
static int read_joined(const char *root, int pid, const char *file, char sep, char *out, size_t len)
{
	char rel[64], raw[4096];
	ssize_t n;

	snprintf(rel, sizeof(rel), "/proc/%d/%s", pid, file);
	n = gdr_read_rooted(root, rel, raw, sizeof(raw));
	if (n < 0)
		return (int)n;
	while (n > 0 && raw[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (raw[i] == '\0')
			raw[i] = sep;
	raw[n] = '\0';
	gdr_text_safe(raw, out, len);
	return 0;
}

/* NCCL_* of the environment, space-separated. */
static int nccl_env(const char *root, int pid, char *out, size_t len)
{
	char rel[64], path[PATH_MAX], *env;
	size_t n, o = 0;
	int r;

	out[0] = '\0';
	snprintf(rel, sizeof(rel), "/proc/%d/environ", pid);
	r = gdr_input_read_all(gdr_rooted_path(root, rel, path, sizeof(path)), 1u << 20, &env, &n);
	if (r)
		return r;
	for (size_t i = 0; i < n; i += strlen(env + i) + 1) {
		char safe[512];

		if (strncmp(env + i, "NCCL_", 5))
			continue;
		gdr_text_safe(env + i, safe, sizeof(safe));
		if (o + strlen(safe) + 2 > len)
			break;
		o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " " : "", safe);
	}
	free(env);
	return 0;
}

/* The version string inside the library at path (as the process sees it: /proc/PID/root). */
static int nccl_lib_version(const char *root, int pid, const char *path, char *ver, size_t vlen)
{
	char rel[PATH_MAX], full[PATH_MAX];
	struct stat st;
	void *m;
	int fd, r;

	snprintf(rel, sizeof(rel), "/proc/%d/root%s", pid, path);
	r = gdr_input_open(gdr_rooted_path(root, rel, full, sizeof(full)), &fd);
	if (r)
		return r;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > NCCL_LIB_MAX) {
		close(fd);
		return -EFBIG;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	r = gdr_live_nccl_version(m, (size_t)st.st_size, ver, vlen);
	munmap(m, (size_t)st.st_size);
	return r;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* libnccl.so, libnccl.so.2, libnccl.so.2.27.3: NCCL itself, not its plugins (libnccl-net.so). */
static int is_nccl(const char *base)
{
	return !strncmp(base, "libnccl.so", 10) && (base[10] == '\0' || base[10] == '.');
}

static void read_maps(const char *root, struct gdr_live_proc *p)
{
	char rel[64], path[PATH_MAX], *maps;
	size_t n;
	int r;

	snprintf(rel, sizeof(rel), "/proc/%d/maps", p->pid);
	r = gdr_input_read_all(gdr_rooted_path(root, rel, path, sizeof(path)), 64u << 20, &maps,
			       &n);
	if (r) {
		p->maps_err = r;
		return;
	}
	for (char *line = maps; line && *line;) {
		char *nl = strchr(line, '\n'), *file;
		int fields = 0;

		if (nl)
			*nl = '\0';
		/* address perms offset dev inode path */
		file = line;
		while (*file && fields < 5) {
			while (*file && *file != ' ')
				file++;
			while (*file == ' ')
				file++;
			fields++;
		}
		if (*file == '/') {
			const char *b = base_name(file);

			if (!strncmp(b, "libcuda.so", 10))
				p->cuda = 1;
			if (is_nccl(b) && !p->nccl_lib[0])
				gdr_strlcpy(p->nccl_lib, file, sizeof(p->nccl_lib));
		}
		line = nl ? nl + 1 : NULL;
	}
	free(maps);
	if (p->nccl_lib[0])
		p->nccl_err = nccl_lib_version(root, p->pid, p->nccl_lib, p->nccl_version,
					       sizeof(p->nccl_version));
}

static int cmp_fd(const void *a, const void *b)
{
	return ((const struct gdr_live_proc_fd *)a)->fd - ((const struct gdr_live_proc_fd *)b)->fd;
}

/* A dma-buf fd's fdinfo: size, ino, exp_name (dma_buf_show_fdinfo). */
static void read_fdinfo(const char *root, int pid, struct gdr_live_proc_fd *f)
{
	char rel[96], info[2048], v[64];

	snprintf(rel, sizeof(rel), "/proc/%d/fdinfo/%d", pid, f->fd);
	if (gdr_read_rooted(root, rel, info, sizeof(info)) < 0)
		return;
	if (!gdr_live_status_field(info, "size", v, sizeof(v)))
		f->size = strtoull(v, NULL, 10);
	if (!gdr_live_status_field(info, "ino", v, sizeof(v)))
		f->ino = strtoul(v, NULL, 10);
	if (gdr_live_status_field(info, "exp_name", f->exp_name, sizeof(f->exp_name)))
		f->exp_name[0] = '\0';
}

/*
 * The dma-buf fds of process pid: how many (or -errno), each recorded in p
 * (NULL: counted only).
 */
static int scan_fds(const char *root, int pid, struct gdr_live_proc *p)
{
	char rel[64], dir[PATH_MAX];
	struct dirent *de;
	int count = 0;
	DIR *d;

	snprintf(rel, sizeof(rel), "/proc/%d/fd", pid);
	d = opendir(gdr_rooted_path(root, rel, dir, sizeof(dir)));
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char target[256];
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		struct gdr_live_proc_fd f = { .fd = atoi(de->d_name) };

		n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = '\0';
			if (strncmp(target, "/dmabuf:", 8) && strcmp(target, "anon_inode:dmabuf"))
				continue;
			read_fdinfo(root, pid, &f);
		} else if (errno == EINVAL) {
			/* Not a link: a copied tree. Only a dma-buf's fdinfo has exp_name. */
			read_fdinfo(root, pid, &f);
			if (!f.exp_name[0])
				continue;
		} else {
			continue;
		}
		if (p && count < GDR_LIVE_PROC_FDS)
			p->fds[count] = f;
		count++;
	}
	closedir(d);
	if (p)
		qsort(p->fds, (size_t)(count < GDR_LIVE_PROC_FDS ? count : GDR_LIVE_PROC_FDS),
		      sizeof(p->fds[0]), cmp_fd);
	return count;
}

int gdr_live_proc_dmabuf_fds(const char *root, int pid)
{
	return scan_fds(root, pid, NULL);
}

void gdr_live_proc_read(const char *root, int pid, struct gdr_live_proc *p)
{
	char rel[64], status[8192], v[64];
	ssize_t n;

	p->pid = pid;
	p->vmpin_kb = -1;
	snprintf(rel, sizeof(rel), "/proc/%d/status", pid);
	n = gdr_read_rooted(root, rel, status, sizeof(status));
	if (n < 0) {
		p->status_err = (int)n;
		p->maps_err = p->environ_err = p->fd_err = (int)n;
		return;
	}
	if (!gdr_live_status_field(status, "Name", v, sizeof(v)))
		gdr_text_safe(v, p->command, sizeof(p->command));
	if (!gdr_live_status_field(status, "VmPin", v, sizeof(v)) && isdigit((unsigned char)v[0]))
		p->vmpin_kb = strtoll(v, NULL, 10);
	if (read_joined(root, pid, "cmdline", ' ', p->cmdline, sizeof(p->cmdline)))
		p->cmdline[0] = '\0';
	p->environ_err = nccl_env(root, pid, p->nccl_env, sizeof(p->nccl_env));
	read_maps(root, p);
	n = scan_fds(root, pid, p);
	if (n < 0)
		p->fd_err = (int)n;
	else
		p->ndmabuf = (int)n;
}
