"""One headless Chromium per test process, kept from one module that drives pages to the next.

A launch (Playwright's driver, then the browser) costs 1-2 s, and the page tests are spread
over a dozen modules. Between two such modules the browser stays; before a module that uses
none it is stopped, because Playwright's sync API holds an event loop that ``asyncio.run``
in other tests would find running. Each module's pages are closed when it ends, as closing
the browser did.
"""

from __future__ import annotations

from typing import Any

_open: list[tuple[Any, Any]] = []  # (the Playwright driver, its browser)


def shared(sync_api: Any, exe: str, args: list[str]) -> Any:
    """The running browser, or a new one from ``exe`` with ``args``."""
    if not _open:
        driver = sync_api.sync_playwright().start()
        try:
            _open.append((driver, driver.chromium.launch(executable_path=exe, args=args)))
        except BaseException:
            driver.stop()
            raise
    return _open[0][1]


def close_pages() -> None:
    """Close every page (each in its context) the browser holds."""
    for _, browser in _open:
        for context in browser.contexts:
            context.close()


def stop() -> None:
    """Stop the browser and its driver, if running."""
    while _open:
        driver, browser = _open.pop()
        try:
            browser.close()
        finally:
            driver.stop()
