"""CPU unit tests of the VLM engine helpers: repetition detector, bands (the per-page policy is in
test_pagepolicy.py), engine settings, the dummy model folder, and the VllmEngine plumbing with a fake
vLLM (no GPU, no vllm package needed)."""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path

import pytest
from PIL import Image

from daemon.config import EngineCfg
from daemon.engines.pagepolicy import GenResult
from daemon.engines.textguard import (
    find_repetition,
    join_bands,
    pad_to_multiple,
    split_bands,
    trim_repetition,
)
from daemon.engines.vllm_engine import (
    NON_KV_BYTES,
    VLLM_DEFAULT_UTILIZATION,
    VllmEngine,
    check_model_source,
    engine_args,
    sampling_kwargs,
    settings_in_force,
    startup_utilization,
)
from daemon.errors import FatalError

# ----------------------------------------------------------------------------- repetition


def prose(n: int, seed: int = 1) -> str:
    rnd = random.Random(seed)
    words = ["the", "invoice", "total", "amount", "was", "paid", "on", "time", "by", "the", "customer", "for", "order", "number"]
    lines = []
    for _ in range(n):
        lines.append(" ".join(rnd.choice(words) for _ in range(rnd.randint(5, 12))) + f" {rnd.randint(1, 9999)}.")
    return "\n".join(lines)


def test_normal_text_and_tables_are_not_loops() -> None:
    assert find_repetition(prose(80)) is None
    table = "| item | qty | price |\n| --- | --- | --- |\n" + "\n".join(f"| part {i} | {i % 7} | {i * 3}.50 |" for i in range(60))
    assert find_repetition(table) is None
    # a short run of dots (a leader) is not a loop either
    assert find_repetition(prose(20) + "\nTotal .................... 12.00") is None


def test_line_loop_is_found_and_trimmed() -> None:
    head = prose(10)
    text = head + "\n" + "\n".join(["The same line again and again."] * 60)
    start = find_repetition(text)
    assert start is not None and start >= len(head) - 1
    trimmed = trim_repetition(text, start)
    assert trimmed.count("The same line again and again.") == 1
    assert trimmed.startswith(head[:50])


def test_ngram_loop_without_newlines_is_found() -> None:
    head = prose(5)
    text = head + " " + "x = a + b; " * 120
    start = find_repetition(text)
    assert start is not None
    assert trim_repetition(text, start).count("x = a + b;") <= 2


def test_line_loop_with_varying_spacing_is_found() -> None:
    text = prose(5) + "\n" + "\n".join("|  0 |  0 |" + " " * (i % 3) for i in range(40))
    assert find_repetition(text) is not None


# ----------------------------------------------------------------------------- bands


def test_split_bands_cover_page_with_overlap() -> None:
    im = Image.new("RGB", (1000, 1500), "white")
    b = split_bands(im, 2, overlap=0.1)
    assert len(b) == 2 and all(x.width == 1000 for x in b)
    assert b[0].height + b[1].height > 1500  # overlap
    assert b[0].height < 1500 and b[1].height < 1500
    assert split_bands(im, 1) == [im]


def test_join_bands_drops_overlap_lines_only() -> None:
    a = "Title\nline one\nline two\nline three"
    b = "line two\n  line   three\nline four\nline five"
    assert join_bands([a, b]) == "Title\nline one\nline two\nline three\nline four\nline five"
    # no overlap: plain concatenation
    assert join_bands(["a\nb", "c\nd"]) == "a\nb\nc\nd"
    # a repeated line that is genuinely in both bands but not at the seam stays
    assert join_bands(["x\ntotal", "y\ntotal"]) == "x\ntotal\ny\ntotal"


def test_pad_to_multiple_keeps_pixels() -> None:
    im = Image.new("RGB", (1090, 1540), (10, 20, 30))
    p = pad_to_multiple(im, 28)
    assert p.size == (1092, 1540)
    assert p.getpixel((0, 0)) == (10, 20, 30) and p.getpixel((1091, 5)) == (255, 255, 255)
    assert pad_to_multiple(p, 28) is p


# ----------------------------------------------------------------------------- settings


