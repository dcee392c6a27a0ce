// SPDX-License-Identifier: MIT
/*
 * nbody: multithreaded gravitational n-body simulation (pthreads).
 *
 * SPEC CPU2006 is single-threaded; its successor SPEC CPU2017 speed suite
 * runs OpenMP codes such as 619.lbm_s and 644.nab_s (molecular dynamics:
 * all-pairs forces in double precision).  This workload is the threaded
 * member of the suite: T worker threads (argv[2], default 4) each own a
 * contiguous slice of bodies, compute the forces on it from all bodies,
 * wait at a barrier, integrate their slice (leapfrog), and wait again.
 *
 * The result does not depend on T or on scheduling: every force sum runs
 * over j in the same order whichever thread computes it, and a thread only
 * writes its own slice.  The barrier is built from a mutex and a condition
 * variable (not pthread_barrier_t) because that is what the guest kernel's
 * futex support covers, and so that threads block and switch often.
 */
#include <math.h>
#include <pthread.h>

#include "wl.h"

#define MAX_THREADS 64

struct body {
	double x, y, z, vx, vy, vz, m;
};

struct barrier {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int count, waiting;
	unsigned int generation;
};

struct sim {
	struct body *b;
	double *ax, *ay, *az;
	int n, steps, nthreads;
	double dt;
	struct barrier bar;
};

struct worker {
	struct sim *s;
	int lo, hi;
	pthread_t tid;
};

static void barrier_wait(struct barrier *b)
{
	pthread_mutex_lock(&b->lock);
	if (++b->waiting == b->count) {
		b->waiting = 0;
		b->generation++;
		pthread_cond_broadcast(&b->cond);
	} else {
		unsigned int gen = b->generation;

		/* The generation guards against spurious wake-ups. */
		while (gen == b->generation)
			pthread_cond_wait(&b->cond, &b->lock);
	}
	pthread_mutex_unlock(&b->lock);
}

static void forces(struct sim *s, int lo, int hi)
{
	const double soft = 1e-3;

	for (int i = lo; i < hi; i++) {
		double ax = 0, ay = 0, az = 0;

		for (int j = 0; j < s->n; j++) {
			double dx = s->b[j].x - s->b[i].x;
			double dy = s->b[j].y - s->b[i].y;
			double dz = s->b[j].z - s->b[i].z;
			double d2 = dx * dx + dy * dy + dz * dz + soft;
			double inv = 1.0 / (d2 * sqrt(d2));

			/* j == i contributes zero: dx = dy = dz = 0. */
			ax += s->b[j].m * dx * inv;
			ay += s->b[j].m * dy * inv;
			az += s->b[j].m * dz * inv;
		}
		s->ax[i] = ax;
		s->ay[i] = ay;
		s->az[i] = az;
	}
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct sim *s = w->s;

	for (int t = 0; t < s->steps; t++) {
		forces(s, w->lo, w->hi);
		barrier_wait(&s->bar);	/* all reads of positions done */
		for (int i = w->lo; i < w->hi; i++) {
			struct body *b = &s->b[i];

			b->vx += s->dt * s->ax[i];
			b->vy += s->dt * s->ay[i];
			b->vz += s->dt * s->az[i];
			b->x += s->dt * b->vx;
			b->y += s->dt * b->vy;
			b->z += s->dt * b->vz;
		}
		barrier_wait(&s->bar);	/* all positions updated */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const int bodies[WL_NSIZES] = { 8, 16, 1000, 2000, 4000 };
	static const int steps[WL_NSIZES] = { 1, 2, 20, 50, 120 };
	/* micro, tiny, test, train, ref */
	static const uint32_t expect[WL_NSIZES] = {
		0x5c15793f, 0xc94edd60, 0xf9f49feb, 0xce0c0353, 0x41be9f96,
	};
	int size = wl_parse_size(argc, argv, "nbody");
	struct worker w[MAX_THREADS];
	struct sim s;
	struct wl_rng r;
	uint64_t h = wl_hash_init();
	double ekin = 0;

	s.nthreads = argc >= 3 ? atoi(argv[2]) : 4;
	if (s.nthreads < 1 || s.nthreads > MAX_THREADS) {
		fprintf(stderr, "nbody: thread count must be 1..%d\n", MAX_THREADS);
		return 2;
	}
	s.n = bodies[size];
	s.steps = steps[size];
	s.dt = 1e-3;
	s.b = malloc(sizeof(*s.b) * s.n);
	s.ax = malloc(sizeof(double) * s.n);
	s.ay = malloc(sizeof(double) * s.n);
	s.az = malloc(sizeof(double) * s.n);
	wl_rng_seed(&r, 644);
	for (int i = 0; i < s.n; i++) {
		s.b[i].x = wl_rng_double(&r) * 2 - 1;
		s.b[i].y = wl_rng_double(&r) * 2 - 1;
		s.b[i].z = wl_rng_double(&r) * 2 - 1;
		s.b[i].vx = (wl_rng_double(&r) - 0.5) * 0.1;
		s.b[i].vy = (wl_rng_double(&r) - 0.5) * 0.1;
		s.b[i].vz = (wl_rng_double(&r) - 0.5) * 0.1;
		s.b[i].m = (0.5 + wl_rng_double(&r)) / s.n;
	}
	pthread_mutex_init(&s.bar.lock, NULL);
	pthread_cond_init(&s.bar.cond, NULL);
	s.bar.count = s.nthreads;
	s.bar.waiting = 0;
	s.bar.generation = 0;

	for (int t = 0; t < s.nthreads; t++) {
		w[t].s = &s;
		w[t].lo = (int)((int64_t)s.n * t / s.nthreads);
		w[t].hi = (int)((int64_t)s.n * (t + 1) / s.nthreads);
		if (pthread_create(&w[t].tid, NULL, run, &w[t]) != 0) {
			fprintf(stderr, "nbody: pthread_create failed\n");
			return 1;
		}
	}
	for (int t = 0; t < s.nthreads; t++)
		pthread_join(w[t].tid, NULL);

	for (int i = 0; i < s.n; i++) {
		const struct body *b = &s.b[i];

		ekin += 0.5 * b->m * (b->vx * b->vx + b->vy * b->vy + b->vz * b->vz);
		if (i % 8 == 0) {
			wl_mix_f64(&h, b->x, 1e6);
			wl_mix_f64(&h, b->y, 1e6);
			wl_mix_f64(&h, b->z, 1e6);
		}
	}
	wl_mix_f64(&h, ekin, 1e9);
	free(s.b);
	free(s.ax);
	free(s.ay);
	free(s.az);
	return wl_finish("nbody", size, wl_hash_fold(h), expect);
}
