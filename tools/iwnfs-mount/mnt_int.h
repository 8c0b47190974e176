/* SPDX-License-Identifier: MIT */
/*
 * mnt_int.h - internals of iwnfs-mount, an NFSv3 client over RPC-over-RDMA
 * that serves a FUSE file system.  Files:
 *
 *   iwnfs-mount.c  command line and -o options, start-up (MOUNT, connect,
 *                  FSINFO), the background fork, the one poll loop around
 *                  the FUSE fd and the rpcrdma ctx fd, signals, shutdown
 *   mnt_fuse.c     the FUSE low-level operations: each sends NFS calls and
 *                  answers its request from the reply callback
 *   mnt_core.c     the call layer (XID, AUTH_SYS, rpcrdma_call, decoding),
 *                  the node table (FUSE inode <-> NFS file handle, attribute
 *                  cache), write-behind (UNSTABLE WRITE + COMMIT, verifier
 *                  check and resend), MOUNT / portmap over TCP
 *   mnt_xdr.c      the XDR of calls and replies (sans-I/O, mnt_xdr.h)
 *
 * Everything runs on one thread: no locks anywhere.
 */
#ifndef IWNFS_MNT_INT_H
#define IWNFS_MNT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <iwarp/rpcrdma.h>

#include "iw_list.h"
#include "iwt_opt.h"
#include "mnt_xdr.h"

#define MNT_PROG	      "iwnfs-mount"
#define MNT_DEFAULT_RDMA_PORT 20049 /* IANA "nfsrdma" */
#define MNT_DEFAULT_XFER      (1u << 20)
#define MNT_MAX_XFER	      (1u << 20) /* FUSE sends at most 256 pages per request */
#define MNT_MIN_XFER	      4096u
#define MNT_READDIR_MAXCOUNT  (32u << 10)
#define MNT_ROOT_ID	      1 /* FUSE_ROOT_ID */

struct mnt_opts {
	char server_host[256];
	char export_path[MNT_PATH_MAX + 1];
	const char *mountpoint;
	struct sockaddr_storage server; /* the server host, port unset */
	socklen_t server_len;
	uint16_t port;	    /* NFS/RDMA port */
	uint16_t mountport; /* 0: ask the portmapper */
	bool have_fh;	    /* fh=HEX: no MOUNT at all */
	struct nfs_fh fh;
	uint32_t rsize, wsize; /* asked for; FSINFO may lower them */
	uint16_t credits;
	uint32_t inline_size;
	double acregmin, acregmax, acdirmin, acdirmax; /* seconds; all 0 = noac */
	bool cto;				       /* close-to-open: revalidate on open */
	bool soft;	   /* soft: a call fails with EIO after timeo x (retrans + 1) */
	uint32_t timeo_ms; /* timeo=: one timeout (a minor one, in Linux's words) */
	uint32_t retrans;  /* retrans=: timeouts before a major one */
	uint32_t wb_max;   /* write-behind: octets not yet written or committed */
	int reconnects;	   /* transport reconnect attempts; -1: for ever (default) */
	bool foreground;   /* -f */
	int verbose;	   /* -v, -d */
	bool debug_fuse;   /* -d: libfuse's own request log too */
	bool allow_other, default_permissions, ro;
	bool stats;	   /* counters at exit */
	struct iwt_opt iw; /* crc, mpa-rev, markers, ... */
};

struct mnt_waiter;

/* One file, directory or other object the kernel knows: its FUSE inode
 * number is the node's address (the root's is MNT_ROOT_ID). */
struct mnt_node {
	struct mnt_node *hnext; /* file handle hash chain */
	struct nfs_fh fh;
	uint64_t nlookup; /* the kernel's lookup count */
	unsigned busy;	  /* operations in progress that point to the node */
	/* attribute cache */
	bool has_attr;
	struct nfs_fattr attr;
	uint64_t attr_expire; /* ns, iwt_now_ns */
	uint64_t attr_epoch;  /* valid while it equals mnt.epoch */
	double timeo;	      /* current attribute timeout (s), min..max */
	/* write-behind (mnt_core.c) */
	struct iw_list writes; /* struct mnt_wb, in the order written */
	unsigned w_queued;     /* waiting for an overlapping write to finish */
	unsigned w_inflight;   /* sent, no reply yet */
	unsigned w_unstable;   /* written UNSTABLE, not yet committed */
	bool commit_busy;      /* a COMMIT is out */
	/* WRITE replies received so far.  Replies may overtake one another (the
	 * server runs calls in parallel), so the post-op attributes of a call
	 * are trusted only if no WRITE reply came between its sending and its
	 * reply: otherwise they may predate a write already acknowledged and
	 * say the file is shorter than it is. */
	uint64_t w_acks;
	uint64_t commit_acks;	/* w_acks when the COMMIT out was sent */
	int werr;		/* first write error, reported by flush / fsync */
	struct iw_list waiters; /* struct mnt_waiter */
};

