/* SPDX-License-Identifier: MIT */
/*
 * iwd_out.c - iwdump's views: the iwd_sink that iwd_iwarp reports to.
 *
 *   line     one line per event that matters, as tshark prints: frame,
 *            time, "src:port → dst:port", the summary of the MPA frame or
 *            RDMAP message, for a Send the RPC-over-RDMA / RPC / NFS line
 *            of iwd_ulp, then what is wrong in brackets
 *   -V       the same events, and every FPDU, field by field with the RFC
 *            section each field comes from (a reading aid for students)
 *   --json   one object per line per MPA frame, RDMAP message, gap,
 *            undecoded run and close (FPDUs are not objects)
 *   --stats  at the end, per connection: options, messages per opcode and
 *            direction, octets, errors, Read round trips, quirks
 *
 * Theory of operation.  State is kept per connection (keyed by flow->id, an
 * array indexed by it): the MPA options seen, the counters of --stats, the
 * Read round-trip samples, and the RPC calls whose chunks are awaited.  The
 * last is what lets a reply say where its data went: a call's Write and
 * Reply chunk segments (RFC 8166 §3.4.6, §4.3.2-3) are remembered by their
 * handles (STags); each RDMA Write in the other direction whose STag is one
 * of them adds its octets to the call; the reply (same XID, other
 * direction) then prints "data N octets by RDMA Write into k segments", and
 * forgets the call.  Read chunk handles (§3.4.5) name the RDMA Read
 * Requests that fetch them.  OUT_PENDING calls are kept per connection, the
 * oldest overwritten.
 *
 * Every Send (with or without Invalidate or Solicited Event) is decoded by
 * iwd_ulp; its summary is shown when the Send is RPC-over-RDMA, or when it
 * is not but the connection is (RFC 8797 private data, or an earlier Send
 * decoded), so a broken header does not go unnoticed.
 *
 * Problems (the return of iwd_out_finish, for --check): each FPDU with a
 * bad CRC (each message with one, when FPDUs are not reported), each bad
 * Marker, each undecoded run and each gap.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <iwarp/rpcrdma_wire.h>

#include "iwd.h"

#define OUT_PENDING 64	   /* calls awaiting their replies, per connection */
#define OUT_SEGS    16	   /* chunk segments remembered per call */
#define OUT_RTT_MAX 65536u /* Read round trips kept per connection for the median */
#define OUT_PD_HEX  64	   /* private data octets shown in hex (-V) */
#define ADDR_LEN    (INET6_ADDRSTRLEN + 8)

enum seg_kind { SEG_READ, SEG_WRITE, SEG_REPLY };

/* A call with chunks, awaiting its reply. */
struct pend {
	bool used;
	uint8_t dir; /* the call's direction */
	uint32_t xid;
	uint64_t age;
	unsigned nseg;
	uint32_t handle[OUT_SEGS];
	uint8_t kind[OUT_SEGS]; /* enum seg_kind */
	bool hit[OUT_SEGS];	/* an RDMA Write / Read Request used it */
	uint64_t octets[3];	/* written into Write / Reply chunks (by kind) */
	char what[sizeof(((struct iwd_ulp *)0)->what)];
};

struct dir_stats {
	uint64_t msgs[RDMAP_OP_COUNT];
	uint64_t payload; /* RDMAP payload octets */
	uint64_t fpdus, fpdu_octets;
	uint64_t crc_errors, marker_errors, markers;
	uint64_t terminates, rtrs;
	uint64_t gaps, gap_octets, undecoded, undecoded_octets;
	uint64_t calls, replies;
	bool fpdu_seen;	     /* FPDU events come for this direction */
	bool marker_pending; /* a bad Marker since the last message */
	bool crc_pending;    /* a bad CRC since the last message */
};

struct side_pd {
	bool present; /* RFC 8797 private data */
	uint8_t version, flags;
	uint16_t send, recv;
};

struct conn {
	uint64_t id;
	struct iwd_flow flow;
	bool mpa[2]; /* an MPA frame was sent in direction d */
	struct mpa_frame frame[2];
	struct side_pd pd[2];
	bool crc_on;  /* known CRC on (MPA frames, --mpa-mid-stream or an FPDU) */
	bool rpcrdma; /* an NFS/RDMA connection: RFC 8797 data or a decoded Send */
	unsigned quirks;
	struct dir_stats d[2];
	int64_t *rtt;
	uint32_t nrtt, rtt_cap;
	uint64_t rtt_count;
	int64_t rtt_min, rtt_max;
	struct pend pend[OUT_PENDING];
	uint64_t pend_age;
	bool closed[2];
	enum iwd_close_how how[2];
};

struct iwd_out {
	struct iwd_out_cfg cfg;
	FILE *f;
	struct iwd_ulp_state *ulp;
	bool have_t0;
	uint64_t t0;
	struct conn **conns; /* by flow id - 1 */
	size_t nconns;
	uint64_t problems;
};

/* ---------------------------------------------------------------------- */
/* helpers                                                                 */
/* ---------------------------------------------------------------------- */

struct iwd_out *iwd_out_create(const struct iwd_out_cfg *cfg, FILE *f)
{
	struct iwd_out *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->cfg = *cfg;
	o->f = f;
	o->ulp = iwd_ulp_create();
	if (!o->ulp) {
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

void iwd_out_time_origin(struct iwd_out *o, uint64_t ts_ns)
{
	o->t0 = ts_ns;
	o->have_t0 = true;
}

static struct conn *conn_get(struct iwd_out *o, const struct iwd_flow *flow)
{
	if (!flow || flow->id == 0)
		return NULL;
	if (flow->id > o->nconns) {
		size_t n = o->nconns ? o->nconns : 16;
		while (n < flow->id)
			n *= 2;
		struct conn **v = realloc(o->conns, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + o->nconns, 0, (n - o->nconns) * sizeof(*v));
		o->conns = v;
		o->nconns = n;
	}
	struct conn *c = o->conns[flow->id - 1];
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->id = flow->id;
		c->flow = *flow;
		c->crc_on = o->cfg.mid.enabled && o->cfg.mid.crc;
		o->conns[flow->id - 1] = c;
	}
	return c;
}

/* "10.0.2.15:20049", "[::1]:20049" for end e of the flow. */
static void fmt_end(const struct iwd_flow *fl, int e, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (fl->af == AF_INET6) {
		if (!inet_ntop(AF_INET6, fl->addr[e], a, sizeof(a)))
			snprintf(a, sizeof(a), "?");
		snprintf(buf, len, "[%s]:%u", a, fl->port[e]);
	} else {
		if (!inet_ntop(AF_INET, fl->addr[e], a, sizeof(a)))
			snprintf(a, sizeof(a), "?");
		snprintf(buf, len, "%s:%u", a, fl->port[e]);
	}
}

/* Seconds since the origin ("0.100057", "-0.000002"), or the time of day. */
static void fmt_time(struct iwd_out *o, uint64_t ts, bool abs, char *buf, size_t len)
{
	if (!o->have_t0)
		iwd_out_time_origin(o, ts);
	if (abs) {
		time_t sec = (time_t)(ts / 1000000000u);
		struct tm tm;
		char hms[16] = "??:??:??";
		if (localtime_r(&sec, &tm))
			strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		snprintf(buf, len, "%s.%06u", hms, (unsigned)(ts % 1000000000u / 1000));
		return;
	}
	bool neg = ts < o->t0;
	uint64_t d = neg ? o->t0 - ts : ts - o->t0;
	snprintf(buf, len, "%s%" PRIu64 ".%06u", neg ? "-" : "", d / 1000000000u,
		 (unsigned)(d % 1000000000u / 1000));
}

static void fmt_epoch(uint64_t ts, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 ".%06u", ts / 1000000000u,
		 (unsigned)(ts % 1000000000u / 1000));
}

/* The frame, time and direction that start every line.  A close has no
 * frame of its own (the TCP stage reports a time only): "-". */
static void line_head(struct iwd_out *o, const struct iwd_event *ev)
{
	char t[40], fr[24] = "-", s[ADDR_LEN] = "?", d[ADDR_LEN] = "?";

	fmt_time(o, ev->ts_ns, o->cfg.abs_time, t, sizeof(t));
	if (ev->flow) {
		fmt_end(ev->flow, ev->dir, s, sizeof(s));
		fmt_end(ev->flow, 1 - ev->dir, d, sizeof(d));
	}
	if (ev->kind != IWD_EV_CLOSE)
		snprintf(fr, sizeof(fr), "%" PRIu64, ev->frame);
	fprintf(o->f, "%5s %11s %s \u2192 %s ", fr, t, s, d);
}

static const char *quirk_text(unsigned bit)
{
	switch (bit) {
	case IWD_QUIRK_SIW_TERM_LAYOUT:
		return "siw Terminate layout";
	case IWD_QUIRK_RTR_STAG0:
		return "RTR with STag 0";
	case IWD_QUIRK_TERM_SEGLEN_PAYLOAD:
		return "Terminate segment length without header";
	default:
		return "unknown";
	}
}

