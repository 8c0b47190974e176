/* SPDX-License-Identifier: MIT */
/*
 * iw_toolopt.c - the iWARP options every verbs tool shares (DESIGN.md §5).
 *
 * Theory of operation.  A tool parses its own command line with getopt_long
 * and forwards every option value at or above IW_TOOLOPT_BASE here, so the
 * spelling, the accepted values, the error messages and the --help text of
 * these options are the same in iwping, iwperf and whatever comes next.  The
 * result is a struct iw_toolopt: the per-id connection options of the CM
 * (iwcm_options, applied to the listening or connecting id before it is used;
 * ids born from a listener inherit them), the conn_param IRD/ORD, and how to
 * open the verbs context (engine, engine thread).
 *
 * What the options mean on the wire: --markers sets the M bit of our MPA
 * frame, i.e. it asks the PEER to put Markers in what it sends us (RFC 5044
 * §7.1.1); whether we send Markers is the peer's choice, which we always
 * honour.  --crc sets the C bit; CRC is used both ways if either side sets it.
 * --p2p and --rtr select the RFC 6581 §9 Ready-To-Receive message, which only
 * exists with MPA revision 2 (the CM reports the mismatch when connecting).
 */
#include "iw_toolopt.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/mpa.h>

#include "iw_log.h"

void iw_toolopt_init(struct iw_toolopt *o)
{
	memset(o, 0, sizeof(*o));
	iwcm_options_default(&o->cm);
	o->engine = IWV_ENGINE_DEFAULT;
	o->engine_thread = false;
	o->ird = 0;
	o->ord = 0;
}

static int bad(const char *prog, const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "%s: invalid value '%s' for --%s: %s\n", prog, arg, opt, why);
	return -1;
}

/* "on"/"off" and the usual synonyms; -1 for anything else. */
static int parse_bool(const char *arg)
{
	static const char *const yes[] = {"on", "yes", "true", "1"};
	static const char *const no[] = {"off", "no", "false", "0"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(arg, yes[i]))
			return 1;
		if (!strcmp(arg, no[i]))
			return 0;
	}
	return -1;
}

static int parse_ulong(const char *arg, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!*arg || *arg == '-' || *arg == '+')
		return -1;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A comma-separated subset of write,read,send (or "all") as an MPA_RTR_* mask. */
static int parse_rtr(const char *arg, uint8_t *mask)
{
	uint8_t m = 0;
	const char *p = arg;

	for (;;) {
		size_t n = strcspn(p, ",");

		if (n == 5 && !strncmp(p, "write", n))
			m |= MPA_RTR_WRITE;
		else if (n == 4 && !strncmp(p, "read", n))
			m |= MPA_RTR_READ;
		else if (n == 4 && !strncmp(p, "send", n))
			m |= MPA_RTR_SEND;
		else if (n == 3 && !strncmp(p, "all", n))
			m |= MPA_RTR_ALL;
		else
			return -1;
		if (!p[n])
			break;
		p += n + 1;
	}
	*mask = m;
	return 0;
}

