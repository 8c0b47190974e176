/* SPDX-License-Identifier: MIT */
/*
 * iwd_cap.c - packets from a capture file or a live interface, through libpcap.
 *
 * The only stage that does I/O.  Files: pcap_open_offline_with_tstamp_precision()
 * reads pcap and pcapng alike ("-" is standard input), nanosecond timestamps
 * asked for so both formats give the same resolution.  Live: immediate mode
 * (a packet is handed over when it arrives, not when a buffer fills), a snaplen
 * of 262144 (what tcpdump uses: whole TSO/GRO super-packets), nanosecond
 * timestamps, a BPF filter ("tcp" unless told otherwise).  Each packet goes
 * through iwd_net_parse(); what is not TCP is skipped and counted.
 *
 * iwd_cap_stop() may run in a signal handler: it sets a flag and calls
 * pcap_breakloop(), which libpcap documents for that use.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "iwd.h"

#define IWD_CAP_SNAPLEN	   262144
#define IWD_CAP_TIMEOUT_MS 100 /* a read returns at least this often, so a stop is seen */

struct iwd_cap {
	pcap_t *p;
	int linktype;
	uint64_t frame;	  /* packets read so far */
	uint64_t skipped; /* of them, not TCP */
	volatile sig_atomic_t stop;
};

/*
 * The link types iwd_net_parse() reads, as pcap_datalink() names them.  A
 * capture of another kind is refused at open rather than read as nothing.
 */
static bool link_known(int dlt)
{
	switch (dlt) {
	case DLT_NULL:
	case DLT_EN10MB:
	case 12:  /* DLT_RAW (but DLT_LOOP on OpenBSD, where DLT_RAW is 14) */
	case 14:  /* DLT_RAW on OpenBSD */
	case 101: /* LINKTYPE_RAW */
	case 108: /* DLT_LOOP elsewhere */
	case DLT_LINUX_SLL:
	case 228: /* DLT_IPV4 */
	case 229: /* DLT_IPV6 */
	case 276: /* DLT_LINUX_SLL2 */
		return true;
	default:
		return false;
	}
}

static void link_refuse(const char *what, int dlt, char *err, size_t errlen)
{
	const char *name = pcap_datalink_val_to_name(dlt);
	snprintf(err, errlen, "%s: link type %s (%d) is not supported", what, name ? name : "?",
		 dlt);
}

/* Our handle around an opened pcap_t (closed, with a message, on failure). */
static struct iwd_cap *cap_new(pcap_t *p, const char *name, char *err, size_t errlen)
{
	struct iwd_cap *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
		pcap_close(p);
		return NULL;
	}
	c->p = p;
	c->linktype = pcap_datalink(p);
	return c;
}

struct iwd_cap *iwd_cap_open_file(const char *path, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!p) {
		/* libpcap often starts its message with the path: say it once. */
		const char *why = ebuf;
		size_t n = strlen(path);
		if (strncmp(why, path, n) == 0 && why[n] == ':' && why[n + 1] == ' ')
			why += n + 2;
		snprintf(err, errlen, "cannot open %s: %s", name, *why ? why : "unknown error");
		return NULL;
	}
	if (!link_known(pcap_datalink(p))) {
		link_refuse(name, pcap_datalink(p), err, errlen);
		pcap_close(p);
		return NULL;
	}
	return cap_new(p, name, err, errlen);
}

/*
 * pcap_activate()'s failure in words, as tcpdump puts it: what the status
 * means ("You don't have permission to capture on that device"), then the
 * detail libpcap left, if any ("socket: Operation not permitted").  A plain
 * PCAP_ERROR has only the detail.
 */
static void activate_error(pcap_t *p, const char *ifname, int status, char *err, size_t errlen)
{
	const char *msg = pcap_geterr(p);
	const char *what = pcap_statustostr(status);
	if (!msg || !*msg || strcmp(msg, what) == 0)
		snprintf(err, errlen, "%s: %s", ifname, what);
	else if (status == PCAP_ERROR)
		snprintf(err, errlen, "%s: %s", ifname, msg);
	else
		snprintf(err, errlen, "%s: %s (%s)", ifname, what, msg);
}

struct iwd_cap *iwd_cap_open_live(const char *ifname, const char *filter, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	const char *name = ifname ? ifname : "any";
	if (!filter)
		filter = "tcp";

	pcap_t *p = pcap_create(name, ebuf);
	if (!p) {
		snprintf(err, errlen, "%s: %s", name, *ebuf ? ebuf : "cannot capture");
		return NULL;
	}
	int r = pcap_set_snaplen(p, IWD_CAP_SNAPLEN);
	if (r == 0)
		r = pcap_set_immediate_mode(p, 1);
	if (r == 0)
		r = pcap_set_timeout(p, IWD_CAP_TIMEOUT_MS);
	if (r == 0)
		r = pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO);
	/* Not every device gives nanoseconds: microseconds then, scaled by libpcap. */
	if (r == PCAP_ERROR_TSTAMP_PRECISION_NOTSUP)
		r = 0;
	if (r != 0) {
		snprintf(err, errlen, "%s: %s", name, pcap_statustostr(r));
		pcap_close(p);
		return NULL;
	}
	r = pcap_activate(p);
	if (r < 0) {
		activate_error(p, name, r, err, errlen);
		pcap_close(p);
		return NULL;
	}
	/* r > 0 is a warning (e.g. PCAP_WARNING_TSTAMP_TYPE_NOTSUP): go on. */
	if (!link_known(pcap_datalink(p))) {
		link_refuse(name, pcap_datalink(p), err, errlen);
		pcap_close(p);
		return NULL;
	}

	struct bpf_program prog;
	if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		snprintf(err, errlen, "bad filter \"%s\": %s", filter, pcap_geterr(p));
		pcap_close(p);
		return NULL;
	}
	r = pcap_setfilter(p, &prog);
	pcap_freecode(&prog);
	if (r != 0) {
		snprintf(err, errlen, "%s: cannot set the filter: %s", name, pcap_geterr(p));
		pcap_close(p);
		return NULL;
	}

	return cap_new(p, name, err, errlen);
}

int iwd_cap_next(struct iwd_cap *c, struct iwd_seg *seg, char *err, size_t errlen)
{
	for (;;) {
		if (c->stop)
			return 0;
		struct pcap_pkthdr *h;
		const u_char *d;
		int r = pcap_next_ex(c->p, &h, &d);
		if (r == 0) /* live: the timeout passed with nothing */
			continue;
		if (r == PCAP_ERROR_BREAK) /* end of file, or pcap_breakloop() */
			return 0;
		if (r != 1) {
			snprintf(err, errlen, "read error: %s", pcap_geterr(c->p));
			return -1;
		}
		c->frame++;
		/* nanosecond precision asked for: tv_usec holds nanoseconds */
		uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec;
		if (iwd_net_parse(c->linktype, d, h->caplen, h->len, c->frame, ts, seg) == 1)
			return 1;
		c->skipped++;
	}
}

void iwd_cap_stop(struct iwd_cap *c)
{
	c->stop = 1;
	pcap_breakloop(c->p);
}

uint64_t iwd_cap_skipped(const struct iwd_cap *c)
{
	return c->skipped;
}

void iwd_cap_close(struct iwd_cap *c)
{
	if (!c)
		return;
	pcap_close(c->p);
	free(c);
}
