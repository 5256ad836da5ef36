"""docs/monitoring/: the Prometheus alert rules and the Grafana dashboard operators import.

With Debian's ``prometheus`` package (promtool) the rules are checked by ``promtool check rules``
and their behaviour by ``promtool test rules`` (each alert fires on a series that should fire it,
not before its ``for:``); without it, by their structure. The dashboard is checked as Grafana
imports it: valid JSON, a datasource input, unique panel ids, panels that do not overlap, every
query on the instance variable. That /metrics serves every metric they use is checked against a
real daemon in tests/e2e/test_http.py."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from monitoringkit import DASHBOARD, RULES, RULES_TEST, dashboard, metrics_used, rules

ALERTS = {"OcrDaemonDown", "OcrDaemonEngineDown", "OcrDaemonEngineRestarting", "OcrDaemonJournalNotWritable",
          "OcrDaemonQueueGrowing", "OcrDaemonFailuresRising", "OcrDaemonDiskLow"}


def test_rules_cover_what_operators_asked_for() -> None:
    got = rules()
    assert {r["alert"] for r in got} == ALERTS
    for r in got:
        assert r["labels"]["severity"] in ("warning", "critical"), r
        assert r["annotations"]["summary"] and r["annotations"]["description"], r
        assert "for" not in r or re.fullmatch(r"\d+[smh]", r["for"]), r
        assert r["expr"].count("(") == r["expr"].count(")"), r


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) not installed")
def test_promtool_checks_and_tests_the_rules() -> None:
    r = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and f"SUCCESS: {len(ALERTS)} rules found" in r.stdout, r.stdout + r.stderr
    r = subprocess.run(["promtool", "test", "rules", RULES_TEST.name], capture_output=True, text=True, timeout=60,
                       cwd=RULES_TEST.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_dashboard_imports() -> None:
    d = dashboard()
    assert d["__inputs"][0]["name"] == "DS_PROMETHEUS" and d["__inputs"][0]["pluginId"] == "prometheus"
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)) and len(ids) >= 10
    cells: set[tuple[int, int]] = set()
    for p in d["panels"]:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24, p["title"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not mine & cells, f"{p['title']} overlaps another panel"
        cells |= mine
        assert p["datasource"]["uid"] == "${DS_PROMETHEUS}", p["title"]
        for t in p["targets"]:
            assert 'instance=~"$instance"' in t["expr"], (p["title"], t["expr"])
            assert t["expr"].count("(") == t["expr"].count(")"), t["expr"]
    assert DASHBOARD.read_text(encoding="utf-8").endswith("\n")


def test_they_use_the_daemons_metrics() -> None:
    used = metrics_used()
    # the list: engine down, journal not writable, queue growing, failures rising, disk low
    for name in ("ocr_daemon_engine_up", "ocr_daemon_journal_writable", "ocr_daemon_queue_depth",
                 "ocr_daemon_documents_finished_total", "ocr_daemon_disk_free_bytes"):
        assert name in used, name
