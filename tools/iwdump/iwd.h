/* SPDX-License-Identifier: MIT */
/*
 * iwd.h - iwdump's internal interfaces (tools/iwdump, prefix iwd_).
 *
 * iwdump reads captured packets and shows the iWARP traffic in them.  Four
 * stages, each a file, each sans-I/O except the first:
 *
 *   iwd_cap.c    packets from a pcap/pcapng file or a live interface (libpcap)
 *   iwd_net.c    iwd_net_parse(): link, IPv4/IPv6 and TCP headers ->
 *                struct iwd_seg (no I/O, fuzzed)
 *   iwd_tcp.c    TCP reassembly per connection and direction: in-order
 *                octets with their stream offsets, retransmissions dropped,
 *                out-of-order segments held (bounded), gaps reported, never
 *                guessed across -> struct iwd_tcp_ops callbacks (fuzzed)
 *   iwd_iwarp.c  one TCP connection's two byte streams -> MPA Request/Reply
 *                frames, FPDUs (Markers checked, CRC32c verified), DDP
 *                segments, RDMAP messages, Terminates (and the siw layout
 *                quirk) -> struct iwd_event to an iwd_sink (fuzzed)
 *   iwd_ulp.c    RPC-over-RDMA v1 headers with chunk lists (RFC 8166), the
 *                RPC call/reply inside, NFS procedure and operation names
 *   iwd_out.c    the views: one line per message, -V (every field with the
 *                RFC section it comes from), --json, --stats
 *   iwdump.c     the command line
 *
 * Every stage gets peer (captured) octets: nothing may crash, hang, or
 * allocate by a length read from the capture without a bound.
 */
#ifndef IWARP_TOOLS_IWD_H
#define IWARP_TOOLS_IWD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <iwarp/ddp.h>
#include <iwarp/mpa.h>
#include <iwarp/rdmap.h>

/* ---------------------------------------------------------------------- */
/* Packets (iwd_net.c, iwd_cap.c)                                                    */
/* ---------------------------------------------------------------------- */

#define IWD_TCP_FIN 0x01
#define IWD_TCP_SYN 0x02
#define IWD_TCP_RST 0x04
#define IWD_TCP_PSH 0x08
#define IWD_TCP_ACK 0x10

/* One TCP segment of the capture.  Addresses are IPv4 (4 octets, the rest 0)
 * or IPv6 (16); `payload` points into the packet and lives until the next
 * iwd_cap_next(). */
struct iwd_seg {
	uint64_t frame; /* 1-based packet number in the capture */
	uint64_t ts_ns; /* capture time, ns since the epoch */
	int af;		/* AF_INET or AF_INET6 */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags; /* IWD_TCP_* */
	const uint8_t *payload;
	uint32_t len;	  /* payload octets present in the capture */
	uint32_t wirelen; /* payload octets on the wire (> len: snaplen cut it) */
};

/*
 * Parse one captured packet of DLT `linktype` (EN10MB, NULL/LOOP, RAW,
 * LINUX_SLL, LINUX_SLL2, IPV4, IPV6).  `caplen` octets are present of the
 * packet's `wirelen`.  Returns 1 and fills `seg` for a TCP segment, 0 for
 * anything else (ARP, UDP, an IP fragment, a truncated header: not TCP we can
 * use).  Never reads outside pkt[0..caplen).  VLAN tags (802.1Q/802.1ad) are
 * skipped; IPv6 extension headers are walked (hop-by-hop, routing,
 * destination options; a fragment header means 0).
 */
int iwd_net_parse(int linktype, const uint8_t *pkt, size_t caplen, size_t wirelen, uint64_t frame,
		  uint64_t ts_ns, struct iwd_seg *seg);

struct iwd_cap;
/* Open a capture file (pcap or pcapng; "-" = stdin).  NULL with a message in
 * err[0..errlen) on failure. */
struct iwd_cap *iwd_cap_open_file(const char *path, char *err, size_t errlen);
/* Capture live on `ifname` with BPF `filter` (NULL = "tcp").  Needs the
 * privilege to capture.  NULL with a message on failure. */
struct iwd_cap *iwd_cap_open_live(const char *ifname, const char *filter, char *err, size_t errlen);
/* Next TCP segment: 1 (seg filled), 0 at the end of the file or after
 * iwd_cap_stop(), -1 on a read error (message in err).  Other packets are
 * skipped and counted (iwd_cap_skipped). */
