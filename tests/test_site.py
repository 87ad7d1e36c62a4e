"""The documentation site: built by the docs command (Sphinx + myst-nb), opened in headless Chromium.

Every page loads with no console error, every internal link resolves, no code or output block is wider than its box
at 1280 px, every cell that prints shows its output on its page, the API page lists exactly the public API, and
search works with no network. Screenshots of the front page, the three evaluators' pages and the API page are kept
in `_docs/screenshots/`.
"""
import functools, html, http.server, importlib, json, os, re, shutil, subprocess, threading
from pathlib import Path
import pytest
from helpers import ROOT

SITE = ROOT / "_docs"
EVALUATOR_PAGES = {"coretex": "35_evaluate.html", "beliefs": "72_tenure.html", "consensus": "61_seed_rules.html"}
# A sandboxed root with no network: no sandbox, no GPU, and none of Chromium's calls home.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
# A block is too wide when it overflows its parent, or when its content is wider than it and it does not scroll.
TOO_WIDE = """() => [...document.querySelectorAll('div.cell_input pre, div.cell_output pre, div.cell_output, div.highlight, table, dl.py > dt')]
  .filter(e => e.offsetParent !== null)
  .filter(e => e.getBoundingClientRect().right > e.parentElement.getBoundingClientRect().right + 1
            || (e.scrollWidth > e.clientWidth + 1 && !['auto', 'scroll'].includes(getComputedStyle(e).overflowX)))
  .map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 60))"""


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
    assert r.returncode == 0, r.stderr[-3000:]   # the docs command fails on any Sphinx warning or error (sphinx-build -W)
    BUILD_LOG.update(stdout=r.stdout, stderr=r.stderr)
    return SITE


BUILD_LOG = {}


def test_the_build_has_no_warning(site):
    said = [l for l in (BUILD_LOG["stdout"] + BUILD_LOG["stderr"]).splitlines() if re.search(r"\b(WARNING|ERROR|CRITICAL)\b", l)]
    assert said == [], said[:20]


@pytest.fixture(scope="module")
def served(site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args): pass
    handler = functools.partial(Quiet, directory=str(site))
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


