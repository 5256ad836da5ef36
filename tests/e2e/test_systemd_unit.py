"""The systemd unit (systemd/ocr-daemon.service) and its GPU drop-in.

What is checked, and how:
- ``systemd-analyze verify`` prints nothing, for the unit alone and with the GPU drop-in. It exits 0
  on unknown keys (it only warns), so the tests read its output. It also insists that ExecStart=
  binaries exist, so the unit is verified from a copy whose ``/opt/ocr-daemon/venv/bin/ocr-daemon``
  points at a stub executable (tests/e2e/test_install.py verifies the unit install.sh really installs,
  with the real venv binary).
- ``systemd-analyze security --offline=yes`` rates the unit <= 2.5 (parsed from its last line).
- The keys the issues require, and that they agree with the code (exit code 2 = ExitCode.CONFIG,
  stop timeout above the daemon's drain timeout).
- The seccomp part of the sandbox -- SystemCallFilter= (allow-list minus deny-list, failing with
  SystemCallErrorNumber=), SystemCallArchitectures=native, MemoryDenyWriteExecute= and
  RestrictAddressFamilies= -- is rebuilt from the unit with libseccomp, the same way systemd 252
  builds it, and a workload that does what the daemon does (PyMuPDF render, Pillow, tesserocr,
  the tesseract binary, SQLite WAL, inotify via watchdog, a spawned worker process with an
  RLIMIT_AS limit, numpy) must still work under it. There is no systemd (PID 1) in CI to start the
  real unit, so this is the closest check that the hardening does not break the daemon; the
  mount-namespace options (ProtectSystem=, PrivateTmp=, ...) are not emulated.

This file doubles as the sandbox launcher: ``python tests/e2e/test_systemd_unit.py UNIT [DROPIN...] --
CMD ARGS...`` runs CMD under the unit's seccomp filters.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "ocr-daemon.service"
GPU_DROPIN = REPO / "systemd" / "ocr-daemon.service.d" / "gpu.conf"
NET_DROPIN = REPO / "systemd" / "ocr-daemon.service.d" / "network.conf"
BIN = "/opt/ocr-daemon/venv/bin/ocr-daemon"
MAX_EXPOSURE = 2.5


# --- unit file parsing ------------------------------------------------------------------------


def parse_unit(*paths: Path) -> list[tuple[str, str, str]]:
    """(section, key, value) for every assignment in the files, in order (systemd allows repeats;
    an empty value resets list settings, which callers handle)."""
    out: list[tuple[str, str, str]] = []
    for path in paths:
        section = ""
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            key, sep, value = line.partition("=")
            assert sep, f"{path}: not an assignment: {raw!r}"
            out.append((section, key.strip(), value.strip()))
    return out


def values(entries: list[tuple[str, str, str]], key: str, section: str = "Service") -> list[str]:
    """All values of a list-type key, honouring empty-assignment resets."""
    vals: list[str] = []
    for sec, k, v in entries:
        if sec == section and k == key:
            if v == "":
                vals = []
            else:
                vals.append(v)
    return vals


def last(entries: list[tuple[str, str, str]], key: str, section: str = "Service") -> str | None:
    vals = [v for sec, k, v in entries if sec == section and k == key]
    return vals[-1] if vals else None


def seconds(span: str) -> float:
    """A systemd time span ("90s", "5min", "1h 30min") in seconds."""
    units = {"ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600}
    total = 0.0
    for num, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", span):
        total += float(num) * units[unit or "s"]
    return total


# --- systemd-analyze helpers ------------------------------------------------------------------


def stage_unit(tmp_path: Path, with_gpu: bool = False, extra: str = "", dropins: tuple[Path, ...] = ()) -> Path:
    """Copy the unit (+ drop-ins) into tmp_path, with the ocr-daemon binary pointing at a stub."""
    stub = tmp_path / "bin" / "ocr-daemon"
    stub.parent.mkdir(parents=True, exist_ok=True)
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    unit = tmp_path / "ocr-daemon.service"
    unit.write_text(UNIT.read_text().replace(BIN, str(stub)) + extra)
    for dropin in (GPU_DROPIN,) * with_gpu + dropins:
        d = tmp_path / "ocr-daemon.service.d"
        d.mkdir(exist_ok=True)
        shutil.copy(dropin, d / dropin.name)
    return unit


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    # Drop-ins next to a unit given by path are found because systemd-analyze adds the unit's
    # folder to the search path; run from that folder so nothing else is picked up.
    return subprocess.run(
        ["systemd-analyze", *args], capture_output=True, text=True, timeout=120,
        env={**os.environ, "SYSTEMD_LOG_COLOR": "0", "SYSTEMD_PAGER": ""},
    )


def verify_output(unit: Path) -> str:
    r = analyze("verify", str(unit))
    return (r.stdout + r.stderr).strip() + ("" if r.returncode == 0 else f"\n(exit code {r.returncode})")


def exposure(unit: Path) -> float:
    r = analyze("security", "--offline=yes", str(unit))
    m = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", r.stdout)
    assert m, f"no exposure line in systemd-analyze output:\n{r.stdout}\n{r.stderr}"
    return float(m.group(1))


# --- tests: systemd-analyze -------------------------------------------------------------------


def test_verify_prints_nothing(tmp_path: Path) -> None:
    assert verify_output(stage_unit(tmp_path, with_gpu=False)) == ""


def test_verify_with_gpu_dropin_prints_nothing(tmp_path: Path) -> None:
    assert verify_output(stage_unit(tmp_path, with_gpu=True)) == ""


def test_verify_with_network_dropin_prints_nothing(tmp_path: Path) -> None:
    assert verify_output(stage_unit(tmp_path, dropins=(NET_DROPIN,))) == ""


def test_verify_output_catches_unknown_keys(tmp_path: Path) -> None:
    # The check above is only worth something if verify reports mistakes it does not fail on.
    out = verify_output(stage_unit(tmp_path, with_gpu=False, extra="ProtectSytem=strict\n"))
    assert "ProtectSytem" in out


def test_security_exposure_at_most_2_5(tmp_path: Path) -> None:
    assert exposure(stage_unit(tmp_path, with_gpu=False)) <= MAX_EXPOSURE


def test_security_exposure_with_gpu_dropin_at_most_2_5(tmp_path: Path) -> None:
    base = exposure(stage_unit(tmp_path / "base", with_gpu=False))
    gpu = exposure(stage_unit(tmp_path / "gpu", with_gpu=True))
    # The drop-in is really applied (it opens devices and the network), and still scores well.
    assert base < gpu <= MAX_EXPOSURE


def test_security_exposure_with_network_dropin_at_most_2_5(tmp_path: Path) -> None:
    base = exposure(stage_unit(tmp_path / "base"))
    net = exposure(stage_unit(tmp_path / "net", dropins=(NET_DROPIN,)))
    assert base < net <= MAX_EXPOSURE


# --- tests: required keys ---------------------------------------------------------------------


def test_unit_has_required_keys() -> None:
    from daemon.config import DaemonCfg
    from daemon.errors import ExitCode

    u = parse_unit(UNIT)
    assert last(u, "Type") == "notify"
    assert last(u, "NotifyAccess") == "main"
    assert last(u, "User") == "ocr-daemon"
    assert last(u, "Restart") == "on-failure"
    # A config error must not restart-loop: the exit code the CLI uses for it is prevented.
    prevented = " ".join(values(u, "RestartPreventExitStatus")).split()
    assert str(int(ExitCode.CONFIG)) in prevented
    assert values(u, "ExecStartPre") == [f"{BIN} check-config --config /etc/ocr-daemon/rules.yaml"]
    assert last(u, "ExecStart") == f"{BIN} run --config /etc/ocr-daemon/rules.yaml"
    assert last(u, "ExecReload") == "/bin/kill -HUP $MAINPID"
    assert last(u, "KillSignal") == "SIGTERM"
    assert seconds(last(u, "WatchdogSec") or "0") > 0
    # SIGTERM drains for daemon.drain_timeout; systemd must not SIGKILL before that.
    assert seconds(last(u, "TimeoutStopSec") or "0") > DaemonCfg().drain_timeout
    assert last(u, "WantedBy", "Install") == "multi-user.target"


def test_unit_hardening_keys() -> None:
    u = parse_unit(UNIT)
    assert last(u, "ProtectSystem") == "strict"
    rw = " ".join(values(u, "ReadWritePaths")).split()
    assert "/var/lib/ocr-daemon" in rw and "/srv/ocr" in rw
    assert last(u, "StateDirectory") == "ocr-daemon"
    assert values(u, "CapabilityBoundingSet") == []
    assert any(s == "Service" and k == "CapabilityBoundingSet" and v == "" for s, k, v in u)
    for key in ("ProtectHome", "PrivateTmp", "NoNewPrivileges", "PrivateDevices", "ProtectKernelTunables",
                "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups", "ProtectClock",
                "ProtectHostname", "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID",
                "LockPersonality", "MemoryDenyWriteExecute"):
        assert last(u, key) == "yes", key
    assert values(u, "SystemCallFilter")[0] == "@system-service"
    assert last(u, "SystemCallArchitectures") == "native"
    # internet sockets only for daemon.http, and the IP firewall lets them reach loopback only
    assert last(u, "RestrictAddressFamilies") == "AF_UNIX AF_INET AF_INET6"
    assert values(u, "IPAddressDeny") == ["any"]
    assert values(u, "IPAddressAllow") == ["localhost"]
    assert last(u, "MemoryMax")


def test_gpu_dropin_opens_only_nvidia_nodes() -> None:
    u = parse_unit(UNIT, GPU_DROPIN)
    assert last(u, "PrivateDevices") == "no"
    assert last(u, "DevicePolicy") == "closed"
    nodes = [v.split()[0] for v in values(u, "DeviceAllow")]
    assert set(nodes) == {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                          "/dev/nvidia-modeset", "/dev/nvidia0"}
    assert last(u, "MemoryDenyWriteExecute") == "no"
    # Everything else of the base hardening is kept.
    assert last(u, "ProtectSystem") == "strict" and last(u, "NoNewPrivileges") == "yes"
    assert values(u, "SystemCallFilter")[0] == "@system-service"


# --- seccomp emulation ------------------------------------------------------------------------
# systemd 252 (src/shared/seccomp-util.c) builds, per option, one seccomp filter for the native
# architecture: SystemCallFilter= an allow-list with SystemCallErrorNumber= as default action;
# MemoryDenyWriteExecute= denies mmap(PROT_WRITE|PROT_EXEC), mprotect/pkey_mprotect(PROT_EXEC)
# and shmat(SHM_EXEC) with EPERM; RestrictAddressFamilies= denies socket() for other families
# with EAFNOSUPPORT.

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_LT = 2
SCMP_CMP_EQ = 4
SCMP_CMP_GT = 6
SCMP_CMP_MASKED_EQ = 7
PROT_WRITE, PROT_EXEC = 0x2, 0x4
SHM_EXEC = 0o100000
AF = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16}


def scmp_act_errno(e: int) -> int:
    return 0x00050000 | (e & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def syscall_group(name: str, _seen: set[str] | None = None) -> set[str]:
    """The syscalls of a systemd group such as @system-service, nested groups expanded."""
    seen = _seen if _seen is not None else set()
    if name in seen:
        return set()
    seen.add(name)
    cache = os.environ.get("SYSCALL_GROUPS_JSON")  # for machines without systemd-analyze
    if cache:
        return set(json.loads(Path(cache).read_text())[name])
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True,
                         text=True, check=True).stdout
    result: set[str] = set()
    for line in out.splitlines()[1:]:
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        result |= syscall_group(item, seen) if item.startswith("@") else {item}
    return result


def allowed_syscalls(entries: list[tuple[str, str, str]]) -> set[str]:
    """The effective SystemCallFilter= set (allow-list assignments minus ~deny-list ones)."""
    allowed: set[str] = set()
    for value in values(entries, "SystemCallFilter"):
        deny = value.startswith("~")
        names: set[str] = set()
        for item in value.lstrip("~").split():
            names |= syscall_group(item) if item.startswith("@") else {item}
        allowed = allowed - names if deny else allowed | names
    return allowed


def _errno_number(name: str) -> int:
    return int(getattr(errno, name)) if not name.isdigit() else int(name)


def load_filters(entries: list[tuple[str, str, str]]) -> None:
    """Install in this process the seccomp filters systemd would install for these settings."""
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]

    def nr(name: str) -> int:
        return int(lib.seccomp_syscall_resolve_name(name.encode()))

    def rule(ctx: int, action: int, name: str, *cmps: tuple[int, int, int, int]) -> None:
        n = nr(name)
        if n < 0:  # not a syscall on this architecture (e.g. mmap2 on x86_64)
            return
        arr = (_ArgCmp * max(1, len(cmps)))(*[_ArgCmp(*c) for c in cmps])
        rc = lib.seccomp_rule_add_array(ctx, action, n, len(cmps), arr)
        assert rc == 0, f"seccomp_rule_add {name}: {rc}"

    def load(ctx: int) -> None:
        rc = lib.seccomp_load(ctx)
        assert rc == 0, f"seccomp_load: {rc}"

    if last(entries, "MemoryDenyWriteExecute") == "yes":
        ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
        eperm = scmp_act_errno(errno.EPERM)
        wx = PROT_WRITE | PROT_EXEC
        rule(ctx, eperm, "mmap", (2, SCMP_CMP_MASKED_EQ, wx, wx))
        rule(ctx, eperm, "mmap2", (2, SCMP_CMP_MASKED_EQ, wx, wx))
        rule(ctx, eperm, "mprotect", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
        rule(ctx, eperm, "pkey_mprotect", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
        rule(ctx, eperm, "shmat", (2, SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC))
        load(ctx)

    families = " ".join(values(entries, "RestrictAddressFamilies")).split()
    if families:
        ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
        # As systemd does: deny socket(domain) below the first and above the last family listed,
        # and each hole in between (libseccomp allows one comparison per argument and rule).
        allowed_af = sorted(AF[f] for f in families)
        eafnosupport = scmp_act_errno(errno.EAFNOSUPPORT)
        rule(ctx, eafnosupport, "socket", (0, SCMP_CMP_LT, allowed_af[0], 0))
        rule(ctx, eafnosupport, "socket", (0, SCMP_CMP_GT, allowed_af[-1], 0))
        for af in range(allowed_af[0] + 1, allowed_af[-1]):
            if af not in allowed_af:
                rule(ctx, eafnosupport, "socket", (0, SCMP_CMP_EQ, af, 0))
        load(ctx)

    allowed = allowed_syscalls(entries)
    if allowed:
        err = last(entries, "SystemCallErrorNumber")
        default = scmp_act_errno(_errno_number(err)) if err else 0x80000000  # KILL_PROCESS
        ctx = lib.seccomp_init(default)  # native architecture only = SystemCallArchitectures=native
        for name in sorted(allowed):
            rule(ctx, SCMP_ACT_ALLOW, name)
        load(ctx)


def sandbox_exec(argv: list[str]) -> None:
    """``UNIT [DROPIN...] -- CMD...``: load the unit's seccomp filters, then exec CMD."""
    sep = argv.index("--")
    files, cmd = [Path(a) for a in argv[:sep]], argv[sep + 1:]
    entries = parse_unit(*files)
    if last(entries, "NoNewPrivileges") == "yes":
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
    load_filters(entries)
    os.execvp(cmd[0], cmd)


