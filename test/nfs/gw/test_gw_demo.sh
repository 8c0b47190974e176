#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The main demo's flow (tools/demo.sh) with a small file: rpcbind + ganesha,
# both gateways, an NFSv3 write and read back through them, nfs-ls, sha256
# and the gateways' stats; the demo exits non-zero on any failure.
# usage: test_gw_demo.sh IWNFSGW   (exit 77: NFS software missing)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../../.." && pwd)
source "$here/gw_lib.sh"
IWNFSGW=$(realpath "${1:?usage: $0 IWNFSGW}")
gw_have_tools || { echo "SKIP: NFS software not installed (tools/setup.sh)"; exit 77; }
out=$(mktemp "${TMPDIR:-/tmp}/gw-demo.XXXXXX")
trap 'rm -f "$out"' EXIT
rc=0
DEMO_SKIP_BUILD=1 IWNFSGW=$IWNFSGW DEMO_SIZE_MB=${DEMO_SIZE_MB:-8} DEMO_TIMEOUT=180 timeout 800 \
	"$src/tools/demo.sh" >"$out" 2>&1 || rc=$?
cat "$out"
if [[ $rc -ne 0 ]]; then
	echo "FAIL demo exited $rc"
	exit 1
fi
for want in "all three match" "through iWARP" "stats total" "Done: NFS over iWARP works"; do
	grep -q "$want" "$out" || { echo "FAIL demo output lacks '$want'"; exit 1; }
done
echo "demo flow: all checks passed"
