"""``fsio.is_within``: the one "is this path that folder or inside it" test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from daemon.fsio import is_within


@pytest.mark.parametrize(
    ("path", "folder", "inside"),
    [
        ("/srv/inbox", "/srv/inbox", True),  # the folder itself
        ("/srv/inbox/a.pdf", "/srv/inbox", True),
        ("/srv/inbox/sub/deep/a.pdf", "/srv/inbox", True),
        ("/srv/inbox2/a.pdf", "/srv/inbox", False),  # a shared name prefix is not inside
        ("/srv/inbox", "/srv/inbox/sub", False),  # the parent is not inside its child
        ("/srv/in", "/srv/inbox", False),
        ("/srv/inbox/", "/srv/inbox", True),  # a trailing slash changes nothing
        ("/srv/inbox/a", "/srv/inbox/", True),
        ("/anything", "/", True),  # a mount at the root holds every path
        ("/", "/srv", False),
        ("rel/a.pdf", "rel", True),
        ("relx/a.pdf", "rel", False),
    ],
)
def test_is_within_compares_whole_components(path: str, folder: str, inside: bool) -> None:
    assert is_within(path, folder) is inside
    assert is_within(Path(path), Path(folder)) is inside


def test_is_within_does_not_resolve_links_the_caller_chooses(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    outside = tmp_path / "outside"
    inbox.mkdir()
    outside.mkdir()
    (inbox / "link").symlink_to(outside)
    linked = inbox / "link" / "a.pdf"
    assert is_within(linked, inbox)  # lexically inside
    assert not is_within(os.path.realpath(linked), os.path.realpath(inbox))  # really outside
