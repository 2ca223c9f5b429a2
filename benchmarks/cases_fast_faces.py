"""Cases for issue 43's faces: ``cctool view``'s first screen on 120,000 nodes against
``cctool read`` of the same database, and the page of 200,000 nodes against the page the last
recorded release wrote (the figures of "The page at 200,000 nodes" in the README).

Each case runs both sides in fresh processes, interleaved (one of each per round), and keeps
the best of each; the peer's time is ``notes["peer_s"]``, which the table shows as the floor,
so its ratio is the row's ratio.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path

from benchmarks._harness import DATA, ROOT, Measurement, Skip, case, cctool_command, synth_db

ROUNDS = 3
PAGE_ROUNDS = 5  # a page opens in 1-3 s on a loaded machine: more rounds for its best
VIEWER_DB = (120_000, 64)
PAGE_NODES = 200_000
RELEASE = "c95f8e0"  # the page of the README's "The page at 200,000 nodes" (2026-11-28)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _viewer_db() -> Path:
    return synth_db(*VIEWER_DB)


def _on_screen(command: list[str], marker: str, tmux: str) -> tuple[float, str]:
    """Seconds from starting ``command`` in a 120 x 40 terminal (a tmux server of this
    process's own) until its screen shows ``marker``, and that screen."""
    import shlex

    line = shlex.join(["env", f"PYTHONPATH={ROOT.parent}", *command])
    socket = f"bench{os.getpid()}-{time.monotonic_ns()}"  # a server of its own each time
    start = time.perf_counter()
    subprocess.run(
        [
            tmux,
            "-L",
            socket,
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            str(ROOT.parent),
            f"{line}; sleep 30",
        ],
        check=True,
    )
    screen = ""
    try:
        while time.perf_counter() - start < 300:
            screen = subprocess.run(
                [tmux, "-L", socket, "capture-pane", "-p", "-t", "b"],
                capture_output=True,
                text=True,
            ).stdout
            if marker in screen:
                return time.perf_counter() - start, screen
            time.sleep(0.02)
        raise RuntimeError(f"no {marker!r} on the screen after 300 s: {screen[-300:]}")
    finally:
        subprocess.run([tmux, "-L", socket, "kill-server"], check=False)


@case("fast-viewer-first-screen-120k", prepare=_viewer_db)
def viewer_first_screen() -> Measurement:
    """cctool view of 120,000 nodes x 64 ranks to its first screen vs cctool read (tmux)

    Each in a fresh process in a 120 x 40 tmux pane, until the viewer's header or the read's
    summary is on the screen; interleaved, best of 3."""
    tmux = shutil.which("tmux")
    if tmux is None:
        raise Skip("tmux is not installed")
    db = str(_viewer_db())
    cmd = cctool_command()
    view, read, screen = [], [], ""
    for _ in range(ROUNDS):
        t, screen = _on_screen([*cmd, "view", db], "rows", tmux)
        view.append(t)
        read.append(_on_screen([*cmd, "read", db], "root ", tmux)[0])
    hot = "opened on the hot path" in screen
    return Measurement(
        wall_s=min(view),
        rows=VIEWER_DB[0],
        notes={
            "peer_s": min(read),
            "peer": "cctool read DB",
            "ratio": min(view) / min(read),
            "opened_on_hot_path": hot,
            "view_s": view,
            "read_s": read,
        },
    )


def _page_db() -> Path:
    from benchmarks.bench_page import _db

    return _db(PAGE_NODES)


def _release_source() -> Path:
    """cctool as of :data:`RELEASE`, unpacked under ``benchmarks/_data``."""
    where = DATA / f"cctool-{RELEASE}"
    if not (where / ".complete").exists():
        try:
            tar = subprocess.run(
                ["git", "-C", str(ROOT.parent), "archive", RELEASE, "cctool"],
                check=True,
                capture_output=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            raise Skip(f"cannot get cctool {RELEASE} from git: {exc}") from None
        shutil.rmtree(where, ignore_errors=True)
        with tarfile.open(fileobj=BytesIO(tar)) as archive:
            archive.extractall(where, filter="data")
        (where / ".complete").write_text(RELEASE + "\n")
    return where


def _pages() -> tuple[Path, Path]:
    """The page of the 200,000-node database written now and by :data:`RELEASE` (each by
    ``to_html`` of the frame, in a fresh process of that version)."""
    db = _page_db()
    out = (DATA / f"page-n{PAGE_NODES}-now.html", DATA / f"page-n{PAGE_NODES}-{RELEASE}.html")
    write = (
        "import sys; from cctool.readers import read; from cctool.render.html import "
        "to_html; open(sys.argv[2], 'w').write(to_html(read(sys.argv[1])))"
    )
    for path, source in zip(out, (ROOT.parent, _release_source()), strict=True):
        env = {**os.environ, "PYTHONPATH": str(source)}
        subprocess.run(
            [sys.executable, "-c", write, str(db), str(path)], check=True, env=env, cwd=str(source)
        )
    return out


def _open(browser: object, path: Path) -> tuple[float, float, float]:
    """(seconds until drawn, script heap then, script heap after a collection) in MB."""
    tab = browser.new_page(viewport={"width": 1400, "height": 850})  # type: ignore[attr-defined]
    cdp = tab.context.new_cdp_session(tab)
    start = time.perf_counter()
    tab.goto(path.resolve().as_uri())
    tab.wait_for_selector("body[data-ready]", timeout=120_000)
    wall = time.perf_counter() - start
    ready = cdp.send("Runtime.getHeapUsage")["usedSize"] / 1e6
    cdp.send("HeapProfiler.collectGarbage")
    kept = cdp.send("Runtime.getHeapUsage")["usedSize"] / 1e6
    tab.close()
    return wall, ready, kept


@case("fast-page-200k-open", prepare=_pages)
def page_open() -> Measurement:
    """the page of 200,000 nodes: open time and script heap vs the page of cctool c95f8e0

    Opened in headless Chromium until drawn (``body[data-ready]``), then the script heap
    (CDP ``Runtime.getHeapUsage``) as drawn and after a collection; interleaved, best of 5."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise Skip("playwright is not installed") from None
    now, before = (
        DATA / f"page-n{PAGE_NODES}-now.html",
        DATA / f"page-n{PAGE_NODES}-{RELEASE}.html",
    )
    if not (now.exists() and before.exists()):
        raise Skip("the pages were not written (prepare failed)")
    exe = os.environ.get("CCTOOL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    got: dict[Path, list[tuple[float, float, float]]] = {now: [], before: []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        for _ in range(PAGE_ROUNDS):
            for path in (now, before):
                got[path].append(_open(browser, path))
        browser.close()
    best = {p: tuple(min(r[k] for r in runs) for k in range(3)) for p, runs in got.items()}
    return Measurement(
        wall_s=best[now][0],
        rows=PAGE_NODES,
        notes={
            "peer_s": best[before][0],
            "peer": f"the page cctool {RELEASE} wrote",
            "ratio": best[now][0] / best[before][0],
            "heap_ready_mb": best[now][1],
            "heap_mb": best[now][2],
            "peer_heap_ready_mb": best[before][1],
            "peer_heap_mb": best[before][2],
            "page_mb": now.stat().st_size / 1e6,
            "peer_page_mb": before.stat().st_size / 1e6,
        },
    )
