// SPDX-License-Identifier: MIT
/*
 * bzip2: block-sorting compression, after SPEC CPU2006 401.bzip2.
 *
 * 401.bzip2 compresses and decompresses in memory; its time goes to
 * sorting the rotations of each block, then to the move-to-front and
 * Huffman stages.  This workload does the same pipeline on synthetic text:
 * Burrows-Wheeler transform (suffix sorting of the rotations by prefix
 * doubling with radix passes), move-to-front, run-length coding of zero
 * runs (bzip2's RUNA/RUNB), a length-limited canonical Huffman code and
 * bit packing; then decodes everything again and checks the round trip.
 */
#include "wl.h"

#define NSYM 258	/* 0/1 = RUNA/RUNB, 2..256 = MTF value + 1, 257 = EOB */
#define MAXLEN 17

/* Text from a random vocabulary with a skewed word choice: compressible. */
static void gen_text(uint8_t *buf, int n, struct wl_rng *r)
{
	enum { NWORDS = 512 };
	static char words[NWORDS][12];
	static int wlen[NWORDS];
	int i = 0;

	for (int w = 0; w < NWORDS; w++) {
		wlen[w] = 2 + (int)wl_rng_below(r, 9);
		for (int k = 0; k < wlen[w]; k++)
			words[w][k] = (char)('a' + wl_rng_below(r, 26));
	}
	while (i < n) {
		/* Product of two uniforms favours small indices. */
		uint32_t w = wl_rng_below(r, NWORDS);

		w = wl_rng_below(r, w + 1);
		for (int k = 0; k < wlen[w] && i < n; k++)
			buf[i++] = (uint8_t)words[w][k];
		if (i < n)
			buf[i++] = wl_rng_below(r, 16) == 0 ? '\n' : ' ';
	}
}

/*
 * Sort the n rotations of s by prefix doubling: after the pass with step k
 * rank[] orders rotations by their first 2k characters.  Each pass is two
 * stable counting sorts (second key, then first key).
 */
static void sort_rotations(const uint8_t *s, int n, int32_t *sa, int32_t *rank,
			   int32_t *tmp, int32_t *cnt)
{
	int classes = 256;

	for (int i = 0; i < n; i++) {
		sa[i] = i;
		rank[i] = s[i];
	}
	for (int k = 1; k < n; k *= 2) {
		int c;

		/* Order by second key: rotation i+k's rank. */
		memset(cnt, 0, sizeof(*cnt) * (classes + 1));
		for (int i = 0; i < n; i++)
			cnt[rank[(i + k) % n] + 1]++;
		for (int i = 0; i < classes; i++)
			cnt[i + 1] += cnt[i];
		for (int i = 0; i < n; i++) {
			int j = (i - k + n) % n;	/* j + k == i */

			tmp[cnt[rank[i]]++] = j;
		}
		/* Stable by first key. */
		memset(cnt, 0, sizeof(*cnt) * (classes + 1));
		for (int i = 0; i < n; i++)
			cnt[rank[i] + 1]++;
		for (int i = 0; i < classes; i++)
			cnt[i + 1] += cnt[i];
		for (int i = 0; i < n; i++)
			sa[cnt[rank[tmp[i]]]++] = tmp[i];
		/* New classes; tmp holds the new ranks. */
		c = 0;
		tmp[sa[0]] = 0;
		for (int i = 1; i < n; i++) {
			int a = sa[i - 1], b = sa[i];

			if (rank[a] != rank[b] ||
			    rank[(a + k) % n] != rank[(b + k) % n])
				c++;
			tmp[b] = c;
		}
		memcpy(rank, tmp, sizeof(*rank) * n);
		classes = c + 1;
		if (classes == n)
			break;
	}
}

struct bitbuf {
	uint8_t *p;
	size_t pos;	/* in bits */
};

static void put_bits(struct bitbuf *b, uint32_t v, int len)
{
	for (int i = len - 1; i >= 0; i--) {
		if ((v >> i) & 1)
			b->p[b->pos >> 3] |= (uint8_t)(0x80 >> (b->pos & 7));
		b->pos++;
	}
}

static int get_bit(struct bitbuf *b)
{
	int v = (b->p[b->pos >> 3] >> (7 - (b->pos & 7))) & 1;

	b->pos++;
	return v;
}

