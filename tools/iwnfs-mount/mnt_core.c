/* SPDX-License-Identifier: MIT */
/*
 * mnt_core.c - iwnfs-mount's NFS client core: the call layer over
 * RPC-over-RDMA, the node table, the attribute cache, write-behind, and
 * MOUNT / portmap over TCP.
 *
 * Call layer.  mnt_call_start puts the RPC header (a fresh XID, AUTH_SYS
 * credentials of the caller, RFC 5531 §9 and Appendix A) into one transmit
 * buffer; the caller appends the arguments (mnt_xdr.h); mnt_call_send hands
 * the message to rpcrdma_callv, which copies it, so the buffer is free again
 * at once (WRITE data goes as a piece of its own, from the write-behind
 * record, mnt_call_send_data).  The NFS binding (rpcrdma_nfs_ulb, RFC 8267) makes the transport
 * move WRITE data in Read chunks and READ data in Write chunks.  Calls beyond
 * the credit grant wait inside the transport, in order.  The reply callback
 * checks the RPC header (rpc_check_reply), decodes the results
 * (nfs3_dec_res) and calls the caller's callback; a reply that does not
 * decode becomes EIO, so a broken server gives a defined error.
 *
 * Nodes.  The kernel names an object by a 64-bit inode number; NFS by a file
 * handle of up to 64 octets (RFC 1813 §2.3.3).  A node holds the handle and
 * its inode number is the node's address (the root is FUSE_ROOT_ID); a hash
 * on the handle makes the same object always the same node (hard links,
 * READDIRPLUS of entries already known).  A node lives while the kernel's
 * lookup count, an operation in progress (busy) or unwritten data hold it.
 *
 * Attribute cache.  Attributes come back with most replies (post_op_attr,
 * wcc_data) and are kept per node with a timeout between the ac*min and
 * ac*max options: the minimum when the attributes changed, doubled each time
 * a refresh finds them unchanged (so busy files are asked often, idle ones
 * rarely).  REMOVE, RENAME and LINK change the link count of an object we
 * may not know by name, so they make every cached attribute stale (epoch).
 *
 * Write-behind (RFC 1813 §3.3.7, §3.3.21).  A FUSE write is copied and sent
 * at once as an UNSTABLE WRITE; its FUSE reply goes back at once too while
 * the octets held stay under wb_max (else it waits: mnt_wb_hold), so one
 * writer keeps many WRITEs in flight.  A write that overlaps one still
 * queued or in flight waits for it (the server may run concurrent calls in
 * any order).  A written record keeps its data and the write verifier of
 * its reply until a COMMIT: when the COMMIT's verifier differs from a
 * record's, the server lost the data (it restarted) and every uncommitted
 * record of the file is sent again, in the order written.  COMMIT runs on
 * flush (close), fsync, before a truncation, at shutdown, and when a file
 * holds more than half of wb_max.  Write errors stick to the node and are
 * reported by the next flush or fsync (and refuse further writes), as the
 * kernel client does.
 *
 * MOUNT.  At start-up only, blocking: GETPORT for MOUNT v3 over TCP from the
 * portmapper on port 111 (RFC 1833 §3.2; skipped with mountport=), then MNT
 * (RFC 1813 §5.2.1) over a record-marked TCP connection (RFC 5531 §11), from
 * a reserved port when running as root (servers that demand one).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/iw_err.h>
#include <iwarp/rpcrdma.h>

#include "iwt_addr.h"
#include "iwt_clock.h"
#include "iwt_err.h"
#include "mnt_int.h"

/* ---------------------------------------------------------------------- */
/* Logging                                                                 */
/* ---------------------------------------------------------------------- */

void mnt_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	iwt_vlog_stamped(MNT_PROG, fmt, ap);
	va_end(ap);
}

