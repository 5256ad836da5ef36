"""Command line (placeholder, replaced below)."""
from __future__ import annotations


def main() -> int:
    return 0