/*
 * Huffman code lengths with a binary min-heap of tree weights.  Ties are
 * broken by node number so that the tree, and the checksum, are unique.
 * If a length exceeds MAXLEN, flatten the weights and retry, as bzip2
 * does.
 */
static void heap_sift(uint64_t *w, int *heap, int n, int i)
{
	for (;;) {
		int c = 2 * i + 1, t;

		if (c >= n)
			return;
		if (c + 1 < n && w[heap[c + 1]] < w[heap[c]])
			c++;
		if (w[heap[i]] <= w[heap[c]])
			return;
		t = heap[i];
		heap[i] = heap[c];
		heap[c] = t;
		i = c;
	}
}

static void code_lengths(const uint32_t *freq, uint8_t *len)
{
	uint64_t w[2 * NSYM];
	int parent[2 * NSYM], heap[NSYM];
	uint32_t f[NSYM];

	for (int i = 0; i < NSYM; i++)
		f[i] = freq[i] ? freq[i] : 1;
	for (;;) {
		int nodes = NSYM, n = NSYM, maxl = 0;

		for (int i = 0; i < NSYM; i++) {
			w[i] = ((uint64_t)f[i] << 16) | (uint64_t)i;
			parent[i] = -1;
			heap[i] = i;
		}
		for (int i = n / 2 - 1; i >= 0; i--)
			heap_sift(w, heap, n, i);
		while (n > 1) {
			int a = heap[0], b;

			heap[0] = heap[--n];
			heap_sift(w, heap, n, 0);
			b = heap[0];
			w[nodes] = ((w[a] >> 16) + (w[b] >> 16)) << 16 | (uint64_t)nodes;
			parent[nodes] = -1;
			parent[a] = parent[b] = nodes;
			heap[0] = nodes++;
			heap_sift(w, heap, n, 0);
		}
		/* Parents have higher numbers: one backward pass gives depths. */
		{
			int depth[2 * NSYM];

			depth[nodes - 1] = 0;
			for (int i = nodes - 2; i >= 0; i--)
				depth[i] = depth[parent[i]] + 1;
			for (int i = 0; i < NSYM; i++) {
				len[i] = (uint8_t)depth[i];
				if (depth[i] > maxl)
					maxl = depth[i];
			}
		}
		if (maxl <= MAXLEN)
			return;
		for (int i = 0; i < NSYM; i++)
			f[i] = f[i] / 2 + 1;
	}
}

/* Canonical codes: shorter first, then by symbol. */
static void canonical(const uint8_t *len, uint32_t *code)
{
	uint32_t next = 0;

	for (int l = 1; l <= MAXLEN; l++) {
		for (int s = 0; s < NSYM; s++)
			if (len[s] == l)
				code[s] = next++;
		next <<= 1;
	}
}

/* Canonical decoding table: symbols sorted by (length, symbol). */
struct huff_dec {
	int sorted[NSYM];
	int count[MAXLEN + 1];
};

static void build_dec(struct huff_dec *d, const uint8_t *len)
{
	int k = 0;

	for (int l = 1; l <= MAXLEN; l++) {
		d->count[l] = 0;
		for (int s = 0; s < NSYM; s++)
			if (len[s] == l) {
				d->sorted[k++] = s;
				d->count[l]++;
			}
	}
}

static int decode_sym(struct bitbuf *b, const struct huff_dec *d)
{
	uint32_t code = 0, first = 0;
	int idx = 0;

	for (int l = 1; l <= MAXLEN; l++) {
		code |= (uint32_t)get_bit(b);
		if (code - first < (uint32_t)d->count[l])
			return d->sorted[idx + (int)(code - first)];
		idx += d->count[l];
		first = (first + (uint32_t)d->count[l]) << 1;
		code <<= 1;
	}
	return -1;
}

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return crc;
}