def test_engine_args_default_and_16gb_profile() -> None:
    cfg = EngineCfg(kind="vllm", model="lightonai/LightOnOCR-2-1B")
    a = engine_args(cfg, cpu_count=16)
    assert a["model"] == "lightonai/LightOnOCR-2-1B"
    assert a["limit_mm_per_prompt"] == {"image": 1}
    assert a["scheduling_policy"] == "priority"
    assert a["mm_processor_cache_gb"] == 0 and a["enable_prefix_caching"] is False
    assert a["gpu_memory_utilization"] == 0.85 and "kv_cache_memory_bytes" not in a
    assert a["renderer_num_workers"] == 8
    assert a["kv_cache_dtype"] == "auto"
    assert engine_args(EngineCfg(kind="vllm", vllm={"kv_cache_dtype": "fp8"}))["kv_cache_dtype"] == "fp8"
    # vLLM picks the attention kernel and KV block unless the config names them
    assert "attention_backend" not in a and "block_size" not in a
    tuned = engine_args(EngineCfg(kind="vllm", vllm={"attention_backend": "TRITON_ATTN", "block_size": 32}))
    assert tuned["attention_backend"] == "TRITON_ATTN" and tuned["block_size"] == 32
    # an fp8 cache gets 64-token blocks unless the config names a size
    assert engine_args(EngineCfg(kind="vllm", vllm={"kv_cache_dtype": "fp8"}))["block_size"] == 64
    assert engine_args(EngineCfg(kind="vllm", vllm={"kv_cache_dtype": "fp8", "block_size": 16}))["block_size"] == 16
    small = engine_args(EngineCfg(kind="vllm", vllm={"profile": "16gb"}), cpu_count=4)
    assert small["kv_cache_memory_bytes"] <= 8 << 30
    assert small["max_num_seqs"] <= 32 and small["max_num_batched_tokens"] <= 4096
    byte_budget = engine_args(EngineCfg(kind="vllm", vllm={"kv_cache_memory_bytes": 3 << 30}))
    assert byte_budget["kv_cache_memory_bytes"] == 3 << 30


def test_a_byte_budget_asks_vllm_to_find_only_that_much_free() -> None:
    """With the KV cache fixed in bytes vLLM still refuses to start unless gpu_memory_utilization
    x the card is free (its default 0.92): the 16gb profile on a 16 GiB desktop card (15.6 GiB
    usable, 0.8 GiB taken by the display) must not ask for 14.4 GiB."""
    card16 = 16 << 30
    small = engine_args(EngineCfg(kind="vllm", vllm={"profile": "16gb"}), cpu_count=4, gpu_total_bytes=card16)
    need = small["gpu_memory_utilization"] * card16
    assert need == pytest.approx(small["kv_cache_memory_bytes"] + NON_KV_BYTES, rel=1e-3)
    assert need <= 14.8 * (1 << 30) - 0.8 * (1 << 30)  # fits beside a desktop
    # on a big card shared with other work: the same 12 GiB, not 92 % of 141 GiB
    h200 = engine_args(EngineCfg(kind="vllm", vllm={"kv_cache_memory_bytes": 8 << 30}), gpu_total_bytes=141 << 30)
    assert h200["gpu_memory_utilization"] == pytest.approx((14 << 30) / (141 << 30), abs=1e-3)
    # a fraction the user gave is kept as the check; unknown card size: a small check, never vLLM's 0.92
    said = engine_args(EngineCfg(kind="vllm", vllm={"profile": "16gb", "gpu_memory_utilization": 0.6}))
    assert said["gpu_memory_utilization"] == 0.6
    assert engine_args(EngineCfg(kind="vllm", vllm={"profile": "16gb"}))["gpu_memory_utilization"] == 0.05
    # a budget bigger than the card: capped at vLLM's own default, vLLM then says what is short
    assert startup_utilization(200 << 30, 16 << 30) == VLLM_DEFAULT_UTILIZATION
    # without a byte budget the configured fraction sizes the cache as before
    assert engine_args(EngineCfg(kind="vllm"), gpu_total_bytes=card16)["gpu_memory_utilization"] == 0.85


