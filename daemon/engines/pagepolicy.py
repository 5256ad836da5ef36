"""The per-page policy of the VLM engines: repetition retries, then banding of truncated output.

Engine-independent: the ``vllm`` engine runs it on its event loop (``recognise_page``), the
``openai`` engine in its worker threads around blocking HTTP (``recognise_page_sync``); neither
knows how the other talks to its model.

Contract:
- ``PagePolicy`` holds the options (frozen): sampling temperature and ``max_tokens`` (from
  ``engine.sampling``), ``repetition_retries`` (``engine.page_guards.repetition_retries``) and
  ``guards`` (off only for benchmarks that force the output length: ``engine.debug.page_guards``).
  ``PagePolicy.from_config(engine_cfg)`` builds it from the config.
- ``recognise_page(image, priority, generate, policy)`` (async; ``generate`` is an async callable)
  and ``recognise_page_sync(...)`` (the same with a blocking ``generate``) return a
  ``PageOutcome``. ``generate(image, temperature, max_tokens, priority)`` does one engine request
  and returns a ``GenResult``; its exceptions propagate unchanged.
- Output stopped at ``max_tokens`` that loops (``textguard.find_repetition``) is retried at the
  temperatures of ``RETRY_TEMPERATURES`` (up to ``repetition_retries`` times), then trimmed to one
  copy of the loop and flagged ``"repetition"``.
- Output stopped at ``max_tokens`` without looping (a dense page) is split into two overlapping
  horizontal bands recognised separately and joined without the overlap (flag ``"banded"``); a
  band still truncated is split once more (``MAX_BAND_DEPTH``), then flagged ``"truncated"``. The
  async form runs the bands concurrently, the sync form one after the other.
- With ``guards`` off, one request, its text as is, no flags.

The decisions are written once, as a generator (``_page_steps``) that yields what to do next
(one request, or the bands to recognise); the two forms only differ in how they carry it out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from PIL import Image

from daemon.engines.textguard import find_repetition, join_bands, split_bands, trim_repetition
from daemon.models import PageText

if TYPE_CHECKING:
    from daemon.config import EngineCfg

log = logging.getLogger(__name__)

#: Temperatures tried after the configured one when a page loops.
RETRY_TEMPERATURES = (0.5, 0.8, 1.0)
#: Band splits: first 2 bands, then each still-truncated band once more into 2.
MAX_BAND_DEPTH = 2
#: Pages (or bands) shorter than this are not split any further.
MIN_BAND_HEIGHT = 200


@dataclass(frozen=True)
class PagePolicy:
    """Options of the page policy (see the module docstring)."""

    temperature: float = 0.2
    max_tokens: int = 4096
    repetition_retries: int = 2
    guards: bool = True

    @classmethod
    def from_config(cls, cfg: EngineCfg) -> PagePolicy:
        return cls(
            temperature=cfg.sampling.temperature,
            max_tokens=cfg.sampling.max_tokens,
            repetition_retries=cfg.page_guards.repetition_retries,
            guards=cfg.debug.page_guards,
        )

    def temperatures(self) -> list[float]:
        """The temperatures of the first request and of each retry, in order."""
        return [self.temperature, *RETRY_TEMPERATURES][: self.repetition_retries + 1]


@dataclass
class GenResult:
    """One engine request's answer."""

    text: str
    finish_reason: str | None
    num_tokens: int = 0


GenerateFn = Callable[[Image.Image, float, int, int], Awaitable[GenResult]]
SyncGenerateFn = Callable[[Image.Image, float, int, int], GenResult]


@dataclass
class PageOutcome:
    """What the policy made of one page (after the guards' retries and bands)."""

    text: str
    flags: list[str] = field(default_factory=list)
    attempts: int = 0
    tokens: int = 0

    def page_text(self, index: int, engine: str, seconds: float) -> PageText:
        """The engine's answer for the pipeline; attempts and tokens go into ``meta``."""
        return PageText(index=index, text=self.text, engine=engine, seconds=seconds, flags=self.flags,
                        meta={"attempts": self.attempts, "tokens": self.tokens})


# ----------------------------------------------------------------------------- the decisions


@dataclass(frozen=True)
class _Request:
    """Step: one engine request; the answer sent back is its ``GenResult``."""

    image: Image.Image
    temperature: float
    max_tokens: int


@dataclass(frozen=True)
class _Bands:
    """Step: recognise each band as a page at ``depth``; the answer is their ``PageOutcome`` list."""

    bands: list[Image.Image]
    depth: int


_Step = Union[_Request, _Bands]  # noqa: UP007 - a runtime alias (isinstance targets)
_Steps = Generator[_Step, "GenResult | list[PageOutcome]", PageOutcome]


def _page_steps(image: Image.Image, policy: PagePolicy, depth: int) -> _Steps:
    out = PageOutcome(text="")
    res = GenResult("", None)
    loop_at: int | None = None
    for t in policy.temperatures():
        answer = yield _Request(image, t, policy.max_tokens)
        assert isinstance(answer, GenResult)
        res = answer
        out.attempts += 1
        out.tokens += res.num_tokens
        if not policy.guards:
            break
        loop_at = find_repetition(res.text) if res.finish_reason == "length" else None
        if loop_at is None:
            break
        log.info("page output loops (temperature %.2f); retrying", t)
    out.text = res.text
    if not policy.guards:
        return out
    if loop_at is not None:
        out.text = trim_repetition(res.text, loop_at)
        out.flags.append("repetition")
        return out
    if res.finish_reason == "length":
        if depth >= MAX_BAND_DEPTH or image.height < MIN_BAND_HEIGHT:
            out.flags.append("truncated")
            return out
        parts = yield _Bands(split_bands(image, 2), depth + 1)
        assert isinstance(parts, list)
        out.text = join_bands([p.text for p in parts])
        out.attempts += sum(p.attempts for p in parts)
        out.tokens += sum(p.tokens for p in parts)
        out.flags = sorted({"banded"} | {f for p in parts for f in p.flags})
    return out


# ----------------------------------------------------------------------------- the two forms


async def recognise_page(
    image: Image.Image, priority: int, generate: GenerateFn, policy: PagePolicy, depth: int = 0
) -> PageOutcome:
    """The policy with an async ``generate``; bands run concurrently."""
    steps = _page_steps(image, policy, depth)
    answer: GenResult | list[PageOutcome] | None = None
    while True:
        try:
            step = steps.send(answer)  # type: ignore[arg-type]  # None primes the generator
        except StopIteration as done:
            return done.value
        if isinstance(step, _Request):
            answer = await generate(step.image, step.temperature, step.max_tokens, priority)
        else:
            answer = list(await asyncio.gather(*(recognise_page(b, priority, generate, policy, step.depth) for b in step.bands)))


def recognise_page_sync(
    image: Image.Image, priority: int, generate: SyncGenerateFn, policy: PagePolicy, depth: int = 0
) -> PageOutcome:
    """The policy with a blocking ``generate`` (no event loop); bands run one after the other."""
    steps = _page_steps(image, policy, depth)
    answer: GenResult | list[PageOutcome] | None = None
    while True:
        try:
            step = steps.send(answer)  # type: ignore[arg-type]  # None primes the generator
        except StopIteration as done:
            return done.value
        if isinstance(step, _Request):
            answer = generate(step.image, step.temperature, step.max_tokens, priority)
        else:
            answer = [recognise_page_sync(b, priority, generate, policy, step.depth) for b in step.bands]
