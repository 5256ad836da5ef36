"""install.sh, run for real into a staging root (``--root DIR --no-apt``).

The module fixture performs one complete staged install the way a user's machine gets it: a
fresh venv, the package built from this checkout and installed with all its dependencies by pip
(from the package index, or pip's cache) -- no ``--no-deps``, no reuse of the test venv. That
install is then checked from the outside: the venv's ``ocr-daemon`` runs ``--help``,
``check-config`` on the installed rules.yaml, and OCRs a real PDF dropped into the staged inbox
(``once``); the staged unit passes ``systemd-analyze verify`` with its real ExecStart binary.

Later runs on the same root test what a re-install must do (idempotence, the conffile rules for
rules.yaml); they reinstall the package too (a few seconds: dependencies are already there). The
``--gpu`` run uses ``--pip-args --no-deps`` so that it does not download vLLM and torch: it checks
the drop-in and the [vllm] extra request, not vLLM itself (the GPU engine has its own tests).

What a real (non-staged) install does to the system -- apt, useradd, chown, systemctl -- cannot
run in CI; the staged run records those commands in ``opt/ocr-daemon/staged-actions.txt``, which
is checked here, and this module checks that nothing outside the staging root was touched.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "install.sh"
TARGET_PREFIXES = ("/opt/ocr-daemon", "/etc/ocr-daemon", "/srv/ocr", "/var/lib/ocr-daemon")
SYSTEM_PATHS = ("/opt/ocr-daemon", "/etc/ocr-daemon", "/srv/ocr", "/var/lib/ocr-daemon", "/var/log/ocr-daemon",
                "/etc/systemd/system/ocr-daemon.service", "/usr/local/bin/ocr-daemon")


def run_install(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "VIRTUAL_ENV")}
    return subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def staged(root: Path, text: str) -> str:
    """``text`` with the target paths rewritten into ``root``, as install.sh --root does."""
    pattern = "|".join(re.escape(p) for p in TARGET_PREFIXES)
    return re.sub(f"({pattern})", lambda m: f"{root}{m.group(1)}", text)


def user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def system_state() -> dict[str, bool]:
    """What of the real system install.sh could have touched (must not change with --root)."""
    return {**{p: os.path.lexists(p) for p in SYSTEM_PATHS}, "user": user_exists("ocr-daemon")}


@dataclass
class Staged:
    root: Path
    result: subprocess.CompletedProcess[str]
    system_before: dict[str, bool]

    @property
    def venv(self) -> Path:
        return self.root / "opt/ocr-daemon/venv"

    @property
    def cli(self) -> Path:
        return self.venv / "bin" / "ocr-daemon"

    @property
    def link(self) -> Path:
        return self.root / "usr/local/bin/ocr-daemon"

    @property
    def conf(self) -> Path:
        return self.root / "etc/ocr-daemon/rules.yaml"

    @property
    def unit(self) -> Path:
        return self.root / "etc/systemd/system/ocr-daemon.service"

    def default_conf(self) -> str:
        return staged(self.root, (REPO / "rules.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Staged]:
    root = tmp_path_factory.mktemp("stage") / "root"
    before = system_state()
    result = run_install("--root", str(root), "--no-apt", "--no-gpu")
    assert result.returncode == 0, result.stdout + result.stderr
    yield Staged(root, result, before)
    shutil.rmtree(root, ignore_errors=True)


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "VIRTUAL_ENV", "PYTHONPATH")}
    env["OMP_THREAD_LIMIT"] = "1"
    return env


def run_cli(s: Staged, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # cwd=/ so that nothing from the checkout can be imported by accident: the venv must be complete.
    return subprocess.run([str(s.cli), *args], capture_output=True, text=True, timeout=timeout,
                          env=cli_env(), cwd="/")


# --- fast: options -----------------------------------------------------------------------------


def test_help_lists_the_options() -> None:
    r = run_install("--help")
    assert r.returncode == 0, r.stderr
    for opt in ("--root DIR", "--no-apt", "--no-start", "--gpu", "--no-gpu", "--pip-args", "--python"):
        assert opt in r.stdout, opt
    assert r.stdout.startswith("Usage:")


def test_unknown_option_is_refused() -> None:
    r = run_install("--frobnicate")
    assert r.returncode != 0
    assert "unknown option: --frobnicate" in r.stderr


def test_system_install_needs_root(tmp_path: Path) -> None:
    before = system_state()
    cmd = ["bash", str(INSTALL), "--no-apt", "--no-start"]
    if os.geteuid() == 0:  # run it as nobody: without --root it must refuse before doing anything
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 1
    assert "must run as root" in r.stderr
    assert system_state() == before


# --- slow: the staged install --------------------------------------------------------------------


@pytest.mark.slow
def test_staged_install_tree(install: Staged) -> None:
    s = install
    assert s.cli.is_file() and os.access(s.cli, os.X_OK)
    # A real, non-editable install: the package is imported from the venv, not from the checkout.
    r = subprocess.run([str(s.venv / "bin/python"), "-c", "import daemon; print(daemon.__file__)"],
                       capture_output=True, text=True, env=cli_env(), cwd="/", check=True)
    assert r.stdout.strip().startswith(str(s.venv / "lib")), r.stdout
    # Config: the shipped default, paths pointing inside the root; the pristine copy kept.
    assert s.conf.read_text(encoding="utf-8") == s.default_conf()
    assert (s.root / "opt/ocr-daemon/rules.yaml.default").read_text(encoding="utf-8") == s.default_conf()
    assert stat.S_IMODE(s.conf.stat().st_mode) == 0o640
    assert not (s.conf.parent / "rules.yaml.dist-new").exists()
    # Unit: the repo's unit with paths inside the root; no GPU drop-in without --gpu.
    unit_src = (REPO / "systemd/ocr-daemon.service").read_text(encoding="utf-8")
    assert s.unit.read_text(encoding="utf-8") == staged(s.root, unit_src)
    assert f"ExecStart={s.cli} run --config {s.conf}" in s.unit.read_text(encoding="utf-8")
    assert not (s.unit.parent / "ocr-daemon.service.d/gpu.conf").exists()
    # Folders and modes.
    srv = s.root / "srv/ocr"
    modes = {p: stat.S_IMODE((srv / p).stat().st_mode) for p in ("inbox", "archive", "failed")}
    assert modes == {"inbox": 0o2775, "archive": 0o2750, "failed": 0o2750}
    assert stat.S_IMODE((s.root / "var/lib/ocr-daemon").stat().st_mode) == 0o750
    assert (s.root / "opt/ocr-daemon/README.md").is_file()
    # The system changes a real install makes are recorded, not made.
    actions = (s.root / "opt/ocr-daemon/staged-actions.txt").read_text()
    if not s.system_before["user"]:
        assert re.search(r"^useradd --system .*--shell /usr/sbin/nologin .*ocr-daemon $", actions, re.M)
    assert f"chown ocr-daemon:ocr-daemon {srv} {srv}/inbox" in actions
    for cmd in ("systemctl daemon-reload", "systemctl enable ocr-daemon.service"):
        assert cmd in actions
    assert system_state() == s.system_before
    assert "staged install" in s.result.stdout


@pytest.mark.slow
def test_installed_cli_runs_help_and_check_config(install: Staged) -> None:
    r = run_cli(install, "--help")
    assert r.returncode == 0, r.stderr
    assert "check-config" in r.stdout
    r = run_cli(install, "check-config", "--config", str(install.conf))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout


@pytest.mark.slow
def test_the_command_is_on_path_through_a_link_to_the_venv(install: Staged) -> None:
    """`ocr-daemon status` and the other README examples work after the install: the command is
    linked into usr/local/bin (inside the staging root here) and runs the installed venv."""
    assert install.link.is_symlink()
    assert os.readlink(install.link) == str(install.cli)
    env = {**cli_env(), "PATH": f"{install.link.parent}:/usr/bin:/bin"}
    r = subprocess.run(["ocr-daemon", "status", "--config", str(install.conf)], capture_output=True, text=True,
                       env=env, cwd="/", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "journal:" in r.stdout
    assert f"command: {install.link} -> {install.cli}" in install.result.stdout


@pytest.mark.slow
def test_installed_check_config_rejects_a_broken_config(install: Staged, tmp_path: Path) -> None:
    bad = tmp_path / "rules.yaml"
    text, n = re.subn(r"^(\s*)workers:[^#\n]*", r"\1workers: many ", install.conf.read_text(encoding="utf-8"),
                      count=1, flags=re.M)
    assert n == 1
    bad.write_text(text)
    r = run_cli(install, "check-config", "--config", str(bad))
    assert r.returncode == 2, r.stdout + r.stderr  # = RestartPreventExitStatus in the unit
    assert "workers" in r.stderr


@pytest.mark.slow
def test_installed_daemon_ocrs_a_pdf_inside_the_root(install: Staged, tmp_path: Path) -> None:
    """The staged tree works on its own: the installed package, config and folders OCR a PDF and
    route it, and everything it writes stays inside the root."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import docgen

    inbox = install.root / "srv/ocr/inbox"
    src = docgen.make_pdf(tmp_path / "letter.pdf", ["Dear Sir or Madam,\n\nthank you for your letter."],
                          scanned=True)
    shutil.move(src, inbox / "letter.pdf")
    r = run_cli(install, "once", str(inbox / "letter.pdf"), "--config", str(install.conf), "--engine", "tesseract")
    assert r.returncode == 0, r.stdout + r.stderr
    cars = list((install.root / "srv/ocr").rglob("letter.json"))
    assert cars, r.stdout
    # The journal went into the staged state dir.
    assert any((install.root / "var/lib/ocr-daemon").iterdir())
    assert system_state() == install.system_before


