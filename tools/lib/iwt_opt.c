/* SPDX-License-Identifier: MIT */
/*
 * iwt_opt.c - the iWARP options every verbs tool shares (docs/verbs.md §4.4).
 *
 * Theory of operation.  A tool parses its own command line with getopt_long
 * and forwards every option value at or above IWT_OPT_BASE here, so the
 * spelling, the accepted values, the error messages and the --help text of
 * these options are the same in iwping, iwperf and whatever comes next.  The
 * result is a struct iwt_opt: the per-id connection options of the CM
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
#include "iwt_opt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "iw_log.h"
#include "iwt_err.h"
#include "iwt_num.h"
#include "iwt_rtr.h"

void iwt_opt_init(struct iwt_opt *o)
{
	memset(o, 0, sizeof(*o));
	iwcm_options_default(&o->cm);
	o->engine = IWV_ENGINE_DEFAULT;
	o->engine_thread = false;
	o->rx_direct = -1;
	o->ird = 0;
	o->ord = 0;
}

/* An on/off option: 0, or -1 after the message. */
static int onoff(const char *prog, const char *opt, const char *arg, bool *out)
{
	int b = iwt_onoff_parse(arg);

	if (b < 0)
		return iwt_bad_arg(prog, opt, arg, "on or off");
	*out = b;
	return 0;
}

/*
 * --keepalive IDLE[,INTVL[,CNT]]: seconds idle before the first probe (0 =
 * no keepalive), seconds between probes, probes (tcp(7) TCP_KEEPIDLE,
 * TCP_KEEPINTVL, TCP_KEEPCNT; the kernel takes 1-32767 s and 1-127 probes).
 * The parts left out keep their values.  0, or -1 after the message.
 */
static int keepalive(struct iwt_opt *o, const char *prog, const char *arg)
{
	static const char *const what[3] = {"idle seconds (0 = off), 0-32767",
					    "seconds between probes, 1-32767", "probes, 1-127"};
	static const uint64_t lo[3] = {0, 1, 1}, hi[3] = {32767, 32767, 127};
	char buf[64], *save = NULL, *tok;
	uint64_t v[3] = {o->cm.keepalive_idle_s, o->cm.keepalive_intvl_s, o->cm.keepalive_cnt};
	int i = 0;

	if (strlen(arg) >= sizeof(buf) || !*arg || arg[strlen(arg) - 1] == ',')
		return iwt_bad_arg(prog, "--keepalive", arg, "IDLE[,INTVL[,CNT]] in seconds");
	memcpy(buf, arg, strlen(arg) + 1);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
		if (i == 3 || iwt_num_parse(tok, lo[i], hi[i], 0, &v[i]) != IWT_NUM_OK)
			return iwt_bad_arg(prog, "--keepalive", arg,
					   i == 3 ? "IDLE[,INTVL[,CNT]] in seconds" : what[i]);
	}
	o->cm.keepalive_idle_s = (uint16_t)v[0];
	o->cm.keepalive_intvl_s = (uint16_t)v[1];
	o->cm.keepalive_cnt = (uint8_t)v[2];
	return 0;
}

int iwt_opt_parse(struct iwt_opt *o, const char *prog, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case IWT_OPT_MPA_REV:
		if (iwt_num_parse(arg, 1, 2, 0, &v) != IWT_NUM_OK)
			return iwt_bad_arg(prog, "--mpa-rev", arg, "1 (RFC 5044) or 2 (RFC 6581)");
		o->cm.mpa_rev = (uint8_t)v;
		return 0;
	case IWT_OPT_CRC:
		return onoff(prog, "--crc", arg, &o->cm.crc);
	case IWT_OPT_MARKERS:
		return onoff(prog, "--markers", arg, &o->cm.markers);
	case IWT_OPT_P2P:
		return onoff(prog, "--p2p", arg, &o->cm.p2p);
	case IWT_OPT_RTR:
		if (iwt_rtr_parse(arg, &o->cm.rtr))
			return iwt_bad_arg(prog, "--rtr", arg,
					   "a comma-separated list of write, read, send, all");
		return 0;
	case IWT_OPT_IRD:
		/* 0 is not accepted: a tool that wants the default leaves the option out */
		if (iwt_num_u64(prog, "--ird", arg, 1, 255, 0, &v))
			return -1;
		o->ird = (uint8_t)v;
		return 0;
	case IWT_OPT_ORD:
		if (iwt_num_u64(prog, "--ord", arg, 1, 255, 0, &v))
			return -1;
		o->ord = (uint8_t)v;
		return 0;
	case IWT_OPT_ENGINE:
		if (!strcmp(arg, "uring") || !strcmp(arg, "io_uring"))
			o->engine = IWV_ENGINE_URING;
		else if (!strcmp(arg, "epoll"))
			o->engine = IWV_ENGINE_EPOLL;
		else if (!strcmp(arg, "auto") || !strcmp(arg, "default"))
			o->engine = IWV_ENGINE_DEFAULT;
		else
			return iwt_bad_arg(prog, "--engine", arg, "uring, epoll or auto");
		return 0;
	case IWT_OPT_ENGINE_THREAD:
		o->engine_thread = true;
		return 0;
	case IWT_OPT_TRACE:
		o->cm.trace = true;
		return 0;
	case IWT_OPT_RX_DIRECT:
		if (!strcmp(arg, "on"))
			o->rx_direct = 1;
		else if (!strcmp(arg, "off"))
			o->rx_direct = 0;
		else
			return iwt_bad_arg(prog, "--rx-direct", arg, "on or off");
		return 0;
	case IWT_OPT_FIRST_FPDU_DELAY:
		if (iwt_num_u64(prog, "--first-fpdu-delay", arg, 0, 60000, 0, &v))
			return -1;
		o->cm.first_fpdu_delay_ms = (uint32_t)v;
		return 0;
	case IWT_OPT_KEEPALIVE:
		return keepalive(o, prog, arg);
	case IWT_OPT_USER_TIMEOUT:
		/* tcp(7): TCP_USER_TIMEOUT takes an int of milliseconds */
		if (iwt_num_u64(prog, "--user-timeout", arg, 0, 3600000, 0, &v))
			return -1;
		o->cm.user_timeout_ms = (uint32_t)v;
		return 0;
	case IWT_OPT_MPA_TIMEOUT:
		if (iwt_num_u64(prog, "--mpa-timeout", arg, 1, 3600000, 0, &v))
			return -1;
		o->cm.timeout_ms = (uint32_t)v;
		return 0;
	case IWT_OPT_HANDSHAKE_GRACE:
		if (iwt_num_u64(prog, "--handshake-grace", arg, 0, 3600000, 0, &v))
			return -1;
		o->cm.handshake_grace_ms = (uint32_t)v;
		return 0;
	default:
		fprintf(stderr, "%s: internal error: unknown shared option %#x\n", prog, c);
		return -1;
	}
}

