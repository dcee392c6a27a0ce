// SPDX-License-Identifier: MIT
/*
 * mcf: minimum-cost network flow, after SPEC CPU2006 429.mcf.
 *
 * 429.mcf schedules vehicles with a network simplex code whose run time is
 * dominated by chasing pointers through arc and node records far larger
 * than the caches.  This workload keeps that character with a different,
 * simpler exact algorithm: successive shortest paths with node potentials
 * (Dijkstra on reduced costs over an adjacency list in linked arc records,
 * binary heap), on random transportation-like networks.  The optimum cost
 * is unique, so the checksum does not depend on tie-breaking details.
 */
#include "wl.h"

#define INF64 ((int64_t)1 << 60)

struct arc {
	int32_t to;
	int32_t next;	/* next arc out of the same tail: the pointer chase */
	int32_t cap;	/* residual capacity */
	int32_t cost;
};

struct net {
	int n, m, max_m;
	int32_t *head;
	struct arc *arcs;
	int64_t *pot, *dist;
	int32_t *pred;	/* arc index used to reach a node */
	int32_t *heap, *hpos;
	int hn;
};

static void add_arc(struct net *g, int u, int v, int cap, int cost)
{
	struct arc *a = &g->arcs[g->m];

	/* Arcs come in pairs (e, e^1) so the reverse is found by xor. */
	a->to = v;
	a->cap = cap;
	a->cost = cost;
	a->next = g->head[u];
	g->head[u] = g->m++;
	a++;
	a->to = u;
	a->cap = 0;
	a->cost = -cost;
	a->next = g->head[v];
	g->head[v] = g->m++;
}

static void heap_up(struct net *g, int i)
{
	int32_t v = g->heap[i];

	while (i > 0) {
		int p = (i - 1) / 2;

		if (g->dist[g->heap[p]] <= g->dist[v])
			break;
		g->heap[i] = g->heap[p];
		g->hpos[g->heap[i]] = i;
		i = p;
	}
	g->heap[i] = v;
	g->hpos[v] = i;
}

static void heap_down(struct net *g, int i)
{
	int32_t v = g->heap[i];

	for (;;) {
		int c = 2 * i + 1;

		if (c >= g->hn)
			break;
		if (c + 1 < g->hn && g->dist[g->heap[c + 1]] < g->dist[g->heap[c]])
			c++;
		if (g->dist[g->heap[c]] >= g->dist[v])
			break;
		g->heap[i] = g->heap[c];
		g->hpos[g->heap[i]] = i;
		i = c;
	}
	g->heap[i] = v;
	g->hpos[v] = i;
}

/* Dijkstra on reduced costs from s; returns whether t is reachable. */
static int shortest_paths(struct net *g, int s, int t)
{
	for (int i = 0; i < g->n; i++) {
		g->dist[i] = INF64;
		g->hpos[i] = -1;
		g->pred[i] = -1;
	}
	g->dist[s] = 0;
	g->hn = 0;
	g->heap[g->hn++] = s;
	g->hpos[s] = 0;
	while (g->hn > 0) {
		int32_t u = g->heap[0];

		g->hpos[u] = -2;	/* settled */
		/*
		 * Stop at t: nodes not settled yet get potential dist[t] below,
		 * which keeps reduced costs non-negative and saves most of the
		 * search once the sink is near.
		 */
		if (u == t)
			break;
		g->heap[0] = g->heap[--g->hn];
		if (g->hn > 0) {
			g->hpos[g->heap[0]] = 0;
			heap_down(g, 0);
		}
		for (int32_t e = g->head[u]; e >= 0; e = g->arcs[e].next) {
			struct arc *a = &g->arcs[e];
			int64_t nd;

			if (a->cap == 0 || g->hpos[a->to] == -2)
				continue;
			nd = g->dist[u] + a->cost + g->pot[u] - g->pot[a->to];
			if (nd >= g->dist[a->to])
				continue;
			g->dist[a->to] = nd;
			g->pred[a->to] = e;
			if (g->hpos[a->to] < 0) {
				g->heap[g->hn] = a->to;
				g->hpos[a->to] = g->hn++;
			}
			heap_up(g, g->hpos[a->to]);
		}
	}
	return g->dist[t] < INF64;
}