int iw_toolopt_parse(struct iw_toolopt *o, const char *prog, int c, const char *arg)
{
	unsigned long v;
	int b;

	switch (c) {
	case IW_TOOLOPT_MPA_REV:
		if (parse_ulong(arg, 1, 2, &v))
			return bad(prog, "mpa-rev", arg, "1 (RFC 5044) or 2 (RFC 6581)");
		o->cm.mpa_rev = (uint8_t)v;
		return 0;
	case IW_TOOLOPT_CRC:
		if ((b = parse_bool(arg)) < 0)
			return bad(prog, "crc", arg, "on or off");
		o->cm.crc = b;
		return 0;
	case IW_TOOLOPT_MARKERS:
		if ((b = parse_bool(arg)) < 0)
			return bad(prog, "markers", arg, "on or off");
		o->cm.markers = b;
		return 0;
	case IW_TOOLOPT_P2P:
		if ((b = parse_bool(arg)) < 0)
			return bad(prog, "p2p", arg, "on or off");
		o->cm.p2p = b;
		return 0;
	case IW_TOOLOPT_RTR:
		if (parse_rtr(arg, &o->cm.rtr))
			return bad(prog, "rtr", arg,
				   "a comma-separated list of write, read, send, all");
		return 0;
	case IW_TOOLOPT_IRD:
		/* 0 is not accepted: a tool that wants the default leaves the option out */
		if (parse_ulong(arg, 1, 255, &v))
			return bad(prog, "ird", arg, "an integer from 1 to 255");
		o->ird = (uint8_t)v;
		return 0;
	case IW_TOOLOPT_ORD:
		if (parse_ulong(arg, 1, 255, &v))
			return bad(prog, "ord", arg, "an integer from 1 to 255");
		o->ord = (uint8_t)v;
		return 0;
	case IW_TOOLOPT_ENGINE:
		if (!strcmp(arg, "uring") || !strcmp(arg, "io_uring"))
			o->engine = IWV_ENGINE_URING;
		else if (!strcmp(arg, "epoll"))
			o->engine = IWV_ENGINE_EPOLL;
		else if (!strcmp(arg, "auto") || !strcmp(arg, "default"))
			o->engine = IWV_ENGINE_DEFAULT;
		else
			return bad(prog, "engine", arg, "uring, epoll or auto");
		return 0;
	case IW_TOOLOPT_ENGINE_THREAD:
		o->engine_thread = true;
		return 0;
	case IW_TOOLOPT_TRACE:
		o->cm.trace = true;
		return 0;
	case IW_TOOLOPT_FIRST_FPDU_DELAY:
		if (parse_ulong(arg, 0, 60000, &v))
			return bad(prog, "first-fpdu-delay", arg, "milliseconds from 0 to 60000");
		o->cm.first_fpdu_delay_ms = (uint32_t)v;
		return 0;
	default:
		fprintf(stderr, "%s: internal error: unknown shared option %#x\n", prog, c);
		return -1;
	}
}

void iw_toolopt_help(FILE *f)
{
	/* split: ISO C caps string literals at 4095 octets */
	fputs("iWARP options (the same in every iwarp tool):\n"
	      "      --mpa-rev 1|2      MPA revision to offer: 1 = RFC 5044, 2 = RFC 6581 with\n"
	      "                         the IRD/ORD word in the private data (default 2)\n"
	      "      --crc on|off       ask for the MPA CRC32c (default on); CRC is used in\n"
	      "                         both directions if either side asks for it\n"
	      "      --markers on|off   ask the peer to put MPA Markers in the FPDUs it sends\n"
	      "                         us (the M bit; default off); Markers are per\n"
	      "                         direction, and we always send them when asked\n"
	      "      --p2p on|off       RFC 6581 peer-to-peer model: the initiator opens full\n"
	      "                         operation with a Ready-To-Receive message (default\n"
	      "                         off; needs --mpa-rev 2)\n"
	      "      --rtr LIST         RTR messages offered (initiator) or accepted\n"
	      "                         (responder): comma-separated write, read, send or all\n"
	      "                         (default all)\n",
	      f);
	fputs("      --ird N            inbound RDMA Read queue depth to advertise, 1-255\n"
	      "                         (default 16)\n"
	      "      --ord N            outbound RDMA Reads in flight to ask for, 1-255\n"
	      "                         (default 16)\n"
	      "      --engine uring|epoll\n"
	      "                         I/O engine (default: $IWARP_ENGINE, else epoll)\n"
	      "      --engine-thread    progress the stack in a thread of its own as well\n"
	      "                         (default: only inside verbs calls, or as\n"
	      "                         $IWARP_ENGINE_THREAD=1 says)\n"
	      "      --first-fpdu-delay MS\n"
	      "                         initiator: wait MS milliseconds between the MPA Reply\n"
	      "                         and the first FPDU, which Linux siw needs (default\n"
	      "                         20; 0 = none)\n"
	      "      --trace            log every connection step on stderr\n",
	      f);
}

/* iw_log hands the sink a non-const context: keep the program name here instead */
static const char *trace_prog = "iwarp";

