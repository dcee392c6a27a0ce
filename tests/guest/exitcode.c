// SPDX-License-Identifier: MIT
/* Exits with the status given as argv[1], after writing to stdout/stderr. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 0;

	printf("exiting with %d\n", status);
	fprintf(stderr, "stderr line\n");
	return status;
}
