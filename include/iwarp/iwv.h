/* SPDX-License-Identifier: MIT */
/*
 * iwv.h - the verbs API of the iwarp stack: a software RDMA device over TCP.
 *
 * It mirrors libibverbs (<infiniband/verbs.h>) name for name, so porting an
 * ibverbs program is mostly replacing the ibv_ / IBV_ prefix with iwv_ /
 * IWV_ (docs/verbs.md has the table).  Numeric values of the enums are those
 * of libibverbs.  Error conventions are those of the ibverbs man pages:
 *   - constructors (iwv_open_device, iwv_alloc_pd, iwv_reg_mr, ...) return
 *     NULL and set errno;
 *   - iwv_post_send / iwv_post_recv return 0 or a positive errno and set
 *     *bad_wr to the first work request not posted;
 *   - destructors and other calls return 0 or a positive errno (EBUSY when
 *     the object is still in use, as ibv_dealloc_pd does).
 *
 * What is different from InfiniBand: only RC queue pairs; no immediate data
 * and no atomics (RFC 5040 has neither); lkey == rkey == the STag; a QP is
 * connected through the connection manager (iwcm.h), never by modify_qp.
 *
 * Progress: iwv_post_send, iwv_poll_cq (when the CQ is empty),
 * iwv_get_cq_event and iwcm_get_cm_event move bytes between the sockets and
 * the queue pairs, so a single-threaded program needs no thread of its own;
 * the channel fds (completion and CM) become readable when there is work for
 * them, including the CM's timers.  With an engine thread
 * (iwv_context_attr.engine_thread, or IWARP_ENGINE_THREAD=1) the stack also
 * progresses while the program sleeps.  All calls are thread safe.
 *
 * Environment: IWARP_ENGINE=uring|epoll chooses the I/O engine (default:
 * epoll, the faster of the two here; see docs/verbs.md); IWARP_ENGINE_THREAD=1
 * starts the engine thread.
 */
#ifndef IWARP_IWV_H
#define IWARP_IWV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iwarp/iw_err.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Devices and contexts                                                    */
/* ---------------------------------------------------------------------- */

struct iwv_device; /* opaque: the one software device, "iwarp0" */

enum iwv_engine_type {
	IWV_ENGINE_DEFAULT = 0, /* IWARP_ENGINE, else epoll */
	IWV_ENGINE_EPOLL,
	IWV_ENGINE_URING,
};

struct iwv_context_attr {
	enum iwv_engine_type engine;
	int engine_thread;    /* 1: start an engine thread; 0: inline progress only;
				    -1: as IWARP_ENGINE_THREAD says (the default) */
	uint32_t max_mr;      /* STag table size (default 65536) */
	uint32_t rx_buf_size; /* per-connection receive buffer (default 256 KiB) */
};

struct iwv_context {
	struct iwv_device *device;
	int async_fd; /* reserved (-1): asynchronous events are not reported yet */
	int num_comp_vectors;
};

/* The device list (one entry, "iwarp0"), NULL-terminated.  num may be NULL. */
IW_EXPORT struct iwv_device **iwv_get_device_list(int *num_devices);
IW_EXPORT void iwv_free_device_list(struct iwv_device **list);
IW_EXPORT const char *iwv_get_device_name(struct iwv_device *device);

/* Open a context with default attributes (engine and thread from the environment). */
IW_EXPORT struct iwv_context *iwv_open_device(struct iwv_device *device);
/* Extension: open a context with explicit attributes (attr NULL = defaults). */
IW_EXPORT void iwv_context_attr_default(struct iwv_context_attr *attr);
IW_EXPORT struct iwv_context *iwv_open_context(const struct iwv_context_attr *attr);
/* EBUSY while PDs, CQs, channels or CM ids still use it. */
IW_EXPORT int iwv_close_device(struct iwv_context *context);
/* Extension: "uring" or "epoll", the engine this context runs. */
IW_EXPORT const char *iwv_context_engine_name(struct iwv_context *context);

struct iwv_device_attr {
	char fw_ver[64];
	uint64_t max_mr_size;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	int max_qp;
	int max_qp_wr;
	int max_sge;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;	 /* IRD per QP */
	int max_qp_init_rd_atom; /* ORD per QP */
	uint32_t max_inline_data;
};
IW_EXPORT int iwv_query_device(struct iwv_context *context, struct iwv_device_attr *attr);

