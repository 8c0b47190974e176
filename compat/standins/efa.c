/* SPDX-License-Identifier: MIT */
/*
 * efa.c - stand-in libefa.so.1 for the drop-in libibverbs.so.1.
 *
 * perftest's binaries are linked against Debian's libefa.so.1, which, like
 * libmlx5 (see mlx5.c), cannot load over our libibverbs.  This library has
 * the two entry points perftest imports, in node EFA_1.1 (efa.map), and both
 * say "not an EFA device": efadv_create_qp_ex returns NULL with errno set,
 * efadv_query_device returns the errno value (rdma-core's efadv man pages).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/efadv.h>

struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx, struct ibv_qp_init_attr_ex *attr_ex,
				  struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	(void)ibvctx;
	(void)attr_ex;
	(void)efa_attr;
	(void)inlen;
	errno = EOPNOTSUPP;
	return NULL;
}

int efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr, uint32_t inlen)
{
	(void)ibvctx;
	(void)attr;
	(void)inlen;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}
