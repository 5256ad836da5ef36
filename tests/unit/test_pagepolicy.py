"""The per-page policy (daemon.engines.pagepolicy) with a scripted generator, in both its forms:
``recognise_page`` (async generate, the vllm engine) and ``recognise_page_sync`` (blocking
generate, the openai engine). Every decision test runs against both, so the forms cannot drift."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable
from typing import Any

import pytest
from PIL import Image, ImageDraw

from daemon.config import EngineCfg
from daemon.engines.pagepolicy import (
    RETRY_TEMPERATURES,
    GenResult,
    PageOutcome,
    PagePolicy,
    recognise_page,
    recognise_page_sync,
)

Script = Callable[[Image.Image, float], GenResult]


def prose(n: int, seed: int = 1) -> str:
    rnd = random.Random(seed)
    words = ["the", "invoice", "total", "amount", "was", "paid", "on", "time", "by", "customer", "order"]
    return "\n".join(" ".join(rnd.choice(words) for _ in range(rnd.randint(5, 12))) + f" {rnd.randint(1, 9999)}." for _ in range(n))


class Recorder:
    """The calls a form made: (image height, temperature, max_tokens, priority)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, float, int, int]] = []


def run_async(img: Image.Image, prio: int, script: Script, policy: PagePolicy) -> tuple[PageOutcome, Recorder]:
    rec = Recorder()

    async def generate(im: Image.Image, t: float, max_tokens: int, p: int) -> GenResult:
        rec.calls.append((im.height, t, max_tokens, p))
        await asyncio.sleep(0)
        return script(im, t)

    return asyncio.run(recognise_page(img, prio, generate, policy)), rec


def run_sync(img: Image.Image, prio: int, script: Script, policy: PagePolicy) -> tuple[PageOutcome, Recorder]:
    rec = Recorder()

    def generate(im: Image.Image, t: float, max_tokens: int, p: int) -> GenResult:
        rec.calls.append((im.height, t, max_tokens, p))
        return script(im, t)

    return recognise_page_sync(img, prio, generate, policy), rec


@pytest.fixture(params=["async", "sync"])
def form(request: pytest.FixtureRequest) -> Callable[..., tuple[PageOutcome, Recorder]]:
    return run_async if request.param == "async" else run_sync


LOOP = prose(3) + "\n" + "\n".join(["again"] * 300)


def test_clean_page_is_one_request(form: Any) -> None:
    out, rec = form(Image.new("RGB", (100, 1000)), 3, lambda im, t: GenResult("hello\nworld", "stop", 3), PagePolicy())
    assert out.text == "hello\nworld" and out.flags == [] and (out.attempts, out.tokens) == (1, 3)
    assert rec.calls == [(1000, 0.2, 4096, 3)]


def test_loop_retried_with_other_temperature_then_converges(form: Any) -> None:
    def script(im: Image.Image, t: float) -> GenResult:
        return GenResult(LOOP, "length", 4096) if t == 0.2 else GenResult("fine text", "stop", 10)

    out, rec = form(Image.new("RGB", (100, 1000)), 0, script, PagePolicy())
    assert out.text == "fine text" and out.flags == [] and (out.attempts, out.tokens) == (2, 4106)
    assert [c[1] for c in rec.calls] == [0.2, RETRY_TEMPERATURES[0]]


def test_loop_that_never_converges_is_trimmed_and_flagged(form: Any) -> None:
    out, rec = form(Image.new("RGB", (100, 1000)), 0, lambda im, t: GenResult(LOOP, "length", 4096), PagePolicy(repetition_retries=2))
    assert out.flags == ["repetition"] and out.attempts == 3
    assert out.text.count("again") == 1
    assert [c[1] for c in rec.calls] == [0.2, *RETRY_TEMPERATURES[:2]]


def test_retries_come_from_the_policy(form: Any) -> None:
    out, rec = form(Image.new("RGB", (100, 1000)), 0, lambda im, t: GenResult(LOOP, "length", 4096), PagePolicy(repetition_retries=0))
    assert out.flags == ["repetition"] and len(rec.calls) == 1


def test_a_loop_that_stopped_by_itself_is_left_alone(form: Any) -> None:
    """Only output cut off at max_tokens counts as a loop (a page may really repeat a line)."""
    out, rec = form(Image.new("RGB", (100, 1000)), 0, lambda im, t: GenResult(LOOP, "stop", 900), PagePolicy())
    assert out.text == LOOP and out.flags == [] and len(rec.calls) == 1