@pytest.mark.slow
def test_staged_unit_verifies_with_the_real_binary(install: Staged) -> None:
    r = subprocess.run(["systemd-analyze", "verify", str(install.unit)], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "SYSTEMD_LOG_COLOR": "0"})
    assert (r.stdout + r.stderr).strip() == "" and r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_reinstall_is_idempotent_and_keeps_an_edited_config(install: Staged) -> None:
    s = install
    dist_new = s.conf.with_name("rules.yaml.dist-new")
    default = s.default_conf()

    # 1. Again, unchanged: nothing to do for the config, everything still in place; the package
    #    is installed again from the checkout (an upgrade replaces the code of the same version).
    # (daemon/cli.py: a module that stays where it is; daemon/config.py became a package)
    installed = next((s.venv / "lib").glob("python3*/site-packages")) / "daemon/cli.py"
    installed.write_text("# an older release\n")
    r = run_install("--root", str(s.root), "--no-apt", "--no-gpu")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "is the current default" in r.stdout
    assert installed.read_bytes() == (REPO / "daemon/cli.py").read_bytes()
    assert s.conf.read_text(encoding="utf-8") == default and not dist_new.exists()
    assert run_cli(s, "check-config", "--config", str(s.conf)).returncode == 0

    try:
        # 2. The admin edited rules.yaml: it is kept byte for byte, the new default goes beside it.
        edited = re.sub(r"^(\s*)workers:[^#\n]*", r"\1workers: 1 ", default, count=1, flags=re.M) + "# local edit\n"
        s.conf.write_text(edited, encoding="utf-8")
        r = run_install("--root", str(s.root), "--no-apt", "--no-gpu")
        assert r.returncode == 0, r.stdout + r.stderr
        assert s.conf.read_text(encoding="utf-8") == edited
        assert dist_new.read_text(encoding="utf-8") == default
        assert "rules.yaml.dist-new" in r.stdout

        # 3. An unedited config from an older release (equal to the default installed then) is
        #    updated to the new default, and a stale .dist-new is removed.
        old_default = default.replace("# ocr-daemon configuration", "# ocr-daemon configuration (old)", 1)
        s.conf.write_text(old_default, encoding="utf-8")
        (s.root / "opt/ocr-daemon/rules.yaml.default").write_text(old_default, encoding="utf-8")
        r = run_install("--root", str(s.root), "--no-apt", "--no-gpu")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "was not edited; updating it" in r.stdout
        assert s.conf.read_text(encoding="utf-8") == default
        assert not dist_new.exists()
    finally:
        s.conf.write_text(default, encoding="utf-8")
        dist_new.unlink(missing_ok=True)