int iwd_cap_next(struct iwd_cap *c, struct iwd_seg *seg, char *err, size_t errlen);
/* Make iwd_cap_next() return 0 soon (async-signal-safe; SIGINT on live). */
void iwd_cap_stop(struct iwd_cap *c);
uint64_t iwd_cap_skipped(const struct iwd_cap *c);
void iwd_cap_close(struct iwd_cap *c);

/* ---------------------------------------------------------------------- */
/* TCP reassembly (iwd_tcp.c)                                               */
/* ---------------------------------------------------------------------- */

/* A connection: end 0 is the side that sent the SYN (the client), end 1 the
 * other; without a SYN in the capture, end 0 is the source of the first
 * segment seen and `syn_seen` is false. */
struct iwd_flow {
	uint64_t id; /* 1, 2, ... in order of first appearance */
	int af;
	uint8_t addr[2][16];
	uint16_t port[2];
	bool syn_seen;
};

/* Direction d carries octets from end d to end 1-d. */
enum iwd_close_how {
	IWD_CLOSE_FIN,	  /* FIN: the direction ended in order */
	IWD_CLOSE_RST,	  /* RST seen */
	IWD_CLOSE_END,	  /* the capture ended with the connection open */
	IWD_CLOSE_REUSED, /* a new SYN on the same addresses and ports */
};

struct iwd_tcp_ops {
	/* A new connection.  Returns the connection's user pointer (NULL is
	 * allowed: the connection is then followed but nothing is delivered). */
	void *(*open)(void *user, const struct iwd_flow *flow, uint64_t ts_ns);
	/* In-order octets of direction `dir` starting at stream offset `off`
	 * (0 = the first octet after the SYN; without a SYN, the first octet
	 * seen).  `frame` is the packet that completed them. */
	void (*data)(void *conn, int dir, uint64_t off, const uint8_t *p, size_t n, uint64_t ts_ns,
		     uint64_t frame);
	/* Octets [off, off + n) of `dir` are missing from the capture (lost by
	 * the capture, cut by snaplen, or beyond the out-of-order bound);
	 * delivery goes on at off + n. */
	void (*gap)(void *conn, int dir, uint64_t off, uint64_t n, uint64_t ts_ns, uint64_t frame);
	/* Direction `dir` ended; called once per direction, the last call for
	 * the connection's pointer is the one for which both have ended. */
	void (*close)(void *conn, int dir, enum iwd_close_how how, uint64_t ts_ns);
};

struct iwd_tcp_stats {
	uint64_t segments, retransmitted, out_of_order, gaps, gap_octets, connections;
	uint64_t ignored; /* segments of new connections past IWD_TCP_MAX_CONNS, not followed */
};

/* Connections followed at once; an ended one gives its place to a new one. */
#define IWD_TCP_MAX_CONNS 65536

struct iwd_tcp;
/* `max_ooo` bounds the octets held out of order per direction (0 = 4 MiB);
 * past it the earliest hole is declared a gap. */
struct iwd_tcp *iwd_tcp_create(const struct iwd_tcp_ops *ops, void *user, size_t max_ooo);
/* Feed one segment (any order, duplicates welcome). */
void iwd_tcp_segment(struct iwd_tcp *t, const struct iwd_seg *seg);
/* End of capture: deliver what can be delivered, report the holes left as
 * gaps, close every direction still open (IWD_CLOSE_END). */
void iwd_tcp_finish(struct iwd_tcp *t, uint64_t ts_ns);
void iwd_tcp_get_stats(const struct iwd_tcp *t, struct iwd_tcp_stats *s);
void iwd_tcp_destroy(struct iwd_tcp *t);

/* ---------------------------------------------------------------------- */
/* iWARP decoding (iwd_iwarp.c)                                             */
/* ---------------------------------------------------------------------- */

/* How to read a connection whose MPA handshake is not in the capture
 * (--mpa-mid-stream).  Without the handshake the decoder needs to be told
 * CRC and Markers; it finds FPDU boundaries and the Marker phase itself. */
struct iwd_midstream {
	bool enabled;
	bool crc;	 /* CRC on */
	bool markers[2]; /* Markers in direction 0 / 1 */
};

struct iwd_iwarp_cfg {
	struct iwd_midstream mid;
	uint16_t port;	 /* if non-zero: only connections with this port are iWARP */
	size_t max_msg;	 /* untagged message reassembly bound (0 = 1 MiB) */
	bool keep_fpdus; /* emit IWD_EV_FPDU for every FPDU (-V, --stats need them) */
};

