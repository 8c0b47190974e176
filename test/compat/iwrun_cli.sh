#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# iwrun's command line (tools/iwrun.in, iwrun(1)) without the drop-in
# libraries: a directory of empty stand-in files takes their place, and the
# "program" is env(1), which links neither library, so what iwrun exports can
# be read back.  Checks: each option sets its IWARP_* variable, the directory
# goes first on LD_LIBRARY_PATH, bad values and unknown options are status 125
# with one line that names them, a missing program 127, missing libraries 125
# with a message that says how to build them, --check reports a program that
# would not get our libraries with status 1.
# usage: iwrun_cli.sh PATH_TO_IWRUN
set -u

iwrun=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# expect STATUS PATTERN CMD...: the status, and PATTERN (grep -E) in stdout+stderr
expect() {
    local want=$1 pat=$2 out st
    shift 2
    out=$("$@" 2>&1)
    st=$?
    if [[ $st != "$want" ]]; then
        fail "$* -> status $st, want $want"
        printf '  | %s\n' "$out" | head -8
    elif [[ -n $pat ]] && ! grep -qE -- "$pat" <<<"$out"; then
        fail "$* -> output lacks /$pat/"
        printf '  | %s\n' "$out" | head -8
    fi
}

lib=$tmp/lib
mkdir "$lib"
touch "$lib/libibverbs.so.1" "$lib/librdmacm.so.1"
export IWRUN_LIBDIR=$lib
unset IWARP_MPA_REV IWARP_CRC IWARP_MARKERS IWARP_P2P IWARP_ENGINE IWARP_ENGINE_RT

expect 0 '^Usage: iwrun' "$iwrun" --help
expect 0 '^iwrun \(iwarp\) ' "$iwrun" --version

# every option, both spellings, exported as documented
out=$(LD_LIBRARY_PATH=/old "$iwrun" --mpa-rev 1 --crc=off --markers both --p2p read \
    --engine=epoll --rt env 2>&1)
for want in IWARP_MPA_REV=1 IWARP_CRC=off IWARP_MARKERS=both IWARP_P2P=read \
    IWARP_ENGINE=epoll IWARP_ENGINE_RT=1 "LD_LIBRARY_PATH=$lib:/old"; do
    grep -qx -- "$want" <<<"$out" || fail "iwrun with every option: no $want in the environment"
done
# nothing exported that no option asked for; the environment passes through
out=$(IWARP_CRC=off "$iwrun" env 2>&1)
grep -q '^IWARP_MARKERS=' <<<"$out" && fail "IWARP_MARKERS exported without --markers"
grep -qx 'IWARP_CRC=off' <<<"$out" || fail "IWARP_CRC from the environment did not pass through"
grep -qx "LD_LIBRARY_PATH=$lib" <<<"$(env -u LD_LIBRARY_PATH "$iwrun" env)" ||
    fail "LD_LIBRARY_PATH is not exactly the library directory when it was unset"
# the program's arguments are its own, options after the program included
expect 0 '^x --crc y$' "$iwrun" echo x --crc y
expect 0 '^--check$' "$iwrun" -- echo --check
# -v says what it does on stderr
expect 0 "iwrun: IWARP_CRC=on" "$iwrun" -v --crc on true

# bad command lines: 125 and one line naming the option
expect 125 "invalid value 'maybe' for --crc" "$iwrun" --crc maybe true
expect 125 "invalid value '3' for --mpa-rev" "$iwrun" --mpa-rev 3 true
expect 125 "invalid value 'on' for --markers" "$iwrun" --markers on true
expect 125 "invalid value 'write,read' for --p2p" "$iwrun" --p2p write,read true
expect 125 "invalid value 'rtr' for --p2p" "$iwrun" --p2p rtr true
expect 125 "invalid value 'io_uring' for --engine" "$iwrun" --engine io_uring true
expect 125 "option --crc needs a value" "$iwrun" --crc
expect 125 "option --rt takes no value" "$iwrun" --rt=1 true
expect 125 "unknown option '--bogus'" "$iwrun" --bogus true
expect 125 "no program to run" "$iwrun" --crc on
expect 0 "" "$iwrun" --p2p all true
expect 0 "" "$iwrun" --p2p off true

# the program: not found 127, not executable 126
expect 127 "no-such-program-here: program not found" "$iwrun" no-such-program-here
touch "$tmp/noexec"
expect 126 "" "$iwrun" "$tmp/noexec"

# the libraries missing: refuse, say how to get them
expect 125 "does not exist: build the drop-in libraries" env IWRUN_LIBDIR="$tmp/none" "$iwrun" true
mkdir "$tmp/half"
touch "$tmp/half/libibverbs.so.1"
expect 125 "no librdmacm.so.1 in $tmp/half" env IWRUN_LIBDIR="$tmp/half" "$iwrun" true

# --check: a program that needs libibverbs.so.1 and would not get ours
if command -v ibv_devices >/dev/null; then
    expect 1 "libibverbs.so.1 +=> .*NOT iwarp's|not ok" env IWRUN_LIBDIR="$tmp/none" \
        "$iwrun" --check ibv_devices
    expect 1 "does not exist" env IWRUN_LIBDIR="$tmp/none" "$iwrun" --check
else
    echo "note: ibv_devices not installed, --check of a real program not tried"
fi
expect 127 "program not found" "$iwrun" --check no-such-program-here
expect 125 "takes one program" "$iwrun" --check a b

if [[ $fails -gt 0 ]]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "ok: iwrun command line"