@pytest.mark.slow
def test_gpu_install_adds_the_dropin(install: Staged) -> None:
    s = install
    dropin = s.unit.parent / "ocr-daemon.service.d/gpu.conf"
    try:
        # --no-deps: the request for the [vllm] extra is checked, vLLM/torch are not downloaded.
        r = run_install("--root", str(s.root), "--no-apt", "--gpu", "--pip-args", "--no-deps")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "[vllm] extra" in r.stdout
        text = dropin.read_text(encoding="utf-8")
        src = (REPO / "systemd/ocr-daemon.service.d/gpu.conf").read_text(encoding="utf-8")
        assert text.startswith(staged(s.root, src))
        assert f"HF_HOME={s.root}/var/lib/ocr-daemon/huggingface" in text
        # One extra DeviceAllow line per further GPU of this machine (and the nodes' group where
        # they are not world-accessible; host-memory limits for several GPUs), nothing else added.
        extra = text[len(staged(s.root, src)):].splitlines()
        assert all(re.fullmatch(r"DeviceAllow=/dev/nvidia[1-9][0-9]* rw|SupplementaryGroups=\S+|Memory(High|Max)=\d+G", line)
                   for line in extra), extra
        v = subprocess.run(["systemd-analyze", "verify", str(s.unit)], capture_output=True, text=True,
                           timeout=120, env={**os.environ, "SYSTEMD_LOG_COLOR": "0"})
        assert (v.stdout + v.stderr).strip() == "", v.stdout + v.stderr
        assert run_cli(s, "check-config", "--config", str(s.conf)).returncode == 0
    finally:
        dropin.unlink(missing_ok=True)