static void solve(int nodes, int degree, int nsup, struct wl_rng *r, uint64_t *h)
{
	struct net g;
	int s = nodes, t = nodes + 1;
	int64_t flow = 0, cost = 0;
	int rounds = 0;

	g.n = nodes + 2;
	g.max_m = 2 * (nodes * degree + nodes + 2 * nsup);
	g.m = 0;
	g.head = malloc(sizeof(*g.head) * g.n);
	g.arcs = malloc(sizeof(*g.arcs) * g.max_m);
	g.pot = calloc(g.n, sizeof(*g.pot));
	g.dist = malloc(sizeof(*g.dist) * g.n);
	g.pred = malloc(sizeof(*g.pred) * g.n);
	g.heap = malloc(sizeof(*g.heap) * g.n);
	g.hpos = malloc(sizeof(*g.hpos) * g.n);
	for (int i = 0; i < g.n; i++)
		g.head[i] = -1;

	/*
	 * A ring with expensive arcs keeps every instance feasible; the random
	 * arcs are the cheap routes the solver has to discover.
	 */
	for (int u = 0; u < nodes; u++) {
		add_arc(&g, u, (u + 1) % nodes, 1000, 500);
		for (int k = 0; k < degree; k++) {
			/*
			 * One draw per statement: argument evaluation order is
			 * unspecified, and gcc and clang do differ.
			 */
			int v = (int)wl_rng_below(r, nodes);
			int cap = 1 + (int)wl_rng_below(r, 40);
			int cost = 1 + (int)wl_rng_below(r, 100);

			if (v == u)
				v = (v + 1) % nodes;
			add_arc(&g, u, v, cap, cost);
		}
	}
	/* Supplies at random nodes, demands at others, balanced. */
	for (int k = 0; k < nsup; k++) {
		int amount = 20 + (int)wl_rng_below(r, 200);
		int from = (int)wl_rng_below(r, nodes);
		int to = (int)wl_rng_below(r, nodes);

		add_arc(&g, s, from, amount, 0);
		add_arc(&g, to, t, amount, 0);
	}

	while (shortest_paths(&g, s, t)) {
		int32_t aug = INT32_MAX;

		/* Reduced costs stay non-negative with these potentials. */
		for (int i = 0; i < g.n; i++)
			g.pot[i] += g.dist[i] < g.dist[t] ? g.dist[i] : g.dist[t];
		for (int v = t; v != s; v = g.arcs[g.pred[v] ^ 1].to)
			if (g.arcs[g.pred[v]].cap < aug)
				aug = g.arcs[g.pred[v]].cap;
		for (int v = t; v != s; v = g.arcs[g.pred[v] ^ 1].to) {
			g.arcs[g.pred[v]].cap -= aug;
			g.arcs[g.pred[v] ^ 1].cap += aug;
			cost += (int64_t)aug * g.arcs[g.pred[v]].cost;
		}
		flow += aug;
		rounds++;
	}

	wl_mix(h, (uint64_t)flow);
	wl_mix(h, (uint64_t)cost);
	wl_mix(h, (uint64_t)rounds);
#ifdef WL_DEBUG
	fprintf(stderr, "rounds %d flow %lld cost %lld\n", rounds, (long long)flow,
		(long long)cost);
#endif

	free(g.head);
	free(g.arcs);
	free(g.pot);
	free(g.dist);
	free(g.pred);
	free(g.heap);
	free(g.hpos);
}

int main(int argc, char **argv)
{
	static const int nodes[WL_NSIZES] = { 8, 20, 3000, 7000, 20000 };
	static const int nsup[WL_NSIZES] = { 1, 1, 4, 10, 16 };
	static const int reps[WL_NSIZES] = { 1, 1, 1, 1, 1 };
	/* micro, tiny, test, train, ref */
	static const uint32_t expect[WL_NSIZES] = {
		0x82df6255, 0x23b269e9, 0xb42a0d13, 0x45d6cccc, 0x29ff9ea4,
	};
	int size = wl_parse_size(argc, argv, "mcf");
	struct wl_rng r;
	uint64_t h = wl_hash_init();

	wl_rng_seed(&r, 429);
	for (int i = 0; i < reps[size]; i++)
		solve(nodes[size], 6, nsup[size], &r, &h);
	return wl_finish("mcf", size, wl_hash_fold(h), expect);
}
