"""daemon.service.timings: the phase times record and the two dicts made from it (the journal's
JSON and the sidecar's ``timings``), whose keys and order the outputs depend on."""

from __future__ import annotations

from dataclasses import replace

from daemon.service.timings import Timings


def test_phases_in_order_and_only_those_measured() -> None:
    t = Timings(count=0.01234, ocr=2.5)
    assert t.as_dict() == {"count": 0.01234, "ocr": 2.5}
    t = replace(t, classify=0.2, checks=0.0)
    assert list(t.sidecar()) == ["count", "ocr", "classify", "checks"]  # the sidecar's, before the write
    done = replace(t, write=0.3, total=3.1)
    assert list(done.as_dict()) == ["count", "ocr", "classify", "checks", "write", "total"]
    assert Timings().as_dict() == {} and Timings().sidecar() == {}  # a duplicate's


def test_sidecar_rounds_to_milliseconds_and_finish_is_the_rest() -> None:
    t = Timings(count=0.00049, ocr=1.23456, total=2.0)
    assert t.sidecar() == {"count": 0.0, "ocr": 1.235, "total": 2.0}
    assert t.as_dict()["ocr"] == 1.23456  # the journal keeps them unrounded
    assert abs(t.finish - (2.0 - 0.00049 - 1.23456)) < 1e-12
    assert Timings(total=1.5).finish == 1.5  # phases not measured count as 0
