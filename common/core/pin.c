#include "config.h"

#include "pin.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int gdr_pin_here(struct gdr_pin *p, char *why, size_t wlen)
{
	cpu_set_t one;
	int cpu, e;

	p->cpu = -1;
	if (sched_getaffinity(0, sizeof(p->saved), &p->saved)) {
		e = errno;
		snprintf(why, wlen, "sched_getaffinity: %s", strerror(e));
		return -e;
	}
	if (CPU_COUNT(&p->saved) <= 1)
		return 0;
	cpu = sched_getcpu();
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &p->saved)) {
		e = cpu < 0 ? errno : ERANGE;
		snprintf(why, wlen, "sched_getcpu: %s", cpu < 0 ? strerror(e) : "not an allowed CPU");
		return -e;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		e = errno;
		snprintf(why, wlen, "sched_setaffinity(CPU %d): %s", cpu, strerror(e));
		return -e;
	}
	p->cpu = cpu;
	return 1;
}

void gdr_pin_release(struct gdr_pin *p)
{
	if (p->cpu < 0)
		return;
	(void)sched_setaffinity(0, sizeof(p->saved), &p->saved);
	p->cpu = -1;
}
