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
 * What is different from InfiniBand: only RC queue pairs; immediate data and
 * atomics are RFC 7306, which nothing negotiates, so a QP carries them only
 * when the application enables it (iwv_qp_init_attr.rfc7306) at both ends;
 * lkey == rkey == the STag; a QP is connected through the connection manager
 * (iwcm.h), never by modify_qp.
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
	uint32_t rx_buf_size; /* receive buffer (default 256 KiB): epoll, one per context,
				 shared by its connections; io_uring, one per connection */
	int rx_direct;	      /* epoll: 1 reads the payload of large segments straight into
				 its target (rdmap_qp_rx_target), 0 through the receive
				 buffer; -1: as IWARP_RX_DIRECT says (the default: off) */
};

struct iwv_context {
	struct iwv_device *device;
	int async_fd; /* pollable: readable while an asynchronous event is queued */
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
/* Extension: 1 if an engine thread makes progress for this context, 0 if
 * only the program's calls do, -1 (EINVAL) without a context. */
IW_EXPORT int iwv_context_engine_thread(struct iwv_context *context);

enum iwv_atomic_cap {
	IWV_ATOMIC_NONE,
	IWV_ATOMIC_HCA,
	IWV_ATOMIC_GLOB, /* atomic against every QP and the CPU (the __atomic builtins) */
};

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
	int max_qp_rd_atom;	 /* IRD per QP (RDMA Reads and RFC 7306 atomics) */
	int max_qp_init_rd_atom; /* ORD per QP */
	uint32_t max_inline_data;
	enum iwv_atomic_cap atomic_cap; /* IWV_ATOMIC_GLOB on a QP with rfc7306 */
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	int max_mw;
	uint32_t max_fast_reg_page_list_len; /* pages per IWV_WR_REG_MR */
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
	IWV_ACCESS_REMOTE_ATOMIC = (1 << 3), /* RFC 7306 Atomic Requests may target it */
	IWV_ACCESS_MW_BIND = (1 << 4),	     /* memory windows may be bound to it */
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
/* A peer's Send with Invalidate may have invalidated the rkey; dereg still works.
 * EBUSY while memory windows are bound to the MR.  Frees iwv_alloc_mr MRs too. */
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
	IWV_WC_REG_MR = 8, /* fast registration (the kernel verbs' IB_WC_REG_MR) */
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
	uint32_t byte_len;   /* RECV: octets received; RDMA_READ: octets read; atomics: 8;
				RECV_RDMA_WITH_IMM: octets of the RDMA Write before it */
	uint32_t imm_data;   /* with IWV_WC_WITH_IMM: network byte order, as ibverbs */
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

struct iwv_srq;

struct iwv_qp_init_attr {
	void *qp_context;
	struct iwv_cq *send_cq;
	struct iwv_cq *recv_cq;
	struct iwv_srq *srq; /* receives come from this SRQ (max_recv_wr/sge are ignored) */
	struct iwv_qp_cap cap;
	enum iwv_qp_type qp_type;
	int sq_sig_all;
	/* Extension: RFC 7306 atomics and Immediate Data on this QP (default 0 = off:
	 * the QP is plain RFC 5040, as Linux siw, and answers an RFC 7306 message with
	 * a Terminate).  Both ends must enable it; docs/rdmap.md says why. */
	int rfc7306;
	/* Extension: receiver not ready.  A Send or Immediate Data that finds no
	 * posted receive waits up to this many milliseconds for one, reading
	 * nothing more from the connection meanwhile (TCP flow control holds the
	 * peer back), before the "no buffer" Terminate of RFC 5041 §7.2.
	 * Default 0: the Terminate at once, as Linux siw.  For ibverbs programs
	 * that rely on InfiniBand's RNR retry (qperf rc_bw). */
	unsigned int rnr_hold_ms;
};

struct iwv_qp {
	struct iwv_context *context;
	void *qp_context;
	struct iwv_pd *pd;
	struct iwv_cq *send_cq;
	struct iwv_cq *recv_cq;
	struct iwv_srq *srq;
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

/* ---------------------------------------------------------------------- */
/* Memory windows and fast registration                                    */
/* ---------------------------------------------------------------------- */

enum iwv_mw_type {
	IWV_MW_TYPE_1 = 1,
	IWV_MW_TYPE_2 = 2, /* the iWARP kind: bound by a work request on one QP */
};

struct iwv_mw {
	struct iwv_context *context;
	struct iwv_pd *pd;
	uint32_t rkey;
	uint32_t handle;
	enum iwv_mw_type type;
};

struct iwv_mw_bind_info {
	struct iwv_mr *mr; /* registered with IWV_ACCESS_MW_BIND */
	uint64_t addr;
	uint64_t length;
	unsigned int mw_access_flags; /* IWV_ACCESS_REMOTE_* */
};

/* An unbound window (IWV_MW_TYPE_2; IWV_MW_TYPE_1: EOPNOTSUPP, iWARP has type 2
 * only).  IWV_WR_BIND_MW binds it on a QP (usable through that QP only) and
 * sets mw->rkey to bind_mw.rkey when posted; docs/man/iwv_alloc_mw.3. */
IW_EXPORT struct iwv_mw *iwv_alloc_mw(struct iwv_pd *pd, enum iwv_mw_type type);
/* Unbinds a bound window, then frees it. */
IW_EXPORT int iwv_dealloc_mw(struct iwv_mw *mw);
/* The next rkey of the same STag index (a new 8-bit key), as ibv_inc_rkey. */
static inline uint32_t iwv_inc_rkey(uint32_t rkey)
{
	return (rkey & 0xFFFFFF00u) | ((rkey + 1) & 0xFFu);
}

/* Extension: an MR for fast registration (IWV_WR_REG_MR), invalid until
 * registered, of at most max_num_pages pages (the kernel's ib_alloc_mr).
 * IWV_WR_REG_MR sets mr->lkey/rkey to index << 8 | wr.reg.key when posted; the
 * page list is read when the WR runs (keep it until it completes);
 * docs/man/iwv_alloc_mr.3. */
IW_EXPORT struct iwv_mr *iwv_alloc_mr(struct iwv_pd *pd, uint32_t max_num_pages);

/* ---------------------------------------------------------------------- */
/* Shared receive queues                                                   */
/* ---------------------------------------------------------------------- */

struct iwv_srq {
	struct iwv_context *context;
	void *srq_context;
	struct iwv_pd *pd;
	uint32_t handle;
};

struct iwv_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};

struct iwv_srq_init_attr {
	void *srq_context;
	struct iwv_srq_attr attr;
};

enum iwv_srq_attr_mask {
	IWV_SRQ_MAX_WR = 1 << 0, /* resizing: EINVAL (not supported, as many ibverbs providers) */
	IWV_SRQ_LIMIT = 1 << 1,
};

IW_EXPORT struct iwv_srq *iwv_create_srq(struct iwv_pd *pd, struct iwv_srq_init_attr *attr);
IW_EXPORT int iwv_modify_srq(struct iwv_srq *srq, struct iwv_srq_attr *attr, int attr_mask);
IW_EXPORT int iwv_query_srq(struct iwv_srq *srq, struct iwv_srq_attr *attr);
/* EBUSY while QPs use it. */
IW_EXPORT int iwv_destroy_srq(struct iwv_srq *srq);

/* ---------------------------------------------------------------------- */
/* Asynchronous events                                                     */
/* ---------------------------------------------------------------------- */

enum iwv_event_type {
	IWV_EVENT_CQ_ERR,
	IWV_EVENT_QP_FATAL,
	IWV_EVENT_QP_REQ_ERR,
	IWV_EVENT_QP_ACCESS_ERR,
	IWV_EVENT_COMM_EST,
	IWV_EVENT_SQ_DRAINED,
	IWV_EVENT_PATH_MIG,
	IWV_EVENT_PATH_MIG_ERR,
	IWV_EVENT_DEVICE_FATAL,
	IWV_EVENT_PORT_ACTIVE,
	IWV_EVENT_PORT_ERR,
	IWV_EVENT_LID_CHANGE,
	IWV_EVENT_PKEY_CHANGE,
	IWV_EVENT_SM_CHANGE,
	IWV_EVENT_SRQ_ERR,
	IWV_EVENT_SRQ_LIMIT_REACHED,
	IWV_EVENT_QP_LAST_WQE_REACHED,
	IWV_EVENT_CLIENT_REREGISTER,
	IWV_EVENT_GID_CHANGE,
};

struct iwv_async_event {
	union {
		struct iwv_cq *cq;
		struct iwv_qp *qp;
		struct iwv_srq *srq;
		int port_num;
	} element;
	enum iwv_event_type event_type;
};

/* Wait for the next asynchronous event (-1 with errno EAGAIN when async_fd is
 * O_NONBLOCK and none is queued); every event must be acknowledged. */
IW_EXPORT int iwv_get_async_event(struct iwv_context *context, struct iwv_async_event *event);
IW_EXPORT void iwv_ack_async_event(struct iwv_async_event *event);
IW_EXPORT const char *iwv_event_type_str(enum iwv_event_type event);

enum iwv_wr_opcode {
	IWV_WR_RDMA_WRITE,
	IWV_WR_RDMA_WRITE_WITH_IMM, /* RFC 7306: RDMA Write + Immediate Data (rfc7306 QPs) */
	IWV_WR_SEND,
	IWV_WR_SEND_WITH_IMM, /* RFC 7306: Send + Immediate Data (rfc7306 QPs; docs/verbs.md) */
	IWV_WR_RDMA_READ,
	IWV_WR_ATOMIC_CMP_AND_SWP,   /* RFC 7306 (rfc7306 QPs) */
	IWV_WR_ATOMIC_FETCH_AND_ADD, /* RFC 7306 (rfc7306 QPs) */
	IWV_WR_LOCAL_INV,
	IWV_WR_BIND_MW,
	IWV_WR_SEND_WITH_INV,
	IWV_WR_REG_MR = 0x20, /* extension: fast registration (the kernel verbs' IB_WR_REG_MR) */
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
		uint32_t imm_data;	  /* network byte order, as ibverbs */
		uint32_t invalidate_rkey; /* IWV_WR_SEND_WITH_INV, IWV_WR_LOCAL_INV */
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr; /* 8-octet aligned */
			uint64_t compare_add; /* CMP_AND_SWP: compare; FETCH_AND_ADD: add */
			uint64_t swap;
			uint32_t rkey;
		} atomic;
	} wr;
	union {
		struct {
			struct iwv_mw *mw;
			uint32_t rkey; /* the window's new rkey (iwv_inc_rkey(mw->rkey)) */
			struct iwv_mw_bind_info bind_info;
		} bind_mw;
		struct {
			struct iwv_mr *mr; /* from iwv_alloc_mr */
			uint32_t key;	   /* the new low 8 bits of mr->rkey */
			int access;	   /* IWV_ACCESS_* */
			uint64_t iova;	   /* tagged offset of the first octet */
			uint64_t length;
			const uint64_t *page_list; /* addresses of the pages, in order */
			uint32_t num_pages;
			uint32_t page_size;	 /* power of two, >= 4096 */
			uint32_t first_page_off; /* iova's octet within page_list[0] */
		} reg;
	};
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
IW_EXPORT int iwv_post_srq_recv(struct iwv_srq *srq, struct iwv_recv_wr *wr,
				struct iwv_recv_wr **bad_wr);

#ifdef __cplusplus
}
#endif
#endif /* IWARP_IWV_H */
