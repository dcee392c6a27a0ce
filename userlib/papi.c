// SPDX-License-Identifier: MIT
/*
 * PAPI-style event sets over libvpmu.  Overflow (PAPI_overflow) opens the
 * event with a sample period and asks for the signal of each overflow
 * (O_ASYNC, F_SETSIG, F_SETOWN_EX to this thread: F_SETOWN names a
 * process, whatever id it is given); the guest kernel sends it
 * to the thread that owns the counter, with the interrupted user IP in the
 * signal context.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "papi.h"
#include "libvpmu.h"

#define MAX_SETS	8
#define MAX_EVENTS	4
#define OVERFLOW_SIG	(SIGRTMIN + 3)

struct eventset {
	int used;
	int n;
	int running;
	int code[MAX_EVENTS];
	int threshold[MAX_EVENTS];
	PAPI_overflow_handler_t handler[MAX_EVENTS];
	struct vpmu_event ev[MAX_EVENTS];
};

/* Per thread, as PAPI's event sets belong to the thread that runs them. */
static __thread struct eventset sets[MAX_SETS];

static int papi_event(int code, uint16_t *raw)
{
	switch (code) {
	case PAPI_TOT_INS: *raw = 0x00c0; return 0;
	case PAPI_TOT_CYC: *raw = 0x003c; return 0;
	case PAPI_BR_INS: *raw = 0x00c4; return 0;
	case PAPI_REF_CYC: *raw = 0x013c; return 0;
	default: return PAPI_ENOEVNT;
	}
}

static struct eventset *set_get(int es)
{
	return es >= 0 && es < MAX_SETS && sets[es].used ? &sets[es] : NULL;
}

int PAPI_library_init(int version)
{
	return version == PAPI_VER_CURRENT ? PAPI_VER_CURRENT : PAPI_EINVAL;
}

int PAPI_create_eventset(int *es)
{
	if (!es || *es != PAPI_NULL)
		return PAPI_EINVAL;
	for (int i = 0; i < MAX_SETS; i++) {
		if (!sets[i].used) {
			memset(&sets[i], 0, sizeof(sets[i]));
			sets[i].used = 1;
			*es = i;
			return PAPI_OK;
		}
	}
	return PAPI_ENOMEM;
}

int PAPI_add_event(int es, int code)
{
	struct eventset *s = set_get(es);
	uint16_t raw;

	if (!s)
		return PAPI_ENOEVST;
	if (s->running)
		return PAPI_EISRUN;
	if (papi_event(code, &raw))
		return PAPI_ENOEVNT;
	if (s->n == MAX_EVENTS)
		return PAPI_ECNFLCT;
	s->code[s->n++] = code;
	return PAPI_OK;
}

int PAPI_overflow(int es, int code, int threshold, int flags,
		  PAPI_overflow_handler_t handler)
{
	struct eventset *s = set_get(es);

	(void)flags;
	if (!s)
		return PAPI_ENOEVST;
	if (s->running)
		return PAPI_EISRUN;
	for (int i = 0; i < s->n; i++) {
		if (s->code[i] == code) {
			s->threshold[i] = threshold;
			s->handler[i] = handler;
			return PAPI_OK;
		}
	}
	return PAPI_ENOEVNT;
}

/* The overflow signal: find the event set by fd and call its handler. */
static void papi_sigio(int sig, siginfo_t *si, void *uc)
{
	ucontext_t *u = uc;
	void *ip = (void *)u->uc_mcontext.gregs[REG_RIP];

	(void)sig, (void)si;
	for (int i = 0; i < MAX_SETS; i++) {
		struct eventset *s = &sets[i];

		for (int j = 0; s->used && s->running && j < s->n; j++)
			if (s->handler[j])
				s->handler[j](i, ip, 1ll << j, uc);
	}
}

int PAPI_start(int es)
{
	struct eventset *s = set_get(es);
	struct sigaction sa;
	struct f_owner_ex own;
	uint16_t raw = 0;

	if (!s)
		return PAPI_ENOEVST;
	if (s->running)
		return PAPI_EISRUN;
	for (int i = 0; i < s->n; i++) {
		papi_event(s->code[i], &raw);
		if (vpmu_open_raw(&s->ev[i], raw, true, false, s->threshold[i]))
			return PAPI_ESYS;
		if (!s->handler[i])
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = papi_sigio;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(OVERFLOW_SIG, &sa, NULL);
		own.type = F_OWNER_TID;
		own.pid = (pid_t)syscall(SYS_gettid);
		fcntl(s->ev[i].fd, F_SETOWN_EX, &own);
		fcntl(s->ev[i].fd, F_SETSIG, OVERFLOW_SIG);
		fcntl(s->ev[i].fd, F_SETFL, O_ASYNC);
	}
	s->running = 1;
	return PAPI_OK;
}

int PAPI_read(int es, long long *values)
{
	struct eventset *s = set_get(es);

	if (!s)
		return PAPI_ENOEVST;
	if (!s->running)
		return PAPI_ENOTRUN;
	for (int i = 0; i < s->n; i++)
		values[i] = (long long)vpmu_read(&s->ev[i]);
	return PAPI_OK;
}

int PAPI_reset(int es)
{
	struct eventset *s = set_get(es);

	if (!s)
		return PAPI_ENOEVST;
	for (int i = 0; s->running && i < s->n; i++)
		vpmu_reset(&s->ev[i]);
	return PAPI_OK;
}

int PAPI_stop(int es, long long *values)
{
	struct eventset *s = set_get(es);
	int r;

	if (!s)
		return PAPI_ENOEVST;
	if (!s->running)
		return PAPI_ENOTRUN;
	r = values ? PAPI_read(es, values) : PAPI_OK;
	for (int i = 0; i < s->n; i++)
		vpmu_close(&s->ev[i]);
	s->running = 0;
	return r;
}

int PAPI_cleanup_eventset(int es)
{
	struct eventset *s = set_get(es);

	if (!s)
		return PAPI_ENOEVST;
	if (s->running)
		return PAPI_EISRUN;
	s->n = 0;
	return PAPI_OK;
}

int PAPI_destroy_eventset(int *es)
{
	struct eventset *s = es ? set_get(*es) : NULL;

	if (!s)
		return PAPI_ENOEVST;
	s->used = 0;
	*es = PAPI_NULL;
	return PAPI_OK;
}

const char *PAPI_strerror(int code)
{
	switch (code) {
	case PAPI_OK: return "no error";
	case PAPI_EINVAL: return "invalid argument";
	case PAPI_ENOMEM: return "out of memory";
	case PAPI_ESYS: return "system call failed";
	case PAPI_ENOEVNT: return "event does not exist";
	case PAPI_ECNFLCT: return "event conflict";
	case PAPI_ENOTRUN: return "event set not running";
	case PAPI_EISRUN: return "event set running";
	case PAPI_ENOEVST: return "no such event set";
	default: return "unknown error";
	}
}
