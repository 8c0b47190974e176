/* SPDX-License-Identifier: MIT */
/* stub: being written */
typedef int iw_stub_nfs_ulb;