/* ---------------------------------------------------------------------- */
/* Protection domains and memory regions                                   */
/* ---------------------------------------------------------------------- */

struct iwv_pd {
	struct iwv_context *context;
	uint32_t handle;
};

IW_EXPORT struct iwv_pd *iwv_alloc_pd(struct iwv_context *context);
/* EBUSY while MRs or QPs use it. */
IW_EXPORT int iwv_dealloc_pd(struct iwv_pd *pd);

enum iwv_access_flags {
	IWV_ACCESS_LOCAL_WRITE = 1,
	IWV_ACCESS_REMOTE_WRITE = (1 << 1),
	IWV_ACCESS_REMOTE_READ = (1 << 2),
	IWV_ACCESS_REMOTE_ATOMIC = (1 << 3), /* refused (EOPNOTSUPP): no atomics in RFC 5040 */
	IWV_ACCESS_MW_BIND = (1 << 4),	     /* refused (EOPNOTSUPP) */
};

struct iwv_mr {
	struct iwv_context *context;
	struct iwv_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey; /* == rkey == the STag */
	uint32_t rkey;
};

/*
 * Register addr[0..length) with `access` (IWV_ACCESS_*).  Remote write
 * requires local write, as in ibverbs (EINVAL otherwise).  The tagged offset
 * of a byte is its address (like an ibverbs iova), so a peer addresses it as
 * (rkey, (uint64_t)(uintptr_t)ptr).  ENOMEM when the STag table is full.
 */
IW_EXPORT struct iwv_mr *iwv_reg_mr(struct iwv_pd *pd, void *addr, size_t length, int access);
/* A peer's Send with Invalidate may have invalidated the rkey; dereg still works. */
IW_EXPORT int iwv_dereg_mr(struct iwv_mr *mr);

/* ---------------------------------------------------------------------- */
/* Completion queues and channels                                          */
/* ---------------------------------------------------------------------- */

struct iwv_comp_channel {
	struct iwv_context *context;
	int fd; /* pollable; set O_NONBLOCK on it for a non-blocking iwv_get_cq_event */
	int refcnt;
};

struct iwv_cq {
	struct iwv_context *context;
	struct iwv_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe; /* capacity */
};

IW_EXPORT struct iwv_comp_channel *iwv_create_comp_channel(struct iwv_context *context);
/* EBUSY while CQs use it. */
IW_EXPORT int iwv_destroy_comp_channel(struct iwv_comp_channel *channel);

/* cqe: 1..65536.  channel may be NULL.  comp_vector is accepted and ignored. */
IW_EXPORT struct iwv_cq *iwv_create_cq(struct iwv_context *context, int cqe, void *cq_context,
				       struct iwv_comp_channel *channel, int comp_vector);
/* EBUSY while QPs use it, while an event of it is queued on its channel, or
 * while events of it are not yet acknowledged (ibverbs blocks there; returning
 * EBUSY cannot hang a program). */
IW_EXPORT int iwv_destroy_cq(struct iwv_cq *cq);

enum iwv_wc_status {
	IWV_WC_SUCCESS,
	IWV_WC_LOC_LEN_ERR,
	IWV_WC_LOC_QP_OP_ERR,
	IWV_WC_LOC_EEC_OP_ERR,
	IWV_WC_LOC_PROT_ERR,
	IWV_WC_WR_FLUSH_ERR,
	IWV_WC_MW_BIND_ERR,
	IWV_WC_BAD_RESP_ERR,
	IWV_WC_LOC_ACCESS_ERR,
	IWV_WC_REM_INV_REQ_ERR,
	IWV_WC_REM_ACCESS_ERR,
	IWV_WC_REM_OP_ERR,
	IWV_WC_RETRY_EXC_ERR,
	IWV_WC_RNR_RETRY_EXC_ERR,
	IWV_WC_LOC_RDD_VIOL_ERR,
	IWV_WC_REM_INV_RD_REQ_ERR,
	IWV_WC_REM_ABORT_ERR,
	IWV_WC_INV_EECN_ERR,
	IWV_WC_INV_EEC_STATE_ERR,
	IWV_WC_FATAL_ERR,
	IWV_WC_RESP_TIMEOUT_ERR,
	IWV_WC_GENERAL_ERR,
};
IW_EXPORT const char *iwv_wc_status_str(enum iwv_wc_status status);
/*
 * Name ("IW_EMPA_CRC", "IW_ERDMAP_ACCESS", "ETIMEDOUT") and short text of an
 * iw_err cause the verbs API reports: -iwv_wc.vendor_err, iwv_qp_attr.qp_err
 * and iwcm_event.iw_err (every code of the libiwarp layers).
 */