void mnt_debug(struct mnt *m, const char *fmt, ...)
{
	va_list ap;

	if (m->o.verbose < 1)
		return;
	va_start(ap, fmt);
	iwt_vlog_stamped(MNT_PROG, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------------- */
/* Call layer                                                              */
/* ---------------------------------------------------------------------- */

struct call_tok {
	struct iw_list link; /* m->calls, oldest first */
	struct mnt *m;
	uint32_t xid, proc, max_count;
	uint64_t sent_ns;
	mnt_reply_fn cb;
	void *arg;
};

#define MNT_NOTE_FIRST_MS 5000u	  /* first "still trying" line after a loss */
#define MNT_NOTE_MAX_MS	  300000u /* then doubling, up to every 5 minutes */

uint64_t mnt_major_ms(const struct mnt *m)
{
	return (uint64_t)m->o.timeo_ms * (m->o.retrans + 1u);
}

/*
 * Connection events.  The transport keeps a lost client connection's calls
 * and, once it is up again, sends every one that had no reply again with
 * its XID unchanged (rpcrdma.h), so the server's duplicate request cache can
 * recognise them (RFC 5531 §9: the XID is how a server tells a
 * retransmission from a new call).  A hard mount asks the transport to
 * reconnect for ever (cfg.reconnects = INT_MAX, reconnect_ms apart); a soft
 * mount too, its calls having their own deadline (mnt_call_send).  Here the
 * loss and the recovery are logged, and the time spent down, with lines
 * further apart the longer it lasts (mnt_health_tick).
 */
static void on_conn(void *arg, struct rpcrdma_conn *conn, enum rpcrdma_conn_event ev, int status)
{
	struct mnt *m = arg;
	struct mnt_health *h = &m->health;
	switch (ev) {
	case RPCRDMA_CONN_UP:
		m->up = true;
		if (h->down_since) {
			mnt_log("server %s OK: reconnected after %.1f s; %u call(s) sent again",
				m->server_str, (double)(iwt_now_ns() - h->down_since) / 1e9,
				m->inflight);
			h->down_since = 0;
		} else {
			mnt_debug(m, "connected to the NFS/RDMA server");
		}
		break;
	case RPCRDMA_CONN_DOWN:
		m->up = false;
		m->st.outages++;
		h->down_since = iwt_now_ns();
		h->note_every_ms = MNT_NOTE_FIRST_MS;
		h->next_note = h->down_since + MNT_NOTE_FIRST_MS * 1000000ull;
		if (m->exiting)
			break;
		if (m->o.soft)
			mnt_log("connection to server %s lost (%s); reconnecting; calls without a "
				"reply fail after %.1f s (soft)",
				m->server_str, rpcrdma_errname(status),
				(double)mnt_major_ms(m) / 1e3);
		else
			mnt_log("connection to server %s lost (%s); reconnecting until it is back "
				"(hard), %u call(s) wait",
				m->server_str, rpcrdma_errname(status), m->inflight);
		break;
	case RPCRDMA_CONN_CLOSED:
		if (conn == m->conn) {
			m->conn = NULL;
			m->up = false;
			if (!m->exiting)
				mnt_log("connection to server %s closed (%s); the next call "
					"connects again",
					m->server_str, rpcrdma_errname(status));
		}
		break;
	}
}

int mnt_health_tick(struct mnt *m)
{
	struct mnt_health *h = &m->health;
	uint64_t now = iwt_now_ns(), major_ns = mnt_major_ms(m) * 1000000ull, due = 0;
	if (m->exiting)
		return -1;
	/* the oldest call without a reply, against the major timeout */
	if (!iw_list_empty(&m->calls)) {
		struct call_tok *t = iw_container_of(m->calls.next, struct call_tok, link);

		if (now - t->sent_ns >= major_ns) {
			if (!h->late_since) {
				h->late_since = now;
				mnt_log("server %s not responding, %s (a call has waited %.1f s)",
					m->server_str, m->o.soft ? "timing out" : "still trying",
					(double)(now - t->sent_ns) / 1e9);
			}
		} else {
			due = t->sent_ns + major_ns;
		}
	}
	if (h->down_since) {
		if (now >= h->next_note) {
			mnt_log("server %s still unreachable after %.0f s; %u call(s) %s",
				m->server_str, (double)(now - h->down_since) / 1e9, m->inflight,
				m->o.soft ? "waiting out their timeout" : "waiting (hard)");
			h->note_every_ms *= 2;
			if (h->note_every_ms > MNT_NOTE_MAX_MS)
				h->note_every_ms = MNT_NOTE_MAX_MS;
			h->next_note = now + h->note_every_ms * 1000000ull;
		}
		if (!due || h->next_note < due)
			due = h->next_note;
	}
	if (!due)
		return -1;
	return due <= now ? 0 : (int)((due - now + 999999) / 1000000);
}

int mnt_connect(struct mnt *m)
{
	if (m->conn)
		return 0;
	m->conn = rpcrdma_connect(m->ctx, (const struct sockaddr *)&m->rdma_sa, m->rdma_len,
				  on_conn, NULL, m);
	return m->conn ? 0 : (errno ? errno : EIO);
}

static void on_rpc_reply(void *arg, int status, const uint8_t *reply, size_t len)
{
	struct call_tok *t = arg;
	struct mnt *m = t->m;
	struct nfs3_res r;
	struct iw_cursor c;
	const char *why;
	size_t off;
	int rc;

	m->inflight--;
	iw_list_del(&t->link);
	if (status < 0) {
		m->st.errors++;
		if (status == IW_ETIMEDOUT) {
			/* soft: the major timeout passed (RFC 1813 says nothing of
			 * timeouts; EIO is what a soft Linux mount returns) */
			m->st.timeouts++;
			if (!m->health.late_since && !m->exiting) {
				m->health.late_since = iwt_now_ns();
				mnt_log("server %s not responding, timing out", m->server_str);
			}
			if (m->o.verbose >= 1 || m->st.timeouts == 1)
				mnt_log("%s xid %#x: no reply after %.1f s: EIO (soft)",
					nfs3_procname(t->proc), t->xid,
					(double)mnt_major_ms(m) / 1e3);
		} else {
			mnt_debug(m, "%s xid %#x failed: %s", nfs3_procname(t->proc), t->xid,
				  rpcrdma_errname(status));
		}
		t->cb(m, t->arg, EIO, NULL, NULL, NULL, 0);
		free(t);
		return;
	}
	if (m->health.late_since && !m->exiting) {
		mnt_log("server %s OK: replies again after %.1f s", m->server_str,
			(double)(iwt_now_ns() - m->health.late_since) / 1e9);
	}
	m->health.late_since = 0;
	rc = rpc_check_reply(reply, len, t->xid, &off, &why);
	if (rc == 0) {
		iw_cursor_init(&c, reply + off, len - off);
		rc = nfs3_dec_res(t->proc, &c, t->max_count, &r);
		why = "results do not decode (RFC 1813)";
	}
	if (rc) {
		m->st.errors++;
		mnt_log("%s xid %#x: bad reply from the server: %s", nfs3_procname(t->proc), t->xid,
			why);
		t->cb(m, t->arg, EIO, NULL, NULL, NULL, 0);
		free(t);
		return;
	}
	if (r.status != NFS3_OK) {
		m->st.nfs_errors++;
		if (m->o.verbose >= 2)
			mnt_log("%s xid %#x: %s", nfs3_procname(t->proc), t->xid,
				nfs3_statname(r.status));
	}
	t->cb(m, t->arg, 0, &r, &c, reply, len);
	free(t);
}

struct iw_cursor *mnt_call_start(struct mnt *m, struct iw_cursor *c, uint32_t proc,
				 const struct nfs_cred *cred)
{
	iw_cursor_init(c, m->tx, m->tx_cap);
	if (++m->xid == 0)
		m->xid = 1;
	rpc_put_call(c, m->xid, NFS_PROGRAM, NFS_V3, proc, cred, m->machine);
	return c;
}

static int call_sendv(struct mnt *m, struct iw_cursor *c, uint32_t proc, uint32_t max_count,
		      const void *data, uint32_t dlen, mnt_reply_fn cb, void *arg)
{
	static const uint8_t zero[4];
	struct rpcrdma_call_opts opts = {0};
	struct iovec iov[3] = {{m->tx, c->off},
			       {(void *)(uintptr_t)data, dlen},
			       {(void *)(uintptr_t)zero, (4 - dlen % 4) % 4}};
	struct call_tok *t;
	int rc;

	if (c->err)
		return EMSGSIZE;
	rc = mnt_connect(m);
	if (rc)
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	t->m = m;
	t->xid = iw_get_be32(m->tx);
	t->proc = proc;
	t->max_count = max_count;
	t->cb = cb;
	t->arg = arg;
	t->sent_ns = iwt_now_ns();
	/* soft: the transport completes the call with IW_ETIMEDOUT after the
	 * major timeout, wherever it is (waiting for a credit, for a
	 * reconnection, or for its reply); hard: no deadline at all */
	if (m->o.soft)
		opts.timeout_ms =
			(uint32_t)(mnt_major_ms(m) > UINT32_MAX ? UINT32_MAX : mnt_major_ms(m));
	rc = rpcrdma_callv(m->conn, iov, data ? 3 : 1, &opts, on_rpc_reply, t, NULL);
	if (rc) {
		free(t);
		mnt_debug(m, "%s: cannot send: %s", nfs3_procname(proc), rpcrdma_errname(rc));
		return rc == IW_ENOMEM ? ENOMEM : rc == IW_ERPC_TOOBIG ? EMSGSIZE : EIO;
	}
	iw_list_add_tail(&m->calls, &t->link);
	if (proc < NFS3_NPROC)
		m->st.calls[proc]++;
	if (++m->inflight > m->st.max_inflight)
		m->st.max_inflight = m->inflight;
	return 0;
}

int mnt_call_send(struct mnt *m, struct iw_cursor *c, uint32_t proc, uint32_t max_count,
		  mnt_reply_fn cb, void *arg)
{
	return call_sendv(m, c, proc, max_count, NULL, 0, cb, arg);
}

int mnt_call_send_data(struct mnt *m, struct iw_cursor *c, uint32_t proc, const void *data,
		       uint32_t dlen, mnt_reply_fn cb, void *arg)
{
	return call_sendv(m, c, proc, dlen, data, dlen, cb, arg);
}

int mnt_run_until(struct mnt *m, const bool *done, int timeout_ms)
{
	uint64_t deadline = iwt_now_ns() + (uint64_t)timeout_ms * 1000000u;
	int rc;

	while (!*done) {
		int left = iwt_ms_until(deadline);
		int t = rpcrdma_ctx_timeout_ms(m->ctx);

		if (left == 0)
			return ETIMEDOUT;
		if (t < 0 || t > left)
			t = left;
		rc = rpcrdma_ctx_process(m->ctx, t > 100 ? 100 : t);
		if (rc < 0)
			return EIO;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Nodes                                                                   */
/* ---------------------------------------------------------------------- */

static uint64_t fh_hash(const struct nfs_fh *fh)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (uint32_t i = 0; i < fh->len; i++) {
		h ^= fh->data[i];
		h *= 1099511628211ull;
	}
	return h;
}

static bool fh_eq(const struct nfs_fh *a, const struct nfs_fh *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

static void hash_insert(struct mnt *m, struct mnt_node *n)
{
	size_t i = fh_hash(&n->fh) & (m->hash_size - 1);

	n->hnext = m->hash[i];
	m->hash[i] = n;
}

static void hash_grow(struct mnt *m)
{
	size_t old = m->hash_size, i;
	struct mnt_node **ot = m->hash, *n, *next;
	struct mnt_node **nt = calloc(old * 2, sizeof(*nt));

	if (!nt)
		return; /* longer chains, still correct */
	m->hash = nt;
	m->hash_size = old * 2;
	for (i = 0; i < old; i++)
		for (n = ot[i]; n; n = next) {
			next = n->hnext;
			hash_insert(m, n);
		}
	free(ot);
}

static struct mnt_node *node_new(struct mnt *m, const struct nfs_fh *fh)
{
	struct mnt_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->fh = *fh;
	iw_list_init(&n->writes);
	iw_list_init(&n->waiters);
	if (m->nnodes >= m->hash_size * 2)
		hash_grow(m);
	hash_insert(m, n);
	m->nnodes++;
	return n;
}

int mnt_nodes_init(struct mnt *m, const struct nfs_fh *root_fh)
{
	m->hash_size = 1024;
	m->hash = calloc(m->hash_size, sizeof(*m->hash));
	if (!m->hash)
		return ENOMEM;
	iw_list_init(&m->held);
	m->root = node_new(m, root_fh);
	return m->root ? 0 : ENOMEM;
}

static void node_free(struct mnt *m, struct mnt_node *n)
{
	struct mnt_node **pp = &m->hash[fh_hash(&n->fh) & (m->hash_size - 1)];

	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = n->hnext;
	m->nnodes--;
	free(n);
}

static void node_maybe_free(struct mnt *m, struct mnt_node *n)
{
	if (n != m->root && n->nlookup == 0 && n->busy == 0 && iw_list_empty(&n->writes) &&
	    iw_list_empty(&n->waiters))
		node_free(m, n);
}

struct mnt_wb;
static void wb_free(struct mnt *m, struct mnt_wb *wb);

void mnt_nodes_fini(struct mnt *m)
{
	for (size_t i = 0; m->hash && i < m->hash_size; i++) {
		struct mnt_node *n = m->hash[i], *next;

		for (; n; n = next) {
			next = n->hnext;
			/* left after shutdown: whatever was not written is lost */
			while (!iw_list_empty(&n->writes))
				wb_free(m, (struct mnt_wb *)(void *)n->writes.next);
			while (!iw_list_empty(&n->waiters)) {
				struct iw_list *w = n->waiters.next;

				iw_list_del(w);
				free(w);
			}
			free(n);
		}
	}
	free(m->hash);
	m->hash = NULL;
	m->root = NULL;
	while (m->held.next && !iw_list_empty(&m->held)) {
		struct iw_list *h = m->held.next;

		iw_list_del(h);
		free(h);
	}
}

struct mnt_node *mnt_node_of(struct mnt *m, uint64_t ino)
{
	return ino == MNT_ROOT_ID ? m->root : (struct mnt_node *)(uintptr_t)ino;
}

uint64_t mnt_node_ino(struct mnt *m, const struct mnt_node *n)
{
	return n == m->root ? MNT_ROOT_ID : (uint64_t)(uintptr_t)n;
}

struct mnt_node *mnt_node_get(struct mnt *m, const struct nfs_fh *fh, const struct nfs_fattr *a)
{
	struct mnt_node *n = m->hash[fh_hash(fh) & (m->hash_size - 1)];

	while (n && !fh_eq(&n->fh, fh))
		n = n->hnext;
	if (!n)
		n = node_new(m, fh);
	if (n && a)
		mnt_attr_set(m, n, a);
	return n;
}

void mnt_node_forget(struct mnt *m, struct mnt_node *n, uint64_t nlookup)
{
	n->nlookup = nlookup > n->nlookup ? 0 : n->nlookup - nlookup;
	node_maybe_free(m, n);
}

void mnt_node_hold(struct mnt_node *n)
{
	n->busy++;
}

void mnt_node_put(struct mnt *m, struct mnt_node *n)
{
	n->busy--;
	node_maybe_free(m, n);
}

/* ---------------------------------------------------------------------- */
/* Attribute cache                                                         */
/* ---------------------------------------------------------------------- */

static bool ts_eq(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

void mnt_attr_set(struct mnt *m, struct mnt_node *n, const struct nfs_fattr *a)
{
	bool dir = a->type == NF3DIR;
	double lo = dir ? m->o.acdirmin : m->o.acregmin;
	double hi = dir ? m->o.acdirmax : m->o.acregmax;
	bool same = n->has_attr && n->attr.size == a->size && ts_eq(&n->attr.mtime, &a->mtime) &&
		    ts_eq(&n->attr.ctime, &a->ctime);

	n->timeo = same ? n->timeo * 2 : lo;
	if (n->timeo < lo)
		n->timeo = lo;
	if (n->timeo > hi)
		n->timeo = hi;
	n->attr = *a;
	n->has_attr = true;
	n->attr_epoch = m->epoch;
	n->attr_expire = iwt_now_ns() + (uint64_t)(n->timeo * 1e9);
}

void mnt_attr_drop(struct mnt_node *n)
{
	n->attr_expire = 0;
}

bool mnt_attr_valid(struct mnt *m, const struct mnt_node *n)
{
	return n->has_attr && n->attr_epoch == m->epoch && iwt_now_ns() < n->attr_expire;
}

double mnt_attr_timeout(const struct mnt *m, const struct mnt_node *n)
{
	return n->has_attr ? n->timeo : 0;
}

/* ---------------------------------------------------------------------- */
/* Write-behind                                                            */
/* ---------------------------------------------------------------------- */

enum wb_state { WB_QUEUED, WB_INFLIGHT, WB_UNSTABLE, WB_COMMITTING };

struct mnt_wb {
	struct iw_list link; /* first: mnt_nodes_fini casts */
	struct mnt_node *node;
	struct nfs_cred cred;
	enum wb_state state;
	bool resend;	    /* in flight when a COMMIT found the verifier changed */
	bool have_verf;	    /* verf holds the first part's verifier */
	uint64_t off;	    /* of data[0] */
	uint32_t len, done; /* done: octets the server took (short writes) */
	uint32_t sent;	    /* of the WRITE in flight */
	uint64_t acks_sent; /* node's w_acks when that WRITE was sent */
	uint8_t verf[NFS3_VERFSIZE];
	uint8_t data[];
};

struct mnt_waiter {
	struct iw_list link;
	enum mnt_wait cond;
	mnt_wait_fn fn;
	void *arg;
};

struct mnt_held {
	struct iw_list link;
	void *req;
	size_t size;
};

static struct mnt_wb *wb_of(struct iw_list *l)
{
	return iw_container_of(l, struct mnt_wb, link);
}

static void wb_free(struct mnt *m, struct mnt_wb *wb)
{
	struct mnt_node *n = wb->node;

	switch (wb->state) {
	case WB_QUEUED:
		n->w_queued--;
		break;
	case WB_INFLIGHT:
		n->w_inflight--;
		break;
	case WB_UNSTABLE:
	case WB_COMMITTING:
		n->w_unstable--;
		break;
	}
	iw_list_del(&wb->link);
	m->wb_bytes -= wb->len;
	free(wb);
}

static void wb_set_state(struct mnt_wb *wb, enum wb_state s)
{
	struct mnt_node *n = wb->node;
	unsigned *from[] = {&n->w_queued, &n->w_inflight, &n->w_unstable, &n->w_unstable};

	(*from[wb->state])--;
	(*from[s])++;
	wb->state = s;
}

bool mnt_wb_busy(const struct mnt_node *n)
{
	return n->w_queued || n->w_inflight;
}

void mnt_attr_stat(const struct mnt *m, const struct mnt_node *n, struct stat *st)
{
	static const mode_t types[] = {0,	S_IFREG, S_IFDIR,  S_IFBLK,
				       S_IFCHR, S_IFLNK, S_IFSOCK, S_IFIFO};
	const struct nfs_fattr *a = &n->attr;
	uint64_t size = a->size;
	struct iw_list *l;

	memset(st, 0, sizeof(*st));
	st->st_ino = a->fileid;
	st->st_mode = types[a->type <= NF3FIFO ? a->type : 0] | (a->mode & 07777);
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_rdev = makedev(a->rdev_major, a->rdev_minor);
	/* data the server does not have yet counts */
	for (l = n->writes.next; l != &n->writes; l = l->next) {
		const struct mnt_wb *wb = wb_of(l);

		if ((wb->state == WB_QUEUED || wb->state == WB_INFLIGHT) &&
		    wb->off + wb->len > size)
			size = wb->off + wb->len;
	}
	st->st_size = (off_t)size;
	st->st_blocks = (blkcnt_t)((a->used + 511) / 512);
	st->st_blksize = (blksize_t)m->wsize;
	st->st_atim = a->atime;
	st->st_mtim = a->mtime;
	st->st_ctim = a->ctime;
}

static bool overlap(const struct mnt_wb *a, const struct mnt_wb *b)
{
	return a->off < b->off + b->len && b->off < a->off + a->len;
}

static void wb_send(struct mnt *m, struct mnt_wb *wb);
static void wb_kick(struct mnt *m, struct mnt_node *n);

/* Send the queued writes that overlap no earlier queued write and no write
 * in flight, in the order written. */
static void wb_pump(struct mnt *m, struct mnt_node *n)
{
	struct iw_list *l, *next, *k;

	if (!n->w_queued)
		return;
	mnt_node_hold(n);
	for (l = n->writes.next; n->w_queued && l != &n->writes; l = next) {
		struct mnt_wb *wb = wb_of(l);
		bool blocked = false, before = true;

		next = l->next;
		if (wb->state != WB_QUEUED)
			continue;
		for (k = n->writes.next; k != &n->writes && !blocked; k = k->next) {
			struct mnt_wb *o = wb_of(k);

			if (o == wb) {
				before = false;
				continue;
			}
			if (overlap(o, wb) &&
			    (o->state == WB_INFLIGHT || (before && o->state == WB_QUEUED)))
				blocked = true;
		}
		if (!blocked)
			wb_send(m, wb);
	}
	mnt_node_put(m, n);
}

static void wb_fail(struct mnt *m, struct mnt_wb *wb, int err)
{
	struct mnt_node *n = wb->node;

	if (!n->werr)
		n->werr = err;
	mnt_log("write of %u octets at %llu failed: %s", wb->len, (unsigned long long)wb->off,
		strerror(err));
	wb_free(m, wb);
	mnt_node_put(m, n);
}

/* Requeue every record not yet committed (the server lost them): in flight
 * ones once their reply is in. */
static void wb_requeue_all(struct mnt *m, struct mnt_node *n)
{
	for (struct iw_list *l = n->writes.next; l != &n->writes; l = l->next) {
		struct mnt_wb *wb = wb_of(l);

		if (wb->state == WB_INFLIGHT) {
			wb->resend = true;
		} else if (wb->state != WB_QUEUED) {
			wb->done = 0;
			wb->have_verf = false;
			wb_set_state(wb, WB_QUEUED);
			m->st.resent++;
		}
	}
}

static void on_write_reply(struct mnt *m, void *arg, int err, struct nfs3_res *r,
			   struct iw_cursor *c, const uint8_t *reply, size_t len)
{
	struct mnt_wb *wb = arg;
	struct mnt_node *n = wb->node;
	bool fresh;

	mnt_node_hold(n);	     /* wb_fail and wb_free put the record's hold */
	wb_set_state(wb, WB_QUEUED); /* what it is again unless done below */
	if (!err && r->status != NFS3_OK)
		err = nfs3_errno(r->status);
	if (!err && r->count == 0 && wb->sent)
		err = EIO; /* no progress: would loop for ever */
	if (err) {
		wb_fail(m, wb, err);
		goto out;
	}
	m->st.bytes_written += r->count;
	/* (this one no longer counts in w_inflight: wb_set_state above) */
	fresh = n->w_inflight == 0 && n->w_acks == wb->acks_sent;
	n->w_acks++;
	if (r->has_attr && fresh)
		mnt_attr_set(m, n, &r->attr);
	else
		mnt_attr_drop(n);
	if (wb->resend) {
		wb->resend = false;
		wb->done = 0;
		wb->have_verf = false;
		m->st.resent++;
		goto out;
	}
	if (wb->have_verf && memcmp(wb->verf, r->verf, NFS3_VERFSIZE)) {
		/* the server restarted between two parts of this record */
		wb->done = 0;
		wb->have_verf = false;
		m->st.resent++;
		goto out;
	}
	wb->done += r->count;
	if (wb->done < wb->len) { /* short write: the rest goes again */
		memcpy(wb->verf, r->verf, NFS3_VERFSIZE);
		wb->have_verf = true;
		goto out;
	}
	if (r->committed == NFS3_FILE_SYNC) {
		wb_free(m, wb);
		mnt_node_put(m, n);
		goto out;
	}
	memcpy(wb->verf, r->verf, NFS3_VERFSIZE);
	wb->have_verf = true;
	wb_set_state(wb, WB_UNSTABLE);
out:
	wb_pump(m, n);
	wb_kick(m, n);
	mnt_fuse_release_held(m);
	mnt_node_put(m, n);
}

static void wb_send(struct mnt *m, struct mnt_wb *wb)
{
	struct mnt_node *n = wb->node;
	struct iw_cursor cur, *c = mnt_call_start(m, &cur, NFS3_WRITE, &wb->cred);
	uint32_t count = wb->len - wb->done;
	int rc;

	xw_fh(c, &n->fh);
	xw_u64(c, wb->off + wb->done);
	xw_u32(c, count);
	xw_u32(c, NFS3_UNSTABLE);
	xw_u32(c, count); /* the data's length; the data goes from where it is */
	wb->sent = count;
	wb->acks_sent = n->w_acks;
	rc = mnt_call_send_data(m, c, NFS3_WRITE, wb->data + wb->done, count, on_write_reply, wb);
	if (rc) {
		wb_fail(m, wb, rc);
		return;
	}
	wb_set_state(wb, WB_INFLIGHT);
}

int mnt_wb_write(struct mnt *m, struct mnt_node *n, const struct nfs_cred *cred, uint64_t off,
		 const void *data, size_t len)
{
	struct mnt_wb *wb;

	if (n->werr)
		return n->werr;
	if (len == 0)
		return 0;
	if (len > m->wsize || off > UINT64_MAX - len)
		return EINVAL;
	wb = malloc(sizeof(*wb) + len);
	if (!wb)
		return ENOMEM;
	memset(wb, 0, sizeof(*wb));
	wb->node = n;
	wb->cred = *cred;
	wb->state = WB_QUEUED;
	wb->off = off;
	wb->len = (uint32_t)len;
	memcpy(wb->data, data, len);
	iw_list_add_tail(&n->writes, &wb->link);
	n->w_queued++;
	m->wb_bytes += len;
	mnt_node_hold(n);
	wb_pump(m, n);
	return 0;
}

static void on_commit_reply(struct mnt *m, void *arg, int err, struct nfs3_res *r,
			    struct iw_cursor *c, const uint8_t *reply, size_t len)
{
	struct mnt_node *n = arg;
	struct iw_list *l, *next;
	bool changed = false;

	n->commit_busy = false;
	if (!err && r->status != NFS3_OK)
		err = nfs3_errno(r->status);
	if (!err && r->has_attr && !mnt_wb_busy(n) && n->w_acks == n->commit_acks)
		mnt_attr_set(m, n, &r->attr);
	for (l = n->writes.next; l != &n->writes; l = next) {
		struct mnt_wb *wb = wb_of(l);

		next = l->next;
		if (wb->state != WB_COMMITTING)
			continue;
		if (err) {
			wb_fail(m, wb, err);
		} else if (!memcmp(wb->verf, r->verf, NFS3_VERFSIZE)) {
			wb_free(m, wb);
			mnt_node_put(m, n);
		} else {
			changed = true;
		}
	}
	if (changed) {
		mnt_log("write verifier changed (the server restarted): sending uncommitted data "
			"again");
		wb_requeue_all(m, n);
	}
	wb_pump(m, n);
	wb_kick(m, n);
	mnt_fuse_release_held(m);
	mnt_node_put(m, n);
}

static void wb_commit(struct mnt *m, struct mnt_node *n)
{
	struct iw_cursor cur, *c;
	const struct nfs_cred *cred = NULL;
	int rc;

	for (struct iw_list *l = n->writes.next; l != &n->writes; l = l->next) {
		struct mnt_wb *wb = wb_of(l);

		if (wb->state == WB_UNSTABLE) {
			wb->state = WB_COMMITTING; /* counted in w_unstable either way */
			if (!cred)
				cred = &wb->cred;
		}
	}
	if (!cred)
		return;
	c = mnt_call_start(m, &cur, NFS3_COMMIT, cred);
	xw_fh(c, &n->fh);
	xw_u64(c, 0); /* offset 0, count 0: the whole file (§3.3.21) */
	xw_u32(c, 0);
	mnt_node_hold(n);
	n->commit_busy = true;
	n->commit_acks = n->w_acks;
	rc = mnt_call_send(m, c, NFS3_COMMIT, 0, on_commit_reply, n);
	if (rc) {
		struct nfs3_res r = {.status = EIO};

		on_commit_reply(m, n, rc, &r, NULL, NULL, 0);
	}
}

static uint64_t wb_unstable_bytes(const struct mnt_node *n)
{
	uint64_t b = 0;

	for (const struct iw_list *l = n->writes.next; l != &n->writes; l = l->next)
		if (wb_of((struct iw_list *)(uintptr_t)l)->state == WB_UNSTABLE)
			b += wb_of((struct iw_list *)(uintptr_t)l)->len;
	return b;
}

static bool wait_met(const struct mnt_node *n, enum mnt_wait cond)
{
	if (mnt_wb_busy(n))
		return false;
	return cond == MNT_WAIT_DRAIN || (!n->w_unstable && !n->commit_busy);
}

/*
 * Over wb_max: COMMIT every file that holds unstable data, so that the
 * octets held can go.  Without it, several files each under half of wb_max
 * (the per-file trigger) could hold all of it between them, with nothing in
 * flight whose reply would free any: every writer would wait for ever (seen
 * with 4 fio jobs).  The Linux client commits under memory pressure the same
 * way (RFC 1813 §3.3.21 leaves when to COMMIT to the client).
 */
static void wb_relieve(struct mnt *m)
{
	if (mnt_wb_room(m))
		return;
	for (size_t i = 0; i < m->hash_size; i++) {
		struct mnt_node *n = m->hash[i], *next;

		for (; n; n = next) {
			mnt_node_hold(n);
			if (!n->commit_busy && n->w_unstable && wb_unstable_bytes(n))
				wb_commit(m, n);
			next = n->hnext;
			mnt_node_put(m, n);
		}
	}
}

/* Start a COMMIT when one is due; run the waiters whose state is reached. */
static void wb_kick(struct mnt *m, struct mnt_node *n)
{
	struct iw_list *l;
	bool want_clean = m->exiting;

	for (l = n->waiters.next; l != &n->waiters; l = l->next)
		if (iw_container_of(l, struct mnt_waiter, link)->cond == MNT_WAIT_CLEAN)
			want_clean = true;
	if (!n->commit_busy && n->w_unstable &&
	    ((want_clean && !mnt_wb_busy(n)) || wb_unstable_bytes(n) >= m->o.wb_max / 2))
		wb_commit(m, n);
	mnt_node_hold(n);
	wb_relieve(m);
again:
	for (l = n->waiters.next; l != &n->waiters; l = l->next) {
		struct mnt_waiter *w = iw_container_of(l, struct mnt_waiter, link);

		if (wait_met(n, w->cond)) {
			iw_list_del(&w->link);
			w->fn(n, w->arg);
			free(w);
			goto again; /* fn may have changed the list */
		}
	}
	mnt_node_put(m, n);
}

int mnt_wb_wait(struct mnt *m, struct mnt_node *n, enum mnt_wait cond, mnt_wait_fn fn, void *arg)
{
	struct mnt_waiter *w;

	if (wait_met(n, cond)) {
		fn(n, arg);
		return 0;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return ENOMEM;
	w->cond = cond;
	w->fn = fn;
	w->arg = arg;
	iw_list_add_tail(&n->waiters, &w->link);
	wb_kick(m, n);
	return 0;
}

void mnt_wb_flush_all(struct mnt *m)
{
	m->exiting = true;
	for (size_t i = 0; i < m->hash_size; i++)
		for (struct mnt_node *n = m->hash[i], *next; n; n = next) {
			next = n->hnext;
			mnt_node_hold(n);
			wb_kick(m, n);
			mnt_node_put(m, n);
		}
}

bool mnt_wb_all_clean(struct mnt *m)
{
	for (size_t i = 0; i < m->hash_size; i++)
		for (struct mnt_node *n = m->hash[i]; n; n = n->hnext)
			if (!iw_list_empty(&n->writes))
				return false;
	return true;
}

bool mnt_wb_room(const struct mnt *m)
{
	return m->wb_bytes <= m->o.wb_max;
}

void mnt_wb_hold(struct mnt *m, void *req, size_t size)
{
	struct mnt_held *h = calloc(1, sizeof(*h));

	if (!h)
		return; /* cannot happen in practice; the caller answered */
	h->req = req;
	h->size = size;
	iw_list_add_tail(&m->held, &h->link);
	m->st.held++;
	wb_relieve(m);
}

void *mnt_wb_unhold(struct mnt *m, size_t *size)
{
	struct mnt_held *h;
	void *req;

	if (iw_list_empty(&m->held) || !mnt_wb_room(m))
		return NULL;
	h = iw_container_of(m->held.next, struct mnt_held, link);
	iw_list_del(&h->link);
	req = h->req;
	*size = h->size;
	free(h);
	return req;
}

/* ---------------------------------------------------------------------- */
/* MOUNT and portmap over TCP                                              */
/* ---------------------------------------------------------------------- */

#define TCP_RPC_TIMEOUT_S 10
#define TCP_RPC_REPLY_MAX 4096u

/* A TCP socket to the server's `port`, from a reserved port when root. */
static int tcp_connect(struct mnt *m, uint16_t port, const char **why)
{
	struct sockaddr_storage ss = m->o.server;
	struct timeval tv = {.tv_sec = TCP_RPC_TIMEOUT_S};
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (geteuid() == 0) {
		for (uint16_t p = 1023; p >= 600; p--) {
			struct sockaddr_storage b;

			memset(&b, 0, sizeof(b));
			b.ss_family = ss.ss_family;
			iwt_addr_set_port(&b, p);
			if (bind(fd, (struct sockaddr *)&b, m->o.server_len) == 0)
				break;
		}
	}
	iwt_addr_set_port(&ss, port);
	if (connect(fd, (struct sockaddr *)&ss, m->o.server_len)) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	return fd;
}

static int io_all(int fd, void *buf, size_t len, bool wr)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * One call over a new TCP connection (RFC 5531 §11 record marking): the
 * reply's results are copied to out[0..*out_len) (at most TCP_RPC_REPLY_MAX).
 */
static int tcp_rpc(struct mnt *m, uint16_t port, uint32_t prog, uint32_t vers, uint32_t proc,
		   const void *args, size_t alen, uint8_t *out, size_t *out_len, const char **why)
{
	uint8_t msg[4 + RPC_CALL_HDR_MAX + MNT_PATH_MAX + 64], rec[TCP_RPC_REPLY_MAX];
	struct nfs_cred cred = {.uid = geteuid(), .gid = getegid()};
	struct iw_cursor c;
	size_t have = 0, off;
	bool last = false;
	int fd, rc = -1;

	iw_cursor_init(&c, msg + 4, sizeof(msg) - 4);
	rpc_put_call(&c, (uint32_t)(iwt_now_ns() ^ (uint64_t)getpid()), prog, vers, proc,
		     prog == PMAP_PROGRAM ? NULL : &cred, m->machine);
	iw_cursor_put_bytes(&c, args, alen);
	if (c.err) {
		*why = "call too large";
		return -1;
	}
	iw_put_be32(msg, 0x80000000u | (uint32_t)c.off);
	fd = tcp_connect(m, port, why);
	if (fd < 0)
		return -1;
	if (io_all(fd, msg, 4 + c.off, true)) {
		*why = strerror(errno ? errno : EPIPE);
		goto out;
	}
	while (!last) { /* fragments, the whole record at most sizeof(rec) */
		uint8_t h[4];
		uint32_t flen;

		if (io_all(fd, h, 4, false)) {
			*why = errno == EAGAIN ? "no reply (timed out)" : "connection closed";
			goto out;
		}
		flen = iw_get_be32(h) & 0x7fffffffu;
		last = iw_get_be32(h) >> 31;
		if (flen > sizeof(rec) - have) {
			*why = "reply too large";
			goto out;
		}
		if (io_all(fd, rec + have, flen, false)) {
			*why = "connection closed";
			goto out;
		}
		have += flen;
	}
	if (rpc_check_reply(rec, have, iw_get_be32(msg + 4), &off, why))
		goto out;
	*out_len = have - off;
	memcpy(out, rec + off, *out_len);
	rc = 0;
out:
	close(fd);
	return rc;
}

static int mountd_port(struct mnt *m, uint16_t *port, const char **why)
{
	uint8_t args[16], res[TCP_RPC_REPLY_MAX];
	struct iw_cursor c;
	size_t n;
	uint32_t p;

	if (m->o.mountport) {
		*port = m->o.mountport;
		return 0;
	}
	/* mapping: prog, vers, prot, port (RFC 1833 §3.1) */
	iw_put_be32(args, MOUNT_PROGRAM);
	iw_put_be32(args + 4, MOUNT_V3);
	iw_put_be32(args + 8, IPPROTO_TCP_NUM);
	iw_put_be32(args + 12, 0);
	if (tcp_rpc(m, PMAP_PORT, PMAP_PROGRAM, PMAP_V2, PMAPPROC_GETPORT, args, sizeof(args), res,
		    &n, why))
		return -1;
	iw_cursor_init(&c, res, n);
	p = iw_cursor_get_be32(&c);
	if (c.err || p == 0 || p > 65535) {
		*why = c.err ? "bad portmapper reply" : "MOUNT v3 over TCP is not registered";
		return -1;
	}
	*port = (uint16_t)p;
	return 0;
}

static size_t path_args(const struct mnt *m, uint8_t *buf, size_t cap)
{
	struct iw_cursor c;

	iw_cursor_init(&c, buf, cap);
	xw_opaque(&c, m->o.export_path, strlen(m->o.export_path));
	return c.err ? 0 : c.off;
}

int mnt_mount(struct mnt *m, struct nfs_fh *fh, const char **why)
{
	uint8_t args[MNT_PATH_MAX + 8], res[TCP_RPC_REPLY_MAX];
	static char whybuf[512];
	struct iw_cursor c;
	uint32_t status;
	uint16_t port;
	size_t n, alen;

	if (mountd_port(m, &port, why)) {
		snprintf(whybuf, sizeof(whybuf), "portmapper on %s: %s", m->o.server_host, *why);
		*why = whybuf;
		return -1;
	}
	m->o.mountport = port;
	alen = path_args(m, args, sizeof(args));
	if (tcp_rpc(m, port, MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_MNT, args, alen, res, &n, why)) {
		snprintf(whybuf, sizeof(whybuf), "MOUNT on port %u: %s", port, *why);
		*why = whybuf;
		return -1;
	}
	iw_cursor_init(&c, res, n);
	if (mnt3_dec_mnt(&c, &status, fh)) {
		*why = "malformed MOUNT reply";
		return -1;
	}
	if (status) {
		snprintf(whybuf, sizeof(whybuf), "server refused the mount: %s (%u)",
			 strerror(nfs3_errno(status)), status);
		*why = whybuf;
		return -1;
	}
	return 0;
}

void mnt_umount(struct mnt *m)
{
	uint8_t args[MNT_PATH_MAX + 8], res[TCP_RPC_REPLY_MAX];
	const char *why;
	size_t n, alen;

	if (m->o.have_fh || !m->o.mountport)
		return;
	alen = path_args(m, args, sizeof(args));
	if (tcp_rpc(m, m->o.mountport, MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_UMNT, args, alen, res,
		    &n, &why))
		mnt_debug(m, "UMNT: %s", why);
}
