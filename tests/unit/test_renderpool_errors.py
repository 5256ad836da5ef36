"""renderpool.run_task / sendable: what a render worker's task raises comes back as an exception
that survives pickling, with its message (the real-worker case, PyMuPDF's SWIG-backed exception,
is in tests/integration/test_crash_regressions.py)."""

from __future__ import annotations

import pickle
import threading
from typing import NoReturn

import pytest

from daemon.errors import InputError
from daemon.pages.renderpool import RenderWorkerError, run_task, sendable


class HoldsALock(Exception):
    """Pickles not at all: an attribute that cannot be pickled (as a SWIG pointer)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


class TwoArguments(Exception):
    """Pickles, but cannot be unpickled: its __init__ needs two arguments, args holds one."""

    def __init__(self, what: str, where: int) -> None:
        super().__init__(f"{what} at {where}")


def _raise(e: BaseException) -> NoReturn:
    raise e


@pytest.mark.parametrize("exc", [HoldsALock("cycle in page tree"), TwoArguments("cycle in page tree", 3)])
def test_an_exception_that_cannot_travel_is_replaced_keeping_its_message(exc: Exception) -> None:
    with pytest.raises(RenderWorkerError) as info:
        run_task(_raise, exc)
    assert str(info.value) == f"{type(exc).__name__}: {exc}"
    assert "cycle in page tree" in str(info.value)
    assert str(pickle.loads(pickle.dumps(info.value))) == str(info.value)


def test_an_exception_that_travels_is_raised_as_it_is() -> None:
    e = InputError("corrupt PDF: cycle in page tree (page 1)")
    assert sendable(e) is e
    with pytest.raises(InputError) as info:
        run_task(_raise, e)
    assert info.value is e


def test_the_result_comes_back_unchanged() -> None:
    assert run_task(divmod, 7, 2) == (3, 1)