# The workload: what the daemon's processes do, each step checked. Run by the venv's Python.
WORKLOAD = textwrap.dedent(
    r'''
    import mmap, multiprocessing as mp, os, resource, socket, sqlite3, subprocess, sys, time
    from pathlib import Path

    import fitz  # PyMuPDF
    import numpy
    import tesserocr
    from PIL import Image

    import daemon.config, daemon.models  # the package itself imports


    def child(q):  # a render child: memory-limited, numpy works in it
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        q.put(float(numpy.arange(10).sum()))


    def main(work):
        # 1. A real PDF rendered with PyMuPDF, as the render stage does.
        doc = fitz.open()
        page = doc.new_page()
        page.insert_text((72, 100), "Invoice number 4711", fontsize=28)
        doc.save(work / "in.pdf")
        pix = fitz.open(work / "in.pdf")[0].get_pixmap(dpi=150)
        img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
        img.save(work / "page.png")

        # 2. tesserocr in-process and the tesseract binary as a subprocess.
        with tesserocr.PyTessBaseAPI(path="/usr/share/tesseract-ocr/5/tessdata", lang="eng") as api:
            api.SetImage(img)
            text = api.GetUTF8Text()
        assert "4711" in text, text
        out = subprocess.run(["tesseract", str(work / "page.png"), "-", "-l", "eng"],
                             capture_output=True, text=True, check=True).stdout
        assert "4711" in out, out

        # 3. SQLite in WAL mode (the journal), with fsync of the folder.
        db = sqlite3.connect(work / "journal.db")
        assert db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
        db.execute("CREATE TABLE t (x)")
        db.execute("INSERT INTO t VALUES (1)")
        db.commit()
        fd = os.open(work, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)

        # 4. inotify through watchdog: an event for a file dropped into the folder.
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers.inotify import InotifyObserver
        seen = []

        class H(FileSystemEventHandler):
            def on_any_event(self, e):
                seen.append(e.src_path)

        inbox = work / "inbox"
        inbox.mkdir()
        obs = InotifyObserver()
        obs.schedule(H(), str(inbox))
        obs.start()
        (inbox / "drop.pdf").write_bytes(b"%PDF-1.4")
        for _ in range(100):
            if seen:
                break
            time.sleep(0.05)
        obs.stop()
        obs.join()
        assert seen, "no inotify event"

        # 5. A spawned worker process with a memory limit (render children).
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        assert q.get(timeout=60) == 45.0
        p.join()
        assert p.exitcode == 0

        # 6. The sandbox is really there (so this workload can fail): no W+X memory with
        #    MemoryDenyWriteExecute=yes; RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 allows a
        #    loopback listener (daemon.http) and denies other families (netlink, packet).
        if os.environ.get("EXPECT_MDWE") == "1":
            try:
                mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
                raise SystemExit("W+X mapping was allowed")
            except PermissionError:
                pass
        if os.environ.get("EXPECT_UNIX_INET_ONLY") == "1":
            try:
                socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)
                raise SystemExit("AF_NETLINK socket was allowed")
            except OSError:
                pass
            srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            srv.bind(("127.0.0.1", 0))
            srv.listen()
            srv.close()
        a, b = socket.socketpair(socket.AF_UNIX)
        a.close()
        b.close()
        print("WORKLOAD OK")


    if __name__ == "__main__":
        main(Path(sys.argv[1]))
    '''
)


