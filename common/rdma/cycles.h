/*
 * A cheap time stamp for the hot loops, converted to nanoseconds by a
 * calibration against CLOCK_MONOTONIC over the same run.
 *
 * Why: on a VM whose clocksource is not the TSC (Soft-RoCE under qemu runs
 * on hpet), clock_gettime is a system call plus an emulated device read,
 * microseconds each; two of them per latency sample, or one per completion
 * batch, were a visible share of a 64-byte round trip. perftest stamps with
 * the cycle counter (get_cycles) for the same reason. The run's own ends are
 * still read from CLOCK_MONOTONIC, so averages do not depend on the counter;
 * only the stamps in between are scaled by the counter's rate over the run.
 * Where no counter is known the stamp is CLOCK_MONOTONIC itself.
 */
#ifndef GDR_CYCLES_H
#define GDR_CYCLES_H

#include <stdint.h>

#include "util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t gdr_cycles(void)
{
	return __rdtsc();
}
#elif defined(__aarch64__)
static inline uint64_t gdr_cycles(void)
{
	uint64_t v;

	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#else
static inline uint64_t gdr_cycles(void)
{
	return gdr_now_ns();
}
#endif

/* Both clocks read at the start of a run, and again at its end. */
struct gdr_cyc_cal {
	uint64_t c0, ns0;
	double ns_per_cycle; /* 0 until gdr_cyc_end */
};

static inline void gdr_cyc_begin(struct gdr_cyc_cal *k)
{
	k->ns0 = gdr_now_ns();
	k->c0 = gdr_cycles();
	k->ns_per_cycle = 0;
}

/* The counter's rate over the run; a counter that did not advance reads as nanoseconds. */
static inline void gdr_cyc_end(struct gdr_cyc_cal *k, uint64_t ns1, uint64_t c1)
{
	k->ns_per_cycle =
	    c1 > k->c0 && ns1 > k->ns0 ? (double)(ns1 - k->ns0) / (double)(c1 - k->c0) : 1.0;
}

/* A stamp of this run in CLOCK_MONOTONIC nanoseconds (after gdr_cyc_end). */
static inline uint64_t gdr_cyc_ns(const struct gdr_cyc_cal *k, uint64_t c)
{
	return k->ns0 + (uint64_t)((double)(c - k->c0) * k->ns_per_cycle + 0.5);
}

#endif