IW_EXPORT const char *iwv_errname(int iw_err);
IW_EXPORT const char *iwv_strerror(int iw_err);

enum iwv_wc_opcode {
	IWV_WC_SEND,
	IWV_WC_RDMA_WRITE,
	IWV_WC_RDMA_READ,
	IWV_WC_COMP_SWAP,
	IWV_WC_FETCH_ADD,
	IWV_WC_BIND_MW,
	IWV_WC_LOCAL_INV,
	IWV_WC_RECV = 1 << 7,
	IWV_WC_RECV_RDMA_WITH_IMM,
};

enum iwv_wc_flags {
	IWV_WC_GRH = 1 << 0,
	IWV_WC_WITH_IMM = 1 << 1,
	IWV_WC_IP_CSUM_OK = 1 << 2,
	IWV_WC_WITH_INV = 1 << 3, /* RECV of a Send with Invalidate: invalidated_rkey is valid */
};

struct iwv_wc {
	uint64_t wr_id;
	enum iwv_wc_status status;
	enum iwv_wc_opcode
		opcode;	     /* valid for every status (ibverbs leaves it undefined on error) */
	uint32_t vendor_err; /* on error: the iw_err cause, negated (see iwv_strerror) */
	uint32_t byte_len;   /* RECV: octets received; RDMA_READ: octets read */
	uint32_t invalidated_rkey; /* with IWV_WC_WITH_INV */
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	bool solicited; /* extension: RECV of a Send with Solicited Event */
};

/*
 * Poll up to num_entries completions.  Returns the number (0 = none), or a
 * negative value on error (as ibv_poll_cq).  Also moves bytes between sockets
 * and queue pairs (inline progress) when the CQ is empty.
 */
IW_EXPORT int iwv_poll_cq(struct iwv_cq *cq, int num_entries, struct iwv_wc *wc);
/* Arm the CQ: the next completion (solicited_only: the next RECV of a Send with
 * Solicited Event, or any completion in error) posts one event to its channel. */
IW_EXPORT int iwv_req_notify_cq(struct iwv_cq *cq, int solicited_only);
/*
 * Wait for an event of an armed CQ of `channel` (progressing the stack while
 * waiting).  Returns 0 with *cq and *cq_context set, or -1 with errno (EAGAIN
 * when channel->fd is O_NONBLOCK and no event is ready, EINTR when a signal was
 * caught while blocked).
 */
IW_EXPORT int iwv_get_cq_event(struct iwv_comp_channel *channel, struct iwv_cq **cq,
			       void **cq_context);
IW_EXPORT void iwv_ack_cq_events(struct iwv_cq *cq, unsigned int nevents);

/* ---------------------------------------------------------------------- */
/* Queue pairs                                                             */
/* ---------------------------------------------------------------------- */

enum iwv_qp_type {
	IWV_QPT_RC = 2,
};

enum iwv_qp_state {
	IWV_QPS_RESET,
	IWV_QPS_INIT, /* created, not connected: receives may be posted */
	IWV_QPS_RTR,
	IWV_QPS_RTS, /* connected */
	IWV_QPS_SQD,
	IWV_QPS_SQE,
	IWV_QPS_ERR, /* failed or disconnected: every work request is flushed */
};

/* Depths and SGE counts of 0 are raised to 1 (written back), as a send-only QP
 * in ibverbs asks for 0 receives. */
struct iwv_qp_cap {
	uint32_t max_send_wr;	  /* 0..4096 */
	uint32_t max_recv_wr;	  /* 0..4096 */
	uint32_t max_send_sge;	  /* 0..IWV_MAX_SGE */
	uint32_t max_recv_sge;	  /* 0..IWV_MAX_SGE */
	uint32_t max_inline_data; /* 0..IWV_MAX_INLINE */
};

#define IWV_MAX_SGE    4
#define IWV_MAX_INLINE 4096
#define IWV_MAX_QP_WR  4096

struct iwv_qp_init_attr {
	void *qp_context;
	struct iwv_cq *send_cq;
	struct iwv_cq *recv_cq;
	void *srq; /* must be NULL: no shared receive queues */
	struct iwv_qp_cap cap;
	enum iwv_qp_type qp_type;
	int sq_sig_all;
};