def run_sandboxed(tmp_path: Path, files: list[Path], cmd: list[str],
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, __file__, *map(str, files), "--", *cmd],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "OMP_THREAD_LIMIT": "1", **(env or {})},
    )


def test_daemon_workload_runs_under_the_units_seccomp_filters(tmp_path: Path) -> None:
    script = tmp_path / "workload.py"
    script.write_text(WORKLOAD)
    (tmp_path / "w").mkdir()
    r = run_sandboxed(tmp_path, [UNIT], [sys.executable, str(script), str(tmp_path / "w")],
                      env={"EXPECT_MDWE": "1", "EXPECT_UNIX_INET_ONLY": "1"})
    assert r.returncode == 0 and "WORKLOAD OK" in r.stdout, r.stdout + r.stderr


def test_sandbox_denies_what_the_unit_denies(tmp_path: Path) -> None:
    # Calls from @privileged/@resources fail with EPERM under the filter, work without it.
    code = ("import os\n"
            "try:\n    os.setpriority(os.PRIO_PROCESS, 0, 10); print('allowed')\n"
            "except PermissionError:\n    print('denied')\n")
    r = run_sandboxed(tmp_path, [UNIT], [sys.executable, "-c", code])
    assert r.stdout.strip() == "denied", r.stdout + r.stderr
    r = run_sandboxed(tmp_path, [UNIT, GPU_DROPIN], [sys.executable, "-c", code])
    assert r.stdout.strip() == "allowed", r.stdout + r.stderr


