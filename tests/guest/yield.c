// SPDX-License-Identifier: MIT
/* Two threads hand the CPU to each other N times (sched_yield): the
 * switch-cost benchmark of each counter policy. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static int n;

static void *yielder(void *p)
{
	(void)p;
	for (int i = 0; i < n; i++)
		sched_yield();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	n = argc > 1 ? atoi(argv[1]) : 100;
	pthread_create(&a, NULL, yielder, NULL);
	pthread_create(&b, NULL, yielder, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%d yields each\n", n);
	return 0;
}
