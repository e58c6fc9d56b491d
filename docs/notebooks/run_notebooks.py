"""Executes the notebooks of docs/notebooks and renders them as a static site.

    run_notebooks.py execute OUT [NAME ...]   each jupytext percent script
        (docs/notebooks/NN-*.py) becomes a notebook, runs top to bottom in a
        fresh kernel (nbclient) and is written, with its outputs, to
        OUT/pages/NN-*.ipynb. A failing cell (an assertion that pins a
        number of the prose, an error) fails the run and names the notebook
        and the cell.
    run_notebooks.py site OUT
        renders OUT/pages with mkdocs and mkdocs-jupyter (docs/mkdocs.yml,
        execute: false: the notebooks ran in the step above) into OUT/site,
        with index.md, glossary.md and the docs/*.md pages (under
        reference/), then checks that OUT/site/index.html links every
        notebook and that the glossary names every recipe tag of lowbit's
        catalog.
    run_notebooks.py serve OUT [PORT]
        both steps above, then serves OUT/site on http://127.0.0.1:PORT/
        (8000 by default) until interrupted.

A code cell whose statements are all `assert`s (or one tagged "assertions"
in the script: `# %% tags=["assertions"]`) is tagged "assertions" in the
executed notebook, and the site leaves such cells out (docs/mkdocs.yml,
remove_tag_config): they pin the prose's numbers in CI without standing
between the reader and the figures. Such a cell must print and draw nothing,
or the site would hide an output: the run fails on one that does.

The notebooks are listed once, in docs/mkdocs.yml's nav. The kernel is this
interpreter (ipykernel's native kernel), so PYTHONPATH chooses the lowbit it
imports (docs/CMakeLists.txt: the one this build staged, or the venv's).
"""

import ast
import functools
import http.server
import os
import pathlib
import re
import shutil
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = HERE.parent / "mkdocs.yml"
PER_CELL_TIMEOUT_S = 300
ASSERTIONS_TAG = "assertions"
DOCS = HERE.parent  # the docs/*.md pages the site links under reference/
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours its tracebacks; a CI log shows them raw


def fail(message):
    print(f"run_notebooks: {message}", file=sys.stderr)
    sys.exit(1)


def need(module, what):
    try:
        return __import__(module)
    except ImportError as e:
        fail(f"{what} needs the Python module {module!r} ({e}); scripts/setup.sh installs it from "
             "requirements.txt into .venv")


def nav_targets():
    """Every page the nav of docs/mkdocs.yml lists, sections flattened, in order."""
    yaml = need("yaml", "reading docs/mkdocs.yml")

    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may use !!python/name tags (material's emoji); none are needed here.
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)

    def walk(entries):
        for entry in entries:
            target = next(iter(entry.values())) if isinstance(entry, dict) else entry
            if isinstance(target, list):
                yield from walk(target)
            else:
                yield target

    return list(walk(yaml.load(CONFIG.read_text(encoding="utf-8"), Loader=Loader)["nav"]))


def notebook_names():
    """The nav's notebook pages, in order (NN-name.ipynb -> NN-name)."""
    pages = [t[: -len(".ipynb")] for t in nav_targets() if t.endswith(".ipynb")]
    if not pages:
        fail(f"{CONFIG} lists no notebook in its nav")
    listed = set(pages)
    for script in HERE.glob("[0-9][0-9]-*.py"):
        if script.stem not in listed:
            fail(f"docs/notebooks/{script.name} is not in {CONFIG.name}'s nav: add it, or it is never run")
    return pages


def execute(out, only):
    jupytext = need("jupytext", "reading the percent scripts")
    nbclient = need("nbclient", "executing the notebooks")
    nbformat = need("nbformat", "writing the notebooks")
    need("ipykernel", "the notebooks' kernel")
    need("matplotlib", "the notebooks' figures")
    pages = out / "pages"
    names = notebook_names()
    if not only and pages.exists():
        shutil.rmtree(pages)  # no page of a notebook that is gone, or that failed this time
    pages.mkdir(parents=True, exist_ok=True)
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            fail(f"no such notebook: {', '.join(unknown)} (known: {', '.join(names)})")
        names = [n for n in names if n in only]
    for name in names:
        if not (HERE / f"{name}.py").is_file():
            fail(f"{CONFIG} lists {name}.ipynb but docs/notebooks/{name}.py does not exist")
    # The kernels run in docs/notebooks: a relative PYTHONPATH (as in
    # "PYTHONPATH=build/python/package ...") is made absolute first, or the
    # kernel would import another lowbit than the one asked for.
    if os.environ.get("PYTHONPATH"):
        os.environ["PYTHONPATH"] = os.pathsep.join(
            str(pathlib.Path(entry).resolve()) for entry in os.environ["PYTHONPATH"].split(os.pathsep) if entry)
    total = time.monotonic()
    for name in names:
        start = time.monotonic()
        nb = jupytext.read(HERE / f"{name}.py")
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        tag_assertion_cells(nb)
        client = nbclient.NotebookClient(nb, timeout=PER_CELL_TIMEOUT_S, kernel_name="python3",
                                         resources={"metadata": {"path": str(HERE)}})
        try:
            client.execute()
        except nbclient.exceptions.CellExecutionError as e:
            # The cell's source and the traceback: which number drifted, and where.
            fail(f"{name}: a cell failed\n{ANSI_COLOUR.sub('', str(e))}")
        except nbclient.exceptions.CellTimeoutError as e:
            fail(f"{name}: a cell ran past {PER_CELL_TIMEOUT_S} s\n{ANSI_COLOUR.sub('', str(e))}")
        for index, cell in enumerate(nb.cells):
            images = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
            if len(set(images)) < len(images):
                fail(f"{name}: cell {index} shows the same figure twice (a cell that ends in checked(fig) "
                     f"without plt.show() returns the figure, and the inline backend draws it again):\n{cell.source}")
            if ASSERTIONS_TAG in cell.metadata.get("tags", []) and cell.get("outputs"):
                fail(f"{name}: cell {index} is tagged {ASSERTIONS_TAG!r} (hidden on the site) but has an "
                     f"output; move what it prints or draws into the cell before it:\n{cell.source}")
        nbformat.write(nb, pages / f"{name}.ipynb")
        print(f"run_notebooks: {name}: {time.monotonic() - start:.1f} s")
    print(f"run_notebooks: {len(names)} notebook(s) executed in {time.monotonic() - total:.1f} s")


