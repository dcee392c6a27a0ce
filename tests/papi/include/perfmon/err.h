/* SPDX-License-Identifier: MIT */
/*
 * libpfm4's examples include <perfmon/err.h>, which Debian's libpfm4-dev
 * does not install; it declares the BSD err()/warn() family that glibc
 * has in <err.h>.
 */
#include <err.h>
