// SPDX-License-Identifier: MIT
/*
 * sjeng: game-tree search, after SPEC CPU2006 458.sjeng.
 *
 * 458.sjeng is a chess engine analysing positions with alpha-beta search,
 * iterative deepening, a transposition table and move ordering: branchy,
 * hard-to-predict integer code with a hash table of moderate size.  This
 * workload plays Othello instead of chess (the rules fit in a page and
 * move generation is bitboard arithmetic) with the same search machinery:
 * negamax alpha-beta, iterative deepening, a Zobrist-hashed transposition
 * table and best-move-first ordering, over positions from a seeded game.
 */
#include "wl.h"

#define TT_BITS 18
#define SCORE_INF 1000000

static const uint64_t not_a = 0xfefefefefefefefeULL;	/* no file A */
static const uint64_t not_h = 0x7f7f7f7f7f7f7f7fULL;	/* no file H */

static inline uint64_t shift(uint64_t b, int d)
{
	switch (d) {
	case 0: return (b << 1) & not_a;
	case 1: return (b >> 1) & not_h;
	case 2: return b << 8;
	case 3: return b >> 8;
	case 4: return (b << 9) & not_a;
	case 5: return (b << 7) & not_h;
	case 6: return (b >> 7) & not_a;
	default: return (b >> 9) & not_h;
	}
}

static uint64_t legal_moves(uint64_t me, uint64_t opp)
{
	uint64_t empty = ~(me | opp), moves = 0;

	for (int d = 0; d < 8; d++) {
		uint64_t x = shift(me, d) & opp;

		for (int i = 0; i < 5; i++)
			x |= shift(x, d) & opp;
		moves |= shift(x, d) & empty;
	}
	return moves;
}

static uint64_t flips(uint64_t me, uint64_t opp, int sq)
{
	uint64_t m = 1ULL << sq, f = 0;

	for (int d = 0; d < 8; d++) {
		uint64_t line = 0, x = shift(m, d);

		while (x & opp) {
			line |= x;
			x = shift(x, d);
		}
		if (x & me)
			f |= line;
	}
	return f;
}

static inline int popcount64(uint64_t x)
{
	int n = 0;

	while (x) {
		x &= x - 1;
		n++;
	}
	return n;
}

static inline int lowest_bit(uint64_t x)
{
	int n = 0;

	while (!(x & 1)) {
		x >>= 1;
		n++;
	}
	return n;
}

/* Classic Othello square weights: corners good, X-squares bad. */
static const int8_t weight[64] = {
	100, -20, 10,  5,  5, 10, -20, 100,
	-20, -50, -2, -2, -2, -2, -50, -20,
	 10,  -2, -1, -1, -1, -1,  -2,  10,
	  5,  -2, -1, -1, -1, -1,  -2,   5,
	  5,  -2, -1, -1, -1, -1,  -2,   5,
	 10,  -2, -1, -1, -1, -1,  -2,  10,
	-20, -50, -2, -2, -2, -2, -50, -20,
	100, -20, 10,  5,  5, 10, -20, 100,
};

static int evaluate(uint64_t me, uint64_t opp)
{
	int s = 0;

	for (uint64_t b = me; b; b &= b - 1)
		s += weight[lowest_bit(b)];
	for (uint64_t b = opp; b; b &= b - 1)
		s -= weight[lowest_bit(b)];
	s += 4 * (popcount64(legal_moves(me, opp)) - popcount64(legal_moves(opp, me)));
	return s;
}

struct tt_entry {
	uint64_t key;
	int32_t score;
	int8_t depth;
	int8_t flag;	/* 0 exact, 1 lower bound, 2 upper bound */
	int8_t best;
};

struct search {
	struct tt_entry *tt;
	uint64_t zob[2][64], zob_side;
	uint64_t nodes;
};

static uint64_t hash_pos(const struct search *s, uint64_t me, uint64_t opp, int side)
{
	uint64_t h = side ? s->zob_side : 0;

	for (int sq = 0; sq < 64; sq++) {
		if (me >> sq & 1)
			h ^= s->zob[side][sq];
		if (opp >> sq & 1)
			h ^= s->zob[!side][sq];
	}
	return h;
}

