/*
 * gdr_doctor node checks: kernel, CONFIG_DMA_SHARED_BUFFER, NVIDIA driver
 * flavour, peer-memory client, rdma-core / MOFED version, memlock limit.
 * Files come from below doc->root; commands (ofed_info) from PATH.
 */
#include "config.h"

#include "doctor.h"
#include "mem.h"
#include "pcie_cfg.h"
#include "input.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Kernel configs are ~250 KiB; leave room. */
#define KCONFIG_MAX (4u << 20)

int gdr_kernel_version_parse(const char *release, int *major, int *minor)
{
	char *end;
	long ma, mi;

	if (!release || !isdigit((unsigned char)*release))
		return -EINVAL;
	ma = strtol(release, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -EINVAL;
	mi = strtol(end + 1, &end, 10);
	if (ma < 0 || ma > 1000 || mi < 0 || mi > 1000)
		return -EINVAL;
	*major = (int)ma;
	*minor = (int)mi;
	return 0;
}

int gdr_nvidia_version_parse(const char *text, char *version, size_t vlen, int *open_module)
{
	const char *km, *p;
	size_t n = 0;

	/* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build ..."
	 * "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sun Aug 20 ..." */
	if (strncmp(text, "NVRM version:", 13))
		return -EINVAL;
	km = strstr(text, "Kernel Module");
	if (!km)
		return -EINVAL;
	*open_module = strstr(text, "Open Kernel Module") != NULL;
	/* The version is the first token after "Kernel Module" that starts with a digit and has a
	 * dot. */
	for (p = km + 13; *p && *p != '\n'; p++) {
		if (isdigit((unsigned char)*p) && (p[-1] == ' ' || p[-1] == '\t')) {
			n = strspn(p, "0123456789.");
			if (memchr(p, '.', n))
				break;
			n = 0;
		}
	}
	/* The major is 1 to 4 digits (535): more would overflow atoi and be read as another. */
	if (!n || strspn(p, "0123456789") > 4)
		return -EINVAL;
	if (n >= vlen)
		n = vlen - 1;
	memcpy(version, p, n);
	version[n] = '\0';
	return 0;
}

char gdr_kconfig_lookup(const char *text, const char *name)
{
	size_t nl = strlen(name);

	for (const char *line = text; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (!strncmp(line, "CONFIG_", 7) && !strncmp(line + 7, name, nl) &&
		    line[7 + nl] == '=')
			return line[8 + nl] == 'y' ? 'y' : line[8 + nl] == 'm' ? 'm' : 'n';
	}
	return 'n';
}

int gdr_limits_memlock_parse(const char *text, unsigned long long *soft)
{
	const char *line = strstr(text, "Max locked memory");
	const char *p;
	char *end;

	if (!line)
		return -EINVAL;
	p = line + strlen("Max locked memory");
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "unlimited", 9)) {
		*soft = ULLONG_MAX;
		return 0;
	}
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	/* Out of range is no limit the kernel prints, and ULLONG_MAX would read as unlimited. */
	errno = 0;
	*soft = strtoull(p, &end, 10);
	if (errno || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	return 0;
}

static void check_kernel(struct gdr_doctor *doc)
{
	struct gdr_check *c;
	char rel[128];
	ssize_t n = gdr_read_rooted(doc->root, "/proc/sys/kernel/osrelease", rel, sizeof(rel));
	char cause[96];
	int ma, mi;

	if (n < 0) {
		c = gdr_doctor_add(doc, "kernel", GDR_CHECK_NA, 0);
		gdr_check_value(c, "kernel release unknown (/proc/sys/kernel/osrelease: %s)",
				gdr_rooted_strerror(doc->root, "/proc/sys/kernel/osrelease", (int)n,
						    cause, sizeof(cause)));
		return;
	}
	gdr_strlcpy(doc->kernel_release, rel, sizeof(doc->kernel_release));
	if (gdr_kernel_version_parse(rel, &ma, &mi)) {
		c = gdr_doctor_add(doc, "kernel", GDR_CHECK_NA, 0);
		gdr_check_value(c, "%s (version not understood)", rel);
		return;
	}
	if (ma < 5 || (ma == 5 && mi < 12)) {
		c = gdr_doctor_add(doc, "kernel", GDR_CHECK_FAIL, GDR_BLOCK_DMABUF);
		gdr_check_value(c, "%s is older than 5.12 (DMA-BUF needs >= 5.12)", rel);
		gdr_check_fix(c, "boot a kernel >= 5.12 (e.g. the distribution's HWE kernel), "
				 "or use nvidia-peermem");
		gdr_check_brief(c, "kernel %d.%d is older than 5.12 (boot a kernel >= 5.12)", ma,
				mi);
		doc->dmabuf_node_ok = 0;
		return;
	}
	c = gdr_doctor_add(doc, "kernel", GDR_CHECK_PASS, 0);
	gdr_check_value(c, "%s (>= 5.12)", rel);
}

