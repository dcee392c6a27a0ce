// SPDX-License-Identifier: MIT
/*
 * TLB shootdown: a thread spinning in user mode on another vCPU must see a
 * page that this thread replaced (mmap MAP_FIXED over it: a new zeroed
 * frame at the same address), not the old frame through a stale TLB
 * entry.  Each round the main thread maps a fresh page at one address,
 * writes the round number into it and tells the reader, which reads the
 * address until it sees that number (1 s at most).  Run on 2 vCPUs.
 * Prints "tlb: 50 rounds ok" or the round the reader saw stale memory.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#define ROUNDS 50

static volatile int *page;
static atomic_int round_posted, round_seen, stale_round;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *reader(void *arg)
{
	(void)arg;
	for (int r = 1; r <= ROUNDS; r++) {
		double end;

		while (atomic_load(&round_posted) < r)
			;
		end = now() + 1;
		while (*page != r) {
			if (now() > end) {
				atomic_store(&stale_round, r);
				atomic_store(&round_seen, ROUNDS);
				return NULL;
			}
		}
		atomic_store(&round_seen, r);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	void *addr = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (addr == MAP_FAILED)
		return 1;
	page = addr;
	pthread_create(&t, NULL, reader, NULL);
	for (int r = 1; r <= ROUNDS && !atomic_load(&stale_round); r++) {
		if (mmap(addr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			 MAP_ANONYMOUS | MAP_FIXED, -1, 0) != addr)
			return 1;
		*page = r;
		atomic_store(&round_posted, r);
		while (atomic_load(&round_seen) < r)
			;
	}
	pthread_join(t, NULL);
	if (atomic_load(&stale_round)) {
		printf("tlb: round %d: the reader saw the old page\n",
		       atomic_load(&stale_round));
		return 1;
	}
	printf("tlb: %d rounds ok\n", ROUNDS);
	return 0;
}
