"""One Tesseract adapter (issue 36): ``daemon/tessapi.py`` is the only module of ``daemon/`` that
imports tesserocr, and it imports it lazily (never at its top level: ``daemon.procenv``'s
promise); its per-thread API cache, read with real Tesseract on a small generated image, gives a
thread the same API for the same spec, another thread its own, and keeps at most
``MAX_APIS_PER_THREAD`` per thread.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from PIL import Image, ImageDraw, ImageFont

from daemon import tessapi
from daemon.pages.orient import tessdata_dir

DAEMON = REPO / "daemon"
ADAPTER = DAEMON / "tessapi.py"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _tesserocr_imports(tree: ast.AST) -> list[ast.AST]:
    """Nodes of ``tree`` that import tesserocr: ``import tesserocr[.x]``, ``from tesserocr[.x]
    import ...``, ``importlib.import_module("tesserocr...")`` / ``__import__("tesserocr...")``."""
    def named(mod: str | None) -> bool:
        return mod is not None and (mod == "tesserocr" or mod.startswith("tesserocr."))

    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Import) and any(named(a.name) for a in node.names)) or (
                isinstance(node, ast.ImportFrom) and node.level == 0 and named(node.module)):
            found.append(node)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if name in ("import_module", "__import__") and named(str(node.args[0].value)):
                found.append(node)
    return found


def _importers(root: Path) -> list[str]:
    return sorted(
        f"{p.relative_to(root.parent)}:{n.lineno}"  # type: ignore[attr-defined]
        for p in root.rglob("*.py")
        for n in _tesserocr_imports(ast.parse(p.read_text(encoding="utf-8"), str(p)))
    )


def test_only_the_adapter_imports_tesserocr() -> None:
    got = _importers(DAEMON)
    assert got, "the adapter itself imports tesserocr: the walk must find it"
    others = [g for g in got if not g.startswith("daemon/tessapi.py:")]
    assert others == [], f"modules other than daemon/tessapi.py import tesserocr: {others}"


def test_the_walk_finds_every_way_of_importing(tmp_path: Path) -> None:
    """The check itself: each form of import in a module other than the adapter is found."""
    pkg = tmp_path / "daemon"
    (pkg / "pages").mkdir(parents=True)
    (pkg / "tessapi.py").write_text("def load():\n    import tesserocr\n")
    forms = ["import tesserocr", "from tesserocr import PSM", "import tesserocr.foo as t",
             "importlib.import_module('tesserocr')", "__import__('tesserocr')"]
    for k, form in enumerate(forms):
        (pkg / "pages" / f"m{k}.py").write_text(f"import importlib\n\ndef f():\n    {form}\n")
    (pkg / "pages" / "clean.py").write_text("from daemon.tessapi import PSM\nx = 'tesserocr'\n")
    got = _importers(pkg)
    assert got == ["daemon/pages/m0.py:4", "daemon/pages/m1.py:4", "daemon/pages/m2.py:4", "daemon/pages/m3.py:4",
                   "daemon/pages/m4.py:4", "daemon/tessapi.py:2"], got


def test_the_adapter_imports_tesserocr_only_on_first_use() -> None:
    """No top-level import: importing ``daemon.tessapi`` (the engine, the render stage, the PDF
    writer, the ``once`` main process do) must not load Tesseract's library, which reads
    ``OMP_THREAD_LIMIT`` when it is loaded (``daemon.procenv``)."""
    tree = ast.parse(ADAPTER.read_text(encoding="utf-8"))
    top = [n for n in tree.body if _tesserocr_imports(n) and not isinstance(n, ast.FunctionDef | ast.ClassDef)]
    assert top == []
    assert _tesserocr_imports(tree), "the adapter must import tesserocr somewhere"


def test_the_adapters_constants_are_tesserocrs() -> None:
    t = tessapi.load()
    for ours, theirs in ((tessapi.PSM, t.PSM), (tessapi.OEM, t.OEM)):
        for member in ours:
            assert int(getattr(theirs, member.name)) == member.value, member
    assert (tessapi._RIL_BLOCK, tessapi._RIL_TEXTLINE, tessapi._RIL_WORD) == (t.RIL.BLOCK, t.RIL.TEXTLINE, t.RIL.WORD)
    assert tessapi._TOP_TO_BOTTOM == t.WritingDirection.TOP_TO_BOTTOM


@pytest.fixture(scope="module")
def words_image() -> Image.Image:
    img = Image.new("L", (900, 160), 255)
    ImageDraw.Draw(img).text((30, 50), "Invoice number seven", font=ImageFont.truetype(DEJAVU, 48), fill=0)
    return img


def _on_thread(fn: Callable[[], Any]) -> Any:
    """``fn()`` run on a new thread (whose APIs are ended afterwards); its result."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as e:  # delivered to the test
            out.append(e)
        finally:
            tessapi.release_thread()

    t = threading.Thread(target=run)
    t.start()
    t.join(120)
    assert out, "the thread did not finish"
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def _spec(psm: tessapi.PSM = tessapi.PSM.AUTO, variables: tuple[tuple[str, str], ...] = ()) -> tessapi.ApiSpec:
    return tessapi.ApiSpec(tessdata_dir(), "eng", psm, tessapi.OEM.LSTM_ONLY, variables)


