/* SPDX-License-Identifier: MIT */
/*
 * The cpio "newc" format, as both sides see it: the VMM writes archives
 * (cpio_writer.h, host only) and the guest kernel reads them
 * (cpio_reader.h, freestanding).  Each header is the magic and 13 fields
 * of 8 hex digits; the name follows, then the data, each padded to 4.
 */
#ifndef COMMON_CPIO_NEWC_H
#define COMMON_CPIO_NEWC_H

#define CPIO_NEWC_MAGIC		"070701"
#define CPIO_NEWC_MAGIC_LEN	6
#define CPIO_NEWC_HDR_SIZE	110	/* magic + 13 * 8 */
#define CPIO_NEWC_TRAILER	"TRAILER!!!"

#endif
