"""Issue 5, test 3 (reduced): many tiny files dropped at once while the daemon's inotify reader
is stalled (SIGSTOP) and its event queue overflows. The full 10,000-file run with figures is
``bench/bench_load.py`` (results in bench/RESULTS.md); here 300 files keep CI fast."""

from __future__ import annotations

from pathlib import Path

from faultkit import check_exactly_once, fast_rules, make_inputs, run_load


def test_overflow_while_stalled_all_processed_once_memory_bounded(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    # rescan_interval of an hour: only the overflow-triggered rescan can find these files.
    cfg = fast_rules(tmp_path, daemon={"rescan_interval": 3600})
    inputs = make_inputs(tmp_path / "staged", 300)
    d = start_daemon(cfg)
    d.wait_ready()
    res = run_load(tmp_path, d, tmp_path / "staged", inputs, timeout=300)
    print("\n".join(res.lines()))
    assert d.proc.poll() is None
    assert d.stop() == 0
    assert res.overflowed, "the inotify queue did not overflow (or the overflow was not logged)"
    assert res.done == len(inputs) and res.duplicates == 0
    v = check_exactly_once(tmp_path, inputs)
    assert v, str(v)
    # Bounded memory: the daemon holds a few hundred small documents' state, not their images.
    assert res.rss_main_max_kb < 400 * 1024, res.lines()
    assert res.rss_tree_max_kb < 1200 * 1024, res.lines()