/* Read the kernel config of the running kernel; returns a malloc'ed text and its source. */
static char *read_kconfig(const struct gdr_doctor *doc, char *src, size_t slen)
{
	char path[256], full[4096], cmd[4200];
	char *buf = malloc(KCONFIG_MAX);
	size_t total = 0;
	FILE *p;

	if (!buf)
		return NULL;
	if (doc->kernel_release[0]) {
		snprintf(path, sizeof(path), "/boot/config-%s", doc->kernel_release);
		if (gdr_read_rooted(doc->root, path, buf, KCONFIG_MAX) >= 0) {
			gdr_strlcpy(src, path, slen);
			return buf;
		}
	}
	if (!gdr_exists_rooted(doc->root, "/proc/config.gz"))
		goto out_free;
	/* gzip -dc rather than zlib: no new build dependency, and gzip is on every node. */
	gdr_rooted_path(doc->root, "/proc/config.gz", full, sizeof(full));
	/* gzip would wait forever on a FIFO planted below --root: regular files only. */
	if (gdr_input_check(full))
		goto out_free;
	if (strchr(full, '\''))
		goto out_free;
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s' 2>/dev/null", full);
	/* NOLINTNEXTLINE(cert-env33-c): the path is quoted and may not hold a quote */
	p = popen(cmd, "r");
	if (!p)
		goto out_free;
	while (total < KCONFIG_MAX - 1) {
		size_t n = fread(buf + total, 1, KCONFIG_MAX - 1 - total, p);
		if (n == 0)
			break;
		total += n;
	}
	buf[total] = '\0';
	if (pclose(p) != 0 || total == 0)
		goto out_free;
	gdr_strlcpy(src, "/proc/config.gz", slen);
	return buf;
out_free:
	free(buf);
	return NULL;
}

static void check_kconfig(struct gdr_doctor *doc)
{
	struct gdr_check *c;
	char src[256];
	char *text = read_kconfig(doc, src, sizeof(src));
	char v;

	if (!text) {
		c = gdr_doctor_add(doc, "kconfig", GDR_CHECK_NA, 0);
		gdr_check_value(c,
				"CONFIG_DMA_SHARED_BUFFER unknown (no /boot/config-%s, "
				"no readable /proc/config.gz)",
				doc->kernel_release[0] ? doc->kernel_release : "<release>");
		return;
	}
	v = gdr_kconfig_lookup(text, "DMA_SHARED_BUFFER");
	free(text);
	if (v == 'y') {
		c = gdr_doctor_add(doc, "kconfig", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "CONFIG_DMA_SHARED_BUFFER=y (%s)", src);
		return;
	}
	c = gdr_doctor_add(doc, "kconfig", GDR_CHECK_FAIL, GDR_BLOCK_DMABUF);
	gdr_check_value(c, "CONFIG_DMA_SHARED_BUFFER not set (%s)", src);
	gdr_check_fix(c,
		      "use a kernel built with CONFIG_DMA_SHARED_BUFFER=y, or use nvidia-peermem");
	gdr_check_brief(c, "CONFIG_DMA_SHARED_BUFFER not set (use a kernel built with it)");
	doc->dmabuf_node_ok = 0;
}