static void trace_sink(void *ctx, enum iw_log_level level, const char *msg)
{
	static const char *const names[] = {"error", "warning", "info", "debug", "trace"};

	fprintf(stderr, "%s: %s: %s\n", trace_prog,
		(unsigned)level < sizeof(names) / sizeof(names[0]) ? names[level] : "log", msg);
}

struct iwv_context *iw_toolopt_open(const struct iw_toolopt *o, const char *prog)
{
	struct iwv_context_attr attr;
	struct iwv_context *ctx;

	if (o->cm.trace) {
		trace_prog = prog;
		iw_log_set(trace_sink, NULL, IW_LOG_TRACE);
	}
	iwv_context_attr_default(&attr);
	attr.engine = o->engine;
	/* without --engine-thread, IWARP_ENGINE_THREAD still decides */
	if (o->engine_thread)
		attr.engine_thread = 1;
	ctx = iwv_open_context(&attr);
	if (!ctx) {
		int err = errno;

		fprintf(stderr, "%s: cannot open the iWARP device (engine %s): %s\n", prog,
			o->engine == IWV_ENGINE_URING	? "uring"
			: o->engine == IWV_ENGINE_EPOLL ? "epoll"
							: "auto",
			strerror(err));
		errno = err;
	}
	return ctx;
}

int iw_toolopt_apply(const struct iw_toolopt *o, struct iwcm_id *id)
{
	return iwcm_set_options(id, &o->cm);
}

void iw_toolopt_conn_param(const struct iw_toolopt *o, struct iwcm_conn_param *p)
{
	p->responder_resources = o->ird;
	p->initiator_depth = o->ord;
}

static void rtr_names(uint8_t mask, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", mask & MPA_RTR_WRITE ? ",write" : "",
		 mask & MPA_RTR_READ ? ",read" : "", mask & MPA_RTR_SEND ? ",send" : "",
		 mask ? "" : ",none");
	/* drop the leading comma */
	memmove(buf, buf + 1, strlen(buf));
}

/*
 * "markers A/B": A = we ask the peer for Markers (what we receive), B = we send
 * Markers if the peer asks (what we transmit).
 */
void iw_toolopt_describe(const struct iw_toolopt *o, char *buf, size_t len)
{
	char rtr[32];
	int n;

	n = snprintf(buf, len, "rev %u, CRC %s, markers %s/%s, p2p %s", o->cm.mpa_rev,
		     o->cm.crc ? "on" : "off", o->cm.markers ? "on" : "off",
		     o->cm.accept_markers ? "on" : "off", o->cm.p2p ? "on" : "off");
	if (o->cm.p2p && n >= 0 && (size_t)n < len) {
		rtr_names(o->cm.rtr, rtr, sizeof(rtr));
		snprintf(buf + n, len - (size_t)n, " (rtr %s)", rtr);
	}
}

int iw_toolopt_bad_arg(const char *prog, const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "%s: invalid value '%s' for %s: %s\n", prog, val, opt, why);
	return -1;
}

int iw_toolopt_parse_u64(const char *prog, const char *opt, const char *s, uint64_t min,
			 uint64_t max, bool suffix, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!*s || *s == '-' || *s == '+')
		return iw_toolopt_bad_arg(prog, opt, s, "not a number");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return iw_toolopt_bad_arg(prog, opt, s, "not a number");
	if (suffix && *end) {
		switch (*end) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			return iw_toolopt_bad_arg(prog, opt, s, "unknown suffix (K, M or G)");
		}
		end++;
	}
	if (*end)
		return iw_toolopt_bad_arg(prog, opt, s, "trailing characters");
	if (shift && v > (max >> shift))
		return iw_toolopt_bad_arg(prog, opt, s, "too large");
	v <<= shift;
	if (v < min || v > max) {
		char why[96];

		snprintf(why, sizeof(why), "must be from %" PRIu64 " to %" PRIu64, min, max);
		return iw_toolopt_bad_arg(prog, opt, s, why);
	}
	*out = v;
	return 0;
}