def only_asserts(source):
    """True for a cell whose statements are all assert statements."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False  # the kernel reports it, with the cell
    return bool(body) and all(isinstance(s, ast.Assert) for s in body)


def tag_assertion_cells(nb):
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        if ASSERTIONS_TAG not in tags and only_asserts(cell.source):
            tags.append(ASSERTIONS_TAG)


def glossary_gaps(glossary):
    """Recipe profile tags of lowbit's catalog that glossary.md does not define
    (a row starting with the tag in backquotes); empty when it names them all."""
    import lowbit

    tags = sorted({r.profile for r in lowbit.recipes.values()})
    if not tags:
        fail("lowbit.recipes is empty: nothing to check the glossary against")
    text = glossary.read_text(encoding="utf-8")
    return [t for t in tags if f"| `{t}` |" not in text]


def stage_pages(pages):
    """The non-notebook pages beside the executed notebooks: index, glossary,
    the docs/*.md reference pages, the MathJax stub and the style sheet
    (docs/mkdocs.yml)."""
    for page in ("index.md", "glossary.md"):
        shutil.copy(HERE / page, pages / page)
    reference = pages / "reference"
    if reference.exists():
        shutil.rmtree(reference)
    reference.mkdir()
    for page in sorted(DOCS.glob("*.md")):
        shutil.copy(page, reference / page.name)
    for folder, asset in (("javascripts", "no-mathjax.js"), ("stylesheets", "lowbit.css")):
        (pages / folder).mkdir(exist_ok=True)
        shutil.copy(HERE / asset, pages / folder / asset)
    listed = set(nav_targets())
    for target in listed:
        if not (pages / target).is_file():
            fail(f"{CONFIG.name}'s nav lists {target}, which is not in {pages}")
    unlisted = [f"reference/{p.name}" for p in sorted(reference.glob("*.md")) if f"reference/{p.name}" not in listed]
    if unlisted:
        fail(f"docs pages missing from {CONFIG.name}'s nav (Reference): {', '.join(unlisted)}")


def site(out):
    need("mkdocs", "building the site")
    need("mkdocs_jupyter", "rendering notebooks in the site")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    pages = out / "pages"
    names = notebook_names()
    missing = [n for n in names if not (pages / f"{n}.ipynb").is_file()]
    if missing:
        fail(f"not executed yet (run the execute step first): {', '.join(missing)}")
    gaps = glossary_gaps(HERE / "glossary.md")
    if gaps:
        fail(f"docs/notebooks/glossary.md does not define these recipe tags of lowbit.recipes: {', '.join(gaps)}")
    stage_pages(pages)
    start = time.monotonic()
    config = load_config(config_file=str(CONFIG), docs_dir=str(pages), site_dir=str(out / "site"))
    # mkdocs-jupyter keeps its cache at .cache/mkdocs-jupyter relative to the
    # working directory (its plugin.py default): build from the output folder
    # so the cache stays in the build tree, never in the source checkout.
    cwd = os.getcwd()
    os.chdir(out)
    try:
        build(config)
    finally:
        os.chdir(cwd)
    index = out / "site" / "index.html"
    if not index.is_file():
        fail(f"mkdocs wrote no {index}")
    html = index.read_text(encoding="utf-8")
    unlinked = [n for n in names if f'href="{n}/"' not in html]
    if unlinked:
        fail(f"{index} does not link: {', '.join(unlinked)}")
    for n in names:
        if not (out / "site" / n / "index.html").is_file():
            fail(f"the site has no page for {n}")
    print(f"run_notebooks: site of {len(names)} notebook(s) in {time.monotonic() - start:.1f} s: {index}")


def serve(out, port):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out / "site"))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"run_notebooks: serving {out / 'site'} on http://127.0.0.1:{port}/ (Ctrl-C stops it)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


def main(argv):
    usage = ("usage: run_notebooks.py execute OUT [NAME ...] | run_notebooks.py site OUT | "
             "run_notebooks.py serve OUT [PORT]")
    if len(argv) < 2 or argv[0] not in ("execute", "site", "serve"):
        fail(usage)
    out = pathlib.Path(argv[1]).resolve()
    if argv[0] == "execute":
        execute(out, argv[2:])
    elif argv[0] == "site":
        site(out)
    else:
        if len(argv) > 3 or (len(argv) == 3 and not argv[2].isdigit()):
            fail(f"serve takes one port number, got {' '.join(argv[2:])!r}; {usage}")
        execute(out, [])
        site(out)
        serve(out, int(argv[2]) if len(argv) == 3 else 8000)


if __name__ == "__main__":
    main(sys.argv[1:])