static void check_driver(struct gdr_doctor *doc)
{
	struct gdr_check *c;
	char text[1024], ver[64], cause[96];
	char bdf[1][GDR_PCIE_BDF_LEN];
	int open_module = 0, major = 0;
	ssize_t n = gdr_read_rooted(doc->root, "/proc/driver/nvidia/version", text, sizeof(text));

	/* No PCI tree to read (a bare fixture): whether a GPU is there is unknown. */
	doc->nvidia_gpus = gdr_exists_rooted(doc->root, "/sys/bus/pci/devices")
			       ? gdr_pcie_nvidia_gpus(doc->root, bdf, 1)
			       : -1;
	if (n < 0 && doc->nvidia_gpus == 0) {
		c = gdr_doctor_add(doc, "nvidia-driver", GDR_CHECK_FAIL, GDR_BLOCK_BOTH);
		gdr_check_value(c, "no NVIDIA GPU on the PCI bus (/sys/bus/pci/devices), and no "
				   "NVIDIA driver loaded");
		gdr_check_fix(c, "run on a node with an NVIDIA GPU, or pass the GPU into the VM or "
				 "container");
		gdr_check_brief(c, "no NVIDIA GPU");
		c = gdr_doctor_add(doc, "open-kernel-module", GDR_CHECK_NA, 0);
		gdr_check_value(c, "no NVIDIA GPU");
		doc->dmabuf_node_ok = 0;
		return;
	}
	if (n < 0) {
		c = gdr_doctor_add(doc, "nvidia-driver", GDR_CHECK_FAIL, GDR_BLOCK_BOTH);
		gdr_check_value(c, "no NVIDIA driver loaded (/proc/driver/nvidia/version: %s)",
				gdr_rooted_strerror(doc->root, "/proc/driver/nvidia/version",
						    (int)n, cause, sizeof(cause)));
		gdr_check_fix(c, "install and load the NVIDIA GPU driver (modprobe nvidia)");
		gdr_check_brief(c, "no NVIDIA driver loaded (install the driver, modprobe nvidia)");
		c = gdr_doctor_add(doc, "open-kernel-module", GDR_CHECK_NA, 0);
		gdr_check_value(c, "no NVIDIA driver");
		doc->dmabuf_node_ok = 0;
		return;
	}
	if (gdr_nvidia_version_parse(text, ver, sizeof(ver), &open_module)) {
		c = gdr_doctor_add(doc, "nvidia-driver", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "/proc/driver/nvidia/version not understood: %.160s", text);
		c = gdr_doctor_add(doc, "open-kernel-module", GDR_CHECK_NA, 0);
		gdr_check_value(c, "driver flavour unknown");
		return;
	}
	major = atoi(ver);
	gdr_strlcpy(doc->driver_version, ver, sizeof(doc->driver_version));
	doc->open_module = open_module;
	c = gdr_doctor_add(doc, "nvidia-driver", GDR_CHECK_PASS, 0);
	gdr_check_value(c, "%s", ver);
	if (open_module && major >= 515) {
		c = gdr_doctor_add(doc, "open-kernel-module", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "open kernel module (DMA-BUF export possible)");
		return;
	}
	c = gdr_doctor_add(doc, "open-kernel-module", GDR_CHECK_FAIL, GDR_BLOCK_DMABUF);
	if (open_module) {
		gdr_check_value(c, "open kernel module %s is older than 515", ver);
		gdr_check_brief(c, "open module %s is older than 515 (install driver >= 515)", ver);
	} else {
		gdr_check_value(c,
				"proprietary kernel module (DMA-BUF export needs the open module)");
		gdr_check_brief(c,
				"proprietary kernel module %s (install the open GPU kernel "
				"modules)",
				ver);
	}
	/* The package of the running branch when it has open modules (Ubuntu's name). */
	if (major >= 515)
		gdr_check_fix(c,
			      "install the open GPU kernel modules of this branch "
			      "(nvidia-driver-%d-open, GPU Operator driver.kernelModuleType=open)",
			      major);
	else
		gdr_check_fix(c, "install a driver >= 515 with the open GPU kernel modules "
				 "(nvidia-driver-<branch>-open, e.g. 580; GPU Operator "
				 "driver.kernelModuleType=open)");
	doc->dmabuf_node_ok = 0;
}

static void check_peermem(struct gdr_doctor *doc)
{
	struct gdr_check *c;
	char found[128] = "", why[256] = "";
	int rc = gdr_peermem_detect(doc->root, found, sizeof(found), why, sizeof(why));

	if (rc == 1) {
		c = gdr_doctor_add(doc, "peermem", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "%s", found);
		c->proves = GDR_BLOCK_PEERMEM;
		doc->peermem_loaded = 1;
		return;
	}
	if (doc->nvidia_gpus == 0 && !doc->driver_version[0]) {
		c = gdr_doctor_add(doc, "peermem", GDR_CHECK_NA, 0);
		gdr_check_value(c, "no NVIDIA GPU: nothing for nvidia_peermem to serve");
		return;
	}
	/* gdr_doctor_finish makes this info where DMA-BUF works on the GPU side. */
	c = gdr_doctor_add(doc, "peermem", GDR_CHECK_FAIL, GDR_BLOCK_PEERMEM);
	gdr_check_value(c, "%s", why[0] ? why : "no peer-memory client");
	gdr_check_fix(c, "modprobe nvidia_peermem (GPU Operator: driver.rdma.enabled=true); "
			 "not needed when DMA-BUF works");
	gdr_check_brief(c, "nvidia_peermem not loaded (modprobe nvidia_peermem)");
}

