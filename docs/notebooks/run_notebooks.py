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
        then checks that OUT/site/index.html links every notebook.

The notebooks are listed once, in docs/mkdocs.yml's nav. The kernel is this
interpreter (ipykernel's native kernel), so PYTHONPATH chooses the lowbit it
imports (docs/CMakeLists.txt: the one this build staged, or the venv's).
"""

import os
import pathlib
import re
import shutil
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = HERE.parent / "mkdocs.yml"
PER_CELL_TIMEOUT_S = 300
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


def notebook_names():
    """The nav's notebook pages, in order (NN-name.ipynb -> NN-name)."""
    yaml = need("yaml", "reading docs/mkdocs.yml")

    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may use !!python/name tags (material's emoji); none are needed here.
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    nav = yaml.load(CONFIG.read_text(encoding="utf-8"), Loader=Loader)["nav"]
    pages = []
    for entry in nav:
        target = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if target.endswith(".ipynb"):
            pages.append(target[: -len(".ipynb")])
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
    total = time.monotonic()
    for name in names:
        start = time.monotonic()
        nb = jupytext.read(HERE / f"{name}.py")
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        client = nbclient.NotebookClient(nb, timeout=PER_CELL_TIMEOUT_S, kernel_name="python3",
                                         resources={"metadata": {"path": str(HERE)}})
        try:
            client.execute()
        except nbclient.exceptions.CellExecutionError as e:
            # The cell's source and the traceback: which number drifted, and where.
            fail(f"{name}: a cell failed\n{ANSI_COLOUR.sub('', str(e))}")
        except nbclient.exceptions.CellTimeoutError as e:
            fail(f"{name}: a cell ran past {PER_CELL_TIMEOUT_S} s\n{ANSI_COLOUR.sub('', str(e))}")
        nbformat.write(nb, pages / f"{name}.ipynb")
        print(f"run_notebooks: {name}: {time.monotonic() - start:.1f} s")
    print(f"run_notebooks: {len(names)} notebook(s) executed in {time.monotonic() - total:.1f} s")


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
    shutil.copy(HERE / "index.md", pages / "index.md")
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


def main(argv):
    if len(argv) < 2 or argv[0] not in ("execute", "site"):
        fail("usage: run_notebooks.py execute OUT [NAME ...] | run_notebooks.py site OUT")
    out = pathlib.Path(argv[1]).resolve()
    if argv[0] == "execute":
        execute(out, argv[2:])
    else:
        site(out)


if __name__ == "__main__":
    main(sys.argv[1:])