def test_check_config_runs_under_the_units_seccomp_filters(tmp_path: Path) -> None:
    rules = REPO / "rules.yaml"
    cli = Path(sys.executable).with_name("ocr-daemon")
    r = run_sandboxed(tmp_path, [UNIT], [str(cli), "check-config", "--config", str(rules)])
    assert r.returncode == 0, r.stdout + r.stderr


class NotifySocket:
    """A NOTIFY_SOCKET like systemd's: an AF_UNIX datagram socket whose messages a thread drains
    all the time, as PID 1 does (sd_notify blocks once the socket's small queue is full)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.2)
        self.messages: list[str] = []
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while not self._closed.is_set():
            with contextlib.suppress(TimeoutError):
                self.messages.append(self.sock.recv(4096).decode())

    def lines(self) -> list[str]:
        return [line for m in list(self.messages) for line in m.splitlines()]

    def wait_for(self, wanted: str, timeout: float, proc: subprocess.Popen[str]) -> None:
        """Wait until a message has the line ``wanted`` (e.g. READY=1)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if wanted in self.lines():
                return
            if proc.poll() is not None:
                raise AssertionError(f"daemon exited {proc.returncode} before {wanted}; got {self.messages}")
            time.sleep(0.1)
        raise AssertionError(f"no {wanted} within {timeout}s; got {self.messages}")

    def close(self) -> None:
        self._closed.set()
        self._thread.join()
        self.sock.close()


