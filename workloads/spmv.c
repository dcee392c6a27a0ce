// SPDX-License-Identifier: MIT
/*
 * spmv: sparse matrix-vector products in compressed sparse row form.
 *
 * SPEC CPU2006 has no pure SpMV benchmark, but its floating-point solvers
 * (437.leslie3d, 459.GemsFDTD's neighbours, and above all the conjugate
 * gradient inner loops of 450.soplex and NAS CG) spend their time in
 * y = A x over CSR with indirect, irregular loads of x.  This workload
 * builds a random symmetric, diagonally dominant matrix (a banded part
 * plus random long-range couplings, so the x loads miss the cache) and
 * solves A x = b with unpreconditioned conjugate gradients for several
 * right-hand sides.  b is made from a known x, and the solution is checked
 * against it.
 */
#include "wl.h"

struct csr {
	int n, nnz;
	int *rowptr, *col;
	double *val;
};

static void spmv(const struct csr *a, const double *x, double *y)
{
	for (int i = 0; i < a->n; i++) {
		double s = 0;

		for (int k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
			s += a->val[k] * x[a->col[k]];
		y[i] = s;
	}
}

static double dot(const double *a, const double *b, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

static double absd(double x)
{
	return x < 0 ? -x : x;
}

/*
 * Off-diagonal couplings as (i, j, v) with i < j; the matrix gets both
 * (i, j) and (j, i).  Duplicates are harmless: CSR just holds them twice.
 */
static void build(struct csr *a, int n, int per_row, struct wl_rng *r)
{
	int m = n * per_row;
	int *ei = malloc(sizeof(int) * m), *ej = malloc(sizeof(int) * m);
	double *ev = malloc(sizeof(double) * m), *diag = calloc(n, sizeof(double));
	int *fill = calloc(n + 1, sizeof(int));

	for (int e = 0; e < m; e++) {
		int i = e / per_row, j;

		/* Half the couplings are near the diagonal, half anywhere. */
		if (e % 2 == 0)
			j = i + 1 + (int)wl_rng_below(r, 8);
		else
			j = (int)wl_rng_below(r, n);
		if (j >= n)
			j -= n;
		if (j == i)
			j = (i + 1) % n;
		ei[e] = i;
		ej[e] = j;
		ev[e] = -0.1 - wl_rng_double(r);
		diag[i] += absd(ev[e]);
		diag[j] += absd(ev[e]);
	}
	a->n = n;
	a->nnz = 2 * m + n;
	a->rowptr = calloc(n + 1, sizeof(int));
	a->col = malloc(sizeof(int) * a->nnz);
	a->val = malloc(sizeof(double) * a->nnz);
	for (int e = 0; e < m; e++) {
		a->rowptr[ei[e] + 1]++;
		a->rowptr[ej[e] + 1]++;
	}
	for (int i = 0; i < n; i++)
		a->rowptr[i + 1] += a->rowptr[i] + 1;	/* +1: the diagonal */
	for (int i = 0; i < n; i++) {
		int k = a->rowptr[i] + fill[i]++;

		a->col[k] = i;
		/* Weak dominance keeps the system well posed but CG busy. */
		a->val[k] = diag[i] * 1.02 + 0.01;
	}
	for (int e = 0; e < m; e++) {
		int k = a->rowptr[ei[e]] + fill[ei[e]]++;

		a->col[k] = ej[e];
		a->val[k] = ev[e];
		k = a->rowptr[ej[e]] + fill[ej[e]]++;
		a->col[k] = ei[e];
		a->val[k] = ev[e];
	}
	free(ei);
	free(ej);
	free(ev);
	free(diag);
	free(fill);
}

/* Plain CG to a relative residual of 1e-10; returns the iterations used. */
static int cg(const struct csr *a, const double *b, double *x, double *rv,
	      double *p, double *ap)
{
	int n = a->n, it;
	double rr, bb = dot(b, b, n);

	for (int i = 0; i < n; i++) {
		x[i] = 0;
		rv[i] = b[i];
		p[i] = b[i];
	}
	rr = bb;
	for (it = 0; it < 1000 && rr > 1e-20 * bb; it++) {
		double alpha, rr_new;

		spmv(a, p, ap);
		alpha = rr / dot(p, ap, n);
		for (int i = 0; i < n; i++) {
			x[i] += alpha * p[i];
			rv[i] -= alpha * ap[i];
		}
		rr_new = dot(rv, rv, n);
		for (int i = 0; i < n; i++)
			p[i] = rv[i] + rr_new / rr * p[i];
		rr = rr_new;
	}
	return it;
}

int main(int argc, char **argv)
{
	static const int rows[WL_NSIZES] = { 8, 14, 20000, 100000, 250000 };
	static const int rhs[WL_NSIZES] = { 1, 1, 5, 10, 38 };
	/* micro, tiny, test, train, ref */
	static const uint32_t expect[WL_NSIZES] = {
		0x328d87f7, 0xe1063a38, 0x9814bc1d, 0x481a75b1, 0x7fb0641b,
	};
	int size = wl_parse_size(argc, argv, "spmv");
	int n = rows[size];
	struct wl_rng r;
	struct csr a;
	uint64_t h = wl_hash_init();
	double *xt = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
	double *x = malloc(sizeof(double) * n), *rv = malloc(sizeof(double) * n);
	double *p = malloc(sizeof(double) * n), *ap = malloc(sizeof(double) * n);

	wl_rng_seed(&r, 450);
	build(&a, n, 4, &r);
	for (int k = 0; k < rhs[size]; k++) {
		double err = 0;
		int it;

		for (int i = 0; i < n; i++)
			xt[i] = wl_rng_double(&r) * 2 - 1;
		spmv(&a, xt, b);
		it = cg(&a, b, x, rv, p, ap);
		for (int i = 0; i < n; i++) {
			double d = absd(x[i] - xt[i]);

			if (d > err)
				err = d;
			/* x is accurate to ~1e-8: six digits are stable. */
			if (i % 16 == 0)
				wl_mix_f64(&h, x[i], 1e6);
		}
		if (err > 1e-6) {
			fprintf(stderr, "spmv: CG did not converge (max error %g)\n", err);
			return 1;
		}
		wl_mix(&h, (uint64_t)it);
	}
	free(xt);
	free(b);
	free(x);
	free(rv);
	free(p);
	free(ap);
	free(a.rowptr);
	free(a.col);
	free(a.val);
	return wl_finish("spmv", size, wl_hash_fold(h), expect);
}
