"""Opens every page of the built notebook site in headless Chromium, as a reader would.

    browser_test.py OUT

serves OUT/site (run_notebooks.py site OUT built it) on a loopback port and
loads it in Debian's chromium through chromium-driver and selenium
(scripts/setup.sh installs all three). It fails, naming the page, when

  - the home page's navigation does not link a notebook or page of
    docs/mkdocs.yml's nav (each page is then opened through that link);
  - a page logs an error to the browser's console (a failed request, a
    script error);
  - an image of a page is missing or empty (naturalWidth 0), a notebook
    page shows fewer or more figures than its executed notebook holds, or a
    figure is shown narrower than its own width (its 9-pt text would shrink).

A screenshot of each whole page is kept in OUT/screenshots/ (NAME.png) for a
person to look at.
"""

import base64
import functools
import http.server
import json
import pathlib
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_notebooks  # noqa: E402  (the nav, fail(), need())

CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMEDRIVER = pathlib.Path("/usr/bin/chromedriver")
WIDTH = 1600  # the width at which the content column shows a 10-inch figure at its own size
MIN_SHOWN = 0.95  # a figure shown narrower than this share of its width shrinks its 9-pt text
MAX_SCREENSHOT_HEIGHT = 16000  # Chromium's limit for one capture is 16384 px
PAGE_TIMEOUT_S = 30


def fail(message):
    run_notebooks.fail(f"browser: {message}")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per request would bury the test's own lines
        pass


def url_path(target):
    """The site path of a nav target (use_directory_urls): x.ipynb -> x/."""
    if target == "index.md":
        return ""
    stem = target.rsplit(".", 1)[0]
    return f"{stem}/"


def expected_figures(out, target):
    """Images a notebook page must show: the image outputs of its executed cells."""
    if not target.endswith(".ipynb"):
        return None
    nb = json.loads((out / "pages" / target).read_text(encoding="utf-8"))
    count = 0
    for cell in nb["cells"]:
        if "assertions" in cell.get("metadata", {}).get("tags", []):
            continue  # left out of the site (and they have no outputs)
        for output in cell.get("outputs", []):
            if any(k.startswith("image/") for k in output.get("data", {})):
                count += 1
    return count


def start_driver():
    run_notebooks.need("selenium", "the site's browser test")
    from selenium import webdriver
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not tool.is_file():
            fail(f"{tool} is missing: scripts/setup.sh installs Debian's chromium and chromium-driver")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WIDTH},1000", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver by path: Selenium Manager would otherwise try to download one.
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)


def wait_loaded(driver):
    deadline = time.monotonic() + PAGE_TIMEOUT_S
    while time.monotonic() < deadline:
        done = driver.execute_script(
            "return document.readyState === 'complete' && "
            "Array.from(document.images).every(i => i.complete)")
        if done:
            return
        time.sleep(0.05)
    fail(f"{driver.current_url} did not finish loading in {PAGE_TIMEOUT_S} s")


def screenshot(driver, path):
    height = driver.execute_script("return document.documentElement.scrollHeight")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": WIDTH, "height": min(height, MAX_SCREENSHOT_HEIGHT), "scale": 1}})
    data = base64.b64decode(shot["data"])
    if len(data) < 1000:
        fail(f"the screenshot of {driver.current_url} is empty ({len(data)} bytes)")
    path.write_bytes(data)
    return height


def main(argv):
    if len(argv) != 1:
        fail("usage: browser_test.py OUT (the folder run_notebooks.py built the site in)")
    out = pathlib.Path(argv[0]).resolve()
    site = out / "site"
    if not (site / "index.html").is_file():
        fail(f"no site in {site}: run run_notebooks.py site {out} first")
    shots = out / "screenshots"
    shots.mkdir(exist_ok=True)
    for old in shots.glob("*.png"):
        old.unlink()
    targets = run_notebooks.nav_targets()

    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    start = time.monotonic()
    driver = start_driver()
    problems = []
    try:
        driver.get(base)
        wait_loaded(driver)
        nav_links = set(driver.execute_script(
            "return Array.from(document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]'))"
            ".map(a => a.href)"))
        driver.get_log("browser")  # the home page is checked below, as a page of its own
        for target in targets:
            url = base + url_path(target)
            if target != "index.md" and url not in nav_links:
                problems.append(f"{target}: the navigation of the home page does not link {url}")
                continue
            driver.get(url)
            wait_loaded(driver)
            name = url_path(target).strip("/").replace("/", "--") or "index"
            errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            title = driver.title
            images = driver.execute_script(
                "return Array.from(document.querySelectorAll('article img'))"
                ".map(i => [i.getAttribute('src').slice(0, 60), i.complete, i.naturalWidth, i.naturalHeight, "
                "i.getBoundingClientRect().width])")
            height = screenshot(driver, shots / f"{name}.png")
            empty = [src for src, complete, w, h, shown in images if not complete or w == 0 or h == 0]
            shrunk = [(w, round(shown)) for src, complete, w, h, shown in images if w and shown < MIN_SHOWN * w]
            want = expected_figures(out, target)
            line = f"{target}: {len(images)} image(s), {len(errors)} console error(s), {height} px"
            print(f"browser_test: {line}")
            if "404" in title:
                problems.append(f"{target}: the page is the 404 page ({title!r})")
            problems += [f"{target}: console error: {e}" for e in errors]
            problems += [f"{target}: image {src!r}... is missing or empty" for src in empty]
            problems += [f"{target}: a figure {w} px wide is shown {shown} px wide: its text is smaller than "
                         "drawn (make the figure narrower)" for w, shown in shrunk]
            if want is not None and want != len(images):
                problems.append(f"{target}: the notebook has {want} figure(s), the page shows {len(images)}")
    finally:
        driver.quit()
        server.shutdown()
    if problems:
        fail(f"{len(problems)} problem(s):\n  " + "\n  ".join(problems))
    print(f"browser_test: {len(targets)} page(s) opened in headless Chromium in "
          f"{time.monotonic() - start:.1f} s, no console error, every figure drawn; screenshots in {shots}")


if __name__ == "__main__":
    main(sys.argv[1:])