# --- slow: a real install, in a private mount namespace -----------------------------------------

REAL_INSTALL = r"""
set -euo pipefail
T=$1; PDF=$2
# Private copies (overlays) of what a real install writes; they vanish with this namespace and
# the changes stay readable in $T/ovl/*/up afterwards.
for d in etc opt srv var/lib var/log usr/local; do
  n=${d//\//_}; mkdir -p "$T/ovl/$n/up" "$T/ovl/$n/work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$T/ovl/$n/up,workdir=$T/ovl/$n/work" "/$d"
done
bash "$INSTALL" --no-apt --no-gpu >"$T/install.out" 2>&1
# The command install.sh prints (no systemd here), run as printed -- detached (setsid -f), as
# ocr-daemon, with its log file and pid file -- under the unit's seccomp filters.
cmd=$(sed -n 's/^==>   setsid -f setpriv /setsid -f setpriv /p' "$T/install.out")
[ -n "$cmd" ]
read -r -a argv <<<"$cmd"
# argv = setsid -f setpriv OPTS(3) /opt/ocr-daemon/venv/bin/ocr-daemon run --config C --log-file L
# --pid-file P: the sandbox launcher goes between setpriv's options and the daemon command.
n=${#argv[@]}
opt() { local i; for ((i = 0; i < n - 1; i++)); do [ "${argv[i]}" != "$1" ] || echo "${argv[i + 1]}"; done; }
PIDF=$(opt --pid-file); LOGF=$(opt --log-file)
"${argv[@]:0:2}" env OMP_THREAD_LIMIT=1 "${argv[@]:2:4}" /opt/ocr-daemon/venv/bin/python "$LAUNCHER" \
  /etc/systemd/system/ocr-daemon.service -- "${argv[@]:6:$n}"
echo "setsid returned $?" >"$T/detached.txt"   # at once: the daemon runs on in its own session
for _ in $(seq 600); do [ -s "$PIDF" ] && break; sleep 0.1; done
pid=$(cat "$PIDF")
trap 'kill -KILL -- -$pid 2>/dev/null || true' EXIT
cp "$PDF" /srv/ocr/inbox/.letter.tmp && mv /srv/ocr/inbox/.letter.tmp /srv/ocr/inbox/letter.pdf
for _ in $(seq 1200); do
  find /srv/ocr -name 'letter.json' | grep -q . && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
kill -TERM $pid
for _ in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && echo "daemon still running" >>"$T/detached.txt"
[ -e "$PIDF" ] || echo "pid file removed" >>"$T/detached.txt"
stat -c '%U:%G %a' "$LOGF" >>"$T/detached.txt"
cp "$LOGF" "$T/daemon.log"
find /srv/ocr /var/lib/ocr-daemon -printf '%p %u:%g %m\n' | sort >"$T/tree.txt"
getent passwd ocr-daemon >"$T/passwd.txt"
{ readlink /usr/local/bin/ocr-daemon; PATH=/usr/local/bin:/usr/bin:/bin ocr-daemon --version; } >"$T/path.txt" 2>&1
"""


def _can_overlay(tmp: Path) -> bool:
    probe = ("set -e; mkdir -p $0/u $0/w $0/m $0/l; "
             "mount -t overlay overlay -o lowerdir=$0/l,upperdir=$0/u,workdir=$0/w $0/m")
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", probe, str(tmp)],
                       capture_output=True, text=True, timeout=30)
    return r.returncode == 0


