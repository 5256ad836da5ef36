"""The shipped dashboard and alert rules (docs/monitoring/), read for the tests: which metrics
they use. tests/unit/test_monitoring.py checks the files; tests/e2e/test_http.py checks that a
real daemon's /metrics serves every metric they use."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

MONITORING = Path(__file__).resolve().parents[1] / "docs" / "monitoring"
RULES = MONITORING / "prometheus-rules.yml"
RULES_TEST = MONITORING / "prometheus-rules.test.yml"
DASHBOARD = MONITORING / "grafana-dashboard.json"


def rules() -> list[dict[str, Any]]:
    return [r for g in yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"] for r in g["rules"]]


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def expressions() -> list[str]:
    return [r["expr"] for r in rules()] + [t["expr"] for p in dashboard()["panels"] for t in p["targets"]]


def metrics_used() -> set[str]:
    """Every ``ocr_daemon_*`` sample name the rules and the dashboard query."""
    return {m for e in expressions() for m in re.findall(r"\bocr_daemon_[a-z0-9_]+", e)}