static const char *quirk_key(unsigned bit)
{
	switch (bit) {
	case IWD_QUIRK_SIW_TERM_LAYOUT:
		return "siw_term_layout";
	case IWD_QUIRK_RTR_STAG0:
		return "rtr_stag0";
	case IWD_QUIRK_TERM_SEGLEN_PAYLOAD:
		return "term_seglen_payload";
	default:
		return "unknown";
	}
}

/* " [quirk: ...]" for each bit, and the event's note. */
static void tail_quirks(struct iwd_out *o, const struct iwd_event *ev)
{
	for (unsigned bit = 1; bit && bit <= ev->quirks; bit <<= 1)
		if (ev->quirks & bit)
			fprintf(o->f, " [quirk: %s]", quirk_text(bit));
	if (ev->note)
		fprintf(o->f, " [%s]", ev->note);
}

static const char *close_name(enum iwd_close_how how)
{
	switch (how) {
	case IWD_CLOSE_FIN:
		return "fin";
	case IWD_CLOSE_RST:
		return "rst";
	case IWD_CLOSE_END:
		return "end";
	case IWD_CLOSE_REUSED:
		return "reused";
	}
	return "?";
}

static const char *rtr_names(uint8_t rtr, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", rtr & MPA_RTR_SEND ? ",send" : "",
		 rtr & MPA_RTR_WRITE ? ",write" : "", rtr & MPA_RTR_READ ? ",read" : "",
		 rtr ? "" : ",none");
	return buf + 1;
}

/* "128", or "none" for the RFC 6581 "no automatic negotiation" value. */
static void fmt_irdord(uint16_t v, char *buf, size_t len)
{
	if (v == MPA_IRD_ORD_MAX)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%u", v);
}

static void fmt_rtt(int64_t ns, char *buf, size_t len)
{
	if (ns < 10000)
		snprintf(buf, len, "%.1f us", (double)ns / 1000.0);
	else
		snprintf(buf, len, "%" PRId64 " us", (ns + 500) / 1000);
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                    */
/* ---------------------------------------------------------------------- */

/* The length of the UTF-8 sequence at s (1 to 4), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	unsigned cp = c & (0x3f >> (n - 1));
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void iwd_out_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	while (*p) {
		size_t n = utf8_len(p);
		if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
		p++;
	}
	fputc('"', f);
}

/* A JSON object writer: keys in order, commas where due, nesting to 8. */
struct jw {
	FILE *f;
	int depth;
	bool first[8];
};

static void j_open(struct jw *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
	fputc('{', f);
}

static void j_key(struct jw *j, const char *k)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	iwd_out_json_string(j->f, k);
	fputc(':', j->f);
}

static void j_obj(struct jw *j, const char *k)
{
	j_key(j, k);
	fputc('{', j->f);
	if (j->depth < 7)
		j->first[++j->depth] = true;
}

static void j_arr(struct jw *j, const char *k)
{
	j_key(j, k);
	fputc('[', j->f);
	if (j->depth < 7)
		j->first[++j->depth] = true;
}

/* An element of the array being written. */
static void j_elem(struct jw *j)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
}

/* An object as the next element of the array being written. */
static void j_elem_obj(struct jw *j)
{
	j_elem(j);
	fputc('{', j->f);
	if (j->depth < 7)
		j->first[++j->depth] = true;
}

