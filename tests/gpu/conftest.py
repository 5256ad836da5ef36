"""GPU tests: run only where vLLM is importable and an NVIDIA GPU is present (the device machine).

They use a dummy-weight LightOnOCR-2-1B folder (``daemon.engines.modelfolder.write_dummy_model``): the real
architecture with random weights, so the text is noise but every code path and cost is real.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from daemon.engines import nvidia_gpu_present


def gpu_ready() -> bool:
    return importlib.util.find_spec("vllm") is not None and nvidia_gpu_present()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_ready():
        return
    skip = pytest.mark.skip(reason="needs vLLM and an NVIDIA GPU")
    for item in items:
        if "tests/gpu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def dummy_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from daemon.engines.modelfolder import write_dummy_model

    return write_dummy_model(tmp_path_factory.mktemp("model") / "LightOnOCR-2-1B-dummy")