void iwt_opt_help(FILE *f)
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
	      "      --rx-direct on|off epoll: read the payload of large segments (16 KiB\n"
	      "                         and up) straight into its target instead of through\n"
	      "                         the receive buffer and a copy (default: off, or as\n"
	      "                         $IWARP_RX_DIRECT=1 says; slower on loopback, may pay\n"
	      "                         with a NIC)\n"
	      "      --first-fpdu-delay MS\n"
	      "                         initiator: wait MS milliseconds between the MPA Reply\n"
	      "                         and the first FPDU, which Linux siw needs (default\n"
	      "                         20; 0 = none)\n"
	      "      --trace            log every connection step on stderr\n",
	      f);
	fputs("Liveness and handshake limits (docs/verbs.md):\n"
	      "      --keepalive IDLE[,INTVL[,CNT]]\n"
	      "                         TCP keepalive once connected: probe after IDLE\n"
	      "                         seconds without traffic, then every INTVL seconds,\n"
	      "                         CNT probes (default 30,10,3; 0 = no keepalive)\n"
	      "      --user-timeout MS  TCP_USER_TIMEOUT: a peer that acknowledges nothing\n"
	      "                         (data or keepalive probes) for MS milliseconds is\n"
	      "                         dead; its work requests flush (default 30000; 0 =\n"
	      "                         the kernel's, about 15 minutes)\n"
	      "      --mpa-timeout MS   TCP connect and MPA exchange must end within MS\n"
	      "                         milliseconds; a listener closes a connection whose\n"
	      "                         MPA Request is not complete by then (default 10000)\n"
	      "      --handshake-grace MS\n"
	      "                         listener with its backlog full: a connection whose\n"
	      "                         MPA Request is not complete MS milliseconds after\n"
	      "                         accept is reset to let a new one in (default 5000;\n"
	      "                         0 = never, new ones wait)\n",
	      f);
}

/* iw_log hands the sink a non-const context: keep the program name here instead */
static const char *trace_prog = "iwarp";

static void trace_sink(void *ctx, enum iw_log_level level, const char *msg)
{
	fprintf(stderr, "%s: %s: %s\n", trace_prog, iwt_log_level_name(level), msg);
}

void iwt_opt_context_attr(const struct iwt_opt *o, struct iwv_context_attr *attr)
{
	iwv_context_attr_default(attr);
	attr->engine = o->engine;
	/* without --engine-thread, IWARP_ENGINE_THREAD still decides */
	if (o->engine_thread)
		attr->engine_thread = 1;
	attr->rx_direct = o->rx_direct;
}

struct iwv_context *iwt_opt_open(const struct iwt_opt *o, const char *prog)
{
	struct iwv_context_attr attr;
	struct iwv_context *ctx;

	if (o->cm.trace) {
		trace_prog = prog;
		iw_log_set(trace_sink, NULL, IW_LOG_TRACE);
	}
	iwt_opt_context_attr(o, &attr);
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

int iwt_opt_apply(const struct iwt_opt *o, struct iwcm_id *id)
{
	return iwcm_set_options(id, &o->cm);
}

void iwt_opt_conn_param(const struct iwt_opt *o, struct iwcm_conn_param *p)
{
	p->responder_resources = o->ird;
	p->initiator_depth = o->ord;
}

/*
 * "markers A/B": A = we ask the peer for Markers (what we receive), B = we send
 * Markers if the peer asks (what we transmit).
 */
void iwt_opt_describe(const struct iwt_opt *o, char *buf, size_t len)
{
	char rtr[IWT_RTR_NAMES_LEN];
	int n;

	n = snprintf(buf, len, "rev %u, CRC %s, markers %s/%s, p2p %s", o->cm.mpa_rev,
		     o->cm.crc ? "on" : "off", o->cm.markers ? "on" : "off",
		     o->cm.accept_markers ? "on" : "off", o->cm.p2p ? "on" : "off");
	if (o->cm.p2p && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (rtr %s)",
			 iwt_rtr_names(o->cm.rtr, rtr, sizeof(rtr)));
}