@pytest.mark.slow
def test_real_install_runs_as_the_service_user(tmp_path: Path) -> None:
    """``install.sh --no-apt`` for real (user, chown, /opt, /etc, /srv, /var/lib), made harmless by
    running it in a private mount namespace over overlays of those folders; then the command it
    prints (detached, with a log file and a pid file) runs the daemon as ``ocr-daemon`` under the
    unit's seccomp filters, stopped with ``kill $(cat PIDFILE)``, and a
    PDF dropped into /srv/ocr/inbox (owned by root, like a file from another user) is OCRed."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or not _can_overlay(tmp_path / "probe"):
        pytest.skip("needs root with mount namespaces and overlayfs")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import docgen

    pdf = docgen.make_pdf(tmp_path / "letter.pdf",
                          ["Dear Sir or Madam,\n\nthank you for your letter of 3 March."], scanned=True)
    pdf.chmod(0o644)
    before = system_state()
    env = {**os.environ, "INSTALL": str(INSTALL), "LAUNCHER": str(REPO / "tests/e2e/test_systemd_unit.py")}
    env.pop("VIRTUAL_ENV", None)
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", REAL_INSTALL, "real",
                        str(tmp_path), str(pdf)], capture_output=True, text=True, timeout=900, env=env)
    out = {n: (tmp_path / n).read_text() if (tmp_path / n).exists() else "" for n in
           ("install.out", "daemon.log", "tree.txt", "passwd.txt", "path.txt", "detached.txt")}
    report = f"{r.stdout}{r.stderr}\n" + "\n".join(f"--- {k} ---\n{v}" for k, v in out.items())
    assert r.returncode == 0, report
    # The user: a system account without a login shell, home = state dir.
    fields = out["passwd.txt"].strip().split(":")
    assert fields[0] == "ocr-daemon" and fields[5] == "/var/lib/ocr-daemon" and fields[6] == "/usr/sbin/nologin"
    assert int(fields[2]) < 1000, fields  # a system uid
    tree = dict(line.rsplit(" ", 2)[0:1] + [" ".join(line.rsplit(" ", 2)[1:])] for line in out["tree.txt"].splitlines())
    assert tree["/srv/ocr/inbox"] == "ocr-daemon:ocr-daemon 2775", report
    assert tree["/var/lib/ocr-daemon"] == "ocr-daemon:ocr-daemon 750", report
    # The daemon, running as ocr-daemon, OCRed the file and wrote its outputs as ocr-daemon.
    cars = [p for p in tree if p.endswith("/letter.json")]
    assert cars and tree[cars[0]].startswith("ocr-daemon:"), report
    # run as printed: setsid returned at once, the daemon logged to its file (owned by
    # ocr-daemon), stopped cleanly on SIGTERM and removed its pid file
    assert out["detached.txt"].splitlines() == ["setsid returned 0", "pid file removed", "ocr-daemon:ocr-daemon 640"], report
    assert re.search(r"INFO daemon.service.service: stopped$", out["daemon.log"], re.M), report
    assert "Operation not permitted" not in out["daemon.log"], report
    # `ocr-daemon` is on PATH: /usr/local/bin/ocr-daemon -> the venv's script
    assert out["path.txt"].splitlines()[:1] == ["/opt/ocr-daemon/venv/bin/ocr-daemon"], report
    assert "ocr-daemon " in out["path.txt"], report
    # Nothing of it reached the real system.
    assert system_state() == before


# --- last: uninstall the module's staged install ---------------------------------------------------


def test_uninstall_keeps_data_and_config_unless_purge(install: Staged) -> None:
    """``--uninstall`` removes the service, the venv and the command's link, and keeps the config,
    the folders with their files and the journal; ``--purge`` removes those too. (Runs last: it
    takes the module's staged install away.)"""
    s = install
    kept = s.root / "srv/ocr/archive/kept.txt"
    kept.write_text("a document's output\n")
    state = s.root / "var/lib/ocr-daemon"
    (state / "marker").write_text("journal stand-in\n")
    r = run_install("--root", str(s.root), "--uninstall")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not s.venv.exists() and not s.unit.exists() and not os.path.lexists(s.link)
    assert s.conf.is_file() and kept.read_text() == "a document's output\n" and (state / "marker").is_file()
    assert (s.root / "srv/ocr/inbox").is_dir() and (s.root / "var/log/ocr-daemon").is_dir()
    assert "--uninstall --purge" in r.stdout  # how to remove the rest
    r = run_install("--root", str(s.root), "--uninstall", "--purge")
    assert r.returncode == 0, r.stdout + r.stderr
    for gone in ("etc/ocr-daemon", "srv/ocr", "var/lib/ocr-daemon", "var/log/ocr-daemon", "opt/ocr-daemon/venv"):
        assert not (s.root / gone).exists(), gone
    assert "userdel ocr-daemon" in (s.root / "opt/ocr-daemon/staged-actions.txt").read_text()
    assert system_state() == s.system_before


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
