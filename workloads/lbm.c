// SPDX-License-Identifier: MIT
/*
 * lbm: lattice-Boltzmann fluid simulation, after SPEC CPU2006 470.lbm.
 *
 * 470.lbm advances a D3Q19 lattice (19 particle distributions per cell)
 * with the BGK collision operator and streaming into a second grid, around
 * obstacles with bounce-back: a memory-bandwidth-bound double-precision
 * stencil.  This workload does the same: a channel periodic in x and z,
 * solid walls at y = 0 and y = NY-1, random box obstacles, a small body
 * force driving the flow in x.  Collision and push-streaming are fused in
 * one sweep over the source grid per time step.
 */
#include "wl.h"

#define Q 19

static const int ex[Q] = { 0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0 };
static const int ey[Q] = { 0, 0, 0, 1, -1, 0, 0, 1, 1, -1, -1, 0, 0, 0, 0, 1, -1, 1, -1 };
static const int ez[Q] = { 0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, 1, -1, -1, 1, 1, -1, -1 };
static const int opp[Q] = { 0, 2, 1, 4, 3, 6, 5, 10, 9, 8, 7, 14, 13, 12, 11, 18, 17, 16, 15 };
static const double wt[Q] = {
	1.0 / 3,
	1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18,
	1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36,
	1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36,
};

struct lattice {
	int nx, ny, nz;
	double *src, *dst;	/* [cell * Q + i] */
	uint8_t *solid;
};

static inline int cell(const struct lattice *l, int x, int y, int z)
{
	return (z * l->ny + y) * l->nx + x;
}

static void init(struct lattice *l, struct wl_rng *r, int obstacles)
{
	int n = l->nx * l->ny * l->nz;

	for (int c = 0; c < n; c++) {
		l->solid[c] = 0;
		for (int i = 0; i < Q; i++)
			l->src[c * Q + i] = wt[i];
	}
	for (int z = 0; z < l->nz; z++)
		for (int x = 0; x < l->nx; x++) {
			l->solid[cell(l, x, 0, z)] = 1;
			l->solid[cell(l, x, l->ny - 1, z)] = 1;
		}
	for (int k = 0; k < obstacles; k++) {
		int x0 = (int)wl_rng_below(r, l->nx), y0 = 2 + (int)wl_rng_below(r, l->ny - 6);
		int z0 = (int)wl_rng_below(r, l->nz), s = 1 + (int)wl_rng_below(r, 3);

		for (int z = z0; z < z0 + s && z < l->nz; z++)
			for (int y = y0; y < y0 + s && y < l->ny - 1; y++)
				for (int x = x0; x < x0 + s && x < l->nx; x++)
					l->solid[cell(l, x, y, z)] = 1;
	}
}

static void step(struct lattice *l, double omega, double force)
{
	for (int z = 0; z < l->nz; z++) {
		for (int y = 0; y < l->ny; y++) {
			for (int x = 0; x < l->nx; x++) {
				int c = cell(l, x, y, z);
				const double *f = &l->src[c * Q];
				double rho = 0, ux = 0, uy = 0, uz = 0, usq;

				if (l->solid[c])
					continue;
				for (int i = 0; i < Q; i++) {
					rho += f[i];
					ux += ex[i] * f[i];
					uy += ey[i] * f[i];
					uz += ez[i] * f[i];
				}
				ux = ux / rho + force;
				uy /= rho;
				uz /= rho;
				usq = 1.5 * (ux * ux + uy * uy + uz * uz);
				for (int i = 0; i < Q; i++) {
					double eu = ex[i] * ux + ey[i] * uy + ez[i] * uz;
					double feq = wt[i] * rho * (1.0 + 3.0 * eu + 4.5 * eu * eu - usq);
					double post = f[i] + omega * (feq - f[i]);
					int xn = x + ex[i], yn = y + ey[i], zn = z + ez[i];
					int cn;

					/* Periodic in x and z; walls stop y. */
					xn = xn < 0 ? l->nx - 1 : xn == l->nx ? 0 : xn;
					zn = zn < 0 ? l->nz - 1 : zn == l->nz ? 0 : zn;
					cn = cell(l, xn, yn, zn);
					if (l->solid[cn])
						l->dst[c * Q + opp[i]] = post;	/* bounce back */
					else
						l->dst[cn * Q + i] = post;
				}
			}
		}
	}
	{
		double *t = l->src;

		l->src = l->dst;
		l->dst = t;
	}
}

int main(int argc, char **argv)
{
	static const int dim[WL_NSIZES][3] = {
		{ 2, 4, 2 }, { 4, 4, 2 }, { 24, 24, 24 }, { 40, 40, 40 }, { 48, 48, 48 },
	};
	static const int steps[WL_NSIZES] = { 1, 1, 50, 100, 550 };
	/* micro, tiny, test, train, ref */
	static const uint32_t expect[WL_NSIZES] = {
		0xe85c2189, 0x63c0434e, 0x3a23a5c4, 0x0fba7a9b, 0xe6e47265,
	};
	int size = wl_parse_size(argc, argv, "lbm");
	struct lattice l;
	struct wl_rng r;
	uint64_t h = wl_hash_init();
	double mass = 0, mx = 0;
	int n;

	l.nx = dim[size][0];
	l.ny = dim[size][1];
	l.nz = dim[size][2];
	n = l.nx * l.ny * l.nz;
	l.src = malloc(sizeof(double) * Q * n);
	l.dst = malloc(sizeof(double) * Q * n);
	l.solid = malloc(n);
	wl_rng_seed(&r, 470);
	init(&l, &r, n / 200);
	/* Solid cells are never written by step(): give dst the same start. */
	memcpy(l.dst, l.src, sizeof(double) * Q * n);

	for (int t = 0; t < steps[size]; t++)
		step(&l, 1.7, 1e-5);

	for (int c = 0; c < n; c++) {
		double rho = 0, ux = 0;

		if (l.solid[c])
			continue;
		for (int i = 0; i < Q; i++) {
			rho += l.src[c * Q + i];
			ux += ex[i] * l.src[c * Q + i];
		}
		mass += rho;
		mx += ux;
		/* Sampled cells pin down the local field, not just the sums. */
		if (c % 97 == 0)
			wl_mix_f64(&h, ux, 1e9);
	}
	wl_mix_f64(&h, mass, 1e6);
	wl_mix_f64(&h, mx, 1e6);
	free(l.src);
	free(l.dst);
	free(l.solid);
	return wl_finish("lbm", size, wl_hash_fold(h), expect);
}
