/* SPDX-License-Identifier: MIT */
/* stub: being written */
typedef int iw_stub_rpcrdma_xprt;