struct iwv_qp {
	struct iwv_context *context;
	void *qp_context;
	struct iwv_pd *pd;
	struct iwv_cq *send_cq;
	struct iwv_cq *recv_cq;
	void *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum iwv_qp_state state; /* as last seen; iwv_query_qp for the current state */
	enum iwv_qp_type qp_type;
};

/*
 * A QP is created on its own (iwv_create_qp) and then given to the connection
 * manager (iwcm_create_qp does both).  Caps beyond the limits: EINVAL; the
 * caps actually granted are written back into attr->cap.
 */
IW_EXPORT struct iwv_qp *iwv_create_qp(struct iwv_pd *pd, struct iwv_qp_init_attr *attr);
/* Outstanding work requests are completed with IWV_WC_WR_FLUSH_ERR first; a
 * connected QP is torn down abortively (use iwcm_disconnect for a graceful close). */
IW_EXPORT int iwv_destroy_qp(struct iwv_qp *qp);

struct iwv_qp_attr {
	enum iwv_qp_state qp_state;
	struct iwv_qp_cap cap;
	uint8_t max_rd_atomic;	    /* ORD (saturated at 255) */
	uint8_t max_dest_rd_atomic; /* IRD (saturated at 255) */
	int qp_err;		    /* extension: first cause (iw_err, 0 while healthy) */
};
enum iwv_qp_attr_mask {
	IWV_QP_STATE = 1 << 0,
	IWV_QP_CAP = 1 << 19,
	IWV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	IWV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
};
IW_EXPORT int iwv_query_qp(struct iwv_qp *qp, struct iwv_qp_attr *attr, int attr_mask,
			   struct iwv_qp_init_attr *init_attr);
/* Only attr->qp_state = IWV_QPS_ERR is accepted (flush everything, abortive close). */
IW_EXPORT int iwv_modify_qp(struct iwv_qp *qp, struct iwv_qp_attr *attr, int attr_mask);

struct iwv_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

enum iwv_wr_opcode {
	IWV_WR_RDMA_WRITE,
	IWV_WR_RDMA_WRITE_WITH_IMM, /* refused (EINVAL): no immediate data on iWARP */
	IWV_WR_SEND,
	IWV_WR_SEND_WITH_IMM, /* refused */
	IWV_WR_RDMA_READ,
	IWV_WR_ATOMIC_CMP_AND_SWP,   /* refused */
	IWV_WR_ATOMIC_FETCH_AND_ADD, /* refused */
	IWV_WR_LOCAL_INV,	     /* refused */
	IWV_WR_BIND_MW,		     /* refused */
	IWV_WR_SEND_WITH_INV,
};

enum iwv_send_flags {
	IWV_SEND_FENCE = 1 << 0,
	IWV_SEND_SIGNALED = 1 << 1,
	IWV_SEND_SOLICITED = 1 << 2,
	IWV_SEND_INLINE = 1 << 3,
};

struct iwv_send_wr {
	uint64_t wr_id;
	struct iwv_send_wr *next;
	struct iwv_sge *sg_list;
	int num_sge;
	enum iwv_wr_opcode opcode;
	unsigned int send_flags;
	union {
		uint32_t imm_data;
		uint32_t invalidate_rkey; /* IWV_WR_SEND_WITH_INV */
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
	} wr;
};

struct iwv_recv_wr {
	uint64_t wr_id;
	struct iwv_recv_wr *next;
	struct iwv_sge *sg_list;
	int num_sge;
};

/*
 * Post a list of work requests.  Returns 0, or a positive errno with *bad_wr
 * set to the first one not posted (the ones before it are posted):
 *   EINVAL  bad opcode, flags, num_sge, or inline data beyond max_inline_data;
 *           RDMA Read with num_sge != 1
 *   ENOMEM  the queue is full
 * Work may be posted to a QP in INIT (not yet connected); it moves once the
 * connection is up.  A QP that has failed or is disconnecting accepts work
 * requests and completes them at once with IWV_WC_WR_FLUSH_ERR (as the Linux
 * drivers do), so nothing posted is ever lost.  A list goes out in as few
 * system calls as possible.
 */
IW_EXPORT int iwv_post_send(struct iwv_qp *qp, struct iwv_send_wr *wr, struct iwv_send_wr **bad_wr);
IW_EXPORT int iwv_post_recv(struct iwv_qp *qp, struct iwv_recv_wr *wr, struct iwv_recv_wr **bad_wr);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_IWV_H */
