"""``ocr-daemon model fetch|dummy [--dir DIR] [--repo ID]``: fetch the vLLM engine's model, or write a
dummy-weights model folder for testing (the folders themselves: ``daemon.engines.modelfolder``).

Contract: ``add_arguments(p)`` / ``run(args) -> exit code`` (0), printing where the model is and
the config keys that use it. A failed download raises ``FatalError(ExitCode.ENGINE)`` for
``daemon.cli.main`` to report (exit 3).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from daemon.engines.modelfolder import DEFAULT_DIR, DEFAULT_REPO, fetch_model, write_dummy_model


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``ocr-daemon model``."""
    p.add_argument("action", choices=["fetch", "dummy"], help="fetch: download the model; dummy: write a weightless copy")
    p.add_argument("--dir", type=Path, default=None, help=f"target folder (default {DEFAULT_DIR})")
    p.add_argument("--repo", default=DEFAULT_REPO, help="HF repo id for fetch")


def run(args: argparse.Namespace) -> int:
    """Run ``ocr-daemon model ...``; returns the exit code. Raises FatalError for the CLI to map."""
    folder = args.dir or DEFAULT_DIR
    if args.action == "dummy":
        write_dummy_model(folder)
        print(f"wrote {folder} (dummy weights: use engine.model: {folder} and engine.vllm.load_format: dummy)")
        return 0
    path = fetch_model(args.repo, folder)
    print(f"downloaded {args.repo} to {path} (use engine.model: {path})")
    return 0