static int negamax(struct search *s, uint64_t me, uint64_t opp, int side,
		   int depth, int alpha, int beta, int passed, int *best_out)
{
	uint64_t key, moves;
	struct tt_entry *e;
	int best = -SCORE_INF, best_sq = -1, alpha0 = alpha, tt_move = -1;

	s->nodes++;
	moves = legal_moves(me, opp);
	if (!moves) {
		if (passed) {
			/* Game over: disc difference dominates any heuristic. */
			return 10000 * (popcount64(me) - popcount64(opp));
		}
		return -negamax(s, opp, me, !side, depth, -beta, -alpha, 1, NULL);
	}
	if (depth == 0)
		return evaluate(me, opp);

	key = hash_pos(s, me, opp, side);
	e = &s->tt[key & ((1u << TT_BITS) - 1)];
	if (e->key == key) {
		tt_move = e->best;
		if (e->depth >= depth) {
			if (e->flag == 0 ||
			    (e->flag == 1 && e->score >= beta) ||
			    (e->flag == 2 && e->score <= alpha)) {
				if (best_out)
					*best_out = e->best;
				return e->score;
			}
		}
	}

	/* Hash move first, then the rest by square weight (corners early). */
	for (int pass = 0; pass < 2; pass++) {
		uint64_t todo = moves;

		if (pass == 0)
			todo = tt_move >= 0 ? moves & (1ULL << tt_move) : 0;
		else if (tt_move >= 0)
			todo &= ~(1ULL << tt_move);
		while (todo) {
			int sq = -1, v;
			uint64_t f;

			for (uint64_t b = todo; b; b &= b - 1) {
				int c = lowest_bit(b);

				if (sq < 0 || weight[c] > weight[sq])
					sq = c;
			}
			todo &= ~(1ULL << sq);
			f = flips(me, opp, sq);
			v = -negamax(s, opp & ~f, me | f | (1ULL << sq), !side,
				     depth - 1, -beta, -alpha, 0, NULL);
			if (v > best) {
				best = v;
				best_sq = sq;
			}
			if (v > alpha)
				alpha = v;
			if (alpha >= beta)
				goto done;
		}
	}
done:
	e->key = key;
	e->score = best;
	e->depth = (int8_t)depth;
	e->best = (int8_t)best_sq;
	e->flag = best <= alpha0 ? 2 : best >= beta ? 1 : 0;
	if (best_out)
		*best_out = best_sq;
	return best;
}

int main(int argc, char **argv)
{
	static const int depth[WL_NSIZES] = { 1, 1, 5, 7, 9 };
	/* micro and tiny stop early: a whole game is millions of instructions. */
	static const int max_plies[WL_NSIZES] = { 7, 8, 100, 100, 100 };
	static const int games[WL_NSIZES] = { 1, 1, 1, 2, 2 };
	/* micro, tiny, test, train, ref */
	static const uint32_t expect[WL_NSIZES] = {
		0x4dc56039, 0x08b0a635, 0xbb11ca65, 0x617fc8c3, 0x6205ac3f,
	};
	int size = wl_parse_size(argc, argv, "sjeng");
	struct wl_rng r;
	struct search s;
	uint64_t h = wl_hash_init();

	wl_rng_seed(&r, 458);
	s.tt = calloc(1u << TT_BITS, sizeof(*s.tt));
	for (int c = 0; c < 2; c++)
		for (int sq = 0; sq < 64; sq++)
			s.zob[c][sq] = wl_rng_next(&r);
	s.zob_side = wl_rng_next(&r);
	s.nodes = 0;

	for (int g = 0; g < games[size]; g++) {
		uint64_t me = 0x0000000810000000ULL, opp = 0x0000001008000000ULL;
		int side = 0, passes = 0;

		/* Random opening of 6-9 plies, then the engine plays itself. */
		for (int ply = 0; passes < 2 && ply < max_plies[size]; ply++) {
			uint64_t moves = legal_moves(me, opp), t;
			int sq = -1, score = 0;

			if (!moves) {
				passes++;
			} else {
				passes = 0;
				if (ply < 6 + g % 4) {
					int k = (int)wl_rng_below(&r, popcount64(moves));

					while (k-- > 0)
						moves &= moves - 1;
					sq = lowest_bit(moves);
				} else {
					for (int d = 1; d <= depth[size]; d++)
						score = negamax(&s, me, opp, side, d,
								-SCORE_INF, SCORE_INF, 0, &sq);
				}
				wl_mix(&h, (uint64_t)(int64_t)score);
				wl_mix(&h, (uint64_t)sq);
				{
					uint64_t f = flips(me, opp, sq);

					me |= f | (1ULL << sq);
					opp &= ~f;
				}
			}
			t = me;
			me = opp;
			opp = t;
			side = !side;
		}
		wl_mix(&h, me);
		wl_mix(&h, opp);
	}
	wl_mix(&h, s.nodes);
	free(s.tt);
	return wl_finish("sjeng", size, wl_hash_fold(h), expect);
}