enum iwd_ev_kind {
	IWD_EV_MPA_FRAME, /* an MPA Request or Reply (RFC 5044 §7.1, RFC 6581 §9) */
	IWD_EV_FPDU,	  /* one FPDU: MPA framing + the DDP segment it carries */
	IWD_EV_MSG,	  /* one RDMAP message, after its last segment (L = 1) */
	IWD_EV_GAP,	  /* octets missing from the capture; decoding resynchronises */
	IWD_EV_UNDECODED, /* octets that are not iWARP or could not be decoded */
	IWD_EV_CLOSE,	  /* a direction ended */
};

/* Peer quirks recognised by name (docs/interop.md). */
enum iwd_quirk {
	IWD_QUIRK_NONE = 0,
	IWD_QUIRK_SIW_TERM_LAYOUT = 1u << 0,	 /* Terminate control word as Linux siw writes it:
						Layer/EType nibbles swapped, M/D/R in the
						low bits of octet 20 */
	IWD_QUIRK_RTR_STAG0 = 1u << 1,		 /* zero-length Write RTR with STag 0 */
	IWD_QUIRK_TERM_SEGLEN_PAYLOAD = 1u << 2, /* Terminate DDP Segment Length counts the
						    payload only (siw) */
};

struct iwd_marker {
	uint64_t off;	  /* stream offset of the Marker */
	uint16_t fpduptr; /* as received */
	bool ok;	  /* points at this FPDU's start (RFC 5044 §4.3) */
};

#define IWD_MARKERS_MAX MPA_MARKERS_PER_FPDU_MAX

enum iwd_crc_state { IWD_CRC_OFF, IWD_CRC_OK, IWD_CRC_BAD };

struct iwd_fpdu {
	uint64_t off;	    /* stream offset of the ULPDU_Length field (or a Marker before it) */
	uint32_t wire_len;  /* octets on the wire, Markers included */
	uint16_t ulpdu_len; /* ULPDU_Length */
	uint8_t pad;
	enum iwd_crc_state crc;
	uint32_t crc_rx, crc_calc;
	unsigned nmarkers;
	struct iwd_marker markers[IWD_MARKERS_MAX];
	/* the DDP segment (ULPDU, Markers removed) */
	const uint8_t *ulpdu;
	bool ddp_ok;		/* the DDP header decoded (DV may still be wrong) */
	struct ddp_hdr ddp;	/* when ddp_ok */
	uint8_t rdmap_rv;	/* RDMAP version (RFC 5040 §4.2) */
	uint8_t opcode;		/* RDMAP opcode */
	const uint8_t *payload; /* after DDP and RDMAP headers */
	uint32_t payload_len;
	bool rtr; /* an RFC 6581 §9.3 RTR (first FPDU, zero length) */
};

/* A Terminate's RDMAP part read both ways (RFC 5040 §4.8). */
struct iwd_term {
	struct rdmap_term std; /* the RFC layout */
	bool std_ok;	       /* the RFC reading names a defined layer/type/code */
	struct rdmap_term siw; /* the siw layout (IWD_QUIRK_SIW_TERM_LAYOUT) */
	bool siw_ok;
	bool use_siw;		   /* the reading that makes sense is siw's */
	struct ddp_hdr copied_ddp; /* the copied DDP header, when D */
	bool copied_ddp_ok;
	struct rdmap_read_req copied_rreq; /* when R */
};

/* One RDMAP message (its segments in order; RFC 5040 §4, RFC 5041 §5). */
struct iwd_msg {
	uint8_t opcode;
	bool tagged;
	uint32_t stag;	  /* tagged: STag; Send with Invalidate: the Invalidate STag */
	uint64_t to;	  /* tagged: TO of the first segment */
	uint32_t qn, msn; /* untagged */
	uint32_t len;	  /* octets of payload over all segments */
	unsigned segments;
	uint64_t first_frame, last_frame;
	uint64_t first_ts, last_ts;
	bool crc_bad; /* a segment failed its CRC */
	bool rtr;
	/* opcode-specific */
	struct rdmap_read_req rreq;	/* Read Request */
	struct rdmap_atomic_req areq;	/* Atomic Request (RFC 7306) */
	struct rdmap_atomic_resp aresp; /* Atomic Response */
	uint8_t imm_data[8];		/* Immediate Data (RFC 7306 §5.5: 8 octets) */
	struct iwd_term term;		/* Terminate */
	int64_t read_rtt_ns;		/* Read Response: ns since its Read Request, -1 unknown */
	/* untagged payload, reassembled (bounded by max_msg; `truncated` says
	 * the rest was not kept) */
	const uint8_t *data;
	uint32_t data_len;
	bool truncated;
};

