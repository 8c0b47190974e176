#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""iwnfs-mount end to end: an NFS export mounted over iWARP with FUSE.

  this script (file system calls) -> FUSE -> iwnfs-mount -> iWARP (RPC-over-RDMA)
      -> iwnfsgw server -> TCP -> nfs-ganesha -> the exported temp directory

The server side is test/helpers/nfs_server.py (rpcbind + ganesha + iwnfsgw
server, started by test/nfs/gw/gw_lib.sh).  Checks, each a sentence:
  * a_file_written_through_the_mount_is_in_the_export_and_reads_back
  * rename_remove_mkdir_rmdir_behave_as_on_a_local_file_system
  * symlink_and_readlink_round_trip
  * a_hard_link_shares_the_inode_and_counts_links
  * a_directory_of_1000_entries_lists_completely_with_attributes
  * sparse_writes_read_back_zeros_in_the_holes
  * appends_land_at_the_end
  * truncation_shrinks_and_extends
  * chmod_is_stored_and_permissions_are_the_servers (uid nobody is refused)
  * nfs_errors_become_errno (ENOENT, EEXIST, ENOTEMPTY, ENOTDIR, EISDIR)
  * statfs_reports_the_exports_file_system
  * a_64_MiB_file_crosses_chunk_and_credit_limits_intact (sha256 against the
    exported file; throughput printed; several calls in flight)
  * fsx_random_operations_match_a_local_reference (seed printed; MOUNT_FSX_SEED
    and MOUNT_FSX_STEPS to replay)
  * unmount_with_fusermount3_is_clean_and_exits_0
  * without_mountport_the_mount_service_is_found_through_rpcbind (when rpcbind
    lists this test's ganesha: other NFS tests may share rpcbind)
  * a_changed_write_verifier_makes_the_data_go_again (ganesha killed and
    restarted between the UNSTABLE WRITEs and the COMMIT of close)
  * sigint_unmounts_and_exits_0_with_the_data_written
  * the_background_mount_returns_at_once_and_ends_at_unmount
  * a_bad_command_line_exits_2_and_an_unreachable_server_exits_1
Skips (exit 77) without /dev/fuse, fusermount3, or the NFS software.
usage: test_mount.py IWNFS_MOUNT IWNFSGW        Exit status: 0 passed, 1 failed.
"""

import errno
import hashlib
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "helpers"))
from nfs_server import NfsServer  # noqa: E402

NFS_PORT = int(os.environ.get("MOUNT_TEST_NFS_PORT", "20690"))  # MOUNT is +1
RDMA_PORT = int(os.environ.get("MOUNT_TEST_RDMA_PORT", "20649"))
BIG_MB = int(os.environ.get("MOUNT_BIG_MB", "64"))
failed = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ((": " + str(detail)) if detail and not ok else ""),
          flush=True)
    if not ok:
        failed.append(name)
    return ok


def run_check(name, fn, *args):
    """fn raises AssertionError (or anything) on failure"""
    try:
        fn(*args)
        return check(name, True)
    except Exception as e:  # noqa: BLE001 - any failure is the check's
        return check(name, False, "%s: %s" % (type(e).__name__, e))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)


def mounted(mp):
    mp = os.path.realpath(mp)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == mp and " - fuse" in line:
                return True
    return False


def wait_for(cond, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def skip_reason():
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    try:
        os.close(os.open("/dev/fuse", os.O_RDWR))
    except OSError as e:
        return "/dev/fuse cannot be opened: %s" % e.strerror
    if shutil.which("fusermount3") is None:
        return "fusermount3 not installed (Debian fuse3; tools/setup.sh)"
    return NfsServer.missing()


class Mount:
    """iwnfs-mount -f in the background, its log in a file"""

    def __init__(self, exe, srv, mp, log, opts=()):
        self.mp, self.log = mp, log
        o = ["port=%d" % srv.rdma_port] + list(opts)
        self.cmd = [exe, "-f", "--stats", "127.0.0.1:/export", mp, "-o", ",".join(o)]
        self.logf = open(log, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self.logf, stderr=subprocess.STDOUT)
        if not wait_for(lambda: mounted(mp) or self.proc.poll() is not None, 30) or not mounted(mp):
            raise RuntimeError("not mounted: " + self.log_text()[-2000:])

    def log_text(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def unmount(self):
        r = subprocess.run(["fusermount3", "-u", self.mp], capture_output=True, text=True)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.logf.close()
        return r.returncode, r.stderr, rc


# ---- the checks (m: the mount point, e: the exported directory) -------------

def t_write_read(m, e):
    p = os.path.join(m, "hello.txt")
    with open(p, "w") as f:
        f.write("hello over iWARP\n")
    with open(p) as f:
        assert f.read() == "hello over iWARP\n", "read back differs"
    with open(os.path.join(e, "hello.txt")) as f:
        assert f.read() == "hello over iWARP\n", "the export holds something else"
    assert os.stat(p).st_size == 17


def t_namespace(m, e):
    os.mkdir(os.path.join(m, "d1"))
    os.makedirs(os.path.join(m, "d1", "d2", "d3"))
    with open(os.path.join(m, "d1", "d2", "f"), "w") as f:
        f.write("x")
    os.rename(os.path.join(m, "d1", "d2", "f"), os.path.join(m, "d1", "g"))
    assert not os.path.exists(os.path.join(m, "d1", "d2", "f"))
    assert os.path.exists(os.path.join(e, "d1", "g")), "rename not in the export"
    os.rename(os.path.join(m, "d1", "d2"), os.path.join(m, "d1", "d2b"))  # a directory
    assert os.path.isdir(os.path.join(e, "d1", "d2b", "d3"))
    os.unlink(os.path.join(m, "d1", "g"))
    assert not os.path.exists(os.path.join(e, "d1", "g"))
    os.rmdir(os.path.join(m, "d1", "d2b", "d3"))
    os.rmdir(os.path.join(m, "d1", "d2b"))
    os.rmdir(os.path.join(m, "d1"))
    assert not os.path.exists(os.path.join(e, "d1"))


def t_symlink(m, e):
    os.symlink("some/where/else", os.path.join(m, "ln"))
    assert os.readlink(os.path.join(m, "ln")) == "some/where/else"
    assert os.readlink(os.path.join(e, "ln")) == "some/where/else"
    assert stat.S_ISLNK(os.lstat(os.path.join(m, "ln")).st_mode)
    long_target = "x" * 1000
    os.symlink(long_target, os.path.join(m, "ln2"))
    assert os.readlink(os.path.join(m, "ln2")) == long_target
    with open(os.path.join(m, "real"), "w") as f:
        f.write("through a link")
    os.symlink("real", os.path.join(m, "ln3"))
    with open(os.path.join(m, "ln3")) as f:
        assert f.read() == "through a link"


def t_hardlink(m, e):
    a, b = os.path.join(m, "h1"), os.path.join(m, "h2")
    with open(a, "w") as f:
        f.write("shared")
    os.link(a, b)
    sa, sb = os.stat(a), os.stat(b)
    assert sa.st_ino == sb.st_ino, "two inodes"
    assert sa.st_nlink == 2 and sb.st_nlink == 2, "nlink %d %d" % (sa.st_nlink, sb.st_nlink)
    with open(b, "a") as f:
        f.write("!")
    with open(a) as f:
        assert f.read() == "shared!"
    os.unlink(a)
    assert os.stat(b).st_nlink == 1, "nlink after unlink %d" % os.stat(b).st_nlink


def t_readdir_1000(m, e):
    d = os.path.join(m, "many")
    os.mkdir(d)
    names = set()
    for i in range(1000):
        n = "entry-%04d-%s" % (i, "y" * (i % 40))
        with open(os.path.join(d, n), "w") as f:
            f.write("z" * (i % 7))
        names.add(n)
    listed = os.listdir(d)
    assert len(listed) == len(set(listed)), "duplicates in the listing"
    assert set(listed) == names, "listing differs: %d vs %d" % (len(listed), len(names))
    assert set(os.listdir(os.path.join(e, "many"))) == names
    sizes = {x.name: x.stat().st_size for x in os.scandir(d)}
    bad = [n for n in names if sizes[n] != int(n[6:10]) % 7]
    assert not bad, "sizes wrong for %d entries" % len(bad)
    # a second listing while the directory changes under it
    os.unlink(os.path.join(d, "entry-0000-"))
    assert len(os.listdir(d)) == 999


def t_sparse(m, e):
    p = os.path.join(m, "sparse")
    with open(p, "wb") as f:
        f.seek(10 << 20)
        f.write(b"A" * 4096)
        f.seek(3 << 20)
        f.write(b"B" * 100)
    assert os.stat(p).st_size == (10 << 20) + 4096
    with open(p, "rb") as f:
        data = f.read()
    want = bytearray((10 << 20) + 4096)
    want[3 << 20:(3 << 20) + 100] = b"B" * 100
    want[10 << 20:] = b"A" * 4096
    assert data == bytes(want), "content differs"
    assert sha256(os.path.join(e, "sparse")) == hashlib.sha256(want).hexdigest()


def t_append(m, e):
    p = os.path.join(m, "log")
    want = b""
    for i in range(50):
        line = ("line %d %s\n" % (i, "-" * (i * 37 % 500))).encode()
        with open(p, "ab") as f:
            f.write(line)
        want += line
    with open(p, "rb") as f:
        assert f.read() == want
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"tail")
    os.close(fd)
    with open(os.path.join(e, "log"), "rb") as f:
        assert f.read() == want + b"tail"


def t_truncate(m, e):
    p = os.path.join(m, "trunc")
    with open(p, "wb") as f:
        f.write(bytes(range(256)) * 1000)
    os.truncate(p, 1000)
    assert os.stat(p).st_size == 1000
    with open(p, "rb") as f:
        assert f.read() == (bytes(range(256)) * 4)[:1000]
    os.truncate(p, 5000)
    with open(p, "rb") as f:
        d = f.read()
    assert len(d) == 5000 and d[1000:] == bytes(4000), "extension is not zeros"
    with open(p, "r+b") as f:  # truncate through an open file, then write
        f.write(b"Q" * 10)
        f.truncate(5)
        f.seek(0, 2)
        f.write(b"end")
    with open(p, "rb") as f:
        assert f.read() == b"QQQQQend"
    with open(p, "wb") as f:  # O_TRUNC
        f.write(b"new")
    assert os.stat(os.path.join(e, "trunc")).st_size == 3


def as_nobody(fn):
    """run fn in a child process as uid/gid 65534; its exit status"""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os._exit(fn())
        except BaseException:  # noqa: BLE001
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def t_chmod(m, e):
    p = os.path.join(m, "secret")
    with open(p, "w") as f:
        f.write("root only")
    os.chmod(p, 0o600)
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.join(e, "secret")).st_mode) == 0o600
    os.chmod(p, 0o640)
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640

    def read_secret():
        try:
            open(p).read()
            return 0
        except PermissionError:
            return 13
        except OSError as x:
            return 100 + (x.errno or 0)

    rc = as_nobody(read_secret)
    assert rc == 13, "uid 65534 reading a 0640 root file: status %d (13 = EACCES)" % rc
    os.chmod(p, 0o644)
    rc = as_nobody(read_secret)
    assert rc == 0, "uid 65534 reading a 0644 file: status %d" % rc
    d = os.path.join(m, "rootdir")
    os.mkdir(d, 0o755)

    def create_in_dir():
        try:
            open(os.path.join(d, "x"), "w").close()
            return 0
        except PermissionError:
            return 13
        except OSError as x:
            return 100 + (x.errno or 0)

    rc = as_nobody(create_in_dir)
    assert rc == 13, "uid 65534 creating in a 0755 root directory: status %d" % rc
    os.chown(p, 65534, 65534)
    st = os.stat(os.path.join(e, "secret"))
    assert st.st_uid == 65534 and st.st_gid == 65534, "chown not stored"


def t_errors(m, e):
    def err_of(fn, *a):
        try:
            fn(*a)
        except OSError as x:
            return x.errno
        return 0

    assert err_of(open, os.path.join(m, "nope")) == errno.ENOENT
    os.mkdir(os.path.join(m, "ed"))
    assert err_of(os.mkdir, os.path.join(m, "ed")) == errno.EEXIST
    open(os.path.join(m, "ed", "f"), "w").close()
    assert err_of(os.rmdir, os.path.join(m, "ed")) == errno.ENOTEMPTY
    assert err_of(os.listdir, os.path.join(m, "ed", "f")) == errno.ENOTDIR
    assert err_of(os.unlink, os.path.join(m, "ed")) in (errno.EISDIR, errno.EPERM)
    assert err_of(os.open, os.path.join(m, "ed", "f"), os.O_CREAT | os.O_EXCL | os.O_WRONLY) == \
        errno.EEXIST
    assert err_of(os.rename, os.path.join(m, "nope"), os.path.join(m, "x")) == errno.ENOENT


def t_statfs(m, e):
    a, b = os.statvfs(m), os.statvfs(e)
    assert a.f_blocks > 0 and a.f_bavail > 0, "empty statfs"
    assert abs(a.f_blocks * a.f_frsize - b.f_blocks * b.f_frsize) <= 1 << 20, \
        "size %d vs %d" % (a.f_blocks * a.f_frsize, b.f_blocks * b.f_frsize)


def drop_caches():
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        pass


def t_big(m, e, tmp, results):
    src = os.path.join(tmp, "big.src")
    with open(src, "wb") as f:
        f.write(os.urandom(BIG_MB << 20))
    want = sha256(src)
    t0 = time.monotonic()
    shutil.copyfile(src, os.path.join(m, "big.bin"))
    tw = time.monotonic() - t0
    assert sha256(os.path.join(e, "big.bin")) == want, "the exported file differs"
    drop_caches()
    t0 = time.monotonic()
    shutil.copyfile(os.path.join(m, "big.bin"), os.path.join(tmp, "big.back"))
    tr = time.monotonic() - t0
    assert sha256(os.path.join(tmp, "big.back")) == want, "the file read back differs"
    assert sha256(os.path.join(m, "big.bin")) == want
    results["write"] = (BIG_MB / tw) if tw > 0 else 0
    results["read"] = (BIG_MB / tr) if tr > 0 else 0
    print("     %d MiB: cp in %.1f MiB/s, cp out %.1f MiB/s" % (BIG_MB, results["write"],
                                                               results["read"]), flush=True)
    os.unlink(src)
    os.unlink(os.path.join(tmp, "big.back"))


def t_fsx(m, e, tmp):
    seed = int(os.environ.get("MOUNT_FSX_SEED", str(random.randrange(1 << 31))))
    steps = int(os.environ.get("MOUNT_FSX_STEPS", "2000"))
    print("     fsx: seed %d, %d steps (MOUNT_FSX_SEED=%d to replay)" % (seed, steps, seed),
          flush=True)
    rng = random.Random(seed)
    path, ref_path = os.path.join(m, "fsx.bin"), os.path.join(tmp, "fsx.ref")
    maxlen = 4 << 20
    f = open(path, "w+b")
    ref = open(ref_path, "w+b")
    for step in range(steps):
        op = rng.random()
        size = os.fstat(ref.fileno()).st_size
        if op < 0.40:  # write
            off = rng.randrange(maxlen)
            n = rng.choice([1, 17, 512, 4096, 65536, rng.randrange(1, 300000)])
            n = min(n, maxlen + 65536 - off)
            data = rng.randbytes(n)
            for x in (f, ref):
                x.seek(off)
                x.write(data)
            what = "write %d@%d" % (n, off)
        elif op < 0.70:  # read a range and compare
            if size == 0:
                continue
            off = rng.randrange(size)
            n = rng.randrange(1, min(size - off, 400000) + 1)
            f.flush()
            f.seek(off)
            got = f.read(n)
            ref.seek(off)
            exp = ref.read(n)
            if got != exp:
                raise AssertionError("step %d: read %d@%d differs (seed %d)" % (step, n, off, seed))
            continue
        elif op < 0.80:  # truncate
            n = rng.randrange(maxlen)
            for x in (f, ref):
                x.flush()
                x.truncate(n)
            what = "truncate %d" % n
        elif op < 0.88:  # append
            data = rng.randbytes(rng.randrange(1, 20000))
            for x in (f, ref):
                x.seek(0, 2)
                x.write(data)
            what = "append %d" % len(data)
        elif op < 0.94:  # fsync
            f.flush()
            os.fsync(f.fileno())
            continue
        else:  # close and reopen; the whole file and its size must match
            f.close()
            ref.flush()
            f = open(path, "r+b")
            got, exp = f.read(), open(ref_path, "rb").read()
            if got != exp:
                raise AssertionError("step %d: after reopen, %d vs %d octets, differ (seed %d)"
                                     % (step, len(got), len(exp), seed))
            continue
        del what
    f.close()
    ref.close()
    with open(path, "rb") as x, open(ref_path, "rb") as y:
        assert x.read() == y.read(), "final content differs (seed %d)" % seed
    assert sha256(os.path.join(e, "fsx.bin")) == sha256(ref_path), \
        "the exported file differs after close (seed %d)" % seed


def t_background(exe, srv, mp, tmp):
    t0 = time.monotonic()
    r = subprocess.run([exe, "127.0.0.1:/export", mp, "-o",
                        "port=%d,mountport=%d" % (srv.rdma_port, srv.mnt_port)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, "status %d: %s" % (r.returncode, r.stderr)
    assert mounted(mp), "not mounted after the command returned"
    assert time.monotonic() - t0 < 30
    with open(os.path.join(mp, "bg.txt"), "w") as f:
        f.write("background")
    assert os.path.exists(os.path.join(srv.export, "bg.txt")), \
        "not in the export; mount point lists %s, export %s" % (sorted(os.listdir(mp))[:5],
                                                              sorted(os.listdir(srv.export))[:5])
    with open(os.path.join(srv.export, "bg.txt")) as f:
        assert f.read() == "background"

    def daemons():
        out = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open("/proc/%s/cmdline" % pid, "rb") as f:
                        c = f.read().split(b"\0")
                except OSError:
                    continue
                if c and c[0] == exe.encode() and mp.encode() in c:
                    out.append(int(pid))
        return out

    assert daemons(), "no background process"
    u = subprocess.run(["fusermount3", "-u", mp], capture_output=True, text=True)
    assert u.returncode == 0, u.stderr
    assert wait_for(lambda: not daemons(), 30), "the background process did not end"


def t_portmap(exe, srv, mp, tmp):
    if not portmap_sees_our_ganesha(srv):
        print("     (not checked: rpcbind lists another MOUNT service than this test's)")
        return
    with open(os.path.join(srv.export, "pm.txt"), "w") as f:
        f.write("through rpcbind")
    mnt = Mount(exe, srv, mp, os.path.join(tmp, "portmap.log"))
    try:
        with open(os.path.join(mp, "pm.txt")) as f:
            assert f.read() == "through rpcbind", "another export was mounted"
    finally:
        urc, uerr, rc = mnt.unmount()
    assert urc == 0 and rc == 0, "unmount %d %s, exit %d" % (urc, uerr, rc)


def t_sigint(exe, srv, mp, tmp):
    mnt = Mount(exe, srv, mp, os.path.join(tmp, "sigint.log"), ["mountport=%d" % srv.mnt_port])
    data = os.urandom(3 << 20)
    with open(os.path.join(mp, "sigint.bin"), "wb") as f:
        f.write(data)
    mnt.proc.send_signal(signal.SIGINT)
    rc = mnt.proc.wait(timeout=60)
    mnt.logf.close()
    assert rc == 0, "exit status %d: %s" % (rc, mnt.log_text()[-1500:])
    assert sanitizer_report(mnt.log_text()) is None, sanitizer_report(mnt.log_text())
    assert wait_for(lambda: not mounted(mp), 10), "still mounted"
    with open(os.path.join(srv.export, "sigint.bin"), "rb") as f:
        assert f.read() == data, "the data written before SIGINT is not all there"


def t_verifier(exe, srv, mp, tmp):
    # a wbmax so large that nothing is committed before close
    log = os.path.join(tmp, "verifier.log")
    mnt = Mount(exe, srv, mp, log, ["mountport=%d" % srv.mnt_port, "wbmax=512M"])
    data = os.urandom(8 << 20)
    try:
        f = open(os.path.join(mp, "verf.bin"), "wb")
        f.write(data)
        f.flush()
        time.sleep(1)  # the WRITEs (UNSTABLE) complete; no COMMIT yet
        srv.restart_ganesha()  # a new write verifier
        f.close()  # flush: COMMIT, verifier differs, WRITEs again, COMMIT
        with open(os.path.join(srv.export, "verf.bin"), "rb") as g:
            assert g.read() == data, "the exported file differs"
    finally:
        urc, uerr, rc = mnt.unmount()
    text = mnt.log_text()
    resent = [int(ln.split("resent ")[1].split(";")[0]) for ln in text.splitlines()
              if "resent " in ln]
    assert urc == 0 and rc == 0, "unmount %d, exit %d" % (urc, rc)
    assert "write verifier changed" in text and resent and resent[0] >= 8, \
        "no resend seen: %s" % text[-1500:]
    assert sanitizer_report(text) is None, sanitizer_report(text)


def t_bad_args(exe, srv, mp):
    r = subprocess.run([exe, "127.0.0.1:/export"], capture_output=True, text=True)
    assert r.returncode == 2, "one argument: status %d" % r.returncode
    r = subprocess.run([exe, "-o", "vers=4", "127.0.0.1:/export", mp], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "vers" in r.stderr, "vers=4: %d %s" % (r.returncode, r.stderr)
    r = subprocess.run([exe, "-o", "bogus=1", "127.0.0.1:/export", mp], capture_output=True,
                       text=True)
    assert r.returncode == 2, "unknown option: status %d" % r.returncode
    r = subprocess.run([exe, "-f", "127.0.0.1:/export", mp, "-o",
                        "port=1,mountport=%d" % srv.mnt_port], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, "unreachable NFS/RDMA port: status %d" % r.returncode
    assert "cannot connect" in r.stderr, r.stderr
    r = subprocess.run([exe, "-f", "127.0.0.1:/nonexistent", mp, "-o",
                        "port=%d,mountport=%d" % (srv.rdma_port, srv.mnt_port)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "mount" in r.stderr, "%d %s" % (r.returncode, r.stderr)
    assert not mounted(mp)
    r = subprocess.run([exe, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "actimeo" in r.stdout


def portmap_sees_our_ganesha(srv):
    """rpcbind's MOUNT v3/tcp is this test's ganesha (another one may have registered)"""
    r = subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0] == "100005" and f[1] == "3" and f[2] == "tcp":
            return int(f[3]) == srv.mnt_port
    return False


def sanitizer_report(text):
    for key in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
        if key in text:
            i = text.index(key)
            return text[max(0, i - 200):i + 3000]
    return None


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    exe, gw = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    why = skip_reason()
    if why:
        print("SKIP: " + why)
        return 77
    tmp = tempfile.mkdtemp(prefix="iwnfs-mount-test.")
    os.chmod(tmp, 0o755)  # the permission checks run as uid 65534
    mp = os.path.join(tmp, "mnt")
    os.mkdir(mp)
    results = {}
    try:
        with NfsServer(gw, nfs_port=NFS_PORT, rdma_port=RDMA_PORT) as srv:
            # rpcbind is shared with whatever else runs here (another test's
            # ganesha may register MOUNT over ours): the port is given
            # explicitly, and the rpcbind path has a check of its own
            opts = ["allow_other", "mountport=%d" % srv.mnt_port]
            mnt = Mount(exe, srv, mp, os.path.join(tmp, "iwnfs-mount.log"), opts)
            e = srv.export
            run_check("a_file_written_through_the_mount_is_in_the_export_and_reads_back",
                      t_write_read, mp, e)
            run_check("rename_remove_mkdir_rmdir_behave_as_on_a_local_file_system",
                      t_namespace, mp, e)
            run_check("symlink_and_readlink_round_trip", t_symlink, mp, e)
            run_check("a_hard_link_shares_the_inode_and_counts_links", t_hardlink, mp, e)
            run_check("a_directory_of_1000_entries_lists_completely_with_attributes",
                      t_readdir_1000, mp, e)
            run_check("sparse_writes_read_back_zeros_in_the_holes", t_sparse, mp, e)
            run_check("appends_land_at_the_end", t_append, mp, e)
            run_check("truncation_shrinks_and_extends", t_truncate, mp, e)
            run_check("chmod_is_stored_and_permissions_are_the_servers", t_chmod, mp, e)
            run_check("nfs_errors_become_errno", t_errors, mp, e)
            run_check("statfs_reports_the_exports_file_system", t_statfs, mp, e)
            run_check("a_64_MiB_file_crosses_chunk_and_credit_limits_intact", t_big, mp, e, tmp,
                      results)
            run_check("fsx_random_operations_match_a_local_reference", t_fsx, mp, e, tmp)
            urc, uerr, rc = mnt.unmount()
            log = mnt.log_text()
            check("unmount_with_fusermount3_is_clean_and_exits_0", urc == 0 and rc == 0,
                  "fusermount3 %d (%s), iwnfs-mount %d; log:\n%s" % (urc, uerr, rc, log[-3000:]))
            stats = [ln for ln in log.splitlines() if "stats:" in ln]
            for ln in stats:
                print("     " + ln.split("iwnfs-mount: ", 1)[-1])
            inflight = [int(ln.split("max in flight ")[1].split(";")[0]) for ln in stats
                        if "max in flight" in ln]
            check("several_calls_were_in_flight_at_once", inflight and inflight[0] > 1,
                  "stats: %s" % stats)
            san = sanitizer_report(log) or sanitizer_report(srv.log_tail("gw-server.log", 10**6))
            check("no_sanitizer_report", san is None, san)
            run_check("without_mountport_the_mount_service_is_found_through_rpcbind",
                      t_portmap, exe, srv, mp, tmp)
            run_check("a_changed_write_verifier_makes_the_data_go_again", t_verifier, exe, srv,
                      mp, tmp)
            run_check("sigint_unmounts_and_exits_0_with_the_data_written", t_sigint, exe, srv, mp,
                      tmp)
            run_check("the_background_mount_returns_at_once_and_ends_at_unmount",
                      t_background, exe, srv, mp, tmp)
            run_check("a_bad_command_line_exits_2_and_an_unreachable_server_exits_1",
                      t_bad_args, exe, srv, mp)
            if failed:
                print("--- ganesha log (last lines):\n" + srv.log_tail("ganesha.log"))
                print("--- iwnfsgw server log (last lines):\n" + srv.log_tail("gw-server.log"))
    finally:
        if mounted(mp):
            subprocess.run(["fusermount3", "-u", "-z", mp])
        shutil.rmtree(tmp, ignore_errors=True)
    if results:
        print("throughput: cp in %.1f MiB/s, cp out %.1f MiB/s" % (results["write"],
                                                                  results["read"]))
    print("%d check(s) failed" % len(failed) if failed else "all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
