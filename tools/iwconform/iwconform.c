/* SPDX-License-Identifier: MIT */
/*
 * iwconform.c - an active conformance tester for iWARP peers: the command
 * line, the run over the catalogue and the reports (table, JSON, JUnit).
 *
 * Theory of operation: icf_cases.c and icf_server.c hold the catalogues;
 * each case gets a new TCP connection (icf_ep.c) - as client (-c) one to
 * the peer's server, as server (-s) one accepted from the peer's client -
 * commits its one violation and records what the peer did in a struct
 * icf_obs, which icf_grade.c grades strictly (the RFC to the bit) or
 * leniently (the connection died cleanly and nothing wrong was accepted).
 * As client we pause a little between cases so the peer's persistent server
 * (rping -s -P) is ready for the next connection.  As server each case waits
 * up to --accept-timeout for the client, which the user runs in a loop, one
 * ping per run; a case nobody connected for fails, and after --no-shows such
 * cases in a row the run ends instead of waiting on.  SIGINT or SIGTERM stops
 * after the case running (at once when it is waiting for a client).
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "iwt_num.h"

#include "icf.h"

#define ICF_DEFAULT_PORT    7174
#define ICF_DEFAULT_TIMEOUT 2000
#define ICF_DEFAULT_ACCEPT  30000
#define ICF_DEFAULT_NOSHOWS 3
#define ICF_PAUSE_MS	    50
#define ICF_MAX_CASES	    256

static const char *prog = "iwconform";
static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *f)
{
	fputs("Usage: iwconform -c ADDR [-p PORT] [--profile rping|perftest] [OPTION]...\n"
	      "       iwconform -s [-a ADDR] [-p PORT] [--accept-timeout MS] [--no-shows N]\n"
	      "                 [OPTION]...\n"
	      "       iwconform [-s] --list\n"
	      "\n"
	      "Active conformance tester for iWARP peers (MPA RFC 5044 + RFC 6581, DDP\n"
	      "RFC 5041, RDMAP RFC 5040 + RFC 7306).  It plays one side of rping's exchange\n"
	      "(or perftest's client) far enough to reach the point of each case, commits\n"
	      "one protocol violation (or makes one negotiation choice) and grades the\n"
	      "peer's reaction against the RFC clause the case cites.\n"
	      "\n"
	      "  -c: we connect to the peer's server, every case on a new connection: run\n"
	      "      the peer as 'rping -s -P' (or 'iwping -s -P'); with --profile perftest\n"
	      "      as 'ib_write_bw -R' or 'ib_read_bw -R', started anew for each case\n"
	      "      (a perftest server serves one client): use --case ID per run.\n"
	      "  -s: we listen for the peer's client and play rping's server; every case\n"
	      "      takes one connection, so run the client in a loop, one ping per run:\n"
	      "        while :; do rping -c -a HOST -p PORT -C 1 -v; sleep 0.2; done\n"
	      "        while :; do iwping -c -a HOST -p PORT -C 1; sleep 0.2; done\n"
	      "\n"
	      "Options:\n"
	      "  -c ADDR          the peer's server (IPv4, IPv6 or a name; [V6]:PORT works)\n"
	      "  -s               listen for the peer's client (the server-role catalogue,\n"
	      "                   ids srv.*)\n"
	      "  -a ADDR          -s: the address to listen on (default 0.0.0.0)\n"
	      "  -p PORT          the port (default 7174, rping's)\n"
	      "  --profile P      -c: the client to play: rping (IRD = ORD = 1, default) or\n"
	      "                   perftest (IRD = ORD = 16, perftest's control connection\n"
	      "                   and key exchange, the cases against its server's buffer)\n"
	      "  --case IDS       run only these cases (comma-separated ids; a trailing '.'\n"
	      "                   or '*' takes every id with that prefix: --case ddp.*)\n"
	      "  --list           print the catalogue (with -s: the server role's): id,\n"
	      "                   TAB, RFC clause, TAB, what it does\n"
	      "  --json           one JSON object per line per case, then a summary object\n"
	      "  --junit FILE     also write a JUnit XML report to FILE\n"
	      "  --pcap-dir DIR   write DIR/ID.pcap per case, synthesised from our sockets\n"
	      "                   (no capture privilege needed; read it with iwdump -r)\n"
	      "  --timeout MS     wait per reaction (default 2000; some cases wait longer)\n"
	      "  --accept-timeout MS\n"
	      "                   -s: how long a case waits for the client to connect\n"
	      "                   (default 30000); a case nobody connected for fails\n"
	      "  --no-shows N     -s: end the run after N such cases in a row (default 3)\n"
	      "  -v               more detail on stderr (-vv: every message of the peer)\n"
	      "  -h, --help       show this help and exit\n"
	      "\n" IWT_NUM_HELP "\n"
	      "Grades: pass-strict (the RFC to the bit: layer/type/code, header copies, then\n"
	      "a close), pass-lenient (the connection died cleanly and nothing wrong was\n"
	      "accepted; the deviation is named), fail, skipped (with the reason).\n"
	      "\n"
	      "Exit status:\n"
	      "  0  every case that ran passed strictly\n"
	      "  1  a case passed only leniently or failed, the peer could not be reached\n"
	      "     (-s: no client came), or the run was interrupted\n"
	      "  2  bad command line\n"
	      "\n"
	      "See iwconform(1), iwping(1), iwdump(1).\n",
	      f);
}

static bool selected(const char *list, const char *id)
{
	const char *p = list;

	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n && (p[n - 1] == '*' || p[n - 1] == '.')) {
			size_t k = p[n - 1] == '*' ? n - 1 : n;

			if (strncmp(id, p, k) == 0)
				return true;
		} else if (n == strlen(id) && strncmp(id, p, n) == 0) {
			return true;
		}
		p = e ? e + 1 : NULL;
	}
	return false;
}

static bool known(const struct icf_case *cs, size_t n, const char *list, char *bad, size_t badlen)
{
	const char *p = list;

	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		bool hit = false;

		snprintf(bad, badlen, "%.*s", (int)k, p);
		for (size_t i = 0; i < n && !hit; i++)
			hit = selected(bad, cs[i].id);
		if (!hit)
			return false;
		p = e ? e + 1 : NULL;
	}
	return true;
}

static void json_str(FILE *f, const char *s)
{
	iwd_out_json_string(f, s);
}

static void xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

struct result {
	const struct icf_case *c;
	enum icf_grade g;
	char expect[80], got[80], dev[192];
	double secs;
};

static int write_junit(const char *path, const struct result *r, size_t n, const char *peer)
{
	FILE *f = fopen(path, "w");
	size_t fails = 0, skips = 0;

	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++) {
		fails += r[i].g == ICF_FAIL || r[i].g == ICF_PASS_LENIENT;
		skips += r[i].g == ICF_SKIPPED;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuite name=\"iwconform ");
	xml_str(f, peer);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n", n, fails, skips);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "  <testcase classname=\"iwconform\" name=\"");
		xml_str(f, r[i].c->id);
		fprintf(f, "\" time=\"%.3f\">", r[i].secs);
		if (r[i].g == ICF_SKIPPED) {
			fprintf(f, "<skipped message=\"");
			xml_str(f, r[i].dev);
			fprintf(f, "\"/>");
		} else if (r[i].g != ICF_PASS_STRICT) {
			fprintf(f, "<failure message=\"%s: ", icf_grade_name(r[i].g));
			xml_str(f, r[i].dev);
			fprintf(f, "\">expected ");
			xml_str(f, r[i].expect);
			fprintf(f, ", got ");
			xml_str(f, r[i].got);
			fprintf(f, " (");
			xml_str(f, r[i].c->rfc);
			fprintf(f, ")</failure>");
		}
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "</testsuite>\n");
	return fclose(f) == 0 ? 0 : -1;
}

enum {
	OPT_PROFILE = 0x100,
	OPT_CASE,
	OPT_LIST,
	OPT_JSON,
	OPT_JUNIT,
	OPT_PCAP_DIR,
	OPT_TIMEOUT,
	OPT_ACCEPT_TIMEOUT,
	OPT_NO_SHOWS,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"profile", required_argument, NULL, OPT_PROFILE},
		{"case", required_argument, NULL, OPT_CASE},
		{"list", no_argument, NULL, OPT_LIST},
		{"json", no_argument, NULL, OPT_JSON},
		{"junit", required_argument, NULL, OPT_JUNIT},
		{"pcap-dir", required_argument, NULL, OPT_PCAP_DIR},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"accept-timeout", required_argument, NULL, OPT_ACCEPT_TIMEOUT},
		{"no-shows", required_argument, NULL, OPT_NO_SHOWS},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static struct result res[ICF_MAX_CASES];
	struct icf_ctx x = {.profile = ICF_PROFILE_RPING,
			    .timeout_ms = ICF_DEFAULT_TIMEOUT,
			    .accept_ms = ICF_DEFAULT_ACCEPT,
			    .lfd = -1};
	const char *host = NULL, *bind_addr = NULL, *only = NULL, *junit = NULL;
	struct iwt_hostport hp;
	bool list = false, json = false, server = false, profile_set = false;
	uint64_t port = ICF_DEFAULT_PORT, v, no_shows = ICF_DEFAULT_NOSHOWS;
	size_t ncases, nres = 0, count[4] = {0}, absent = 0;
	const struct icf_case *cs;
	struct sigaction sa;
	char peer[IWT_ADDR_STRLEN + 16], bad[128], err[160];
	const char *why;
	int c, ret;

	while ((c = getopt_long(argc, argv, "c:a:p:vsh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			host = optarg;
			break;
		case 'a':
			bind_addr = optarg;
			break;
		case 'p':
			if (iwt_num_u64(prog, "-p", optarg, 1, 65535, 0, &port))
				return iwt_try_help(prog), IWT_EXIT_USAGE;
			break;
		case 'v':
			x.verbose++;
			break;
		case 's':
			server = true;
			break;
		case 'h':
			usage(stdout);
			return IWT_EXIT_OK;
		case OPT_PROFILE:
			profile_set = true;
			if (strcmp(optarg, "rping") == 0) {
				x.profile = ICF_PROFILE_RPING;
			} else if (strcmp(optarg, "perftest") == 0) {
				x.profile = ICF_PROFILE_PERFTEST;
			} else {
				iwt_bad_arg(prog, "--profile", optarg, "rping or perftest");
				return iwt_try_help(prog), IWT_EXIT_USAGE;
			}
			break;
		case OPT_CASE:
			only = optarg;
			break;
		case OPT_LIST:
			list = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_JUNIT:
			junit = optarg;
			break;
		case OPT_PCAP_DIR:
			x.pcap_dir = optarg;
			break;
		case OPT_TIMEOUT:
			if (iwt_num_u64(prog, "--timeout", optarg, 10, 600000, 0, &v))
				return iwt_try_help(prog), IWT_EXIT_USAGE;
			x.timeout_ms = (int)v;
			break;
		case OPT_ACCEPT_TIMEOUT:
			if (iwt_num_u64(prog, "--accept-timeout", optarg, 10, 3600000, 0, &v))
				return iwt_try_help(prog), IWT_EXIT_USAGE;
			x.accept_ms = (int)v;
			break;
		case OPT_NO_SHOWS:
			if (iwt_num_u64(prog, "--no-shows", optarg, 1, 1000, 0, &no_shows))
				return iwt_try_help(prog), IWT_EXIT_USAGE;
			break;
		default:
			iwt_try_help(prog);
			return IWT_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return iwt_usage_err(prog, "unexpected argument '%s'", argv[optind]),
		       IWT_EXIT_USAGE;
	if (server && host)
		return iwt_usage_err(prog, "-c and -s exclude each other"), IWT_EXIT_USAGE;
	if (!server && bind_addr)
		return iwt_usage_err(prog, "-a ADDR goes with -s (use -c ADDR)"), IWT_EXIT_USAGE;
	if (server && profile_set && x.profile != ICF_PROFILE_RPING)
		return iwt_usage_err(prog, "--profile perftest plays perftest's client: use it "
					   "with -c"),
		       IWT_EXIT_USAGE;
	x.role = server ? ICF_ROLE_SERVER : ICF_ROLE_CLIENT;
	cs = icf_cases(x.role, &ncases);
	if (only && !known(cs, ncases, only, bad, sizeof(bad)))
		return iwt_usage_err(prog, "no case '%s' (--list shows them)", bad), IWT_EXIT_USAGE;
	if (list) {
		for (size_t i = 0; i < ncases; i++)
			if (!only || selected(only, cs[i].id))
				printf("%s\t%s\t%s\n", cs[i].id, cs[i].rfc, cs[i].desc);
		return IWT_EXIT_OK;
	}
	if (!host && !server)
		return iwt_usage_err(prog, "-c ADDR or -s is required"), IWT_EXIT_USAGE;
	if (server)
		host = bind_addr;
	if (host && iwt_addr_split(host, &hp, &why) < 0) {
		iwt_bad_arg(prog, server ? "-a" : "-c", host, why);
		return iwt_try_help(prog), IWT_EXIT_USAGE;
	}
	if (!host)
		memset(&hp, 0, sizeof(hp));
	if (hp.has_port)
		port = hp.port;
	ret = iwt_addr_resolve(hp.host[0] ? hp.host : NULL, (uint16_t)port, server, &x.addr,
			       &x.addrlen);
	if (ret) {
		iwt_bad_arg(prog, server ? "-a" : "-c", host ? host : "", gai_strerror(ret));
		return iwt_try_help(prog), IWT_EXIT_USAGE;
	}
	if (x.pcap_dir && access(x.pcap_dir, W_OK) != 0) {
		iwt_bad_arg(prog, "--pcap-dir", x.pcap_dir, strerror(errno));
		return iwt_try_help(prog), IWT_EXIT_USAGE;
	}
	iwt_addr_format((struct sockaddr *)&x.addr, peer, sizeof(peer));
	if (server) {
		x.lfd = icf_ep_listen((struct sockaddr *)&x.addr, x.addrlen, err, sizeof(err));
		if (x.lfd < 0) {
			iwt_msg(prog, "%s: %s", peer, err);
			return IWT_EXIT_FAIL;
		}
		iwt_msg(prog, "listening on %s: run the client in a loop, one ping per run", peer);
		snprintf(peer + strlen(peer), sizeof(peer) - strlen(peer), " (clients)");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	x.stop = &stop_flag;

	if (!json)
		printf("%-28s %-17s %-26s %-26s %s\n", "case", "RFC", "expected", "got", "grade");
	for (size_t i = 0; i < ncases && nres < ICF_MAX_CASES && !stop_flag; i++) {
		struct result *r = &res[nres];
		struct icf_obs o;
		uint64_t t0;

		if (only && !selected(only, cs[i].id))
			continue;
		if (nres && !server)
			usleep(ICF_PAUSE_MS * 1000);
		r->c = &cs[i];
		t0 = iwt_now_ns();
		icf_case_run(&cs[i], &x, &o);
		if (stop_flag) {
			/* the waits of the case were cut short: no verdict */
			o.skipped = true;
			snprintf(o.why, sizeof(o.why), "interrupted");
		}
		r->secs = (double)(iwt_now_ns() - t0) / 1e9;
		r->g = icf_grade(&cs[i].exp, &o, r->dev, sizeof(r->dev));
		icf_expect_str(&cs[i].exp, r->expect, sizeof(r->expect));
		icf_obs_str(&o, r->got, sizeof(r->got));
		count[r->g]++;
		nres++;
		if (json) {
			printf("{\"case\":");
			json_str(stdout, r->c->id);
			printf(",\"rfc\":");
			json_str(stdout, r->c->rfc);
			printf(",\"expected\":");
			json_str(stdout, r->expect);
			printf(",\"got\":");
			json_str(stdout, r->got);
			printf(",\"grade\":\"%s\",\"detail\":", icf_grade_name(r->g));
			json_str(stdout, r->dev);
			printf(",\"seconds\":%.3f}\n", r->secs);
		} else {
			printf("%-28s %-17s %-26s %-26s %s\n", r->c->id, r->c->rfc, r->expect,
			       r->got, icf_grade_name(r->g));
			if (x.verbose && r->dev[0])
				printf("%28s %s\n", "", r->dev);
		}
		fflush(stdout);
		if (server) {
			/* a client that never came: after --no-shows in a row, stop */
			absent = o.connected || stop_flag ? 0 : absent + 1;
			if (absent >= no_shows) {
				iwt_msg(prog, "%zu cases in a row without a client: stopping",
					absent);
				break;
			}
		} else if (!o.connected && !o.skipped) {
			iwt_msg(prog, "cannot reach %s: %s", peer, o.why);
			break;
		}
	}
	if (x.lfd >= 0)
		close(x.lfd);
	if (json) {
		printf("{\"peer\":");
		json_str(stdout, peer);
		printf(",\"cases\":%zu,\"pass_strict\":%zu,\"pass_lenient\":%zu,\"fail\":%zu,"
		       "\"skipped\":%zu,\"interrupted\":%s}\n",
		       nres, count[ICF_PASS_STRICT], count[ICF_PASS_LENIENT], count[ICF_FAIL],
		       count[ICF_SKIPPED], stop_flag ? "true" : "false");
	} else {
		printf("\nPeer %s: %zu cases, %zu pass-strict, %zu pass-lenient, %zu fail, "
		       "%zu skipped%s\n",
		       peer, nres, count[ICF_PASS_STRICT], count[ICF_PASS_LENIENT], count[ICF_FAIL],
		       count[ICF_SKIPPED], stop_flag ? " (interrupted)" : "");
		for (size_t i = 0; i < nres; i++)
			if (res[i].g != ICF_PASS_STRICT)
				printf("  %-28s %-12s %s\n", res[i].c->id, icf_grade_name(res[i].g),
				       res[i].dev);
	}
	if (junit && write_junit(junit, res, nres, peer) < 0) {
		iwt_msg(prog, "%s: %s", junit, strerror(errno));
		return IWT_EXIT_FAIL;
	}
	if (stop_flag || nres == 0)
		return IWT_EXIT_FAIL;
	return count[ICF_PASS_LENIENT] || count[ICF_FAIL] ? IWT_EXIT_FAIL : IWT_EXIT_OK;
}