def test_one_api_per_spec_and_thread_that_reads(words_image: Image.Image) -> None:
    def here() -> tuple[int, int, str, list[str], list[tessapi.LineRead]]:
        a, b = tessapi.thread_api(_spec()), tessapi.thread_api(_spec())
        assert a is b
        c = tessapi.thread_api(_spec(tessapi.PSM.SINGLE_BLOCK))
        assert c is not a and tessapi.cache_size() == 2
        a.set_image(words_image)
        text = a.text()
        words = [w.text for w in a.words(dictionary=True) if w.text and w.in_dictionary and w.conf > 50]
        a.clear()
        return id(a), tessapi.loads(), text, words, a.layout_lines(words_image)

    before = tessapi.loads()
    first, loads_after, text, words, lines = _on_thread(here)
    assert loads_after == before + 2  # two specs, two loads
    assert "Invoice number seven" in text
    assert words == ["Invoice", "number", "seven"]
    assert len(lines) == 1 and lines[0].block == 0 and not lines[0].vertical
    x0, y0, x1, y1 = lines[0].box
    assert 20 <= x0 < x1 <= 900 and 40 <= y0 < y1 <= 120
    # another thread gets its own API for the same spec (Tesseract APIs are not thread-safe)
    apis: list[tessapi.TessApi] = []

    def other() -> None:
        apis.append(tessapi.thread_api(_spec()))

    t1, t2 = threading.Thread(target=other), threading.Thread(target=other)
    t1.start(), t2.start()
    t1.join(120), t2.join(120)
    assert len(apis) == 2 and apis[0] is not apis[1]
    for a in apis:
        a.end()


def test_the_bound_per_thread_holds(words_image: Image.Image, monkeypatch: pytest.MonkeyPatch) -> None:
    """At most ``MAX_APIS_PER_THREAD`` APIs on a thread (lowered here: each load costs ~0.3 s);
    one more ends the one loaded first, and the newest reads."""
    n = 3
    monkeypatch.setattr(tessapi, "MAX_APIS_PER_THREAD", n)
    specs = [_spec(variables=(("user_defined_dpi", str(100 + k)),)) for k in range(n + 1)]

    def fill() -> tuple[list[int], list[str], bool, bool, str]:
        apis = [tessapi.thread_api(s) for s in specs[:n]]
        sizes = [tessapi.cache_size()]
        last = tessapi.thread_api(specs[n])  # one more: the one loaded first is ended
        sizes.append(tessapi.cache_size())
        last.set_image(words_image)
        text = last.text()
        last.clear()
        return sizes, [a.languages() for a in apis], tessapi.cached(specs[0]), tessapi.cached(specs[1]), text

    sizes, langs, first_kept, second_kept, text = _on_thread(fill)
    assert sizes == [n, n]
    assert langs == ["", *["eng"] * (n - 1)]  # the first one ended, the others loaded
    assert not first_kept and second_kept
    assert "Invoice number seven" in text
