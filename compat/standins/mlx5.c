/* SPDX-License-Identifier: MIT */
/*
 * mlx5.c - stand-in libmlx5.so.1 for the drop-in libibverbs.so.1.
 *
 * perftest's binaries (ib_write_bw, ib_read_lat, ...) are linked against
 * Debian's libmlx5.so.1 and cannot start without it.  The real provider needs
 * rdma-core's private libibverbs symbols (IBVERBS_PRIVATE_34), which our
 * libibverbs does not have, so it cannot load next to it.  This library
 * provides exactly the entry points perftest imports, in the version nodes
 * it imports them from (mlx5.map), and every one of them says "not this
 * device": iwarp0 is no ConnectX.  perftest only reaches them when it takes
 * the device for an mlx5 one, which it never does for iwarp0 (unknown vendor
 * and part ids), so these are a safety net, not a feature.
 *
 * Failure conventions (rdma-core's mlx5dv man pages): a function returning a
 * pointer returns NULL and sets errno; one returning int returns the errno
 * value (and sets errno too, for callers that look there).
 */
#include <errno.h>
#include <stddef.h>

#include <infiniband/mlx5dv.h>

static int nosupport(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* MLX5_1.3 */
struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr,
				struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	(void)context;
	(void)qp_attr;
	(void)mlx5_qp_attr;
	nosupport();
	return NULL;
}

/* MLX5_1.7 */
struct ibv_context *mlx5dv_open_device(struct ibv_device *device, struct mlx5dv_context_attr *attr)
{
	(void)device;
	(void)attr;
	nosupport();
	return NULL;
}

int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in, size_t inlen, void *out,
			    size_t outlen)
{
	(void)context;
	(void)in;
	(void)inlen;
	(void)out;
	(void)outlen;
	return nosupport();
}

/* MLX5_1.10 */
struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)
{
	(void)mkey_init_attr;
	nosupport();
	return NULL;
}

int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	(void)mkey;
	return nosupport();
}

struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	(void)qp;
	nosupport();
	return NULL;
}

/* MLX5_1.21 */
int mlx5dv_crypto_login(struct ibv_context *context, struct mlx5dv_crypto_login_attr *login_attr)
{
	(void)context;
	(void)login_attr;
	return nosupport();
}

struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
				     struct mlx5dv_dek_init_attr *init_attr)
{
	(void)context;
	(void)init_attr;
	nosupport();
	return NULL;
}

int mlx5dv_dek_destroy(struct mlx5dv_dek *dek)
{
	(void)dek;
	return nosupport();
}
