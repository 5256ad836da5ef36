"""install.sh's GPU drop-in opens every /dev/nvidiaN: ``install.sh --gpu-device-lines DIR`` prints the
lines the drop-in gets beyond its template, for device nodes staged under DIR (the function the real
install runs on /dev). The whole --gpu install is tests/e2e/test_install.py's."""

from __future__ import annotations

import grp
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def lines(dev: Path) -> list[str]:
    r = subprocess.run(["bash", str(REPO / "install.sh"), "--gpu-device-lines", str(dev)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_every_gpu_node_but_the_templates_gets_a_line(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidia10", "nvidiactl", "nvidia-uvm",
                 "nvidia-uvm-tools", "nvidia-modeset", "nvidia1x"):
        (dev / name).touch(mode=0o666)
    (dev / "nvidia-caps").mkdir()
    # the template (gpu.conf) allows nvidia0, nvidiactl, nvidia-uvm(-tools), nvidia-modeset
    template = (REPO / "systemd/ocr-daemon.service.d/gpu.conf").read_text(encoding="utf-8")
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"):
        assert f"DeviceAllow=/dev/{name} rw" in template
    # 5 GPUs: a DeviceAllow line per further node, host-memory limits for 5 engine cores
    assert sorted(lines(dev)) == sorted([*(f"DeviceAllow={dev}/nvidia{n} rw" for n in (1, 2, 3, 10)),
                                         "MemoryHigh=76G", "MemoryMax=80G"])
    assert "MemoryHigh=28G" in template and "MemoryMax=32G" in template  # one GPU's, replaced


def test_one_gpu_adds_nothing_and_group_only_nodes_add_their_group(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidiactl"):
        (dev / name).touch(mode=0o666)
    os.chmod(dev / "nvidiactl", 0o666)
    assert lines(dev) == []
    os.chmod(dev / "nvidiactl", 0o660)
    group = grp.getgrgid((dev / "nvidiactl").stat().st_gid).gr_name
    if group == "root":
        if os.geteuid() != 0:
            pytest.skip("files are created in group root and we cannot change that")
        os.chown(dev / "nvidiactl", -1, grp.getgrnam("video").gr_gid if _has("video") else 65534)
        group = grp.getgrgid((dev / "nvidiactl").stat().st_gid).gr_name
    assert lines(dev) == [f"SupplementaryGroups={group}"]


def _has(name: str) -> bool:
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False