/*
 * The host name in ROOT/path: its first line that is not blank or a comment
 * (hostname(5) allows "#" lines), without surrounding blanks. 1 when found.
 */
static int host_from(const char *root, const char *path, char *out, size_t len)
{
	char buf[1024], *line, *save = NULL;

	if (gdr_read_rooted(root, path, buf, sizeof(buf)) <= 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n;

		line += strspn(line, " \t\r");
		n = strlen(line);
		while (n && strchr(" \t\r", line[n - 1]))
			line[--n] = '\0';
		if (n && line[0] != '#') {
			gdr_strlcpy(out, line, len);
			return 1;
		}
	}
	return 0;
}

void gdr_doctor_host(const char *root, char *host, size_t len)
{
	char buf[256];

	host[0] = '\0';
	if (!root || !*root || !strcmp(root, "/")) {
		if (gethostname(buf, sizeof(buf)) == 0) {
			buf[sizeof(buf) - 1] = '\0';
			gdr_strlcpy(host, buf, len);
		}
		return;
	}
	if (!host_from(root, "/proc/sys/kernel/hostname", host, len))
		host_from(root, "/etc/hostname", host, len);
}

static void read_host(struct gdr_doctor *doc)
{
	gdr_doctor_host(doc->root, doc->host, sizeof(doc->host));
}

/*
 * Without the libibverbs.so.1 link (a copy that dereferenced it, a minimal
 * image), the versioned file itself still names the release.
 */
static int versioned_file(const char *root, const char *dir, char *name, size_t len)
{
	char full[4096];
	struct dirent *e;
	DIR *d = opendir(gdr_rooted_path(root, dir, full, sizeof(full)));
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)))
		if (!strncmp(e->d_name, "libibverbs.so.1.", 16) && strlen(e->d_name) > 16) {
			gdr_strlcpy(name, e->d_name, len);
			found = 1;
		}
	closedir(d);
	return found;
}

/* rdma-core's version is the tail of libibverbs' file name: libibverbs.so.1.14.50.0 = v50.0. */
static void check_rdma_core(struct gdr_doctor *doc)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib/aarch64-linux-gnu",
		"/usr/lib/powerpc64le-linux-gnu",
		"/usr/lib64",
		"/usr/lib",
		"/lib64",
	};
	struct gdr_check *c;
	char path[256], full[4096], target[512];

	for (size_t i = 0; i < GDR_ARRAY_SIZE(dirs); i++) {
		const char *base, *p;
		ssize_t n;
		int major;

		snprintf(path, sizeof(path), "%s/libibverbs.so.1", dirs[i]);
		n = readlink(gdr_rooted_path(doc->root, path, full, sizeof(full)), target,
			     sizeof(target) - 1);
		if (n >= 0)
			target[n] = '\0';
		else if (!versioned_file(doc->root, dirs[i], target, sizeof(target)))
			continue;
		base = strrchr(target, '/');
		base = base ? base + 1 : target;
		/* Skip "libibverbs.so.1.14." to the rdma-core major. */
		p = strstr(base, ".so.1.");
		/* The major is 1 to 4 digits: "abc" or an overflowing number is no version. */
		if (!p || !(p = strchr(p + 6, '.')) || !isdigit((unsigned char)p[1]) ||
		    strspn(p + 1, "0123456789") > 4) {
			c = gdr_doctor_add(doc, "rdma-core", GDR_CHECK_NA, 0);
			gdr_check_value(c, "%s -> %s (version not understood)", path, base);
			return;
		}
		major = atoi(p + 1);
		if (major > 0 && major < 34) {
			c = gdr_doctor_add(doc, "rdma-core", GDR_CHECK_FAIL, GDR_BLOCK_DMABUF);
			c->side = GDR_SIDE_NIC;
			gdr_check_value(c, "%s (rdma-core %s: ibv_reg_dmabuf_mr needs >= 34)", base,
					p + 1);
			gdr_check_fix(c, "install rdma-core >= 34 (or MLNX_OFED >= 5.5)");
			gdr_check_brief(c, "rdma-core %s has no ibv_reg_dmabuf_mr (install >= 34)",
					p + 1);
			return;
		}
		c = gdr_doctor_add(doc, "rdma-core", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "%s (rdma-core %s)", base, p + 1);
		return;
	}
	c = gdr_doctor_add(doc, "rdma-core", GDR_CHECK_NA, 0);
	gdr_check_value(c, "libibverbs.so.1 not found in the usual library directories");
}