enum mnt_wait {
	MNT_WAIT_DRAIN = 1, /* no write queued or in flight */
	MNT_WAIT_CLEAN = 2, /* drained and every write committed */
};
typedef void (*mnt_wait_fn)(struct mnt_node *n, void *arg);

/* A FUSE file handle (fi->fh): the opener's credentials, used for the
 * file's READ, WRITE and COMMIT; for a directory, the READDIRPLUS state. */
struct mnt_file {
	struct iw_list link; /* m->files: freed at exit if the kernel never released it */
	struct nfs_cred cred;
	/* directories: the last READDIRPLUS reply, served across FUSE calls */
	uint8_t verf[NFS3_VERFSIZE];
	uint8_t *rd_buf; /* copy of the reply (entries from rd_off) */
	size_t rd_len, rd_off;
	uint64_t rd_cookie; /* the FUSE offset rd_off stands for */
	bool rd_eof;	    /* the list in rd_buf ends the directory */
};

struct mnt_stats {
	uint64_t calls[NFS3_NPROC];
	uint64_t errors;     /* calls failed by the transport or undecodable */
	uint64_t nfs_errors; /* NFS3ERR_* results */
	uint64_t bytes_read, bytes_written;
	uint64_t resent;       /* writes sent again after a verifier change */
	uint64_t held;	       /* FUSE writes answered late (write-behind full) */
	unsigned max_inflight; /* most calls outstanding at once */
	uint64_t timeouts;     /* soft calls failed after the major timeout */
	uint64_t outages;      /* connection losses */
};

/* The server's health as the client sees it (logged as it changes, the way
 * the Linux client logs "not responding, still trying" and "OK"). */
struct mnt_health {
	uint64_t down_since;	/* ns: the connection went down (0: it is up) */
	uint64_t late_since;	/* ns: a call passed the major timeout (0: none) */
	uint64_t next_note;	/* ns: when to log "still ..." again */
	uint64_t note_every_ms; /* doubles, up to MNT_NOTE_MAX_MS */
};

struct mnt {
	struct mnt_opts o;
	struct rpcrdma_ctx *ctx;
	struct rpcrdma_conn *conn; /* NULL: not connected (a call reconnects) */
	bool up;
	struct iw_list calls; /* outstanding calls (struct call_tok), oldest first */
	struct iw_list files; /* open files and directories (struct mnt_file) */
	struct mnt_health health;
	bool unreachable; /* shutdown gave up on the server: no UMNT either */
	struct sockaddr_storage rdma_sa;
	socklen_t rdma_len;
	char server_str[80]; /* rdma_sa as text, for the log */
	struct fuse_session *se;
	char machine[256]; /* AUTH_SYS machinename */
	uint32_t xid;
	uint8_t *tx; /* message being built */
	size_t tx_cap;
	uint32_t rsize, wsize, name_max;
	uint64_t maxfilesize;
	struct mnt_node *root;
	struct mnt_node **hash;
	size_t hash_size, nnodes;
	uint64_t epoch; /* bumped by REMOVE / RENAME / LINK: every cached attribute is stale */
	/* write-behind */
	uint64_t wb_bytes;    /* octets held by write-behind, all nodes */
	struct iw_list held;  /* FUSE writes not answered yet (wb_bytes > wb_max) */
	unsigned inflight;    /* calls outstanding */
	uint32_t uncommitted; /* nodes with unstable data: for shutdown */
	struct mnt_stats st;
	bool exiting;
};