def test_truncated_dense_page_is_banded_and_joined(form: Any) -> None:
    full = [f"row {i}" for i in range(100)]

    def script(im: Image.Image, t: float) -> GenResult:
        if im.height == 1000:
            return GenResult("\n".join(full[:30]), "length", 4096)  # cut off: dense page
        if im.height < 600 and im.getpixel((0, 0)) == (0, 0, 0):
            return GenResult("\n".join(full[:55]), "stop", 900)  # top band, with overlap lines 50-54
        return GenResult("\n".join(full[50:]), "stop", 900)

    img = Image.new("RGB", (100, 1000), "white")
    ImageDraw.Draw(img).rectangle((0, 0, 99, 10), fill="black")  # marks the top band
    out, rec = form(img, 1, script, PagePolicy())
    assert out.flags == ["banded"]
    assert out.text.split("\n") == full
    assert out.attempts == 3 and out.tokens == 4096 + 1800
    assert [c[3] for c in rec.calls] == [1, 1, 1]  # bands keep the page's priority


def test_band_still_truncated_is_split_again_then_flagged(form: Any) -> None:
    out, rec = form(Image.new("RGB", (100, 1600)), 0, lambda im, t: GenResult(prose(4, seed=im.height), "length", 4096), PagePolicy(repetition_retries=0))
    assert out.flags == ["banded", "truncated"]
    assert len(rec.calls) == 1 + 2 + 4  # page, 2 bands, 4 sub-bands (depth limit 2)


def test_a_short_page_is_not_banded(form: Any) -> None:
    out, rec = form(Image.new("RGB", (100, 150)), 0, lambda im, t: GenResult(prose(4), "length", 4096), PagePolicy())
    assert out.flags == ["truncated"] and len(rec.calls) == 1


def test_guards_off_returns_raw_output(form: Any) -> None:
    out, rec = form(Image.new("RGB", (100, 1000)), 0, lambda im, t: GenResult(LOOP, "length", 1000), PagePolicy(max_tokens=1000, guards=False))
    assert out.text == LOOP and out.flags == [] and out.attempts == 1
    assert rec.calls == [(1000, 0.2, 1000, 0)]


def test_generate_errors_propagate(form: Any) -> None:
    def script(im: Image.Image, t: float) -> GenResult:
        raise TimeoutError("server gone")

    with pytest.raises(TimeoutError, match="server gone"):
        form(Image.new("RGB", (100, 1000)), 0, script, PagePolicy())


def test_async_bands_run_concurrently() -> None:
    """The async form sends both bands before either answers (the engine batches them)."""
    started: list[int] = []

    async def main() -> PageOutcome:
        both = asyncio.Event()

        async def generate(im: Image.Image, t: float, max_tokens: int, p: int) -> GenResult:
            if im.height == 1000:
                return GenResult(prose(40), "length", 4096)
            started.append(im.height)
            if len(started) == 2:
                both.set()
            await asyncio.wait_for(both.wait(), 5)
            return GenResult("band", "stop", 10)

        return await recognise_page(Image.new("RGB", (100, 1000)), 0, generate, PagePolicy())

    out = asyncio.run(main())
    assert out.flags == ["banded"] and len(started) == 2


def test_sync_form_needs_no_event_loop() -> None:
    """The openai engine calls it from plain worker threads, blocking HTTP inside."""
    seen: list[bool] = []

    def generate(im: Image.Image, t: float, max_tokens: int, p: int) -> GenResult:
        try:
            asyncio.get_running_loop()
            seen.append(True)
        except RuntimeError:
            seen.append(False)
        return GenResult("ok", "stop", 1)

    results: list[PageOutcome] = []
    t = threading.Thread(target=lambda: results.append(recognise_page_sync(Image.new("RGB", (10, 10)), 0, generate, PagePolicy())))
    t.start()
    t.join(10)
    assert results[0].text == "ok" and seen == [False]


def test_policy_options_from_config() -> None:
    p = PagePolicy.from_config(EngineCfg(sampling={"temperature": 0.1, "max_tokens": 1000}, page_guards={"repetition_retries": 1}))
    assert (p.temperature, p.max_tokens, p.repetition_retries, p.guards) == (0.1, 1000, 1, True)
    assert p.temperatures() == [0.1, RETRY_TEMPERATURES[0]]
    assert PagePolicy.from_config(EngineCfg()).repetition_retries == 2


def test_old_place_of_repetition_retries_still_loads() -> None:
    """rules.yaml files written before the page guards moved out of engine.vllm keep working."""
    assert EngineCfg(vllm={"repetition_retries": 0}).page_guards.repetition_retries == 0
    both = EngineCfg(vllm={"repetition_retries": 0}, page_guards={"repetition_retries": 3})
    assert both.page_guards.repetition_retries == 3
    assert not hasattr(EngineCfg().vllm, "repetition_retries")
