/* SPDX-License-Identifier: MIT */
/*
 * ibv_device.c - the drop-in libibverbs.so.1: the one software device
 * ("iwarp0": an iWARP RNIC, one Ethernet port, always ACTIVE), contexts and
 * the queries a program makes before it creates anything.
 *
 * Theory of operation.  Every ibv_open_device() opens an independent
 * iwv_context with an engine thread (programs such as ib_write_lat spin on
 * memory and never call into the library, so progress cannot wait for
 * them; the thread blocks every signal).  The ibv_context handed out is the
 * last member of a struct verbs_context, as rdma-core's inline functions
 * expect (verbs_get_ctx_op): the data-path ops (post_send, post_recv,
 * poll_cq, req_notify_cq, post_srq_recv) are set because the header's
 * inlines call them without a check, the memory-window ops (alloc_mw,
 * dealloc_mw, bind_mw) because ibv_alloc_mw() and the others are inlines
 * too, and query_port because ibv_query_port() is an inline that prefers it.
 * Everything else the header reaches through verbs_get_ctx_op stays NULL,
 * which makes the caller fall back or get EOPNOTSUPP, as with a provider
 * that lacks the feature.
 *
 * librdmacm shares one context among all its ids (iwc_shared_context): it is
 * opened on first use, not by a constructor (qperf forks a server per
 * request), and again in a child after fork().
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibv_int.h"

static struct ibv_device iwc_device = {
	.node_type = IBV_NODE_RNIC,
	.transport_type = IBV_TRANSPORT_IWARP,
	.name = IWC_DEVICE_NAME,
	.dev_name = "uverbs_iwarp0",
	.dev_path = "/nonexistent/iwarp/uverbs_iwarp0",
	.ibdev_path = "/nonexistent/iwarp/iwarp0",
};

/* A fixed GUID: the device has no hardware address of its own. */
#define IWC_GUID 0x0277aa0000000001ull

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **l = calloc(2, sizeof(*l));

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l[0] = &iwc_device;
	if (num_devices)
		*num_devices = 1;
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device ? device->name : NULL;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return htobe64(IWC_GUID);
}

int ibv_get_device_index(struct ibv_device *device)
{
	return device == &iwc_device ? 0 : -1;
}

/* There is no sysfs behind the device: every attribute is absent. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	errno = ENOENT;
	return -1;
}

int ibv_fork_init(void)
{
	return 0; /* nothing is pinned: fork needs no preparation */
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* ---------------------------------------------------------------------- */
/* Contexts                                                                */
/* ---------------------------------------------------------------------- */

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct iwv_context_attr a;
	struct iwc_context *c;
	struct ibv_context *ctx;

	if (device != &iwc_device) {
		errno = ENODEV;
		return NULL;
	}
	c = iwc_zalloc(sizeof(*c));
	if (!c)
		return NULL;
	iwv_context_attr_default(&a);
	a.engine_thread = 1;
	c->iwv = iwv_open_context(&a);
	if (!c->iwv) {
		int e = errno;

		free(c);
		errno = e;
		return NULL;
	}
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = -1;
	ctx->async_fd = c->iwv->async_fd;
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	pthread_mutex_init(&c->qp_lock, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->vctx.sz = sizeof(c->vctx);
	iwc_set_ops(c);
	return ctx;
}

int ibv_close_device(struct ibv_context *context)
{
	struct iwc_context *c;
	int r;

	if (!context)
		return EINVAL;
	c = iwc_ctx(context);
	r = iwv_close_device(c->iwv);
	if (r)
		return r;
	pthread_mutex_destroy(&context->mutex);
	pthread_mutex_destroy(&c->qp_lock);
	free(c);
	return 0;
}

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context *shared_ctx;
static pid_t shared_pid;

struct ibv_context *iwc_shared_context(void)
{
	struct ibv_context *c;

	pthread_mutex_lock(&shared_lock);
	/* After fork() the parent's engine thread is gone: the child opens its own. */
	if (shared_ctx && shared_pid != getpid())
		shared_ctx = NULL;
	if (!shared_ctx) {
		shared_ctx = ibv_open_device(&iwc_device);
		shared_pid = getpid();
	}
	c = shared_ctx;
	pthread_mutex_unlock(&shared_lock);
	return c;
}

/* ---------------------------------------------------------------------- */
/* Queries                                                                 */
/* ---------------------------------------------------------------------- */

/*
 * rdma_accept() with a depth of 0xFF means "the device maximum", and some
 * programs pass the device's value straight on: keep it below 255.
 */
