// SPDX-License-Identifier: MIT
/*
 * libquantum: quantum register simulation, after SPEC CPU2006 462.libquantum.
 *
 * 462.libquantum runs Shor's factoring on a simulated quantum computer
 * whose register is a list of (basis state, complex amplitude) pairs; its
 * time goes to gate loops that test control bits and flip target bits in
 * every basis state (Toffoli, CNOT, sigma-x), streaming through a register
 * much larger than L1.  This workload builds the same kind of sparse
 * register: Hadamards on w control qubits grow it to 2^w states, then many
 * rounds of a reversible ripple-carry adder (Cuccaro et al.'s MAJ/UMA
 * Toffoli-CNOT network) add the control register into an accumulator,
 * interleaved with the controlled phase rotations of a quantum Fourier
 * transform.  The adder result is checked classically for every state.
 */
#include <math.h>

#include "wl.h"

struct qreg {
	int n;		/* number of basis states */
	uint64_t *state;
	double *re, *im;
};

static void toffoli(struct qreg *q, int c1, int c2, int t)
{
	uint64_t m = (1ULL << c1) | (1ULL << c2), tb = 1ULL << t;

	for (int i = 0; i < q->n; i++)
		if ((q->state[i] & m) == m)
			q->state[i] ^= tb;
}

static void cnot(struct qreg *q, int c, int t)
{
	uint64_t m = 1ULL << c, tb = 1ULL << t;

	for (int i = 0; i < q->n; i++)
		if (q->state[i] & m)
			q->state[i] ^= tb;
}

/* Multiply the amplitude of states with both bits set by (cr + i ci). */
static void cphase(struct qreg *q, int c, int t, double cr, double ci)
{
	uint64_t m = (1ULL << c) | (1ULL << t);

	for (int i = 0; i < q->n; i++) {
		if ((q->state[i] & m) == m) {
			double r = q->re[i], im = q->im[i];

			q->re[i] = r * cr - im * ci;
			q->im[i] = r * ci + im * cr;
		}
	}
}

/*
 * Hadamard on a qubit known to be |0> in every state doubles the register:
 * each state gets a partner with the bit set, both scaled by 1/sqrt(2).
 */
static void hadamard_grow(struct qreg *q, int bit)
{
	const double s = 0.70710678118654752440;
	uint64_t b = 1ULL << bit;
	int n = q->n;

	for (int i = 0; i < n; i++) {
		q->state[n + i] = q->state[i] | b;
		q->re[i] *= s;
		q->im[i] *= s;
		q->re[n + i] = q->re[i];
		q->im[n + i] = q->im[i];
	}
	q->n = 2 * n;
}

/* Cuccaro ripple-carry adder, b += a, with carry-in ancilla c and carry-out z. */
static void maj(struct qreg *q, int c, int b, int a)
{
	cnot(q, a, b);
	cnot(q, a, c);
	toffoli(q, c, b, a);
}

static void uma(struct qreg *q, int c, int b, int a)
{
	toffoli(q, c, b, a);
	cnot(q, a, c);
	cnot(q, c, b);
}

static void add(struct qreg *q, int w, int xa, int yb, int anc)
{
	/* Bits: a_i = xa + i, b_i = yb + i, carry out into b_w. */
	maj(q, anc, yb, xa);
	for (int i = 1; i < w; i++)
		maj(q, xa + i - 1, yb + i, xa + i);
	cnot(q, xa + w - 1, yb + w);
	for (int i = w - 1; i >= 1; i--)
		uma(q, xa + i - 1, yb + i, xa + i);
	uma(q, anc, yb, xa);
}

int main(int argc, char **argv)
{
	static const int width[WL_NSIZES] = { 3, 4, 12, 14, 18 };
	static const int rounds[WL_NSIZES] = { 3, 6, 210, 630, 310 };
	/* micro, tiny, test, train, ref */
	static const uint32_t expect[WL_NSIZES] = {
		0xb783043b, 0xcf955d22, 0x281ded07, 0x57a54afb, 0xd6cd8a17,
	};
	int size = wl_parse_size(argc, argv, "libquantum");
	int w = width[size], xa = 0, yb = w, anc = 2 * w + 1;
	uint64_t h = wl_hash_init(), ymask = (1ULL << (w + 1)) - 1;
	double cr[24], ci[24];
	struct qreg q;

	/*
	 * Rotation constants exp(i pi / 2^k) by half-angle steps: sqrt is
	 * correctly rounded everywhere, unlike cos and sin, so every libc
	 * gets the same bits.
	 */
	cr[0] = -1.0;
	ci[0] = 0.0;
	for (int k = 1; k < 24; k++) {
		cr[k] = sqrt((1.0 + cr[k - 1]) / 2.0);
		ci[k] = sqrt((1.0 - cr[k - 1]) / 2.0);
	}

	q.n = 1;
	q.state = malloc(sizeof(*q.state) << w);
	q.re = malloc(sizeof(*q.re) << w);
	q.im = malloc(sizeof(*q.im) << w);
	q.state[0] = 0;
	q.re[0] = 1.0;
	q.im[0] = 0.0;
	for (int i = 0; i < w; i++)
		hadamard_grow(&q, xa + i);

	for (int r = 0; r < rounds[size]; r++) {
		add(&q, w, xa, yb, anc);
		/* One QFT-style layer of controlled rotations per round. */
		for (int j = 1; j < w; j++)
			cphase(&q, xa + (r + j) % w, yb + j, cr[j], ci[j]);
	}

	for (int i = 0; i < q.n; i++) {
		uint64_t x = q.state[i] & ((1ULL << w) - 1);
		uint64_t y = (q.state[i] >> yb) & ymask;

		if (y != ((uint64_t)rounds[size] * x & ymask) || (q.state[i] >> anc & 1)) {
			fprintf(stderr, "libquantum: adder wrong in state %d\n", i);
			return 1;
		}
		/* Amplitudes are about 2^(-w/2): keep about 7 digits. */
		wl_mix(&h, q.state[i]);
		wl_mix_f64(&h, q.re[i], 1e7 * (double)(1 << (w / 2)));
		wl_mix_f64(&h, q.im[i], 1e7 * (double)(1 << (w / 2)));
	}
	free(q.state);
	free(q.re);
	free(q.im);
	return wl_finish("libquantum", size, wl_hash_fold(h), expect);
}
