"""The documentation site: built by the docs command, opened in headless Chromium.

Every page must load with no console error, every internal link must resolve and every figure must be drawn.
Screenshots of the front page and of one page per evaluator are kept in `_docs/screenshots/`.
"""
import functools, http.server, os, re, shutil, subprocess, threading
from pathlib import Path
import pytest
from helpers import ROOT

SITE = ROOT / "_docs"
EVALUATOR_PAGES = {"coretex": "08_evaluate.html", "beliefs": "13_tenure.html", "consensus": "11_consensus.html"}
# A sandboxed root with no network: no sandbox, no GPU, and none of Chromium's calls home.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


@functools.cache
def chromium() -> str:
    "Debian's Chromium, installed on first use where this user may install packages; skipped with the reason otherwise."
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found: return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("Chromium is not installed and this user cannot install it (needs root and apt-get: apt-get install chromium)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if r.returncode: pytest.skip(f"Chromium could not be installed ({' '.join(cmd)}: {r.stderr.strip()[-200:]})")
    return shutil.which("chromium")


@pytest.fixture(scope="module")
def site():
    r = subprocess.run(["coretex", "docs", "--out", str(SITE)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return SITE


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    exe = chromium()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        yield b
        b.close()


def test_every_internal_link_resolves(site):
    pages = sorted(site.glob("*.html"))
    assert {"index.html", "api.html", *EVALUATOR_PAGES.values()} <= {p.name for p in pages}
    broken = []
    for page in pages:
        for href in re.findall(r'<a[^>]+href="([^"]+)"', page.read_text()):
            target = href.split("#")[0]
            if not target or re.match(r"[a-z]+:", target): continue
            if not (page.parent / target).exists(): broken.append(f"{page.name} -> {href}")
    assert not broken, broken


@pytest.mark.parametrize("name,page", [("front", "index.html"), *EVALUATOR_PAGES.items(), ("api", "api.html")])
def test_page_loads_clean_with_its_figures(browser, served, name, page):
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    assert tab.goto(f"{served}/{page}", wait_until="load").ok
    tab.wait_for_timeout(300)
    figures = tab.eval_on_selector_all("main img", "imgs => imgs.map(i => [i.complete, i.naturalWidth])")
    assert all(done and width > 0 for done, width in figures), figures
    if page == "index.html": assert len(figures) >= 3, f"the front page shows {len(figures)} figures, not one per evaluator"
    if page in EVALUATOR_PAGES.values(): assert figures, f"the {name} evaluator's page has no figure"
    assert tab.locator("nav.ctx-sidebar a.current").count() == 1
    (SITE / "screenshots").mkdir(exist_ok=True)
    tab.screenshot(path=str(SITE / "screenshots" / f"{name}.png"))
    if figures:   # and the page's first figure in view, as a reader scrolling to it sees it
        tab.locator("main img").first.scroll_into_view_if_needed()
        tab.screenshot(path=str(SITE / "screenshots" / f"{name}-figure.png"))
    tab.close()
    assert not errors, errors