/* ---- mnt_core.c ---- */
void mnt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mnt_debug(struct mnt *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The reply of an NFS call: err 0 and the decoded results in *r (r->status
 * may be an NFS error), c at what follows them (READDIRPLUS entries); or
 * err > 0, an errno (the call failed in the transport, the reply did not
 * decode, the call timed out), with r and c NULL.  `reply` is the raw
 * message (valid during the callback), for callers that keep a copy.
 */
typedef void (*mnt_reply_fn)(struct mnt *m, void *arg, int err, struct nfs3_res *r,
			     struct iw_cursor *c, const uint8_t *reply, size_t len);

/* Start connecting (asynchronous; calls may be sent at once).  0 or an errno. */
int mnt_connect(struct mnt *m);
/* Start an NFSv3 call of `proc` as `cred`: the cursor to put the arguments
 * into (m->tx after the RPC header). */
struct iw_cursor *mnt_call_start(struct mnt *m, struct iw_cursor *c, uint32_t proc,
				 const struct nfs_cred *cred);
/* Send it.  0 (cb runs once, later) or an errno (cb never runs).
 * max_count: the most READ data accepted (READ only). */
int mnt_call_send(struct mnt *m, struct iw_cursor *c, uint32_t proc, uint32_t max_count,
		  mnt_reply_fn cb, void *arg);
/* The same with `data` (dlen octets) and its XDR padding after the cursor's
 * octets, the body of an opaque whose length word the cursor ends with: the
 * transport copies it from where it is (WRITE data, no copy into m->tx). */
int mnt_call_send_data(struct mnt *m, struct iw_cursor *c, uint32_t proc, const void *data,
		       uint32_t dlen, mnt_reply_fn cb, void *arg);
/* Run the transport until *done or timeout_ms; 0 or an errno. */
int mnt_run_until(struct mnt *m, const bool *done, int timeout_ms);
/* The major timeout (ms): timeo x (retrans + 1); a soft call fails after it. */
uint64_t mnt_major_ms(const struct mnt *m);
/* Check the server's health, log changes; ms until the next check is due
 * (-1: none).  Called from the poll loop. */
int mnt_health_tick(struct mnt *m);

/* Nodes */
int mnt_nodes_init(struct mnt *m, const struct nfs_fh *root_fh);
void mnt_nodes_fini(struct mnt *m);
struct mnt_node *mnt_node_of(struct mnt *m, uint64_t ino);
uint64_t mnt_node_ino(struct mnt *m, const struct mnt_node *n);
/* The node of fh (made if new; NULL: no memory); it takes the attributes if given. */
struct mnt_node *mnt_node_get(struct mnt *m, const struct nfs_fh *fh, const struct nfs_fattr *a);
void mnt_node_forget(struct mnt *m, struct mnt_node *n, uint64_t nlookup);
void mnt_node_hold(struct mnt_node *n);
void mnt_node_put(struct mnt *m, struct mnt_node *n);
/* Attributes: store a fresh copy, drop it, the cached copy if still valid */
void mnt_attr_set(struct mnt *m, struct mnt_node *n, const struct nfs_fattr *a);
void mnt_attr_drop(struct mnt_node *n);
bool mnt_attr_valid(struct mnt *m, const struct mnt_node *n);
double mnt_attr_timeout(const struct mnt *m, const struct mnt_node *n);
/* struct stat from the cached attributes (size: what write-behind has
 * not yet written counts) */
void mnt_attr_stat(const struct mnt *m, const struct mnt_node *n, struct stat *st);

/* Write-behind */
/* Queue or send a WRITE of data[0..len) at off (copied).  0 or an errno. */
int mnt_wb_write(struct mnt *m, struct mnt_node *n, const struct nfs_cred *cred, uint64_t off,
		 const void *data, size_t len);
/* Run fn(n, arg) once the node is in state `cond` (at once if it is). */
int mnt_wb_wait(struct mnt *m, struct mnt_node *n, enum mnt_wait cond, mnt_wait_fn fn, void *arg);
bool mnt_wb_busy(const struct mnt_node *n);
/* Commit everything on every node (shutdown): 0 once clean. */
void mnt_wb_flush_all(struct mnt *m);
bool mnt_wb_all_clean(struct mnt *m);
/* Is there room for len more octets (else the FUSE reply waits)? */
bool mnt_wb_room(const struct mnt *m);
/* Hold a FUSE write reply until there is room (mnt_fuse.c answers it). */
void mnt_wb_hold(struct mnt *m, void *req, size_t size);
/* The next held write reply when there is room again (NULL: none, or no room). */
void *mnt_wb_unhold(struct mnt *m, size_t *size);

/* MOUNT / portmap over TCP (blocking, start-up and shutdown only) */
int mnt_mount(struct mnt *m, struct nfs_fh *fh, const char **why);
void mnt_umount(struct mnt *m);

/* ---- mnt_fuse.c ---- */
extern const struct fuse_lowlevel_ops mnt_fuse_ops;
/* Free the file handles the kernel still holds (exit: no RELEASE comes). */
void mnt_files_fini(struct mnt *m);
/* Answer held writes while there is room again. */
void mnt_fuse_release_held(struct mnt *m);
/* The caller's AUTH_SYS credentials of a FUSE request (void *: fuse_req_t). */
void mnt_req_cred(struct mnt *m, void *req, struct nfs_cred *cred);

#endif /* IWNFS_MNT_INT_H */