def test_sampling_defaults_from_config() -> None:
    s = sampling_kwargs(EngineCfg())
    assert (s["temperature"], s["top_p"], s["max_tokens"]) == (0.2, 0.9, 4096)
    assert "ignore_eos" not in s
    assert sampling_kwargs(EngineCfg(), temperature=0.8, max_tokens=100)["temperature"] == 0.8
    assert sampling_kwargs(EngineCfg(), max_tokens=32, warm=True)["ignore_eos"] is True


def test_debug_options_are_config_not_class_state() -> None:
    """Benchmark switches live in engine.debug of one config: forced length, guards off, extra
    vLLM arguments; another engine built from the default config is untouched."""
    bench = EngineCfg(kind="vllm", sampling={"max_tokens": 1000},
                      debug={"ignore_eos": True, "page_guards": False, "vllm_args": {"jit_monitor_verbose": True}})
    assert sampling_kwargs(bench)["ignore_eos"] is True and sampling_kwargs(bench)["max_tokens"] == 1000
    assert engine_args(bench)["jit_monitor_verbose"] is True
    eng, plain = VllmEngine(bench), VllmEngine(EngineCfg(kind="vllm"))
    assert (eng.policy.guards, eng.policy.max_tokens) == (False, 1000)
    assert (plain.policy.guards, plain.policy.max_tokens, plain.policy.repetition_retries) == (True, 4096, 2)
    assert "jit_monitor_verbose" not in engine_args(EngineCfg(kind="vllm"))
    assert not hasattr(VllmEngine, "sampling_overrides") and not hasattr(VllmEngine, "guards")


def test_settings_in_force_read_from_vllms_config() -> None:
    """What vLLM made of the arguments, JSON-ready; sections or fields it lacks are left out."""
    import enum
    from types import SimpleNamespace

    class Backend(enum.Enum):
        FLASH_ATTN = 1

    vc = SimpleNamespace(
        cache_config=SimpleNamespace(block_size=64, cache_dtype="fp8", gpu_memory_utilization=0.85, enable_prefix_caching=False),
        scheduler_config=SimpleNamespace(max_num_batched_tokens=16384, max_num_seqs=256, policy="priority"),
        attention_config=SimpleNamespace(backend=Backend.FLASH_ATTN),
    )
    got = settings_in_force(vc)
    assert got == {"block_size": 64, "kv_cache_dtype": "fp8", "gpu_memory_utilization": 0.85, "enable_prefix_caching": False,
                   "max_num_batched_tokens": 16384, "max_num_seqs": 256, "scheduling_policy": "priority",
                   "attention_backend": "FLASH_ATTN"}
    json.dumps(got)
    assert settings_in_force(None) == {}


def test_missing_model_folder_is_a_clear_fatal_error(tmp_path: Path) -> None:
    missing = tmp_path / "models" / "LightOnOCR-2-1B"
    with pytest.raises(FatalError) as ei:
        check_model_source(str(missing))
    assert str(missing) in str(ei.value) and ei.value.exit_code == 3
    check_model_source("lightonai/LightOnOCR-2-1B")  # a repo id is left to the HF hub


# ----------------------------------------------------------------------------- model folder


