/*
 * Pinning the measuring thread to one CPU for the length of a bandwidth
 * repeat.
 *
 * A bandwidth loop busy-polls its CQ from one thread. Where the kernel does
 * the transport's work on the same CPUs (Soft-RoCE's tasklets, a loaded
 * host's interrupt threads), every time that work preempts the poller an idle
 * CPU pulls the poller over: on rxe under qemu, an unpinned gdr_read_bw
 * client migrated 122-129 times in one 2048-message 16 KiB repeat and ran
 * below perftest, whose -R server happens to keep the other CPU busy; pinned,
 * it migrated 0 times (docs/reading-the-numbers.md). So each repeat pins the
 * thread to the CPU it is running on, inside whatever set it was allowed
 * (the NUMA binding, taskset, the launcher's), and gives the set back after.
 * Latency loops are not pinned: two ping-pong sides of one host pinned to the
 * same CPU would wait a scheduler time slice per round trip.
 *
 * Pinning also keeps the transport's work on the one CPU: on rxe, 4-QP 1 MiB
 * WRITEs and 4-QP 8 MiB READs ran at one CPU's rate pinned (about 30 MB/sec
 * where unpinned ran at 40-56), as long transfers spread over both CPUs only
 * when the poster moves. So gdr_read_bw's default (GDR_PIN_SMALL) pins the
 * repeats of messages up to GDR_PIN_SMALL_MAX only, where pinning was
 * measured to help and not to hurt; --pin pins every repeat, --no-pin none.
 */
#ifndef GDR_PIN_H
#define GDR_PIN_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/* gdr_opts.pin: which bandwidth repeats are pinned. */
enum gdr_pin_mode {
	GDR_PIN_NEVER = 0,  /* --no-pin: gdr_write_bw's default */
	GDR_PIN_ALWAYS = 1, /* --pin */
	GDR_PIN_SMALL = 2,  /* gdr_read_bw's default: messages up to GDR_PIN_SMALL_MAX */
};
#define GDR_PIN_SMALL_MAX (1024u * 1024u)

/* Whether a repeat of SIZE-byte messages is pinned under MODE. */
static inline int gdr_pin_wanted(int mode, uint64_t size)
{
	return mode == GDR_PIN_ALWAYS || (mode == GDR_PIN_SMALL && size <= GDR_PIN_SMALL_MAX);
}

struct gdr_pin {
	cpu_set_t saved; /* the affinity before the pin */
	int cpu;	 /* the CPU pinned to; -1: not pinned */
};

/*
 * Pin the calling thread to the CPU it runs on. 1: pinned (p->cpu says
 * where); 0: nothing to do (the thread may run on one CPU only already);
 * -errno with why filled: nothing changed.
 */
int gdr_pin_here(struct gdr_pin *p, char *why, size_t wlen);
/* Give back the affinity gdr_pin_here saved; nothing when it did not pin. */
void gdr_pin_release(struct gdr_pin *p);

#endif