struct iwd_event {
	enum iwd_ev_kind kind;
	const struct iwd_flow *flow;
	int dir;
	uint64_t frame; /* the packet that completed it */
	uint64_t ts_ns;
	unsigned quirks;  /* enum iwd_quirk bits seen in this event */
	const char *note; /* a warning or error in words (NULL = none) */
	union {
		struct {
			struct mpa_frame f;
			int err;	    /* mpa_frame_decode's error, IW_OK when it decoded */
			uint32_t len;	    /* octets */
			uint8_t rsvd_flags; /* reserved bits of octet 16 as received (RFC 5044
					       §7.1.1: ignored); Linux siw uses 0x08 */
			/* RFC 8797 RPC-over-RDMA private data, when recognised */
			bool rpcrdma_pd;
			uint8_t rpcrdma_version, rpcrdma_flags;
			/* in octets: (octet + 1) * 1024, so up to 262144 */
			uint32_t rpcrdma_send_size, rpcrdma_recv_size;
		} mpa;
		const struct iwd_fpdu *fpdu;
		const struct iwd_msg *msg;
		struct {
			uint64_t off, len;
		} gap; /* IWD_EV_GAP and IWD_EV_UNDECODED */
		enum iwd_close_how close;
	} u;
};

struct iwd_sink {
	void (*event)(void *user, const struct iwd_event *ev);
	void *user;
};

/* The negotiated state of a connection, for the views. */
struct iwd_conn_info {
	bool iwarp;    /* an iWARP connection (else nothing is emitted for it) */
	bool mpa_seen; /* the handshake was in the capture */
	bool midstream;
	struct mpa_frame req, rep;
	bool rejected;
	uint8_t rev;
	bool crc;
	bool markers[2]; /* Markers in direction 0 / 1 */
	/* stream offset of full operation's first octet; mid-stream, where it is
	 * not in the capture, the Marker phase found: the smallest offset
	 * congruent to it (mod 512 with Markers, mod 4 without) */
	uint64_t fpdu_start[2];
};

struct iwd_iwarp;
struct iwd_iwarp *iwd_iwarp_create(const struct iwd_iwarp_cfg *cfg, const struct iwd_flow *flow,
				   const struct iwd_sink *sink);
void iwd_iwarp_data(struct iwd_iwarp *c, int dir, uint64_t off, const uint8_t *p, size_t n,
		    uint64_t ts_ns, uint64_t frame);
void iwd_iwarp_gap(struct iwd_iwarp *c, int dir, uint64_t off, uint64_t n, uint64_t ts_ns,
		   uint64_t frame);
void iwd_iwarp_close(struct iwd_iwarp *c, int dir, enum iwd_close_how how, uint64_t ts_ns);
const struct iwd_conn_info *iwd_iwarp_info(const struct iwd_iwarp *c);
void iwd_iwarp_destroy(struct iwd_iwarp *c);

/* Read a Terminate's RDMAP part (after its 18-octet DDP header) both ways. */
void iwd_term_read(const uint8_t *p, size_t n, struct iwd_term *t);

/* Names for the views (never NULL). */
const char *iwd_opcode_name(uint8_t opcode);
const char *iwd_term_layer_name(uint8_t layer);
const char *iwd_term_type_name(uint8_t layer, uint8_t etype);
const char *iwd_term_code_name(uint8_t layer, uint8_t etype, uint8_t code);

/* ---------------------------------------------------------------------- */
/* RPC-over-RDMA and NFS (iwd_ulp.c)                                        */
/* ---------------------------------------------------------------------- */

struct rpcrdma_hdr; /* <iwarp/rpcrdma_wire.h> */

