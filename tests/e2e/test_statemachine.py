"""Issue 5, test 7: a Hypothesis state machine drives the real daemon.

Rules, in any order: drop a new file (temp name + rename), modify a file in the inbox (a new
version renamed over it, or the same file truncated and rewritten in place), delete one, crash the daemon
(kill -9), restart it, wait a little. At the end the daemon runs until everything settles and
the invariant is checked on the folders:

- every *stable* version (one we never replaced or deleted afterwards) ends exactly once in
  the archive, with exactly one complete output set naming its sha256;
- no version, stable or not, has two output sets or two copies anywhere;
- no temp files, nothing left queued/processing in the journal.

Bounded for CI: ``max_examples`` 5 (OCR_SM_EXAMPLES=N for a longer local run), at most 10 steps each, no shrinking (each step is a real
process; set OCR_SM_SHRINK=1 to shrink a failure locally), a fixed seed (``derandomize``).
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from conftest import DaemonProc
from faultkit import (
    check_exactly_once,
    content_index,
    fast_rules,
    files_in,
    journal_rows,
    output_sets,
    sha256,
    temp_files,
    tiny_png_bytes,
)
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

NAMES = ["a.png", "b.png", "c.png", "d.png"]
_counter = itertools.count()


class DaemonMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="ocr-sm-"))
        self.cfg = fast_rules(self.tmp, daemon={"rescan_interval": 1, "retry_backoff": 0.2, "retry_backoff_max": 1})
        self.inbox = self.tmp / "inbox"
        self.versions: dict[str, tuple[str, bytes]] = {}  # sha -> (name, content) of every version written
        self.superseded: set[str] = set()  # versions we replaced or deleted while they were in the inbox
        self.d: DaemonProc | None = None
        self.log: list[str] = []
        self._start()

    # -- helpers -------------------------------------------------------------------------------

    def _start(self) -> None:
        self.d = DaemonProc(self.cfg)
        self.d.wait_ready(60)

    def _running(self) -> bool:
        return self.d is not None and self.d.proc.poll() is None

    def _new_version(self, name: str) -> bytes:
        data = tiny_png_bytes(f"v{next(_counter)} {name[0]}")
        self.versions[sha256(data)] = (name, data)
        return data

    def _current(self, name: str) -> str | None:
        """sha of the version now at inbox/name (None if absent)."""
        try:
            return sha256((self.inbox / name).read_bytes())
        except OSError:
            return None

    # -- rules ---------------------------------------------------------------------------------

    @rule(name=st.sampled_from(NAMES))
    def drop(self, name: str) -> None:
        data = self._new_version(name)
        old = self._current(name)
        tmp = self.inbox / f".{name}.part"
        tmp.write_bytes(data)
        os.rename(tmp, self.inbox / name)  # replaces whatever is there
        if old is not None:
            self.superseded.add(old)
        self.log.append(f"drop {name}")

    @rule(name=st.sampled_from(NAMES), in_place=st.booleans())
    def modify(self, name: str, in_place: bool) -> None:
        old = self._current(name)
        if old is None:
            return
        data = tiny_png_bytes(f"v{next(_counter)} {name[0]}")
        if in_place:  # truncate and rewrite the same inode (no O_CREAT: it may have been taken)
            try:
                fd = os.open(self.inbox / name, os.O_WRONLY | os.O_TRUNC)
            except FileNotFoundError:
                return
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        else:  # a new file renamed over the old one
            tmp = self.inbox / f".{name}.edit"
            tmp.write_bytes(data)
            os.rename(tmp, self.inbox / name)
        self.versions[sha256(data)] = (name, data)
        self.superseded.add(old)
        self.log.append(f"modify {name} {'in place' if in_place else 'by rename'}")

    @rule(name=st.sampled_from(NAMES))
    def delete(self, name: str) -> None:
        old = self._current(name)
        if old is None:
            return
        try:
            os.unlink(self.inbox / name)
        except FileNotFoundError:
            return
        self.superseded.add(old)
        self.log.append(f"delete {name}")

    @precondition(lambda self: self._running())
    @rule()
    def crash(self) -> None:
        assert self.d is not None
        self.d.proc.send_signal(signal.SIGKILL)
        self.d.proc.wait(timeout=10)
        self.log.append("kill -9")

    @precondition(lambda self: not self._running())
    @rule()
    def restart(self) -> None:
        self._start()
        self.log.append("restart")

    @rule(seconds=st.sampled_from([0.0, 0.3, 1.0]))
    def wait(self, seconds: float) -> None:
        time.sleep(seconds)

    # -- the invariant -------------------------------------------------------------------------

    def _settled(self) -> bool:
        if any(p.suffix == ".png" for p in files_in(self.inbox)):
            return False
        return not any(r["state"] in ("queued", "processing") for r in journal_rows(self.tmp))

    def check(self) -> None:
        if not self._running():
            self._start()
        deadline = time.monotonic() + 60
        quiet = 0
        while time.monotonic() < deadline and quiet < 3:
            quiet = quiet + 1 if self._settled() else 0
            time.sleep(0.7)
        assert self.d is not None
        assert self.d.stop() == 0
        stable = {sha: v for sha, v in self.versions.items() if sha not in self.superseded}
        where = content_index(self.inbox, self.tmp / "archive", self.tmp / "failed")
        sets = output_sets(self.tmp / "out")
        problems = []
        for sha, (name, _) in self.versions.items():
            if len(where.get(sha, [])) > 1:
                problems.append(f"{name} {sha[:8]}: {len(where[sha])} copies: {where[sha]}")
            if len(sets.get(sha, [])) > 1:
                problems.append(f"{name} {sha[:8]}: processed {len(sets[sha])} times")
        # Stable versions: the full exactly-once check (archive + one complete output set),
        # restricted to them; other output sets belong to superseded versions.
        v = check_exactly_once(self.tmp, {f"{n}@{s[:8]}": d for s, (n, d) in stable.items()})
        problems += [p for p in v.problems if not p.startswith(("output set for unknown", "temp files"))
                     and "output files for" not in p]
        if temp_files(self.tmp):
            problems.append(f"temp files: {temp_files(self.tmp)}")
        assert not problems, "\n".join(problems) + f"\nsteps: {self.log}\n" + self.d.log()[-3000:]

    def teardown(self) -> None:
        try:
            self.check()
        finally:
            if self.d is not None and self.d.proc.poll() is None:
                self.d.stop()
            shutil.rmtree(self.tmp, ignore_errors=True)


_phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if os.environ.get("OCR_SM_SHRINK") else [])
DaemonMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("OCR_SM_EXAMPLES", "5")),
    stateful_step_count=10,
    deadline=None,
    derandomize=True,
    database=None,
    phases=_phases,
    suppress_health_check=list(HealthCheck),
)
TestDaemonStateMachine = DaemonMachine.TestCase
