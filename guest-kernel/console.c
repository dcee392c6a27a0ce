// SPDX-License-Identifier: MIT
/* Kernel messages go to the VMM in one hypercall per line. */
#include <stdarg.h>

#include "kernel.h"

bool kverbose;
bool ktrace;

struct fmt_out {
	char *buf;
	size_t n, len;
};

static void out_c(struct fmt_out *o, char c)
{
	if (o->len + 1 < o->n)
		o->buf[o->len] = c;
	o->len++;
}

static void out_num(struct fmt_out *o, u64 v, int base, bool neg, int width,
		    char pad)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		tmp[i++] = '-';
	while (width-- > i)
		out_c(o, pad);
	while (i)
		out_c(o, tmp[--i]);
}

static int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
	struct fmt_out o = { buf, n, 0 };

	for (; *fmt; fmt++) {
		bool lng = false;
		char pad = ' ';
		int width = 0;

		if (*fmt != '%') {
			out_c(&o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + *fmt++ - '0';
		while (*fmt == 'l')
			lng = true, fmt++;
		switch (*fmt) {
		case 'd': {
			s64 v = lng ? va_arg(ap, s64) : va_arg(ap, int);

			out_num(&o, v < 0 ? -(u64)v : (u64)v, 10, v < 0, width,
				pad);
			break;
		}
		case 'u':
			out_num(&o, lng ? va_arg(ap, u64) : va_arg(ap, unsigned),
				10, false, width, pad);
			break;
		case 'x':
			out_num(&o, lng ? va_arg(ap, u64) : va_arg(ap, unsigned),
				16, false, width, pad);
			break;
		case 'p':
			out_c(&o, '0');
			out_c(&o, 'x');
			out_num(&o, (u64)va_arg(ap, void *), 16, false, width,
				pad);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);

			while (s && *s)
				out_c(&o, *s++);
			break;
		}
		case 'c':
			out_c(&o, (char)va_arg(ap, int));
			break;
		case '%':
			out_c(&o, '%');
			break;
		default:
			return o.len;
		}
	}
	if (n)
		buf[o.len < n ? o.len : n - 1] = 0;
	return o.len;
}

int ksnprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = kvsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

/* One line to the VMM: PV_HC_LOG, or PV_HC_PANIC (which never returns). */
static void console_line(u64 hc, const char *fmt, va_list ap)
{
	char buf[256];
	int n = kvsnprintf(buf, sizeof(buf), fmt, ap);

	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	while (n && buf[n - 1] == '\n')
		n--;
	do
		hcall(hc, (u64)buf, n, 0);
	while (hc == PV_HC_PANIC);
}

void kprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	console_line(PV_HC_LOG, fmt, ap);
	va_end(ap);
}

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	console_line(PV_HC_PANIC, fmt, ap);
	va_end(ap);
	for (;;)
		;
}