static void j_end(struct jw *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

static void j_close(struct jw *j)
{
	fputs("}\n", j->f);
}

static void j_str(struct jw *j, const char *k, const char *v)
{
	j_key(j, k);
	iwd_out_json_string(j->f, v);
}

static void j_u64(struct jw *j, const char *k, uint64_t v)
{
	j_key(j, k);
	fprintf(j->f, "%" PRIu64, v);
}

static void j_bool(struct jw *j, const char *k, bool v)
{
	j_key(j, k);
	fputs(v ? "true" : "false", j->f);
}

static void j_raw(struct jw *j, const char *k, const char *v)
{
	j_key(j, k);
	fputs(v, j->f);
}

static void j_rtr(struct jw *j, const char *k, uint8_t rtr)
{
	static const struct {
		uint8_t bit;
		const char *name;
	} rtrs[] = {{MPA_RTR_SEND, "send"}, {MPA_RTR_WRITE, "write"}, {MPA_RTR_READ, "read"}};

	j_arr(j, k);
	for (unsigned i = 0; i < 3; i++) {
		if (rtr & rtrs[i].bit) {
			j_elem(j);
			iwd_out_json_string(j->f, rtrs[i].name);
		}
	}
	j_end(j, ']');
}

static void j_hex32(struct jw *j, const char *k, uint32_t v)
{
	j_key(j, k);
	fprintf(j->f, "\"0x%08x\"", v);
}

static void j_hex64(struct jw *j, const char *k, uint64_t v)
{
	j_key(j, k);
	fprintf(j->f, "\"0x%016" PRIx64 "\"", v);
}

/* type, frame, time, abs_time, conn, dir, src, dst, sport, dport */
static void j_head(struct iwd_out *o, struct jw *j, const struct iwd_event *ev, const char *type)
{
	char t[40], s[ADDR_LEN] = "", d[ADDR_LEN] = "";

	j_open(j, o->f);
	j_str(j, "type", type);
	j_u64(j, "frame", ev->frame);
	fmt_time(o, ev->ts_ns, false, t, sizeof(t));
	j_raw(j, "time", t);
	fmt_epoch(ev->ts_ns, t, sizeof(t));
	j_raw(j, "abs_time", t);
	if (!ev->flow)
		return;
	fmt_end(ev->flow, ev->dir, s, sizeof(s));
	fmt_end(ev->flow, 1 - ev->dir, d, sizeof(d));
	j_u64(j, "conn", ev->flow->id);
	j_u64(j, "dir", (uint64_t)ev->dir);
	j_str(j, "src", s);
	j_str(j, "dst", d);
	j_u64(j, "sport", ev->flow->port[ev->dir]);
	j_u64(j, "dport", ev->flow->port[1 - ev->dir]);
}

/* quirks and note, when there are */
static void j_tail(struct jw *j, const struct iwd_event *ev)
{
	if (ev->quirks) {
		j_arr(j, "quirks");
		for (unsigned bit = 1; bit && bit <= ev->quirks; bit <<= 1) {
			if (ev->quirks & bit) {
				j_elem(j);
				iwd_out_json_string(j->f, quirk_key(bit));
			}
		}
		j_end(j, ']');
	}
	if (ev->note)
		j_str(j, "note", ev->note);
}

/* ---------------------------------------------------------------------- */
/* MPA frames                                                              */
/* ---------------------------------------------------------------------- */

static void mpa_record(struct conn *c, const struct iwd_event *ev)
{
	int d = ev->dir;
	const struct mpa_frame *f = &ev->u.mpa.f;

	if (ev->u.mpa.err != IW_OK)
		return;
	c->mpa[d] = true;
	c->frame[d] = *f;
	c->frame[d].pd = NULL;
	c->pd[d].present = ev->u.mpa.rpcrdma_pd;
	c->pd[d].version = ev->u.mpa.rpcrdma_version;
	c->pd[d].flags = ev->u.mpa.rpcrdma_flags;
	c->pd[d].send = ev->u.mpa.rpcrdma_send_size;
	c->pd[d].recv = ev->u.mpa.rpcrdma_recv_size;
	if (ev->u.mpa.rpcrdma_pd)
		c->rpcrdma = true;
	/* CRC is used when either frame asks for it (RFC 5044 §7.1.1) */
	if (f->crc)
		c->crc_on = true;
}

static void mpa_line(struct iwd_out *o, const struct iwd_event *ev)
{
	const struct mpa_frame *f = &ev->u.mpa.f;
	char ird[16], ord[16], rtr[32];

	if (ev->u.mpa.err != IW_OK) {
		fprintf(o->f, "MPA %s frame, %u octets, does not decode: %s",
			f->reply ? "Reply" : "Request", ev->u.mpa.len, mpa_errname(ev->u.mpa.err));
		return;
	}
	fprintf(o->f, "MPA %s rev %u M%d C%d R%d S%d", f->reply ? "Reply" : "Request", f->rev,
		f->markers, f->crc, f->reject, f->enhanced);
	if (f->enhanced) {
		fmt_irdord(f->ird, ird, sizeof(ird));
		fmt_irdord(f->ord, ord, sizeof(ord));
		fprintf(o->f, " IRD %s ORD %s", ird, ord);
		if (f->p2p)
			fprintf(o->f, " P2P RTR %s", rtr_names(f->rtr, rtr, sizeof(rtr)));
		else if (f->rtr)
			fprintf(o->f, " RTR %s", rtr_names(f->rtr, rtr, sizeof(rtr)));
	}
	fprintf(o->f, " PD %u", f->pd_len + (f->enhanced ? MPA_IRD_ORD_LEN : 0));
	if (ev->u.mpa.rpcrdma_pd)
		fprintf(o->f, " | RPC-over-RDMA private data v%u send %u recv %u%s",
			ev->u.mpa.rpcrdma_version, ev->u.mpa.rpcrdma_send_size,
			ev->u.mpa.rpcrdma_recv_size,
			ev->u.mpa.rpcrdma_flags & RPCRDMA_CM_F_SND_W_INV_OK ? " send-inv-ok" : "");
	if (ev->u.mpa.rsvd_flags)
		fprintf(o->f, " [reserved flags 0x%02x%s]", ev->u.mpa.rsvd_flags,
			ev->u.mpa.rsvd_flags & 0x08 ? ": 0x08 is Linux siw's GSO flag" : "");
}

static void mpa_verbose(struct iwd_out *o, const struct iwd_event *ev)
{
	const struct mpa_frame *f = &ev->u.mpa.f;
	FILE *out = o->f;
	char ird[16], ord[16];

	fprintf(out, "    MPA %s Frame, %u octets (RFC 5044 §7.1.1)\n",
		f->reply ? "Reply" : "Request", ev->u.mpa.len);
	if (ev->u.mpa.err != IW_OK) {
		fprintf(out, "        does not decode: %s (%s)\n", mpa_errname(ev->u.mpa.err),
			mpa_strerror(ev->u.mpa.err));
		return;
	}
	fprintf(out, "        Key           \"MPA ID %s Frame\"\n", f->reply ? "Rep" : "Req");
	fprintf(out, "        M             %d  %s Markers in what it receives (§4.3)\n",
		f->markers, f->markers ? "the sender wants" : "the sender wants no");
	fprintf(out, "        C             %d  %s (§4.4; CRC is on if either side sets C)\n",
		f->crc, f->crc ? "the sender wants CRC" : "the sender does not ask for CRC");
	fprintf(out, "        R             %d  %s\n", f->reject,
		!f->reply   ? "(a Request sends 0)"
		: f->reject ? "rejected"
			    : "accepted");
	fprintf(out, "        S             %d  %s (RFC 6581 §9)\n", f->enhanced,
		f->enhanced ? "enhanced setup: the private data starts with IRD/ORD"
			    : "no IRD/ORD word");
	fprintf(out,
		"        Res           0x%02x  reserved, ignored on receipt (RFC 5044 §7.1.1)%s\n",
		ev->u.mpa.rsvd_flags,
		ev->u.mpa.rsvd_flags & 0x08 ? "; 0x08 is Linux siw's experimental GSO flag" : "");
	fprintf(out, "        Rev           %u  (%s)\n", f->rev,
		f->rev == 2 ? "RFC 6581" : "RFC 5044");
	fprintf(out, "        PD_Length     %u\n", f->pd_len + (f->enhanced ? MPA_IRD_ORD_LEN : 0));
	if (f->enhanced) {
		fmt_irdord(f->ird, ird, sizeof(ird));
		fmt_irdord(f->ord, ord, sizeof(ord));
		fprintf(out, "        IRD/ORD word (RFC 6581 §9.1)\n");
		fprintf(out,
			"            A  %d  peer-to-peer: an RTR starts full operation (§9.2)\n",
			f->p2p);
		fprintf(out, "            B  %d  zero-length Send RTR\n",
			!!(f->rtr & MPA_RTR_SEND));
		fprintf(out, "            C  %d  zero-length RDMA Write RTR\n",
			!!(f->rtr & MPA_RTR_WRITE));
		fprintf(out, "            D  %d  zero-length RDMA Read Request RTR\n",
			!!(f->rtr & MPA_RTR_READ));
		fprintf(out, "            IRD %s, ORD %s\n", ird, ord);
	}
	if (f->pd_len && f->pd) {
		fprintf(out, "        Private data  %u octets:", f->pd_len);
		for (unsigned i = 0; i < f->pd_len && i < OUT_PD_HEX; i++)
			fprintf(out, "%s%02x", i % 4 ? "" : " ", f->pd[i]);
		fputs(f->pd_len > OUT_PD_HEX ? " ...\n" : "\n", out);
	}
	if (ev->u.mpa.rpcrdma_pd)
		fprintf(out,
			"        RPC-over-RDMA CM private data (RFC 8797): version %u, flags "
			"0x%02x%s,"
			" inline send %u, receive %u octets\n",
			ev->u.mpa.rpcrdma_version, ev->u.mpa.rpcrdma_flags,
			ev->u.mpa.rpcrdma_flags & RPCRDMA_CM_F_SND_W_INV_OK
				? " (accepts Send With Invalidate)"
				: "",
			ev->u.mpa.rpcrdma_send_size, ev->u.mpa.rpcrdma_recv_size);
}

static void mpa_json(struct iwd_out *o, const struct iwd_event *ev)
{
	const struct mpa_frame *f = &ev->u.mpa.f;
	struct jw j;

	j_head(o, &j, ev, "mpa");
	j_str(&j, "mpa", f->reply ? "reply" : "request");
	j_u64(&j, "len", ev->u.mpa.len);
	if (ev->u.mpa.err != IW_OK) {
		j_str(&j, "error", mpa_errname(ev->u.mpa.err));
	} else {
		j_u64(&j, "rev", f->rev);
		j_bool(&j, "m", f->markers);
		j_bool(&j, "c", f->crc);
		j_bool(&j, "r", f->reject);
		j_bool(&j, "s", f->enhanced);
		j_u64(&j, "rsvd_flags", ev->u.mpa.rsvd_flags);
		j_u64(&j, "pd_len", f->pd_len + (f->enhanced ? MPA_IRD_ORD_LEN : 0));
		if (f->enhanced) {
			j_u64(&j, "ird", f->ird);
			j_u64(&j, "ord", f->ord);
			j_bool(&j, "p2p", f->p2p);
			j_rtr(&j, "rtr", f->rtr);
		}
		if (ev->u.mpa.rpcrdma_pd) {
			j_obj(&j, "rpcrdma_pd");
			j_u64(&j, "version", ev->u.mpa.rpcrdma_version);
			j_u64(&j, "flags", ev->u.mpa.rpcrdma_flags);
			j_u64(&j, "send_size", ev->u.mpa.rpcrdma_send_size);
			j_u64(&j, "recv_size", ev->u.mpa.rpcrdma_recv_size);
			j_end(&j, '}');
		}
	}
	j_tail(&j, ev);
	j_close(&j);
}

/* ---------------------------------------------------------------------- */
/* FPDUs (-V, and the counters)                                            */
/* ---------------------------------------------------------------------- */

static void fpdu_count(struct iwd_out *o, struct conn *c, const struct iwd_event *ev)
{
	const struct iwd_fpdu *fp = ev->u.fpdu;
	struct dir_stats *d = &c->d[ev->dir];

	d->fpdu_seen = true;
	d->fpdus++;
	d->fpdu_octets += fp->wire_len;
	if (fp->crc != IWD_CRC_OFF)
		c->crc_on = true;
	if (fp->crc == IWD_CRC_BAD) {
		d->crc_errors++;
		d->crc_pending = true;
		o->problems++;
	}
	for (unsigned i = 0; i < fp->nmarkers && i < IWD_MARKERS_MAX; i++) {
		d->markers++;
		if (!fp->markers[i].ok) {
			d->marker_errors++;
			d->marker_pending = true;
			o->problems++;
		}
	}
}

static void fpdu_rdmap_verbose(FILE *out, const struct iwd_fpdu *fp)
{
	const uint8_t *h = fp->ulpdu + DDP_UNTAGGED_HDR_LEN;
	size_t n = fp->ulpdu_len > DDP_UNTAGGED_HDR_LEN ? fp->ulpdu_len - DDP_UNTAGGED_HDR_LEN : 0;

	if (fp->ddp.tagged || fp->ddp.mo != 0 || !fp->ulpdu)
		return;
	switch (fp->opcode) {
	case RDMAP_OP_READ_REQ:
		if (n >= RDMAP_READ_REQ_LEN) {
			struct rdmap_read_req r;
			rdmap_read_req_decode(h, &r);
			fprintf(out, "        Read Request header (RFC 5040 §4.4)\n");
			fprintf(out, "            Data Sink STag     0x%08x\n", r.sink_stag);
			fprintf(out, "            Data Sink TO       0x%016" PRIx64 "\n",
				r.sink_to);
			fprintf(out, "            RDMA Read Msg Size %u\n", r.size);
			fprintf(out, "            Data Source STag   0x%08x\n", r.src_stag);
			fprintf(out, "            Data Source TO     0x%016" PRIx64 "\n", r.src_to);
		}
		break;
	case RDMAP_OP_TERMINATE: {
		struct iwd_term t;
		iwd_term_read(h, n, &t);
		const struct rdmap_term *rt = t.use_siw ? &t.siw : &t.std;
		fprintf(out, "        Terminate (RFC 5040 §4.8)%s\n",
			t.use_siw ? ", read in the Linux siw layout" : "");
		fprintf(out, "            Layer       %u %s\n", rt->code.layer,
			iwd_term_layer_name(rt->code.layer));
		fprintf(out, "            EType       0x%x %s\n", rt->code.etype,
			iwd_term_type_name(rt->code.layer, rt->code.etype));
		fprintf(out, "            Error Code  0x%02x %s\n", rt->code.ecode,
			iwd_term_code_name(rt->code.layer, rt->code.etype, rt->code.ecode));
		fprintf(out,
			"            M %d (segment length valid), D %d (DDP header copied), R %d"
			" (Read Request copied)\n",
			rt->m, rt->d, rt->r);
		if (rt->m)
			fprintf(out, "            DDP Segment Length %u\n", rt->ddp_seg_len);
		if (t.copied_ddp_ok && t.copied_ddp.tagged)
			fprintf(out,
				"            copied DDP header: tagged, STag 0x%08x TO "
				"0x%016" PRIx64 ", opcode 0x%x\n",
				t.copied_ddp.stag, t.copied_ddp.to,
				rdmap_ctrl_opcode(t.copied_ddp.rsvdulp));
		else if (t.copied_ddp_ok)
			fprintf(out,
				"            copied DDP header: untagged, QN %u MSN %u MO %u, "
				"opcode"
				" 0x%x\n",
				t.copied_ddp.qn, t.copied_ddp.msn, t.copied_ddp.mo,
				rdmap_ctrl_opcode(t.copied_ddp.rsvdulp));
		if (rt->r)
			fprintf(out,
				"            copied Read Request: sink 0x%08x@0x%" PRIx64
				" source 0x%08x@0x%" PRIx64 " size %u\n",
				t.copied_rreq.sink_stag, t.copied_rreq.sink_to,
				t.copied_rreq.src_stag, t.copied_rreq.src_to, t.copied_rreq.size);
		break;
	}
	case RDMAP_OP_IMM:
	case RDMAP_OP_IMM_SE:
		if (n >= RDMAP_IMM_LEN) {
			fprintf(out, "        Immediate Data (RFC 7306)  ");
			for (unsigned i = 0; i < RDMAP_IMM_LEN; i++)
				fprintf(out, "%02x", h[i]);
			fputc('\n', out);
		}
		break;
	case RDMAP_OP_ATOMIC_REQ:
		if (n >= RDMAP_ATOMIC_REQ_LEN) {
			struct rdmap_atomic_req a;
			rdmap_atomic_req_decode(h, &a);
			fprintf(out, "        Atomic Request header (RFC 7306)\n");
			fprintf(out, "            AOpCode      %u %s\n", a.aop,
				a.aop == RDMAP_AOP_FETCH_ADD  ? "FetchAdd"
				: a.aop == RDMAP_AOP_CMP_SWAP ? "CmpSwap"
							      : "reserved");
			fprintf(out, "            Request ID   %u\n", a.req_id);
			fprintf(out, "            Remote STag  0x%08x\n", a.stag);
			fprintf(out, "            Remote TO    0x%016" PRIx64 "\n", a.to);
			fprintf(out,
				"            Add/Swap     0x%016" PRIx64 " mask 0x%016" PRIx64 "\n",
				a.add_swap, a.add_swap_mask);
			fprintf(out,
				"            Compare      0x%016" PRIx64 " mask 0x%016" PRIx64 "\n",
				a.compare, a.compare_mask);
		}
		break;
	case RDMAP_OP_ATOMIC_RESP:
		if (n >= RDMAP_ATOMIC_RESP_LEN) {
			struct rdmap_atomic_resp a;
			rdmap_atomic_resp_decode(h, &a);
			fprintf(out, "        Atomic Response header (RFC 7306)\n");
			fprintf(out, "            Original Request ID  %u\n", a.req_id);
			fprintf(out, "            Original Remote Data 0x%016" PRIx64 "\n", a.orig);
		}
		break;
	default:
		break;
	}
}

static void fpdu_verbose(struct iwd_out *o, const struct iwd_event *ev)
{
	const struct iwd_fpdu *fp = ev->u.fpdu;
	FILE *out = o->f;

	line_head(o, ev);
	fprintf(out, "FPDU at stream offset %" PRIu64 ", %u octets%s\n", fp->off, fp->wire_len,
		fp->rtr ? " (the RTR, RFC 6581 §9.3)" : "");
	fprintf(out, "    MPA FPDU (RFC 5044 §4)\n");
	fprintf(out, "        ULPDU_Length  %u octets (§4.1)\n", fp->ulpdu_len);
	fprintf(out, "        PAD           %u octet%s (§4.2)\n", fp->pad, fp->pad == 1 ? "" : "s");
	for (unsigned i = 0; i < fp->nmarkers && i < IWD_MARKERS_MAX; i++)
		fprintf(out,
			"        Marker        at stream offset %" PRIu64
			", FPDUPTR %u: %s (§4.3)\n",
			fp->markers[i].off, fp->markers[i].fpduptr,
			fp->markers[i].ok ? "ok, points at this FPDU's header" : "BAD");
	switch (fp->crc) {
	case IWD_CRC_OFF:
		fprintf(out, "        CRC           off: 4 octets, not checked (§4.4)\n");
		break;
	case IWD_CRC_OK:
		fprintf(out, "        CRC           0x%08x received, 0x%08x computed: ok (§4.4)\n",
			fp->crc_rx, fp->crc_calc);
		break;
	case IWD_CRC_BAD:
		fprintf(out, "        CRC           0x%08x received, 0x%08x computed: BAD (§4.4)\n",
			fp->crc_rx, fp->crc_calc);
		break;
	}
	if (!fp->ddp_ok) {
		fprintf(out, "    DDP header does not decode\n");
		goto tail;
	}
	const struct ddp_hdr *d = &fp->ddp;
	fprintf(out, "    DDP segment (RFC 5041 §4.%d, %s buffer model)\n", d->tagged ? 2 : 3,
		d->tagged ? "tagged" : "untagged");
	fprintf(out, "        T %d  L %d  DV %u%s\n", d->tagged, d->last, d->dv,
		d->dv != DDP_VERSION ? " (not 1: invalid DDP version)" : "");
	if (d->last)
		fprintf(out, "              the last segment of its message\n");
	fprintf(out, "        RsvdULP       0x%02x  (the RDMAP control octet)\n", d->rsvdulp);
	if (d->tagged) {
		fprintf(out, "        STag          0x%08x\n", d->stag);
		fprintf(out, "        TO            0x%016" PRIx64 "\n", d->to);
	} else {
		fprintf(out, "        RsvdULP2      0x%08x%s\n", d->rsvdulp2,
			rdmap_opcode_info(fp->opcode)->inv_stag
				? "  (Invalidate STag, RFC 5040 §4.1)"
				: "");
		fprintf(out, "        QN            %u\n", d->qn);
		fprintf(out, "        MSN           %u\n", d->msn);
		fprintf(out, "        MO            %u\n", d->mo);
	}
	const struct rdmap_opcode_info *oi = rdmap_opcode_info(fp->opcode);
	fprintf(out, "    RDMAP (RFC 5040 §4.1, §4.2%s)\n", oi->rfc7306 ? ", RFC 7306" : "");
	fprintf(out, "        RV %u%s  opcode 0x%x %s\n", fp->rdmap_rv,
		fp->rdmap_rv != RDMAP_VERSION ? " (not 1: invalid)" : "", fp->opcode, oi->name);
	fpdu_rdmap_verbose(out, fp);
	fprintf(out, "        payload       %u octets\n", fp->payload_len);
tail:
	if (ev->quirks || ev->note) {
		fputs("   ", out);
		tail_quirks(o, ev);
		fputc('\n', out);
	}
}

/* ---------------------------------------------------------------------- */
/* RDMAP messages                                                          */
/* ---------------------------------------------------------------------- */

static void rtt_add(struct conn *c, int64_t ns)
{
	if (c->rtt_count == 0 || ns < c->rtt_min)
		c->rtt_min = ns;
	if (c->rtt_count == 0 || ns > c->rtt_max)
		c->rtt_max = ns;
	c->rtt_count++;
	if (c->nrtt == c->rtt_cap) {
		if (c->rtt_cap >= OUT_RTT_MAX)
			return; /* the median is of the first OUT_RTT_MAX */
		uint32_t cap = c->rtt_cap ? c->rtt_cap * 2 : 64;
		int64_t *v = realloc(c->rtt, cap * sizeof(*v));
		if (!v)
			return;
		c->rtt = v;
		c->rtt_cap = cap;
	}
	c->rtt[c->nrtt++] = ns;
}

static struct pend *pend_find(struct conn *c, int dir, uint32_t xid)
{
	for (unsigned i = 0; i < OUT_PENDING; i++)
		if (c->pend[i].used && c->pend[i].dir == dir && c->pend[i].xid == xid)
			return &c->pend[i];
	return NULL;
}

static void pend_add_chunk(struct pend *p, const struct rpcrdma_hdr *h,
			   const struct rpcrdma_chunk *ch, enum seg_kind kind)
{
	for (unsigned k = 0; k < ch->nseg && p->nseg < OUT_SEGS; k++) {
		if (ch->first + k >= RPCRDMA_MAX_HDR_SEGS)
			break;
		p->handle[p->nseg] = h->segs[ch->first + k].handle;
		p->kind[p->nseg] = (uint8_t)kind;
		p->nseg++;
	}
}

/* Remember a call's chunks (the oldest entry goes when all are taken). */
static void pend_call(struct conn *c, int dir, const struct iwd_ulp *u)
{
	const struct rpcrdma_hdr *h = u->hdr;

	if (!h || (!h->n_read && !h->n_write && !h->has_reply))
		return;
	struct pend *p = pend_find(c, dir, u->xid);
	if (!p) {
		p = &c->pend[0];
		for (unsigned i = 0; i < OUT_PENDING; i++) {
			if (!c->pend[i].used) {
				p = &c->pend[i];
				break;
			}
			if (c->pend[i].age < p->age)
				p = &c->pend[i];
		}
	}
	memset(p, 0, sizeof(*p));
	p->used = true;
	p->dir = (uint8_t)dir;
	p->xid = u->xid;
	p->age = ++c->pend_age;
	memcpy(p->what, u->what, sizeof(p->what));
	for (unsigned i = 0; i < h->n_read && i < RPCRDMA_MAX_READ_CHUNKS; i++)
		pend_add_chunk(p, h, &h->read[i], SEG_READ);
	for (unsigned i = 0; i < h->n_write && i < RPCRDMA_MAX_WRITE_CHUNKS; i++)
		pend_add_chunk(p, h, &h->write[i], SEG_WRITE);
	if (h->has_reply)
		pend_add_chunk(p, h, &h->reply, SEG_REPLY);
}

/* The newest call in the other direction with a segment of `stag` among
 * `kinds` (bit mask of 1 << enum seg_kind); *seg its index. */
static struct pend *pend_by_stag(struct conn *c, int dir, uint32_t stag, unsigned kinds,
				 unsigned *seg)
{
	struct pend *best = NULL;

	for (unsigned i = 0; i < OUT_PENDING; i++) {
		struct pend *p = &c->pend[i];
		if (!p->used || p->dir != 1 - dir || (best && p->age < best->age))
			continue;
		for (unsigned k = 0; k < p->nseg; k++) {
			if (p->handle[k] == stag && (kinds & 1u << p->kind[k])) {
				best = p;
				*seg = k;
				break;
			}
		}
	}
	return best;
}

static unsigned pend_hits(const struct pend *p, enum seg_kind kind)
{
	unsigned n = 0;
	for (unsigned k = 0; k < p->nseg; k++)
		n += p->kind[k] == kind && p->hit[k];
	return n;
}

static bool is_send(uint8_t op)
{
	return op == RDMAP_OP_SEND || op == RDMAP_OP_SEND_INV || op == RDMAP_OP_SEND_SE ||
	       op == RDMAP_OP_SEND_SE_INV;
}

/* What a message adds to the state: counters, round trips, chunk octets;
 * and the ULP reading of a Send (u->rpcrdma false otherwise).  *pw is the
 * call whose chunk a Write or Read Request uses, *pr the call a reply
 * answers (forgotten after the line is printed). */
static void msg_account(struct iwd_out *o, struct conn *c, const struct iwd_event *ev,
			struct iwd_ulp *u, struct pend **pw, unsigned *pw_seg, struct pend **pr)
{
	const struct iwd_msg *m = ev->u.msg;
	struct dir_stats *d = &c->d[ev->dir];
	unsigned seg = 0;

	memset(u, 0, sizeof(*u));
	*pw = *pr = NULL;
	d->msgs[m->opcode & 0xf]++;
	d->payload += m->len;
	if (m->rtr)
		d->rtrs++;
	if (m->crc_bad && !d->fpdu_seen) {
		d->crc_errors++;
		o->problems++;
	}
	c->quirks |= ev->quirks;
	if (m->opcode == RDMAP_OP_TERMINATE)
		d->terminates++;
	if (m->opcode == RDMAP_OP_READ_RESP && m->read_rtt_ns >= 0)
		rtt_add(c, m->read_rtt_ns);
	if (m->opcode == RDMAP_OP_WRITE) {
		*pw = pend_by_stag(c, ev->dir, m->stag, 1u << SEG_WRITE | 1u << SEG_REPLY, &seg);
		if (*pw) {
			(*pw)->hit[seg] = true;
			(*pw)->octets[(*pw)->kind[seg]] += m->len;
		}
	}
	if (m->opcode == RDMAP_OP_READ_REQ) {
		*pw = pend_by_stag(c, ev->dir, m->rreq.src_stag, 1u << SEG_READ, &seg);
		if (*pw)
			(*pw)->hit[seg] = true;
	}
	*pw_seg = seg;
	if (!is_send(m->opcode) || !m->data)
		return;
	iwd_ulp_decode(o->ulp, c->id, ev->dir, m->data, m->data_len, u);
	if (!u->rpcrdma)
		return;
	c->rpcrdma = true;
	if (u->call) {
		d->calls++;
		pend_call(c, ev->dir, u);
	} else if (u->rpc || u->matched) {
		d->replies++;
	}
	if (!u->call)
		*pr = pend_find(c, 1 - ev->dir, u->xid);
}

static void msg_summary(struct iwd_out *o, const struct iwd_msg *m)
{
	FILE *out = o->f;
	const char *name = rdmap_opcode_info(m->opcode)->name;
	char rtt[32];

	switch (m->opcode) {
	case RDMAP_OP_WRITE:
		fprintf(out, "RDMA Write STag 0x%08x TO 0x%" PRIx64 " len %u", m->stag, m->to,
			m->len);
		break;
	case RDMAP_OP_READ_REQ:
		fprintf(out,
			"RDMA Read Request sink 0x%08x@0x%" PRIx64 " source 0x%08x@0x%" PRIx64
			" size %u",
			m->rreq.sink_stag, m->rreq.sink_to, m->rreq.src_stag, m->rreq.src_to,
			m->rreq.size);
		break;
	case RDMAP_OP_READ_RESP:
		fprintf(out, "RDMA Read Response STag 0x%08x TO 0x%" PRIx64 " len %u", m->stag,
			m->to, m->len);
		break;
	case RDMAP_OP_SEND:
	case RDMAP_OP_SEND_SE:
		fprintf(out, "%s MSN %u len %u", name, m->msn, m->len);
		break;
	case RDMAP_OP_SEND_INV:
	case RDMAP_OP_SEND_SE_INV:
		fprintf(out, "%s STag 0x%08x MSN %u len %u", name, m->stag, m->msn, m->len);
		break;
	case RDMAP_OP_TERMINATE: {
		const struct iwd_term *t = &m->term;
		const struct rdmap_term *rt = t->use_siw ? &t->siw : &t->std;
		fprintf(out, "Terminate: %s / %s / %s", iwd_term_layer_name(rt->code.layer),
			iwd_term_type_name(rt->code.layer, rt->code.etype),
			iwd_term_code_name(rt->code.layer, rt->code.etype, rt->code.ecode));
		if (rt->m || rt->d || rt->r)
			fprintf(out, " [%s%s%s]", rt->m ? "M" : "",
				rt->m && (rt->d || rt->r) ? " " : "",
				rt->d && rt->r ? "D R"
				: rt->d	       ? "D"
				: rt->r	       ? "R"
					       : "");
		if (t->copied_ddp_ok) {
			const struct ddp_hdr *h = &t->copied_ddp;
			if (h->tagged)
				fprintf(out, " copied: tagged STag 0x%08x TO 0x%" PRIx64, h->stag,
					h->to);
			else
				fprintf(out, " copied: untagged QN %u MSN %u MO %u", h->qn, h->msn,
					h->mo);
			fprintf(out, " opcode 0x%x", rdmap_ctrl_opcode(h->rsvdulp));
			if (rt->m)
				fprintf(out, " seglen %u", rt->ddp_seg_len);
		}
		if (rt->r)
			fprintf(out, " Read Request source 0x%08x@0x%" PRIx64 " size %u",
				t->copied_rreq.src_stag, t->copied_rreq.src_to,
				t->copied_rreq.size);
		break;
	}
	case RDMAP_OP_IMM:
	case RDMAP_OP_IMM_SE:
		fprintf(out, "%s 0x", name);
		for (unsigned i = 0; i < RDMAP_IMM_LEN; i++)
			fprintf(out, "%02x", m->imm_data[i]);
		fprintf(out, " MSN %u", m->msn);
		break;
	case RDMAP_OP_ATOMIC_REQ:
		fprintf(out, "Atomic Request %s id %u STag 0x%08x TO 0x%" PRIx64 " data 0x%" PRIx64,
			m->areq.aop == RDMAP_AOP_FETCH_ADD  ? "FetchAdd"
			: m->areq.aop == RDMAP_AOP_CMP_SWAP ? "CmpSwap"
							    : "reserved-AOpCode",
			m->areq.req_id, m->areq.stag, m->areq.to, m->areq.add_swap);
		if (m->areq.aop == RDMAP_AOP_CMP_SWAP)
			fprintf(out, " compare 0x%" PRIx64, m->areq.compare);
		break;
	case RDMAP_OP_ATOMIC_RESP:
		fprintf(out, "Atomic Response id %u original 0x%" PRIx64, m->aresp.req_id,
			m->aresp.orig);
		break;
	default:
		fprintf(out, "opcode 0x%x (%s) len %u", m->opcode, name, m->len);
		break;
	}
	if (m->segments > 1)
		fprintf(out, " (%u segments)", m->segments);
	if (m->opcode == RDMAP_OP_READ_RESP && m->read_rtt_ns >= 0) {
		fmt_rtt(m->read_rtt_ns, rtt, sizeof(rtt));
		fprintf(out, " rtt %s", rtt);
	}
}

/* What follows the summary: the ULP, the chunk a Write fills, the data a
 * reply's chunks received. */
static const char *const kind_names[] = {"Read", "Write", "Reply"};

static void msg_ulp_line(struct iwd_out *o, const struct conn *c, const struct iwd_msg *m,
			 const struct iwd_ulp *u, const struct pend *pw, unsigned pw_seg,
			 const struct pend *pr)
{
	char buf[384];

	if (pw)
		fprintf(o->f, " | %s chunk of xid 0x%08x%s%s", kind_names[pw->kind[pw_seg] % 3],
			pw->xid, pw->what[0] ? " " : "", pw->what);
	if (!is_send(m->opcode) || !m->data)
		return;
	if (!u->rpcrdma && !c->rpcrdma)
		return;
	iwd_ulp_summary(u, buf, sizeof(buf));
	fprintf(o->f, " | %s", buf);
	if (pr) {
		unsigned kw = pend_hits(pr, SEG_WRITE), kr = pend_hits(pr, SEG_REPLY);
		if (kw)
			fprintf(o->f, " | data %" PRIu64 " octets by RDMA Write into %u segment%s",
				pr->octets[SEG_WRITE], kw, kw == 1 ? "" : "s");
		if (kr)
			fprintf(o->f,
				" | reply %" PRIu64 " octets by RDMA Write into the Reply chunk",
				pr->octets[SEG_REPLY]);
	}
	if (m->truncated)
		fputs(" [message cut at --max-msg]", o->f);
}

static void msg_flags(struct iwd_out *o, struct conn *c, const struct iwd_event *ev)
{
	const struct iwd_msg *m = ev->u.msg;
	struct dir_stats *d = &c->d[ev->dir];

	if (m->crc_bad || d->crc_pending)
		fputs(" [CRC ERROR]", o->f);
	if (d->marker_pending)
		fputs(" [Marker error]", o->f);
	if (m->rtr)
		fputs(" [RTR]", o->f);
	d->crc_pending = d->marker_pending = false;
	tail_quirks(o, ev);
}

static void msg_json(struct iwd_out *o, struct conn *c, const struct iwd_event *ev,
		     const struct iwd_ulp *u, const struct pend *pw, unsigned pw_seg,
		     const struct pend *pr)
{
	const struct iwd_msg *m = ev->u.msg;
	struct jw j;

	j_head(o, &j, ev, "rdmap");
	j_u64(&j, "first_frame", m->first_frame);
	j_u64(&j, "opcode", m->opcode);
	j_str(&j, "opcode_name", rdmap_opcode_info(m->opcode)->name);
	j_u64(&j, "len", m->len);
	j_u64(&j, "segments", m->segments);
	if (m->tagged) {
		j_hex32(&j, "stag", m->stag);
		j_hex64(&j, "to", m->to);
	} else {
		j_u64(&j, "qn", m->qn);
		j_u64(&j, "msn", m->msn);
		if (rdmap_opcode_info(m->opcode)->inv_stag)
			j_hex32(&j, "stag", m->stag);
	}
	j_str(&j, "crc", m->crc_bad ? "bad" : c->crc_on ? "ok" : "off");
	if (c->d[ev->dir].marker_pending)
		j_bool(&j, "marker_error", true);
	c->d[ev->dir].marker_pending = c->d[ev->dir].crc_pending = false;
	if (m->rtr)
		j_bool(&j, "rtr", true);
	switch (m->opcode) {
	case RDMAP_OP_READ_REQ:
		j_hex32(&j, "sink_stag", m->rreq.sink_stag);
		j_hex64(&j, "sink_to", m->rreq.sink_to);
		j_u64(&j, "size", m->rreq.size);
		j_hex32(&j, "src_stag", m->rreq.src_stag);
		j_hex64(&j, "src_to", m->rreq.src_to);
		break;
	case RDMAP_OP_READ_RESP:
		if (m->read_rtt_ns >= 0)
			j_u64(&j, "rtt_ns", (uint64_t)m->read_rtt_ns);
		break;
	case RDMAP_OP_TERMINATE: {
		const struct iwd_term *t = &m->term;
		const struct rdmap_term *rt = t->use_siw ? &t->siw : &t->std;
		j_obj(&j, "term");
		j_u64(&j, "layer", rt->code.layer);
		j_u64(&j, "etype", rt->code.etype);
		j_u64(&j, "ecode", rt->code.ecode);
		j_str(&j, "layer_name", iwd_term_layer_name(rt->code.layer));
		j_str(&j, "etype_name", iwd_term_type_name(rt->code.layer, rt->code.etype));
		j_str(&j, "ecode_name",
		      iwd_term_code_name(rt->code.layer, rt->code.etype, rt->code.ecode));
		j_bool(&j, "m", rt->m);
		j_bool(&j, "d", rt->d);
		j_bool(&j, "r", rt->r);
		j_str(&j, "layout", t->use_siw ? "siw" : "rfc");
		if (rt->m)
			j_u64(&j, "ddp_seg_len", rt->ddp_seg_len);
		if (t->copied_ddp_ok) {
			j_obj(&j, "copied_ddp");
			j_bool(&j, "tagged", t->copied_ddp.tagged);
			j_u64(&j, "opcode", rdmap_ctrl_opcode(t->copied_ddp.rsvdulp));
			if (t->copied_ddp.tagged) {
				j_hex32(&j, "stag", t->copied_ddp.stag);
				j_hex64(&j, "to", t->copied_ddp.to);
			} else {
				j_u64(&j, "qn", t->copied_ddp.qn);
				j_u64(&j, "msn", t->copied_ddp.msn);
				j_u64(&j, "mo", t->copied_ddp.mo);
			}
			j_end(&j, '}');
		}
		j_end(&j, '}');
		break;
	}
	case RDMAP_OP_IMM:
	case RDMAP_OP_IMM_SE: {
		char hex[2 * RDMAP_IMM_LEN + 1];
		for (unsigned i = 0; i < RDMAP_IMM_LEN; i++)
			snprintf(hex + 2 * i, 3, "%02x", m->imm_data[i]);
		j_str(&j, "imm_data", hex);
		break;
	}
	case RDMAP_OP_ATOMIC_REQ:
		j_u64(&j, "aop", m->areq.aop);
		j_u64(&j, "req_id", m->areq.req_id);
		j_hex32(&j, "remote_stag", m->areq.stag);
		j_hex64(&j, "remote_to", m->areq.to);
		j_hex64(&j, "add_swap", m->areq.add_swap);
		j_hex64(&j, "add_swap_mask", m->areq.add_swap_mask);
		j_hex64(&j, "compare", m->areq.compare);
		j_hex64(&j, "compare_mask", m->areq.compare_mask);
		break;
	case RDMAP_OP_ATOMIC_RESP:
		j_u64(&j, "req_id", m->aresp.req_id);
		j_hex64(&j, "orig", m->aresp.orig);
		break;
	default:
		break;
	}
	if (pw) {
		j_obj(&j, "chunk_of");
		j_str(&j, "chunk",
		      pw->kind[pw_seg] == SEG_READ    ? "read"
		      : pw->kind[pw_seg] == SEG_WRITE ? "write"
						      : "reply");
		j_hex32(&j, "xid", pw->xid);
		j_str(&j, "name", pw->what);
		j_end(&j, '}');
	}
	if (!u->rpcrdma && is_send(m->opcode) && m->data && c->rpcrdma) {
		j_str(&j, "rpcrdma_error", rpcrdma_errname(u->err));
	} else if (u->rpcrdma) {
		j_obj(&j, "rpcrdma");
		j_hex32(&j, "xid", u->xid);
		j_u64(&j, "vers", u->vers);
		j_u64(&j, "credits", u->credits);
		j_str(&j, "proc", iwd_rpcrdma_proc_name(u->proc));
		j_u64(&j, "read", u->nread);
		j_u64(&j, "write", u->nwrite);
		j_u64(&j, "reply", u->nreply);
		j_u64(&j, "hdr_len", u->hdr_len);
		if (u->proc == RDMA_ERROR && u->hdr)
			j_str(&j, "err", u->hdr->err == ERR_VERS ? "ERR_VERS" : "ERR_CHUNK");
		j_end(&j, '}');
	}
	if (u->rpc || (u->rpcrdma && (u->matched || u->call))) {
		j_obj(&j, "rpc");
		j_hex32(&j, "xid", u->rpc ? u->rpc_xid : u->xid);
		j_str(&j, "type", u->call ? "call" : "reply");
		if (u->call || u->matched) {
			j_u64(&j, "prog", u->prog);
			j_u64(&j, "vers", u->vers_rpc);
			j_u64(&j, "proc", u->rpc_proc);
		}
		j_str(&j, "name", u->what);
		if (!u->rpc)
			j_str(&j, "in", "chunk");
		if (u->call && u->rpc)
			j_u64(&j, "cred", u->cred_flavor);
		if (u->backchannel)
			j_bool(&j, "backchannel", true);
		if (!u->call) {
			j_bool(&j, "matched", u->matched);
			if (u->status[0])
				j_str(&j, "status", u->status);
		}
		j_end(&j, '}');
	}
	if (pr) {
		j_u64(&j, "write_chunk_octets", pr->octets[SEG_WRITE]);
		j_u64(&j, "write_chunk_segments", pend_hits(pr, SEG_WRITE));
		j_u64(&j, "reply_chunk_octets", pr->octets[SEG_REPLY]);
	}
	if (m->truncated)
		j_bool(&j, "truncated", true);
	j_tail(&j, ev);
	j_close(&j);
}

static void msg_event(struct iwd_out *o, struct conn *c, const struct iwd_event *ev)
{
	const struct iwd_msg *m = ev->u.msg;
	struct iwd_ulp u;
	struct pend *pw, *pr;
	unsigned pw_seg;

	msg_account(o, c, ev, &u, &pw, &pw_seg, &pr);
	if (!o->cfg.quiet) {
		if (o->cfg.view == IWD_VIEW_JSON) {
			msg_json(o, c, ev, &u, pw, pw_seg, pr);
		} else {
			line_head(o, ev);
			msg_summary(o, m);
			msg_ulp_line(o, c, m, &u, pw, pw_seg, pr);
			msg_flags(o, c, ev);
			fputc('\n', o->f);
			if (o->cfg.view == IWD_VIEW_VERBOSE && is_send(m->opcode) && m->data &&
			    (u.rpcrdma || c->rpcrdma))
				iwd_ulp_print_verbose(o->f, m->data, m->data_len, "    ");
		}
	}
	if (pr)
		pr->used = false;
}

/* ---------------------------------------------------------------------- */
/* the sink                                                                */
/* ---------------------------------------------------------------------- */

static void gap_event(struct iwd_out *o, struct conn *c, const struct iwd_event *ev)
{
	bool gap = ev->kind == IWD_EV_GAP;
	struct dir_stats *d = &c->d[ev->dir];

	o->problems++;
	if (gap) {
		d->gaps++;
		d->gap_octets += ev->u.gap.len;
	} else {
		d->undecoded++;
		d->undecoded_octets += ev->u.gap.len;
	}
	if (o->cfg.quiet)
		return;
	if (o->cfg.view == IWD_VIEW_JSON) {
		struct jw j;
		j_head(o, &j, ev, gap ? "gap" : "undecoded");
		j_u64(&j, "off", ev->u.gap.off);
		j_u64(&j, "len", ev->u.gap.len);
		j_tail(&j, ev);
		j_close(&j);
		return;
	}
	line_head(o, ev);
	if (gap)
		fprintf(o->f,
			"[gap: %" PRIu64
			" octets missing from the capture at stream offset %" PRIu64 "]",
			ev->u.gap.len, ev->u.gap.off);
	else
		fprintf(o->f, "[undecoded: %" PRIu64 " octets at stream offset %" PRIu64 "]",
			ev->u.gap.len, ev->u.gap.off);
	tail_quirks(o, ev);
	fputc('\n', o->f);
}

static void close_event(struct iwd_out *o, struct conn *c, const struct iwd_event *ev)
{
	c->closed[ev->dir] = true;
	c->how[ev->dir] = ev->u.close;
	if (c->closed[0] && c->closed[1]) { /* nothing more will answer */
		memset(c->pend, 0, sizeof(c->pend));
	}
	if (o->cfg.quiet)
		return;
	if (o->cfg.view == IWD_VIEW_JSON) {
		struct jw j;
		j_head(o, &j, ev, "close");
		j_str(&j, "how", close_name(ev->u.close));
		j_tail(&j, ev);
		j_close(&j);
		return;
	}
	if (ev->u.close == IWD_CLOSE_END)
		return;
	line_head(o, ev);
	switch (ev->u.close) {
	case IWD_CLOSE_FIN:
		fputs("TCP FIN: this direction ended", o->f);
		break;
	case IWD_CLOSE_RST:
		fputs("TCP RST: the connection was reset", o->f);
		break;
	default:
		fputs("a new SYN reuses the addresses and ports: the connection ended", o->f);
		break;
	}
	tail_quirks(o, ev);
	fputc('\n', o->f);
}

void iwd_out_event(void *out, const struct iwd_event *ev)
{
	struct iwd_out *o = out;
	struct conn *c = conn_get(o, ev->flow);
	int dir = ev->dir ? 1 : 0;

	if (!c || dir != ev->dir)
		return;
	if (!o->have_t0)
		iwd_out_time_origin(o, ev->ts_ns);
	switch (ev->kind) {
	case IWD_EV_MPA_FRAME:
		mpa_record(c, ev);
		if (o->cfg.quiet)
			break;
		if (o->cfg.view == IWD_VIEW_JSON) {
			mpa_json(o, ev);
			break;
		}
		line_head(o, ev);
		mpa_line(o, ev);
		tail_quirks(o, ev);
		fputc('\n', o->f);
		if (o->cfg.view == IWD_VIEW_VERBOSE)
			mpa_verbose(o, ev);
		break;
	case IWD_EV_FPDU:
		if (!ev->u.fpdu)
			break;
		fpdu_count(o, c, ev);
		if (!o->cfg.quiet && o->cfg.view == IWD_VIEW_VERBOSE)
			fpdu_verbose(o, ev);
		break;
	case IWD_EV_MSG:
		if (ev->u.msg)
			msg_event(o, c, ev);
		break;
	case IWD_EV_GAP:
	case IWD_EV_UNDECODED:
		gap_event(o, c, ev);
		break;
	case IWD_EV_CLOSE:
		close_event(o, c, ev);
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* --stats                                                                  */
/* ---------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int64_t rtt_median(struct conn *c)
{
	if (!c->nrtt)
		return -1;
	qsort(c->rtt, c->nrtt, sizeof(*c->rtt), cmp_i64);
	return c->rtt[c->nrtt / 2];
}

static const char *const op_keys[RDMAP_OP_COUNT] = {
	"write",      "read_request", "read_response",	"send",
	"send_inv",   "send_se",      "send_se_inv",	"terminate",
	"immediate",  "immediate_se", "atomic_request", "atomic_response",
	"opcode_0xc", "opcode_0xd",   "opcode_0xe",	"opcode_0xf",
};

static bool conn_quiet(const struct conn *c)
{
	for (int d = 0; d < 2; d++) {
		const struct dir_stats *s = &c->d[d];
		uint64_t msgs = 0;
		for (int i = 0; i < RDMAP_OP_COUNT; i++)
			msgs += s->msgs[i];
		if (msgs || s->fpdus || s->gaps || s->undecoded || c->mpa[d])
			return false;
	}
	return true;
}

static void stats_text_conn(struct iwd_out *o, struct conn *c)
{
	FILE *f = o->f;
	char e0[ADDR_LEN], e1[ADDR_LEN], ird[16], ord[16], rtr[32];

	fmt_end(&c->flow, 0, e0, sizeof(e0));
	fmt_end(&c->flow, 1, e1, sizeof(e1));
	fprintf(f, "Connection %" PRIu64 ": %s <-> %s%s\n", c->id, e0, e1,
		c->flow.syn_seen ? "" : " (no SYN: end 0 sent first)");
	if (c->mpa[0] || c->mpa[1]) {
		const struct mpa_frame *req = c->mpa[0] ? &c->frame[0] : &c->frame[1];
		/* a frame's M asks for Markers in what its sender receives */
		bool markers[2] = {c->mpa[1] && c->frame[1].markers,
				   c->mpa[0] && c->frame[0].markers};
		fprintf(f, "  MPA: rev %u, CRC %s, Markers %s / %s", req->rev,
			c->crc_on ? "on" : "off", markers[0] ? "on" : "off",
			markers[1] ? "on" : "off");
		fprintf(f, " (end 0 -> 1 / 1 -> 0)");
		for (int d = 0; d < 2; d++) {
			const struct mpa_frame *fr = &c->frame[d];
			if (!c->mpa[d] || !fr->enhanced)
				continue;
			fmt_irdord(fr->ird, ird, sizeof(ird));
			fmt_irdord(fr->ord, ord, sizeof(ord));
			fprintf(f, ", %s IRD %s ORD %s%s%s", fr->reply ? "Reply" : "Request", ird,
				ord, fr->p2p ? " P2P RTR " : "",
				fr->p2p ? rtr_names(fr->rtr, rtr, sizeof(rtr)) : "");
		}
		if (c->mpa[1] && c->frame[1].reject)
			fputs(", REJECTED", f);
		if (c->pd[0].present || c->pd[1].present)
			fputs(", RFC 8797 private data", f);
		fputc('\n', f);
	} else {
		if (o->cfg.mid.enabled)
			fprintf(f,
				"  MPA: handshake not in the capture; read mid-stream with CRC %s,"
				" Markers %s / %s (end 0 -> 1 / 1 -> 0)\n",
				o->cfg.mid.crc ? "on" : "off", o->cfg.mid.markers[0] ? "on" : "off",
				o->cfg.mid.markers[1] ? "on" : "off");
		else
			fprintf(f, "  MPA: handshake not in the capture\n");
	}
	if (c->flow.syn_seen)
		fprintf(f, "  %-26s %18s %18s\n", "", "client -> server", "server -> client");
	else
		fprintf(f, "  %-26s %18s %18s\n", "", "end 0 -> 1", "end 1 -> 0");
	for (int i = 0; i < RDMAP_OP_COUNT; i++) {
		if (!c->d[0].msgs[i] && !c->d[1].msgs[i])
			continue;
		fprintf(f, "  %-26s %18" PRIu64 " %18" PRIu64 "\n",
			rdmap_opcode_info((uint8_t)i)->name, c->d[0].msgs[i], c->d[1].msgs[i]);
	}
#define ROW(label, field)                                                                          \
	fprintf(f, "  %-26s %18" PRIu64 " %18" PRIu64 "\n", label, c->d[0].field, c->d[1].field)
	ROW("payload octets", payload);
	ROW("FPDUs", fpdus);
	ROW("FPDU octets", fpdu_octets);
	if (c->rpcrdma) {
		ROW("RPC calls", calls);
		ROW("RPC replies", replies);
	}
	ROW("CRC errors", crc_errors);
	ROW("Markers", markers);
	ROW("Marker errors", marker_errors);
	ROW("Terminates", terminates);
	if (c->d[0].rtrs || c->d[1].rtrs)
		ROW("RTRs", rtrs);
	ROW("gaps", gaps);
	ROW("gap octets", gap_octets);
	ROW("undecoded runs", undecoded);
	ROW("undecoded octets", undecoded_octets);
#undef ROW
	if (c->rtt_count) {
		char a[32], b[32], m[32];
		fmt_rtt(c->rtt_min, a, sizeof(a));
		fmt_rtt(rtt_median(c), m, sizeof(m));
		fmt_rtt(c->rtt_max, b, sizeof(b));
		fprintf(f, "  RDMA Read round trips: %" PRIu64 ", min %s, median %s, max %s\n",
			c->rtt_count, a, m, b);
	}
	if (c->quirks) {
		fputs("  quirks:", f);
		for (unsigned bit = 1; bit && bit <= c->quirks; bit <<= 1)
			if (c->quirks & bit)
				fprintf(f, " [%s]", quirk_text(bit));
		fputc('\n', f);
	}
	if (c->closed[0] || c->closed[1])
		fprintf(f, "  closed: end 0 -> 1 %s, end 1 -> 0 %s\n",
			c->closed[0] ? close_name(c->how[0]) : "open",
			c->closed[1] ? close_name(c->how[1]) : "open");
	fputc('\n', f);
}

static void stats_json_conn(struct iwd_out *o, struct conn *c)
{
	struct jw j;
	char e[ADDR_LEN];

	j_open(&j, o->f);
	j_str(&j, "type", "stats");
	j_u64(&j, "conn", c->id);
	fmt_end(&c->flow, 0, e, sizeof(e));
	j_str(&j, "end0", e);
	fmt_end(&c->flow, 1, e, sizeof(e));
	j_str(&j, "end1", e);
	j_bool(&j, "syn_seen", c->flow.syn_seen);
	j_bool(&j, "mpa_seen", c->mpa[0] || c->mpa[1]);
	if (c->mpa[0] || c->mpa[1]) {
		const struct mpa_frame *req = c->mpa[0] ? &c->frame[0] : &c->frame[1];
		j_u64(&j, "rev", req->rev);
		j_arr(&j, "markers");
		j_elem(&j);
		fputs(c->mpa[1] && c->frame[1].markers ? "true" : "false", o->f);
		j_elem(&j);
		fputs(c->mpa[0] && c->frame[0].markers ? "true" : "false", o->f);
		j_end(&j, ']');
		j_bool(&j, "rejected", c->mpa[1] && c->frame[1].reject);
		for (int d = 0; d < 2; d++) {
			const struct mpa_frame *fr = &c->frame[d];
			if (!c->mpa[d] || !fr->enhanced)
				continue;
			j_obj(&j, fr->reply ? "reply" : "request");
			j_u64(&j, "ird", fr->ird);
			j_u64(&j, "ord", fr->ord);
			j_bool(&j, "p2p", fr->p2p);
			j_rtr(&j, "rtr", fr->rtr);
			j_end(&j, '}');
		}
	}
	j_str(&j, "crc", c->crc_on ? "on" : "off");
	j_bool(&j, "rpcrdma", c->rpcrdma);
	j_arr(&j, "dirs");
	for (int d = 0; d < 2; d++) {
		const struct dir_stats *s = &c->d[d];
		j_elem_obj(&j);
		j_obj(&j, "msgs");
		for (int i = 0; i < RDMAP_OP_COUNT; i++)
			if (s->msgs[i])
				j_u64(&j, op_keys[i], s->msgs[i]);
		j_end(&j, '}');
		j_u64(&j, "payload", s->payload);
		j_u64(&j, "fpdus", s->fpdus);
		j_u64(&j, "fpdu_octets", s->fpdu_octets);
		j_u64(&j, "rpc_calls", s->calls);
		j_u64(&j, "rpc_replies", s->replies);
		j_u64(&j, "crc_errors", s->crc_errors);
		j_u64(&j, "markers", s->markers);
		j_u64(&j, "marker_errors", s->marker_errors);
		j_u64(&j, "terminates", s->terminates);
		j_u64(&j, "rtrs", s->rtrs);
		j_u64(&j, "gaps", s->gaps);
		j_u64(&j, "gap_octets", s->gap_octets);
		j_u64(&j, "undecoded", s->undecoded);
		j_u64(&j, "undecoded_octets", s->undecoded_octets);
		j_end(&j, '}');
	}
	j_end(&j, ']');
	if (c->rtt_count) {
		j_obj(&j, "read_rtt_ns");
		j_u64(&j, "count", c->rtt_count);
		j_u64(&j, "min", (uint64_t)c->rtt_min);
		j_u64(&j, "median", (uint64_t)rtt_median(c));
		j_u64(&j, "max", (uint64_t)c->rtt_max);
		j_end(&j, '}');
	}
	j_arr(&j, "quirks");
	for (unsigned bit = 1; bit && bit <= c->quirks; bit <<= 1) {
		if (c->quirks & bit) {
			j_elem(&j);
			iwd_out_json_string(o->f, quirk_key(bit));
		}
	}
	j_end(&j, ']');
	j_close(&j);
}

uint64_t iwd_out_finish(struct iwd_out *o, const struct iwd_tcp_stats *tcp)
{
	if (!o->cfg.stats) {
		fflush(o->f);
		return o->problems;
	}
	bool json = o->cfg.view == IWD_VIEW_JSON;
	if (!json && !o->cfg.quiet)
		fputc('\n', o->f);
	for (size_t i = 0; i < o->nconns; i++) {
		struct conn *c = o->conns[i];
		if (!c || conn_quiet(c))
			continue;
		if (json)
			stats_json_conn(o, c);
		else
			stats_text_conn(o, c);
	}
	if (tcp && json) {
		struct jw j;
		j_open(&j, o->f);
		j_str(&j, "type", "tcp_stats");
		j_u64(&j, "segments", tcp->segments);
		j_u64(&j, "retransmitted", tcp->retransmitted);
		j_u64(&j, "out_of_order", tcp->out_of_order);
		j_u64(&j, "gaps", tcp->gaps);
		j_u64(&j, "gap_octets", tcp->gap_octets);
		j_u64(&j, "connections", tcp->connections);
		j_u64(&j, "problems", o->problems);
		j_close(&j);
	} else if (tcp) {
		fprintf(o->f,
			"TCP: segments %" PRIu64 ", retransmitted %" PRIu64
			", out of order %" PRIu64 ", gaps %" PRIu64 " (%" PRIu64
			" octets), connections %" PRIu64 "\n",
			tcp->segments, tcp->retransmitted, tcp->out_of_order, tcp->gaps,
			tcp->gap_octets, tcp->connections);
	}
	fflush(o->f);
	return o->problems;
}

void iwd_out_destroy(struct iwd_out *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nconns; i++) {
		if (o->conns[i])
			free(o->conns[i]->rtt);
		free(o->conns[i]);
	}
	free(o->conns);
	iwd_ulp_destroy(o->ulp);
	free(o);
}