def test_daemon_runs_under_the_unit_sandbox_and_speaks_sd_notify(tmp_path: Path) -> None:
    """``ocr-daemon run`` under the unit's seccomp filters, with a NOTIFY_SOCKET and a watchdog as
    systemd sets them: READY=1 after start, WATCHDOG=1 while idle, the HTTP endpoint answering on
    loopback, a dropped PDF OCRed, RELOADING=1 + READY=1 on SIGHUP, STOPPING=1 and exit code 0 on
    SIGTERM. (IPAddressAllow=/IPAddressDeny= are a cgroup BPF firewall, not emulated here.)"""
    import http.client
    import re

    import docgen
    from conftest import daemon_env, sidecars, wait_for, with_http, write_rules

    rules = with_http(write_rules(tmp_path))
    notify = NotifySocket(tmp_path / "notify.sock")
    env = {**daemon_env(), "NOTIFY_SOCKET": str(notify.path), "WATCHDOG_USEC": "2000000"}
    log = (tmp_path / "daemon.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, __file__, str(UNIT), "--", sys.executable, "-m", "daemon", "run", "--config", str(rules)],
        stdout=log, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO,
        start_new_session=True,  # its own process group: render workers are cleaned up with it
    )
    try:
        notify.wait_for("READY=1", 120, proc)
        notify.wait_for("WATCHDOG=1", 10, proc)  # idle: pings go on (half of WATCHDOG_USEC)
        port = re.search(r"http endpoint listening on http://127.0.0.1:(\d+)", (tmp_path / "daemon.log").read_text())
        assert port, "no http endpoint"
        conn = http.client.HTTPConnection("127.0.0.1", int(port.group(1)), timeout=30)
        conn.request("GET", "/healthz/ready")
        assert conn.getresponse().status == 200
        conn.close()
        docgen.make_pdf(tmp_path / "drop.pdf", ["Invoice number 4711\n\nTotal due: 120.00 EUR"], scanned=True)
        (tmp_path / "drop.pdf").rename(tmp_path / "inbox" / "drop.pdf")
        cars = wait_for(lambda: sidecars(tmp_path / "inbox"), 120, "the sidecar of drop.pdf")
        assert cars[0]["pages"], cars
        assert any(m.startswith("STATUS=") for m in notify.messages)
        proc.send_signal(signal.SIGHUP)
        notify.wait_for("RELOADING=1", 30, proc)
        proc.send_signal(signal.SIGTERM)
        notify.wait_for("STOPPING=1", 30, proc)
        assert proc.wait(timeout=60) == 0
        # READY=1 again after the reload, before STOPPING=1.
        flat = notify.lines()
        assert "READY=1" in flat[flat.index("RELOADING=1"):flat.index("STOPPING=1")]
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- daemon log ---\n{(tmp_path / 'daemon.log').read_text()}") from None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
        notify.close()
    text = (tmp_path / "daemon.log").read_text()
    assert "Operation not permitted" not in text, text


if __name__ == "__main__":
    sandbox_exec(sys.argv[1:])
