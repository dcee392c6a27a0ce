/* SPDX-License-Identifier: MIT */
/*
 * A PAPI-style subset over libvpmu, so that code written for PAPI's low
 * level API compiles unchanged for a perfvisor guest.  Event codes and
 * return values are PAPI's.
 */
#ifndef PERFVISOR_PAPI_H
#define PERFVISOR_PAPI_H

#define PAPI_VER_CURRENT	0x07000000
#define PAPI_OK			0
#define PAPI_EINVAL		-1
#define PAPI_ENOMEM		-2
#define PAPI_ESYS		-3
#define PAPI_ENOEVNT		-7
#define PAPI_ECNFLCT		-8
#define PAPI_ENOTRUN		-9
#define PAPI_EISRUN		-10
#define PAPI_ENOEVST		-11
#define PAPI_NULL		-1

#define PAPI_TOT_INS		((int)0x80000032)
#define PAPI_TOT_CYC		((int)0x8000003b)
#define PAPI_BR_INS		((int)0x80000037)
#define PAPI_REF_CYC		((int)0x8000006b)

typedef void (*PAPI_overflow_handler_t)(int EventSet, void *address,
					long long overflow_vector,
					void *context);

int PAPI_library_init(int version);
int PAPI_create_eventset(int *EventSet);
int PAPI_add_event(int EventSet, int EventCode);
int PAPI_start(int EventSet);
int PAPI_read(int EventSet, long long *values);
int PAPI_reset(int EventSet);
int PAPI_stop(int EventSet, long long *values);
int PAPI_cleanup_eventset(int EventSet);
int PAPI_destroy_eventset(int *EventSet);
int PAPI_overflow(int EventSet, int EventCode, int threshold, int flags,
		  PAPI_overflow_handler_t handler);
const char *PAPI_strerror(int code);

#endif