/* What iwd_ulp_decode found in a Send's payload. */
struct iwd_ulp {
	bool rpcrdma;			   /* an RPC-over-RDMA v1 header decoded */
	int err;			   /* rpcrdma_hdr_decode's error when !rpcrdma */
	uint32_t xid, vers, credits, proc; /* RFC 8166 §4.2 */
	unsigned nread, nwrite, nreply;	   /* chunk segments in each list */
	uint32_t hdr_len;		   /* octets of the RPC-over-RDMA header */
	/* the RPC message after it (RDMA_MSG), when it decoded */
	bool rpc;
	bool call;			   /* call or reply */
	uint32_t prog, vers_rpc, rpc_proc; /* call; a matched reply: its call's */
	uint32_t reply_stat, accept_stat;  /* reply */
	char what[96]; /* "NFSv3 READ", "NFSv4.1 COMPOUND SEQUENCE PUTFH READ", "MOUNTv3 MNT";
			  a reply (or an RDMA_NOMSG / RDMA_ERROR answering a call): its
			  call's, "" when the call was not seen */
	/* the decoded transport header with its chunk lists; owned by the
	 * state, valid until its next iwd_ulp_decode; NULL when !rpcrdma */
	const struct rpcrdma_hdr *hdr;
	bool matched;	      /* an answer whose call was found by XID */
	bool backchannel;     /* a call from end 1 (RFC 8167 reverse direction) */
	bool xid_mismatch;    /* RPC XID != rdma_xid (RFC 8166 §4.2.1) */
	uint32_t rpc_xid;     /* when rpc */
	uint32_t cred_flavor; /* call: AUTH_SYS 1, RPCSEC_GSS 6, ... */
	/* reply: "NFS3_OK", "NFS3ERR_NOENT", "NFS4ERR_STALE (PUTFH)", "SUCCESS"
	 * (no status of the program known), "PROG_UNAVAIL", "GARBAGE_ARGS",
	 * "MSG_DENIED AUTH_ERROR AUTH_BADCRED"; "" when none */
	char status[64];
};

struct iwd_ulp_state;
struct iwd_ulp_state *iwd_ulp_create(void);
void iwd_ulp_destroy(struct iwd_ulp_state *s);
/* Decode a Send payload of connection `conn_id`, direction `dir`.  Replies
 * are matched to their calls by XID (bounded table) for their names. */
void iwd_ulp_decode(struct iwd_ulp_state *s, uint64_t conn_id, int dir, const uint8_t *p, size_t n,
		    struct iwd_ulp *out);
/* -V: print the RPC-over-RDMA header and chunk lists field by field, and the
 * ONC RPC header after an RDMA_MSG header. */
void iwd_ulp_print_verbose(FILE *f, const uint8_t *p, size_t n, const char *indent);
/* The one-line summary of a decoded Send: "RPC-over-RDMA RDMA_MSG xid
 * 0x94216f95 credits 64 read 0 write 1 reply 0 | NFSv3 READ call".  Writes
 * at most len octets (NUL included; truncates); returns strlen of the result. */
size_t iwd_ulp_summary(const struct iwd_ulp *u, char *buf, size_t len);
/* The name of an rdma_proc ("RDMA_MSG", ...; "rdma_proc?" for others). */
const char *iwd_rpcrdma_proc_name(uint32_t proc);

/* ---------------------------------------------------------------------- */
/* Views (iwd_out.c)                                                        */
/* ---------------------------------------------------------------------- */

enum iwd_view { IWD_VIEW_LINE, IWD_VIEW_VERBOSE, IWD_VIEW_JSON };

struct iwd_out_cfg {
	enum iwd_view view;
	bool stats;		  /* --stats: a summary per connection at the end */
	bool quiet;		  /* --stats alone: no per-message output */
	bool abs_time;		  /* absolute times (else seconds since the first packet) */
	struct iwd_midstream mid; /* as given to iwd_iwarp (CRC of connections without a
				     handshake, for the views) */
};

struct iwd_out;
/* NULL (errno ENOMEM) when out of memory. */
struct iwd_out *iwd_out_create(const struct iwd_out_cfg *cfg, FILE *f);
/* The time relative times count from: the first packet's (without a call,
 * the first event's). */
void iwd_out_time_origin(struct iwd_out *o, uint64_t ts_ns);
/* The sink that iwd_iwarp reports to. */
void iwd_out_event(void *out, const struct iwd_event *ev);
/* End: the --stats table, totals.  Returns the number of problems seen, for
 * the exit status: FPDUs with a bad CRC, bad Markers, undecoded runs and
 * gaps (each counts one). */
uint64_t iwd_out_finish(struct iwd_out *o, const struct iwd_tcp_stats *tcp);
void iwd_out_destroy(struct iwd_out *o);
/* s as a JSON string, quotes included (RFC 8259 §7: ", \ and controls
 * escaped; octets that are not UTF-8 as \u00XX of their value). */
void iwd_out_json_string(FILE *f, const char *s);

#endif
