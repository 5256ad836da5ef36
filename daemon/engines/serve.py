"""``vllm serve`` with the daemon's own engine settings and its Pixtral encoder patch.

For the ``openai`` engine's servers (one per GPU host, or per GPU): the in-process ``vllm`` engine
and these servers then run the same vLLM settings and the same vision encoder.

Contract:
- ``serve_args(cfg, host, port)`` (pure; unit-tested): the ``vllm serve`` argument list for
  ``engine_args(cfg, dp_size=data_parallel_size(cfg))`` -- the model, then one flag per setting
  (``--max-num-seqs 256``, ``--no-enable-prefix-caching``, ``--limit-mm-per-prompt '{"image": 1}'``,
  ``--data-parallel-size N`` on N GPUs...), every flag one of vLLM 0.26's ``EngineArgs`` CLI flags.
- ``python -m daemon.engines.serve --config rules.yaml [--host H] [--port P] [--print] [-- ARGS]``:
  with ``--print`` prints the command (``vllm serve ...``: for a plain vLLM install elsewhere) and
  exits; otherwise applies the Pixtral patch of ``engine.vllm.pixtral_patch`` (or
  ``$OCR_DAEMON_PIXTRAL_PATCH``) in this process and runs vLLM's own CLI (``vllm serve`` + the
  arguments + ARGS) here. vLLM's CLI asks for the ``spawn`` start method
  (``cli_env_setup``: ``VLLM_WORKER_MULTIPROC_METHOD=spawn`` unless set), which would start the
  engine core without the patch; the launcher sets ``fork`` (vLLM's library default, what the
  daemon's own engine uses) unless the environment names one, so the engine core inherits it.
  ``engine.debug.pixtral_marker`` works as in the daemon (the engine core notes the encoder it ran).
- ``register()`` is the ``vllm.general_plugins`` entry point (pyproject.toml): vLLM calls it in
  every process it starts, the spawned engine core included (``EngineCore.__init__`` loads the
  general plugins). It patches only where ``$OCR_DAEMON_PIXTRAL_PATCH`` is set (an installed
  ocr-daemon leaves other ``vllm serve`` services of the host alone), marker from
  ``$OCR_DAEMON_PIXTRAL_MARKER``: ``OCR_DAEMON_PIXTRAL_PATCH=varlen vllm serve ...`` where
  ocr-daemon is installed in vLLM's environment.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

from daemon.config import EngineCfg

#: engine_args keys that are not ``vllm serve`` flags, or that are vLLM's default anyway
_NOT_FLAGS = {"model", "enable_log_requests"}
#: store_true flags of vLLM's CLI: only True can be said
_STORE_TRUE = {"disable_log_stats"}


def serve_args(cfg: EngineCfg, host: str = "127.0.0.1", port: int = 8000) -> list[str]:
    """``vllm serve`` arguments (after ``serve``) for the daemon's engine settings."""
    from daemon.engines.vllm_engine import data_parallel_size, engine_args, gpu_total_memory

    kw = engine_args(cfg, dp_size=data_parallel_size(cfg), gpu_total_bytes=gpu_total_memory())
    out = [str(kw["model"]), "--host", host, "--port", str(port), "--served-model-name", str(kw["model"])]
    for key, val in kw.items():
        if key in _NOT_FLAGS:
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(val, bool):
            if val:
                out.append(flag)
            elif key not in _STORE_TRUE:
                out.append("--no-" + flag[2:])
        elif isinstance(val, dict):
            out += [flag, json.dumps(val, separators=(",", ":"))]
        else:
            out += [flag, str(val)]
    return out


def register() -> None:
    """The ``vllm.general_plugins`` entry point: patch where ``$OCR_DAEMON_PIXTRAL_PATCH`` says so."""
    from daemon.engines.pixtral_patch import ENV, patch_pixtral_attention, resolve_mode, set_marker

    if not os.environ.get(ENV):
        return
    marker = os.environ.get("OCR_DAEMON_PIXTRAL_MARKER")
    if marker:
        set_marker(marker)
    patch_pixtral_attention(resolve_mode())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(prog="python -m daemon.engines.serve", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True, help="the daemon's rules.yaml (its engine section is used)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--print", action="store_true", help="print the vllm serve command and exit")
    a = ap.parse_args(argv)
    from daemon.config import load_config

    cfg = load_config(a.config).engine
    args = serve_args(cfg, a.host, a.port) + extra
    if a.print:
        print("vllm serve " + " ".join(shlex.quote(x) for x in args))
        return 0
    from daemon.engines.pixtral_patch import patch_pixtral_attention, resolve_mode, set_marker
    from daemon.engines.vllm_engine import check_model_source, choose_sampler

    check_model_source(cfg.model)
    choose_sampler()
    os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "fork")
    set_marker(cfg.debug.pixtral_marker)
    patch_pixtral_attention(resolve_mode(cfg.vllm.pixtral_patch))
    from vllm.entrypoints.cli.main import main as vllm_main

    sys.argv = ["vllm", "serve", *args]
    vllm_main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