static int compress_block(const uint8_t *in, int n, uint64_t *h)
{
	int32_t *sa = malloc(sizeof(*sa) * n), *rank = malloc(sizeof(*rank) * n);
	int32_t *tmp = malloc(sizeof(*tmp) * n), *cnt = malloc(sizeof(*cnt) * (n + 257));
	uint8_t *bwt = malloc(n), *out = malloc(n);
	uint16_t *syms = malloc(sizeof(*syms) * (n + 2));
	struct bitbuf bb = { calloc((size_t)n * 3 + 64, 1), 0 };
	uint32_t freq[NSYM] = { 0 }, code[NSYM];
	uint8_t len[NSYM], mtf[256];
	struct huff_dec dec;
	int primary = -1, ns = 0, zeros = 0, ok;

	sort_rotations(in, n, sa, rank, tmp, cnt);
	for (int i = 0; i < n; i++) {
		bwt[i] = in[(sa[i] + n - 1) % n];
		if (sa[i] == 0)
			primary = i;
	}

	/* MTF and zero-run coding in one pass. */
	for (int i = 0; i < 256; i++)
		mtf[i] = (uint8_t)i;
	for (int i = 0; i <= n; i++) {
		int v = 0;

		if (i < n) {
			uint8_t c = bwt[i];

			while (mtf[v] != c)
				v++;
			memmove(mtf + 1, mtf, v);
			mtf[0] = c;
		}
		if (i < n && v == 0) {
			zeros++;
			continue;
		}
		/* Flush a zero run in bijective base 2: RUNA=1, RUNB=2. */
		while (zeros > 0) {
			zeros--;
			syms[ns++] = (uint16_t)(zeros & 1);
			zeros >>= 1;
		}
		if (i < n)
			syms[ns++] = (uint16_t)(v + 1);
	}
	syms[ns++] = NSYM - 1;
	for (int i = 0; i < ns; i++)
		freq[syms[i]]++;
	code_lengths(freq, len);
	canonical(len, code);
	for (int i = 0; i < ns; i++)
		put_bits(&bb, code[syms[i]], len[syms[i]]);

	wl_mix(h, bb.pos);
	wl_mix(h, (uint64_t)primary);
	wl_mix(h, crc32_update(0xffffffffu, bb.p, (bb.pos + 7) / 8));

	/* Decode: Huffman, un-RLE, un-MTF, then invert the BWT via LF. */
	bb.pos = 0;
	build_dec(&dec, len);
	for (int i = 0; i < 256; i++)
		mtf[i] = (uint8_t)i;
	{
		int k = 0, run = 0, weight = 1;

		for (;;) {
			int s = decode_sym(&bb, &dec);

			if (s < 0)
				break;
			if (s <= 1) {
				run += weight << s;
				weight <<= 1;
				continue;
			}
			while (run > 0 && k < n) {
				bwt[k++] = mtf[0];
				run--;
			}
			run = 0;
			weight = 1;
			if (s == NSYM - 1)
				break;
			{
				int v = s - 1;
				uint8_t c = mtf[v];

				memmove(mtf + 1, mtf, v);
				mtf[0] = c;
				if (k < n)
					bwt[k++] = c;
			}
		}
		ok = k == n;
	}
	{
		int32_t *lf = tmp, base[256] = { 0 }, seen[256] = { 0 };
		int sum = 0, p = primary;

		for (int i = 0; i < n; i++)
			base[bwt[i]]++;
		for (int c = 0; c < 256; c++) {
			int t = base[c];

			base[c] = sum;
			sum += t;
		}
		for (int i = 0; i < n; i++)
			lf[i] = base[bwt[i]] + seen[bwt[i]]++;
		for (int i = n - 1; i >= 0; i--) {
			out[i] = bwt[p];
			p = lf[p];
		}
		ok = ok && memcmp(in, out, n) == 0;
	}

	free(sa);
	free(rank);
	free(tmp);
	free(cnt);
	free(bwt);
	free(out);
	free(syms);
	free(bb.p);
	return ok;
}

int main(int argc, char **argv)
{
	static const int block[WL_NSIZES] = { 40, 120, 100000, 300000, 900000 };
	static const int nblocks[WL_NSIZES] = { 1, 1, 8, 26, 55 };
	/* micro, tiny, test, train, ref */
	static const uint32_t expect[WL_NSIZES] = {
		0x0a884a83, 0x281e86a6, 0x77099079, 0xd5b7e3cb, 0x1301692e,
	};
	int size = wl_parse_size(argc, argv, "bzip2");
	struct wl_rng r;
	uint64_t h = wl_hash_init();
	uint8_t *buf = malloc(block[size]);

	wl_rng_seed(&r, 401);
	for (int b = 0; b < nblocks[size]; b++) {
		gen_text(buf, block[size], &r);
		if (!compress_block(buf, block[size], &h)) {
			fprintf(stderr, "bzip2: round trip failed in block %d\n", b);
			return 1;
		}
	}
	free(buf);
	return wl_finish("bzip2", size, wl_hash_fold(h), expect);
}
