// SPDX-License-Identifier: MIT
/*
 * hmmer: profile hidden Markov model search, after SPEC CPU2006 456.hmmer.
 *
 * 456.hmmer spends nearly all its time in the Viterbi dynamic programming
 * recurrence of a Plan7 profile HMM (match, insert and delete states per
 * model position, integer log-odds scores, local entry and exit) against
 * many sequences.  This workload builds a random profile, samples target
 * sequences (half emitted by the model so that scores vary, half random)
 * and runs the same three-state recurrence row by row, integer only.
 */
#include "wl.h"

#define NRES 20
#define NEG_INF (-1000000000)

struct profile {
	int m;
	int *msc;	/* [k * NRES + a] match emission score */
	int *isc;	/* [k * NRES + a] insert emission score */
	int *tmm, *tmi, *tmd, *tim, *tii, *tdm, *tdd;
	int *bsc, *esc;	/* local entry into M_k, exit from M_k */
	uint8_t *consensus;
};

static int *alloc_row(int m)
{
	return malloc(sizeof(int) * (m + 1));
}

static void make_profile(struct profile *p, int m, struct wl_rng *r)
{
	p->m = m;
	p->msc = malloc(sizeof(int) * (m + 1) * NRES);
	p->isc = malloc(sizeof(int) * (m + 1) * NRES);
	p->tmm = alloc_row(m);
	p->tmi = alloc_row(m);
	p->tmd = alloc_row(m);
	p->tim = alloc_row(m);
	p->tii = alloc_row(m);
	p->tdm = alloc_row(m);
	p->tdd = alloc_row(m);
	p->bsc = alloc_row(m);
	p->esc = alloc_row(m);
	p->consensus = malloc(m + 1);
	for (int k = 0; k <= m; k++) {
		int best = (int)wl_rng_below(r, NRES);

		p->consensus[k] = (uint8_t)best;
		/* Scores in 1/1000 bits, like hmmer's INTSCALE. */
		for (int a = 0; a < NRES; a++) {
			p->msc[k * NRES + a] = a == best ? 2000 + (int)wl_rng_below(r, 1500) :
				-1500 + (int)wl_rng_below(r, 1800);
			p->isc[k * NRES + a] = -200 + (int)wl_rng_below(r, 400);
		}
		p->tmm[k] = -50 - (int)wl_rng_below(r, 100);
		p->tmi[k] = -3000 - (int)wl_rng_below(r, 2000);
		p->tmd[k] = -3000 - (int)wl_rng_below(r, 2000);
		p->tim[k] = -400 - (int)wl_rng_below(r, 400);
		p->tii[k] = -800 - (int)wl_rng_below(r, 800);
		p->tdm[k] = -400 - (int)wl_rng_below(r, 400);
		p->tdd[k] = -800 - (int)wl_rng_below(r, 800);
		p->bsc[k] = -6000 - (int)wl_rng_below(r, 500);
		p->esc[k] = -6000 - (int)wl_rng_below(r, 500);
	}
}

static void free_profile(struct profile *p)
{
	free(p->msc);
	free(p->isc);
	free(p->tmm);
	free(p->tmi);
	free(p->tmd);
	free(p->tim);
	free(p->tii);
	free(p->tdm);
	free(p->tdd);
	free(p->bsc);
	free(p->esc);
	free(p->consensus);
}

/* A sequence of length n: random, or a noisy copy of a model segment. */
static void make_seq(uint8_t *s, int n, const struct profile *p, int homolog,
		     struct wl_rng *r)
{
	int k = 1 + (int)wl_rng_below(r, p->m);

	for (int i = 0; i < n; i++) {
		if (homolog && wl_rng_below(r, 10) < 7) {
			s[i] = p->consensus[k];
			k = k % p->m + 1;
		} else {
			s[i] = (uint8_t)wl_rng_below(r, NRES);
		}
	}
}

static inline int max2(int a, int b)
{
	return a > b ? a : b;
}

/* Best local Viterbi score; rows are rolled so memory is O(m). */
static int viterbi(const struct profile *p, const uint8_t *seq, int n,
		   int *mprev, int *iprev, int *dprev, int *mcur, int *icur, int *dcur)
{
	int m = p->m, best = NEG_INF;

	for (int k = 0; k <= m; k++)
		mprev[k] = iprev[k] = dprev[k] = NEG_INF;
	for (int i = 1; i <= n; i++) {
		int a = seq[i - 1];
		int *t;

		mcur[0] = icur[0] = dcur[0] = NEG_INF;
		for (int k = 1; k <= m; k++) {
			int sc;

			sc = max2(mprev[k - 1] + p->tmm[k - 1],
				  iprev[k - 1] + p->tim[k - 1]);
			sc = max2(sc, dprev[k - 1] + p->tdm[k - 1]);
			sc = max2(sc, p->bsc[k]);
			mcur[k] = sc + p->msc[k * NRES + a];
			if (mcur[k] < NEG_INF)
				mcur[k] = NEG_INF;

			dcur[k] = max2(mcur[k - 1] + p->tmd[k - 1],
				       dcur[k - 1] + p->tdd[k - 1]);
			if (dcur[k] < NEG_INF)
				dcur[k] = NEG_INF;

			if (k < m) {
				sc = max2(mprev[k] + p->tmi[k], iprev[k] + p->tii[k]);
				icur[k] = sc + p->isc[k * NRES + a];
				if (icur[k] < NEG_INF)
					icur[k] = NEG_INF;
			} else {
				icur[k] = NEG_INF;
			}
			best = max2(best, mcur[k] + p->esc[k]);
		}
		t = mprev; mprev = mcur; mcur = t;
		t = iprev; iprev = icur; icur = t;
		t = dprev; dprev = dcur; dcur = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const int model_len[WL_NSIZES] = { 8, 16, 200, 400, 500 };
	static const int nseq[WL_NSIZES] = { 1, 1, 300, 800, 6600 };
	static const int seq_len[WL_NSIZES] = { 16, 24, 400, 600, 600 };
	/* micro, tiny, test, train, ref */
	static const uint32_t expect[WL_NSIZES] = {
		0x72d984f1, 0xa443bd95, 0x6bd09c3d, 0x4cf238e6, 0x04b79bc2,
	};
	int size = wl_parse_size(argc, argv, "hmmer");
	struct wl_rng r;
	struct profile p;
	uint64_t h = wl_hash_init();
	int m = model_len[size], n = seq_len[size];
	int *rows[6];
	uint8_t *seq = malloc(n);
	int hits = 0;

	wl_rng_seed(&r, 456);
	make_profile(&p, m, &r);
	for (int i = 0; i < 6; i++)
		rows[i] = alloc_row(m);
	for (int q = 0; q < nseq[size]; q++) {
		int sc;

		make_seq(seq, n, &p, q & 1, &r);
		sc = viterbi(&p, seq, n, rows[0], rows[1], rows[2], rows[3],
			     rows[4], rows[5]);
		if (sc > 0)
			hits++;
		wl_mix(&h, (uint64_t)(int64_t)sc);
	}
	wl_mix(&h, (uint64_t)hits);
	for (int i = 0; i < 6; i++)
		free(rows[i]);
	free(seq);
	free_profile(&p);
	return wl_finish("hmmer", size, wl_hash_fold(h), expect);
}
