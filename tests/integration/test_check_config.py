"""``ocr-daemon check-config`` on real files and folders (issue 35): errors in line order with
"did you mean", what the models cannot see (a missing inbox, a missing hook program,
``archive_to`` that is ignored, inbox subtrees the group cannot drop into), and the keys a
reload does not apply, marked in the generated reference."""

from __future__ import annotations

import os
import re
from pathlib import Path

from conftest import run_cli

from daemon.config import reference


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_errors_come_in_line_order_with_the_closest_key(tmp_path: Path) -> None:
    conf = tmp_path / "rules.yaml"
    conf.write_text(
        "inboxes:\n"
        "  - path: in\n"
        "    recursiv: true\n"          # line 3
        "daemon:\n"
        "  workerz: 4\n"                # line 5
        "  state_dir: state\n"
        "routes:\n"
        "  - name: all\n"
        "    destinaton: out\n",        # line 9
        encoding="utf-8",
    )
    r = run_cli("check-config", "--config", str(conf))
    assert r.returncode == 2, r.stderr
    found = [(m.group(0), int(m.group(1))) for line in lines(r.stderr) if (m := re.match(rf"{re.escape(str(conf))}:(\d+) .*", line))]
    errs = [text for text, _ in found]
    assert [n for _, n in found] == [3, 5, 9], r.stderr
    assert "inboxes[0].recursiv: unknown key; did you mean 'recursive'?" in errs[0]
    assert "daemon.workerz: unknown key; did you mean 'workers'?" in errs[1]
    assert "routes[0].destinaton: unknown key; did you mean 'destination'?" in errs[2]


def test_what_the_models_cannot_see(tmp_path: Path) -> None:
    conf = tmp_path / "rules.yaml"
    (tmp_path / "in").mkdir()
    conf.write_text(
        "daemon: {state_dir: state, failed_dir: failed, http: null}\n"
        "inboxes:\n"
        "  - path: in\n"
        "  - path: typo-inbox\n"                                          # line 4
        "routes:\n"
        "  - name: kept\n"
        "    destination: out\n"
        "    archive_to: archive\n"                                       # line 8
        "  - name: all\n"
        "    destination: out\n"
        "    on_done: {exec: [no-such-program-xyz, '{outputs}']}\n",      # line 11
        encoding="utf-8",
    )
    r = run_cli("check-config", "--config", str(conf))
    assert r.returncode == 2, r.stderr
    assert f"{conf}:11 routes[1].on_done.exec[0]: 'no-such-program-xyz': no such program on PATH" in r.stderr

    # the program fixed: what is left are warnings, in line order, and the file passes
    conf.write_text(conf.read_text().replace("no-such-program-xyz", "echo"), encoding="utf-8")
    r = run_cli("check-config", "--config", str(conf))
    assert r.returncode == 0, r.stderr
    warns = [line for line in lines(r.stderr) if line.startswith("warning: ")]
    assert warns[0].startswith(f"warning: {conf}:4 inboxes[1].path: {tmp_path / 'typo-inbox'} does not exist"), warns
    assert warns[1].startswith(f"warning: {conf}:8 routes[0].archive_to: ignored: the route's source is 'keep'"), warns
    assert not (tmp_path / "typo-inbox").exists()  # check-config creates nothing


def test_inbox_subtrees_the_group_cannot_drop_into(tmp_path: Path) -> None:
    inbox = tmp_path / "in"
    (inbox / "acme" / "2026").mkdir(parents=True)
    (inbox / "ok").mkdir()
    os.chmod(inbox, 0o2775)
    os.chmod(inbox / "ok", 0o2775)
    os.chmod(inbox / "acme", 0o755)  # as a mkdir under umask 022 (or by root) leaves it
    conf = tmp_path / "rules.yaml"
    conf.write_text("daemon: {state_dir: state, failed_dir: failed, http: null}\n"
                    "inboxes: [{path: in, recursive: true}]\n", encoding="utf-8")
    r = run_cli("check-config", "--config", str(conf))
    assert r.returncode == 0, r.stderr
    warns = [line for line in lines(r.stderr) if "cannot drop files" in line]
    # the subtree once, at its top, with the fix
    assert len(warns) == 1 and f"{inbox / 'acme'} (owner" in warns[0] and "mode 755" in warns[0], r.stderr
    assert f"chmod -R g+ws,g+rwX '{inbox / 'acme'}'" in warns[0]


def test_keys_a_reload_does_not_apply_are_marked() -> None:
    md = reference.markdown()

    def row(key: str) -> str:
        return next(line for line in md.splitlines() if line.startswith(f"| `{key}` |"))

    for key in ("daemon.state_dir", "daemon.http.listen", "engine.kind", "engine.tesseract.threads", "daemon.workers"):
        assert "**(restart)**" in row(key), key
    for key in ("daemon.rescan_interval", "daemon.max_attempts", "inboxes[].path", "routes[].destination"):
        assert "(restart)" not in row(key), key
    schema = reference.json_schema()
    assert schema["$defs"]["HttpCfg"]["properties"]["listen"]["description"].startswith("(restart")
    assert not schema["$defs"]["InboxCfg"]["properties"]["path"]["description"].startswith("(restart")