def test_dummy_model_folder(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from daemon.engines.modelfolder import IMAGE_TOKEN_ID, write_dummy_model

    d = write_dummy_model(tmp_path / "m")
    cfg = json.loads((d / "config.json").read_text())
    assert cfg["architectures"] == ["LightOnOCRForConditionalGeneration"] and cfg["model_type"] == "mistral3"
    t, v = cfg["text_config"], cfg["vision_config"]
    assert (t["hidden_size"], t["num_hidden_layers"], t["num_attention_heads"], t["num_key_value_heads"], t["head_dim"]) == (1024, 28, 16, 8, 128)
    assert (t["vocab_size"], t["max_position_embeddings"]) == (151936, 16384)
    assert (v["hidden_size"], v["num_hidden_layers"], v["num_attention_heads"], v["head_dim"], v["patch_size"], v["image_size"]) == (1024, 24, 16, 64, 14, 1540)
    assert cfg["spatial_merge_size"] == 2 and cfg["image_token_index"] == IMAGE_TOKEN_ID
    proc = json.loads((d / "processor_config.json").read_text())
    assert proc["processor_class"] == "PixtralProcessor" and proc["image_token"] == "<|image_pad|>"
    assert json.loads((d / "preprocessor_config.json").read_text())["size"] == {"longest_edge": 1540}
    tok = tokenizers.Tokenizer.from_file(str(d / "tokenizer.json"))
    assert tok.token_to_id("<|image_pad|>") == 151655 and tok.token_to_id("<|im_end|>") == 151645
    ids = tok.encode("<|im_start|>user\n<|image_pad|><|im_end|>\n").ids
    assert ids[0] == 151644 and 151655 in ids
    # every id the model can emit decodes (dummy weights emit arbitrary ids)
    assert tok.decode([0, 5000, 151642, 151669, 151935])
    assert tok.get_vocab_size() >= 151936
    # chat template puts the image token in a user message
    tc = json.loads((d / "tokenizer_config.json").read_text())
    jinja2 = pytest.importorskip("jinja2")
    text = jinja2.Template(tc["chat_template"]).render(messages=[{"role": "user", "content": [{"type": "image"}]}], add_generation_prompt=True)
    assert text == "<|im_start|>user\n<|image_pad|><|im_end|>\n<|im_start|>assistant\n"


# ----------------------------------------------------------------------------- engine plumbing (fake vLLM)

import concurrent.futures as cf  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

from daemon.engines.base import PageRequest  # noqa: E402
from daemon.errors import EngineDeadError, InputError  # noqa: E402


class FakeTok:
    def apply_chat_template(self, msgs, tokenize=False, add_generation_prompt=True):  # type: ignore[no-untyped-def]
        return "<|im_start|>user\n<|image_pad|><|im_end|>\n<|im_start|>assistant\n"


class FakeLLM:
    """Stands in for AsyncLLM: one 'engine generation'; can die or hang on command."""

    def __init__(self, owner: FakeEngine) -> None:
        self.owner = owner
        self.errored = False
        self.shut = False

    def shutdown(self) -> None:
        self.shut = True

    class renderer:  # noqa: N801 - mimics the attribute
        @staticmethod
        def get_tokenizer() -> FakeTok:
            return FakeTok()


class FakeEngine(VllmEngine):
    """VllmEngine with the vLLM calls replaced: _build_llm/_request/_prepare (no warm-up)."""

    warmup_pages = 0

    def __init__(self, cfg: EngineCfg, behaviour) -> None:  # type: ignore[no-untyped-def]
        super().__init__(cfg)
        self.behaviour = behaviour  # async (engine, llm, img, prio) -> GenResult
        self.built = 0
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()

    def _prepare(self) -> None:
        pass

    def _build_llm(self):  # type: ignore[no-untyped-def]
        self.built += 1
        return FakeLLM(self)

    async def _request(self, llm, img, temperature, max_tokens, priority, warm=False):  # type: ignore[no-untyped-def]
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            return await self.behaviour(self, llm, img, priority)
        finally:
            with self.lock:
                self.active -= 1


def fcfg(**v) -> EngineCfg:  # type: ignore[no-untyped-def]
    return EngineCfg(kind="vllm", model="lightonai/LightOnOCR-2-1B", vllm={"max_pages_in_flight": 4, "hang_timeout": 1.0, **v})


def test_engine_submit_threads_backpressure_and_order() -> None:
    async def ok(eng, llm, img, prio):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.01)
        return GenResult(f"w{img.width}", "stop", 5)

    eng = FakeEngine(fcfg(), ok)
    eng.start()
    try:
        assert eng.name == "vllm:lightonai/LightOnOCR-2-1B" and eng.output_is_markdown
        reqs = [PageRequest("doc", i, Image.new("RGB", (100 + i, 50))) for i in range(30)]
        with cf.ThreadPoolExecutor(8) as ex:
            futs = list(ex.map(eng.submit, reqs))
        res = [f.result(timeout=30) for f in futs]
        # presize pads to 28 px cells: width 100+i -> next multiple of 28
        assert [r.text for r in res] == [f"w{-(-(100 + i) // 28) * 28}" for i in range(30)]
        assert [r.index for r in res] == list(range(30))
        assert eng.peak <= 4  # back-pressure: never more than max_pages_in_flight at once
    finally:
        eng.close()
    f = eng.submit(PageRequest("doc", 0, Image.new("RGB", (10, 10))))
    with pytest.raises(EngineDeadError):
        f.result(timeout=5)