static int find_on_path(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	const char *p = path;

	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t dl = colon ? (size_t)(colon - p) : strlen(p);

		if (dl > 0 && (size_t)snprintf(out, len, "%.*s/%s", (int)dl, p, cmd) < len &&
		    access(out, X_OK) == 0)
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return -ENOENT;
}

static void check_mofed(struct gdr_doctor *doc)
{
	struct gdr_check *c;
	char exe[1024], cmd[1100], line[256] = "";
	FILE *p;
	int rc;

	if (find_on_path("ofed_info", exe, sizeof(exe))) {
		c = gdr_doctor_add(doc, "mofed", GDR_CHECK_NA, 0);
		gdr_check_value(
		    c, "ofed_info not on PATH (inbox rdma-core, or MOFED tools not installed)");
		return;
	}
	if (strchr(exe, '\'')) {
		c = gdr_doctor_add(doc, "mofed", GDR_CHECK_NA, 0);
		gdr_check_value(c, "ofed_info path has a quote: not run");
		return;
	}
	snprintf(cmd, sizeof(cmd), "'%s' -s 2>/dev/null", exe);
	/* NOLINTNEXTLINE(cert-env33-c): the path is quoted and may not hold a quote */
	p = popen(cmd, "r");
	if (p) {
		if (!fgets(line, sizeof(line), p))
			line[0] = '\0';
		rc = pclose(p);
	} else {
		rc = -1;
	}
	line[strcspn(line, "\r\n")] = '\0';
	/* "MLNX_OFED_LINUX-23.10-0.5.5.0:" */
	if (line[0] && line[strlen(line) - 1] == ':')
		line[strlen(line) - 1] = '\0';
	if (rc != 0 || !line[0]) {
		c = gdr_doctor_add(doc, "mofed", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "ofed_info -s gave no version");
		return;
	}
	c = gdr_doctor_add(doc, "mofed", GDR_CHECK_PASS, 0);
	gdr_check_value(c, "%s", line);
}

static void check_memlock(struct gdr_doctor *doc)
{
	struct gdr_check *c;
	unsigned long long soft;
	char buf[4096], sz[32];
	const char *src;

	if (!strcmp(doc->root, "/")) {
		struct rlimit rl;

		if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
			c = gdr_doctor_add(doc, "memlock", GDR_CHECK_NA, 0);
			gdr_check_value(c, "getrlimit(RLIMIT_MEMLOCK): %s", strerror(errno));
			return;
		}
		soft = rl.rlim_cur == RLIM_INFINITY ? ULLONG_MAX : (unsigned long long)rl.rlim_cur;
		src = "RLIMIT_MEMLOCK";
	} else {
		/* A fixture tree says what the limit is, so that tests do not depend on the host.
		 */
		ssize_t n = gdr_read_rooted(doc->root, "/proc/self/limits", buf, sizeof(buf));
		char cause[96];

		if (n < 0) {
			c = gdr_doctor_add(doc, "memlock", GDR_CHECK_NA, 0);
			gdr_check_value(c, "memlock limit unknown (/proc/self/limits: %s)",
					gdr_rooted_strerror(doc->root, "/proc/self/limits", (int)n,
							    cause, sizeof(cause)));
			return;
		}
		if (gdr_limits_memlock_parse(buf, &soft)) {
			c = gdr_doctor_add(doc, "memlock", GDR_CHECK_NA, 0);
			gdr_check_value(c, "memlock limit unknown (/proc/self/limits: no \"Max "
					   "locked memory\" line with a soft limit in bytes or "
					   "unlimited)");
			return;
		}
		src = "/proc/self/limits";
	}
	if (soft == ULLONG_MAX) {
		c = gdr_doctor_add(doc, "memlock", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "unlimited (%s)", src);
		return;
	}
	c = gdr_doctor_add(doc, "memlock", GDR_CHECK_WARN, 0);
	gdr_check_value(c, "%s (%s): host and bounce buffers are pinned when registered",
			gdr_fmt_size(soft, sz, sizeof(sz)), src);
	gdr_check_fix(c, "ulimit -l unlimited (limits.conf memlock, docker --ulimit memlock=-1, "
			 "or the container runtime's default)");
}

void gdr_doctor_node_checks(struct gdr_doctor *doc)
{
	doc->dmabuf_node_ok = 1;
	read_host(doc);
	check_kernel(doc);
	check_kconfig(doc);
	check_driver(doc);
	check_peermem(doc);
	check_rdma_core(doc);
	check_mofed(doc);
	check_memlock(doc);
}
