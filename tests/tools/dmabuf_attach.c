/*
 * A dma-buf that is really attached to a second device, for
 * tests/integration/t_47_live.sh (gdr_doctor --live): the guest's Debian
 * kernel has no udmabuf, so the exporter is vivid (the virtual video driver:
 * VIDIOC_REQBUFS + VIDIOC_EXPBUF of one capture buffer) and the importer is
 * vgem (DRM_IOCTL_PRIME_FD_TO_HANDLE: drm_gem_prime_import attaches vgem's
 * device and keeps a reference). Then the dma-buf fd and the video device are
 * closed, as NCCL closes its fd after ibv_reg_dmabuf_mr: only vgem's GEM
 * handle keeps the buffer, which bufinfo must still list with its attachment.
 *
 *   dmabuf_attach [--timeout SEC]
 *
 * Talks on stdout, one line a step, and waits on stdin between steps:
 *   pid PID
 *   held fd FD              (the dma-buf fd is open: /proc/PID/fdinfo/FD has exp_name)
 *   <waits for a line on stdin>
 *   closed                  (fd and video device closed; vgem holds the buffer)
 *   <waits for end of stdin>, then exits (vgem's handle goes: the buffer is freed)
 * Every wait ends after --timeout seconds (default 120). Exit 0 done, 1 a
 * step failed or a wait ran out, 77 vivid or vgem is not there, 2 usage.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* include/uapi/drm/drm.h (no libdrm headers needed): a stable kernel ABI. */
struct prime_handle {
	uint32_t handle;
	uint32_t flags;
	int32_t fd;
};
#define PRIME_FD_TO_HANDLE _IOWR('d', 0x2e, struct prime_handle)

enum { EXIT_SKIP = 77 };

/* /dev/NAME of the first CLASS device whose sysfs file FILE holds WANT (the basename of its
 * real path when FILE is "device"). 0, or -ENOENT. */
static int find_dev(const char *class, const char *file, const char *want, char *dev, size_t len)
{
	char dir[64], path[PATH_MAX], buf[256];
	struct dirent *de;
	DIR *d;
	int r = -ENOENT;

	snprintf(dir, sizeof(dir), "/sys/class/%s", class);
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while (r && (de = readdir(d))) {
		const char *got = buf;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", dir, de->d_name, file);
		if (!strcmp(file, "device")) {
			char real[PATH_MAX];

			if (!realpath(path, real))
				continue;
			got = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
			snprintf(buf, sizeof(buf), "%.255s", got);
		} else {
			f = fopen(path, "r");
			if (!f)
				continue;
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			fclose(f);
			buf[strcspn(buf, "\n")] = '\0';
		}
		if (!strcmp(buf, want)) {
			snprintf(dev, len, "/dev/%s%s", !strcmp(class, "drm") ? "dri/" : "",
				 de->d_name);
			r = 0;
		}
	}
	closedir(d);
	return r;
}

/* Wait for a line (want_eof 0) or end of input (1) on stdin, at most sec seconds. */
static int wait_stdin(int sec, int want_eof)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char c;
	ssize_t n;

	for (;;) {
		int r = poll(&p, 1, sec * 1000);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ETIMEDOUT;
		n = read(0, &c, 1);
		if (n <= 0)
			return want_eof ? 0 : -EPIPE;
		if (!want_eof && c == '\n')
			return 0;
	}
}

/* One capture buffer of vivid, exported: the dma-buf fd, or -errno. */
static int vivid_export(int vfd)
{
	static const uint32_t types[] = { V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct v4l2_requestbuffers rb = { .count = 1,
						  .type = types[i],
						  .memory = V4L2_MEMORY_MMAP };
		struct v4l2_exportbuffer eb = { .type = types[i], .flags = O_RDWR | O_CLOEXEC };

		if (ioctl(vfd, VIDIOC_REQBUFS, &rb) < 0 || rb.count < 1)
			continue;
		if (ioctl(vfd, VIDIOC_EXPBUF, &eb) < 0)
			return -errno;
		return eb.fd;
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	char video[PATH_MAX], card[PATH_MAX];
	struct prime_handle ph = { 0 };
	int timeout = 120, vfd, dfd, buf, rc;

	if (argc == 3 && !strcmp(argv[1], "--timeout"))
		timeout = atoi(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: dmabuf_attach [--timeout SEC]\n");
		return 2;
	}
	if (timeout <= 0)
		timeout = 120;
	if (find_dev("video4linux", "name", "vivid-000-vid-cap", video, sizeof(video))) {
		fprintf(stderr, "dmabuf_attach: no vivid capture device (modprobe vivid)\n");
		return EXIT_SKIP;
	}
	if (find_dev("drm", "device", "vgem", card, sizeof(card))) {
		fprintf(stderr, "dmabuf_attach: no vgem card (modprobe vgem)\n");
		return EXIT_SKIP;
	}
	vfd = open(video, O_RDWR | O_CLOEXEC);
	if (vfd < 0) {
		fprintf(stderr, "dmabuf_attach: %s: open: %s\n", video, strerror(errno));
		return 1;
	}
	buf = vivid_export(vfd);
	if (buf < 0) {
		fprintf(stderr, "dmabuf_attach: %s: VIDIOC_EXPBUF: %s\n", video, strerror(-buf));
		return 1;
	}
	dfd = open(card, O_RDWR | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "dmabuf_attach: %s: open: %s\n", card, strerror(errno));
		return 1;
	}
	ph.fd = buf;
	if (ioctl(dfd, PRIME_FD_TO_HANDLE, &ph) < 0) {
		fprintf(stderr, "dmabuf_attach: %s: DRM_IOCTL_PRIME_FD_TO_HANDLE: %s\n", card,
			strerror(errno));
		return 1;
	}
	printf("pid %d\nheld fd %d\n", (int)getpid(), buf);
	fflush(stdout);
	if (wait_stdin(timeout, 0)) {
		fprintf(stderr, "dmabuf_attach: no word to close the fd within %d s\n", timeout);
		return 1;
	}
	close(buf);
	close(vfd);
	printf("closed\n");
	fflush(stdout);
	rc = wait_stdin(timeout, 1);
	if (rc)
		fprintf(stderr, "dmabuf_attach: stdin still open after %d s: exiting\n", timeout);
	close(dfd);
	return rc ? 1 : 0;
}