#define IWC_MAX_RD_ATOM 128

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *out)
{
	struct iwv_device_attr a;
	int r;

	if (!context || !out)
		return EINVAL;
	r = iwv_query_device(iwc_ctx(context)->iwv, &a);
	if (r)
		return r;
	memset(out, 0, sizeof(*out));
	snprintf(out->fw_ver, sizeof(out->fw_ver), "%s", a.fw_ver);
	out->node_guid = htobe64(IWC_GUID);
	out->sys_image_guid = htobe64(IWC_GUID);
	out->max_mr_size = a.max_mr_size;
	out->page_size_cap = 0xFFFFF000u; /* any page size from 4 KiB */
	out->vendor_id = a.vendor_id;
	out->vendor_part_id = a.vendor_part_id;
	out->max_qp = a.max_qp;
	out->max_qp_wr = a.max_qp_wr;
	/*
	 * Type-2 windows, usable only through the QP that bound them and only in
	 * its PD (the window's): IBA's type 2B, which is also what mlx5 and rxe
	 * report for their type-2 windows.  Not IBV_DEVICE_MEM_WINDOW: programs
	 * take it for type-1 windows (ibv_bind_mw), which iWARP has not.  No CQ
	 * or SRQ resizing.
	 */
	out->device_cap_flags = IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	out->max_sge = a.max_sge;
	out->max_sge_rd = 1;
	out->max_cq = a.max_cq;
	out->max_cqe = a.max_cqe;
	out->max_mr = a.max_mr;
	out->max_mw = a.max_mw; /* windows share the STag table with the MRs */
	out->max_pd = a.max_pd;
	out->max_qp_rd_atom =
		a.max_qp_rd_atom < IWC_MAX_RD_ATOM ? a.max_qp_rd_atom : IWC_MAX_RD_ATOM;
	out->max_qp_init_rd_atom =
		a.max_qp_init_rd_atom < IWC_MAX_RD_ATOM ? a.max_qp_init_rd_atom : IWC_MAX_RD_ATOM;
	out->max_res_rd_atom = out->max_qp_rd_atom * a.max_qp;
	out->atomic_cap = iwc_rfc7306() ? IBV_ATOMIC_GLOB : IBV_ATOMIC_NONE;
	out->max_srq = a.max_srq;
	out->max_srq_wr = a.max_srq_wr;
	out->max_srq_sge = a.max_srq_sge;
	out->max_pkeys = 1;
	out->phys_port_cnt = 1;
	return 0;
}

static void port_attr(struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = IBV_MTU_1024; /* what an Ethernet RNIC reports for a 1500-octet link */
	p->gid_tbl_len = 1;
	p->port_cap_flags = 0;
	p->max_msg_sz = 1u << 30;
	p->pkey_tbl_len = 1;
	p->active_width = 2;  /* 4x */
	p->active_speed = 32; /* 25 Gb/s per lane, as a figure to print */
	p->phys_state = 5;    /* LinkUp */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
}

/* The query_port op of the verbs_context (what the header's inline calls). */
static int iwc_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *out,
			  size_t len)
{
	struct ibv_port_attr p;

	if (!context || !out || port_num != 1)
		return EINVAL;
	port_attr(&p);
	memcpy(out, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

/* The exported one: the old layout, everything before port_cap_flags2. */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *out)
{
	return iwc_query_port(context, port_num, (struct ibv_port_attr *)(void *)out,
			      offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* GID 0: the IPv4-mapped address 127.0.0.1 (the device owns every address). */
static void gid0(union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xFF;
	gid->raw[11] = 0xFF;
	gid->raw[12] = 127;
	gid->raw[15] = 1;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	if (!context || !gid || port_num != 1 || index != 0)
		return -1;
	gid0(gid);
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	if (!context || !entry || port_num != 1 || gid_index != 0 || entry_size < sizeof(*entry) ||
	    flags)
		return EINVAL;
	memset(entry, 0, sizeof(*entry));
	gid0(&entry->gid);
	entry->gid_index = 0;
	entry->port_num = 1;
	entry->gid_type = IBV_GID_TYPE_IB;
	entry->ndev_ifindex = 1;
	return 0;
}

/* rdma-core's provider-private query (its enum is not in the public headers:
 * 0 = IB / RoCE v1, the type of our one GID). */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index, int *type)
{
	if (!context || !type || port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*type = 0;
	return 0;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (!context || !pkey || port_num != 1 || index != 0)
		return -1;
	*pkey = htobe16(0xFFFF);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	return port_num == 1 && pkey == htobe16(0xFFFF) ? 0 : -1;
}

void iwc_set_device_ops(struct iwc_context *c)
{
	c->vctx.query_port = iwc_query_port;
}

/* ---------------------------------------------------------------------- */
/* Names                                                                   */
/* ---------------------------------------------------------------------- */

const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	switch (node_type) {
	case IBV_NODE_CA:
		return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH:
		return "InfiniBand switch";
	case IBV_NODE_ROUTER:
		return "InfiniBand router";
	case IBV_NODE_RNIC:
		return "iWARP NIC";
	case IBV_NODE_USNIC:
		return "usNIC";
	case IBV_NODE_USNIC_UDP:
		return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED:
		return "unspecified";
	default:
		return "unknown";
	}
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	static const char *const n[] = {"PORT_NOP",   "PORT_DOWN",   "PORT_INIT",
					"PORT_ARMED", "PORT_ACTIVE", "PORT_ACTIVE_DEFER"};

	return (unsigned)port_state < sizeof(n) / sizeof(n[0]) ? n[port_state] : "unknown";
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	return iwv_event_type_str((enum iwv_event_type)event);
}

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return iwv_wc_status_str((enum iwv_wc_status)status);
}