def test_engine_death_restarts_and_resubmits() -> None:
    deaths = {"left": 1}

    async def dies_once(eng, llm, img, prio):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.05)
        if deaths["left"] and eng.built == 1:
            deaths["left"] -= 1
            raise EngineDeadError("core died")
        return GenResult("ok", "stop", 1)

    eng = FakeEngine(fcfg(), dies_once)
    eng.start()
    try:
        futs = [eng.submit(PageRequest("d", i, Image.new("RGB", (56, 56)))) for i in range(4)]
        assert [f.result(timeout=30).text for f in futs] == ["ok"] * 4
        assert eng.built == 2 and eng.stats["restarts"] == 1 and eng.healthy()
    finally:
        eng.close()


def test_hung_engine_is_restarted() -> None:
    async def hangs_first(eng, llm, img, prio):  # type: ignore[no-untyped-def]
        if eng.built == 1:
            await asyncio.sleep(3600)
        return GenResult("ok", "stop", 1)

    eng = FakeEngine(fcfg(hang_timeout=1.0), hangs_first)
    eng.start()
    try:
        t0 = time.monotonic()
        f = eng.submit(PageRequest("d", 0, Image.new("RGB", (56, 56))))
        assert f.result(timeout=30).text == "ok"
        assert eng.built == 2 and time.monotonic() - t0 < 20
    finally:
        eng.close()


def test_page_that_keeps_killing_the_engine_fails_only_itself() -> None:
    async def poison(eng, llm, img, prio):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.02)
        if img.width == 112:  # the poison page
            raise EngineDeadError("segfault in kernel")
        return GenResult("ok", "stop", 1)

    eng = FakeEngine(fcfg(), poison)
    eng.start()
    try:
        bad = eng.submit(PageRequest("bad", 3, Image.new("RGB", (112, 56))))
        good = [eng.submit(PageRequest("good", i, Image.new("RGB", (56, 56)))) for i in range(3)]
        with pytest.raises(InputError) as ei:
            bad.result(timeout=60)
        assert "page 4" in ei.value.reason and "crashed the OCR engine" in ei.value.reason
        assert [g.result(timeout=60).text for g in good] == ["ok"] * 3
        end = time.monotonic() + 10
        while not eng.healthy() and time.monotonic() < end:
            time.sleep(0.05)
        assert eng.healthy()
    finally:
        eng.close()


def test_close_drains_then_fails_the_rest() -> None:
    async def slow(eng, llm, img, prio):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.05 if img.width == 56 else 30)
        return GenResult("ok", "stop", 1)

    eng = FakeEngine(fcfg(hang_timeout=300), slow)
    eng.start()
    quick = eng.submit(PageRequest("d", 0, Image.new("RGB", (56, 56))))
    stuck = eng.submit(PageRequest("d", 1, Image.new("RGB", (112, 56))))
    eng.close(drain_timeout=1.0)
    assert quick.result(timeout=1).text == "ok"
    with pytest.raises((EngineDeadError, cf.CancelledError)):
        stuck.result(timeout=5)


class WarmEngine(FakeEngine):
    """FakeEngine with the warm-up on; records each request's image size and max_tokens."""

    warmup_pages = VllmEngine.warmup_pages

    def __init__(self, cfg: EngineCfg, behaviour) -> None:  # type: ignore[no-untyped-def]
        super().__init__(cfg, behaviour)
        self.calls: list[tuple[tuple[int, int], int, bool]] = []
        self.first_alone = False

    async def _request(self, llm, img, temperature, max_tokens, priority, warm=False):  # type: ignore[no-untyped-def]
        with self.lock:
            self.calls.append((img.size, max_tokens, warm))
            if len(self.calls) == 1:
                self.first_alone = self.active == 0
            elif len(self.calls) == 2:  # the second request starts only once the first has finished
                self.first_alone = self.first_alone and self.active == 0
        return await super()._request(llm, img, temperature, max_tokens, priority, warm)