def page_text(page: Path) -> str:
    "The text a reader sees on a built page, whitespace collapsed."
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page.read_text(), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def printed_lines(nb: Path) -> list:
    "For each code cell a reader sees that prints or returns text, the first line of what it printed."
    out = []
    for c in json.loads(nb.read_text())["cells"]:
        src = "".join(c["source"]) if c["cell_type"] == "code" else ""
        if not src or re.match(r"#\|\s*(hide|export)", src): continue
        for o in c.get("outputs", []):
            text = "".join(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
            first = next((l.strip() for l in text.splitlines() if l.strip() and "\x1b" not in l), None)
            if first and "text/html" not in o.get("data", {}) and "image/png" not in o.get("data", {}):
                out.append(first[:60]); break
    return out


def test_every_internal_link_resolves(site):
    pages = sorted(site.glob("*.html"))
    assert {"index.html", "api.html", "search.html", *EVALUATOR_PAGES.values()} <= {p.name for p in pages}
    broken = []
    for page in pages:
        for href in re.findall(r'<a[^>]+href="([^"]+)"', page.read_text()):
            target = href.split("#")[0]
            if not target or re.match(r"[a-z]+:", target): continue
            if not (page.parent / target).exists(): broken.append(f"{page.name} -> {href}")
    assert not broken, broken


def test_every_printed_output_is_on_its_page(site):
    missing = {}
    for nb in sorted((ROOT / "nbs").glob("*.ipynb")):
        text = page_text(site / f"{nb.stem}.html")
        gone = [line for line in printed_lines(nb) if " ".join(html.unescape(line).split()) not in text]
        if gone: missing[nb.stem] = gone
    assert not missing, missing


def test_no_empty_prompts_and_figures_have_alt_text(site):
    for page in sorted(site.glob("[0-9i]*.html")):
        text = page.read_text()
        assert "In&nbsp;[" not in text and "In [ ]" not in text, page.name
        for alt in re.findall(r'<img[^>]*?alt="([^"]*)"[^>]*src="_images/', text) + re.findall(r'<img[^>]*src="_images/[^"]*"[^>]*?alt="([^"]*)"', text):
            # myst-nb's own alt text is the image's path: the figure's cell has no `#| fig-alt: ...` line
            assert alt.strip() and not alt.startswith("_images/") and "No description" not in alt, f"{page.name}: a figure with alt text {alt!r}"


def test_api_page_lists_exactly_the_public_api(site):
    import coretex
    from coretex.docs import api_modules, api_page, handed_on, site_notebooks
    modules = api_modules(site_notebooks(ROOT / "nbs"))
    want = {f"{m}.{n}" for m in modules for n in importlib.import_module(m).__all__ if n not in handed_on(m)}
    reference = "".join(p.read_text() for p in sorted(site.glob("api_*.html")))   # one page per module
    ids = set(re.findall(r'<dt class="sig sig-object py" id="(coretex\.[\w.]+)"', reference))
    listed = {i for i in ids if i.rsplit(".", 1)[0] in modules}   # module-level entries, not a class's members
    assert listed == want, {"missing": sorted(want - listed)[:20], "extra": sorted(listed - want)[:20]}
    top = re.search(r"<table.*?</table>", (site / "api.html").read_text(), re.S).group(0)   # from coretex import ...
    assert [n for n in coretex.__all__ if not re.search(rf'title="coretex\.[\w.]+\.{n}"', top)] == []
    assert [api_page(m) for m in modules if f'href="{api_page(m)}.html"' not in (site / "api.html").read_text()] == []
    assert not any(i.startswith("coretex.cli.") for i in ids)   # the CLI's cmd_* and add_* are how it parses, not an API


def test_search_finds_ndcg_offline(browser, served):
    tab = browser.new_page()
    tab.goto(f"{served}/search.html?q=nDCG", wait_until="load")
    tab.wait_for_selector("#search-results li", timeout=20_000)
    assert tab.locator("#search-results li").count() > 0
    tab.close()


@pytest.mark.parametrize("name,page", [("front", "index.html"), *EVALUATOR_PAGES.items(), ("api", "api.html")])
def test_page_loads_clean_and_fits(browser, served, name, page):
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
    assert tab.evaluate(TOO_WIDE) == []
    assert tab.evaluate("document.documentElement.scrollWidth") <= 1280
    (SITE / "screenshots").mkdir(exist_ok=True)
    tab.screenshot(path=str(SITE / "screenshots" / f"{name}.png"))
    tab.close()
    assert not errors, errors


# What a reader sees at 1280 px: code that fits its column, outputs on every page, the site's chrome.
SCROLLING = """() => {
  const ctx = document.createElement('canvas').getContext('2d');
  let lines = 0, over = 0;
  for (const pre of [...document.querySelectorAll('div.cell_input pre')].filter(e => e.offsetParent !== null)) {
    const cs = getComputedStyle(pre); ctx.font = cs.font;
    const room = pre.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    for (const line of pre.innerText.replace(/\\n$/, '').split('\\n')) { lines += 1; if (ctx.measureText(line).width > room + 1) over += 1; }
  }
  const tables = [...document.querySelectorAll('div.cell_output table')].filter(t => t.scrollWidth > t.clientWidth + 1).length;
  return {lines, over, tables};
}"""


def site_pages() -> list:
    from coretex.docs import site_notebooks
    return [nb.stem for nb in site_notebooks(ROOT / "nbs")]


def test_code_fits_its_column_on_every_page(browser, served):
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    lines = over = 0
    wide_tables, worst = {}, {}
    for stem in site_pages():
        tab.goto(f"{served}/{stem}.html", wait_until="load")
        r = tab.evaluate(SCROLLING)
        lines, over = lines + r["lines"], over + r["over"]
        if r["tables"]: wide_tables[stem] = r["tables"]
        if r["over"]: worst[stem] = r["over"]
    tab.close()
    print(f"{over} of {lines} visible code lines scroll at 1280 px ({100 * over / lines:.2f}%)")   # `pytest -n 0 -s -k column`
    assert lines > 2000   # exported code is not on the page (its show_doc is); what is shown is formatted to fit
    assert over <= 0.02 * lines, (f"{over} of {lines} visible code lines scroll", sorted(worst.items(), key=lambda kv: -kv[1])[:10])
    assert wide_tables == {}, wide_tables


def test_every_page_shows_what_its_code_computes(site):
    quiet = [stem for stem in site_pages() if stem != "index" and 'class="cell_output' not in (site / f"{stem}.html").read_text()]
    assert quiet == [], f"pages with no output: {quiet}"


def test_the_site_says_whose_it_is_and_where_names_come_from(site):
    front, api = (site / "index.html").read_text(), "".join(p.read_text() for p in sorted(site.glob("api_*.html")))
    for page in (front, (site / "api.html").read_text(), api):
        assert "Apache-2.0" in page and "coretex" in page and "Author name not set" not in page
        assert "copybtn" in page or "copybutton" in page   # sphinx-copybutton's button and its script
    assert 'class="viewcode-link"' in api and not re.search(r'href="mailto:', api)
    entries = re.findall(r'<dt class="sig sig-object py" id="([^"]+)">.*?</dt>\s*<dd>(.*?)</dd>', api, re.S)
    empty = [i for i, dd in entries if not re.sub(r"<[^>]+>|\s", "", dd)]
    assert len(entries) > 500 and empty == [], empty[:10]


def test_no_path_of_the_build_machine_on_the_site(site):
    home = str(Path.home())
    needles = [str(ROOT), "/work/", "/tmp/", "site-packages", home + "/"]
    leaks = {p.name: n for p in site.rglob("*.html") for n in needles if n in p.read_text()}
    assert leaks == {}, leaks
