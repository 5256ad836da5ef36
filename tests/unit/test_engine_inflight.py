"""InFlight: the back-pressure shared by the engines' submit() (real threads, real futures)."""

from __future__ import annotations

import concurrent.futures as cf
import threading

import pytest

from daemon.engines.base import InFlight
from daemon.models import PageText


def test_add_blocks_at_the_limit_until_a_page_finishes() -> None:
    slots = InFlight(2)
    futs: list[cf.Future[PageText]] = [cf.Future(), cf.Future(), cf.Future()]
    assert slots.add(lambda: futs[0]) is futs[0]
    slots.add(lambda: futs[1])
    third = threading.Thread(target=slots.add, args=(lambda: futs[2],))
    third.start()
    third.join(0.3)
    assert third.is_alive(), "a third page got in while two were unfinished"
    assert set(slots.snapshot()) == {futs[0], futs[1]}
    futs[0].set_exception(RuntimeError("page failed"))  # any completion frees the slot
    third.join(5)
    assert not third.is_alive()
    assert set(slots.snapshot()) == {futs[1], futs[2]}
    futs[1].cancel()
    futs[2].set_result(PageText(index=0, text="x", engine="test"))
    assert slots.snapshot() == []


def test_a_failing_make_gives_the_slot_back() -> None:
    slots = InFlight(1)

    def boom() -> cf.Future[PageText]:
        raise RuntimeError("pool shut down")

    with pytest.raises(RuntimeError):
        slots.add(boom)
    done: cf.Future[PageText] = cf.Future()
    done.set_result(PageText(index=0, text="", engine="test"))
    assert slots.add(lambda: done) is done  # would block forever if the slot had leaked
    assert slots.snapshot() == []  # an already finished future is released at once
