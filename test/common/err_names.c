/* SPDX-License-Identifier: MIT */
/*
 * err_names.c - prints what every naming function of the stack says of the
 * codes given on the command line, for test/common/err_plan.py:
 *
 *   err_names CODE...   one line per code:
 *   CODE<TAB>FN<TAB>NAME<TAB>TEXT   for FN in iw mpa ddp rdmap iwv rpcrdma
 */
#include <stdio.h>
#include <stdlib.h>

#include <iwarp/ddp.h>
#include <iwarp/iw_err.h>
#include <iwarp/iwv.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>
#include <iwarp/rpcrdma_wire.h>

static const struct {
	const char *fn;
	const char *(*name)(int);
	const char *(*text)(int);
} namers[] = {
	{"iw", iw_errname, iw_strerror},    {"mpa", mpa_errname, mpa_strerror},
	{"ddp", ddp_errname, ddp_strerror}, {"rdmap", rdmap_errname, rdmap_strerror},
	{"iwv", iwv_errname, iwv_strerror}, {"rpcrdma", rpcrdma_errname, rpcrdma_strerror},
};

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		int code = (int)strtol(argv[i], NULL, 10);

		for (size_t f = 0; f < sizeof(namers) / sizeof(namers[0]); f++)
			printf("%d\t%s\t%s\t%s\n", code, namers[f].fn, namers[f].name(code),
			       namers[f].text(code));
	}
	return 0;
}