def test_warm_up_runs_page_sized_requests_together_before_start_returns() -> None:
    async def ok(eng, llm, img, prio):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.05)
        return GenResult("x", "length", 8)

    eng = WarmEngine(fcfg(), ok)
    eng.start()
    try:
        # one page alone (vLLM's first input processing), then the warm-up pages in one batch,
        # done at start; a batch of 16 compiles Triton's variant of the sampler kernels for batch
        # sizes that are multiples of 16
        assert eng.warmup_pages >= 16
        assert len(eng.calls) == 1 + eng.warmup_pages and eng.peak == eng.warmup_pages
        assert eng.first_alone
        assert set(eng.calls) == {((1176, 1540), eng.warmup_tokens, True)}
        assert eng.stats["pages"] == 0  # warm-up pages are not counted as work
        assert eng.submit(PageRequest("d", 0, Image.new("RGB", (56, 56)))).result(timeout=10).text == "x"
        assert eng.calls[-1][2] is False  # a user's page is not a warm-up page (EOS respected)
    finally:
        eng.close()
    small = WarmEngine(EngineCfg(kind="vllm", render_longest_edge=1000), ok)
    assert small.warmup_image().size == (728, 980)  # follows engine.render_longest_edge, 28 px cells


@pytest.mark.parametrize("failure", ["raises", "hangs"])
def test_failed_or_stuck_warm_up_is_logged_and_start_goes_on(failure: str, caplog: pytest.LogCaptureFixture) -> None:
    async def bad_at_first(eng, llm, img, prio):  # type: ignore[no-untyped-def]
        if img.size == eng.warmup_image().size:  # the warm-up's pages fail, the user's do not
            if failure == "raises":
                raise RuntimeError("kernel compile failed")
            await asyncio.sleep(3600)
        return GenResult("ok", "stop", 1)

    eng = WarmEngine(fcfg(), bad_at_first)
    eng.warmup_timeout = 0.5
    t0 = time.monotonic()
    with caplog.at_level("WARNING", logger="daemon.engines.vllm_engine"):
        eng.start()
    try:
        assert time.monotonic() - t0 < 10
        assert f"vLLM warm-up ({eng.warmup_pages} pages) failed" in caplog.text
        assert ("kernel compile failed" in caplog.text) == (failure == "raises")
        assert eng.healthy()
        assert eng.submit(PageRequest("d", 0, Image.new("RGB", (56, 56)))).result(timeout=10).text == "ok"
    finally:
        eng.close()


def test_model_cli_dummy_and_fetch_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from daemon.commands import model

    p = argparse.ArgumentParser()
    model.add_arguments(p)
    pytest.importorskip("tokenizers")
    assert model.run(p.parse_args(["dummy", "--dir", str(tmp_path / "m")])) == 0
    assert (tmp_path / "m" / "config.json").is_file() and (tmp_path / "m" / "tokenizer.json").is_file()
    assert "load_format: dummy" in capsys.readouterr().out
    pytest.importorskip("huggingface_hub")
    hub_constants = pytest.importorskip("huggingface_hub.constants")
    # Offline: the test must never reach for the network (none but the package registries here);
    # the "no network" path is exactly what a user without hub access hits.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(FatalError) as ei:  # unknown repo: fails with or without network
        model.run(p.parse_args(["fetch", "--dir", str(tmp_path / "f"), "--repo", "lightonai/no-such-model-ocr-daemon-test"]))
    assert "lightonai/no-such-model-ocr-daemon-test" in str(ei.value) and ei.value.exit_code == 3


def test_sampler_is_triton_unless_the_environment_says_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    from daemon.engines.vllm_engine import choose_sampler

    monkeypatch.delenv("VLLM_USE_FLASHINFER_SAMPLER", raising=False)
    assert choose_sampler() == "0" and os.environ["VLLM_USE_FLASHINFER_SAMPLER"] == "0"
    monkeypatch.setenv("VLLM_USE_FLASHINFER_SAMPLER", "1")  # a machine with the CUDA toolkit
    assert choose_sampler() == "1"
