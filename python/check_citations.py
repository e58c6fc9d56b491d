"""Fails when a citation in the repository does not resolve.

lowbit's comments and docs cite three kinds of place (docs/design.md "Build and
layout"): a section of docs/formats-reference.md (`docs/formats-reference.md §4.1`),
a heading of docs/design.md (`docs/design.md "Known traps (measured)"`), a
section of the benchmark results by (part of) its title (`bench/RESULTS.md "GEMV"`,
`bench/RESULTS-archive-2026.md "CUDA"`) and a file of the repository
(`simd/src/convert-inl.h`). This script reads every
tracked text file and reports each citation whose target is missing, and every
mention of the pre-repository documents (FORMAT-FACTS, DESIGN.md) that readers
cannot open.

It also rejects every mention of an issue number ("issue N", "issue #N",
"IssueNVllm", a file named issueN_*.cc, N being digits) in any tracked file
and in file names: no issue tracker ships with the code, so a reader cannot open one
(CONTRIBUTING.md "Rules the review checks"). A link to another project's issue
(https://github.com/jax-ml/ml_dtypes/issues/400) is a citation a reader can
open and passes. The dated results archive (HISTORY_FILES) is history: kept as
it was written and not checked.

Usage: check_citations.py [REPOSITORY_ROOT]
"""

import os
import re
import subprocess
import sys

TEXT_SUFFIXES = (".h", ".cc", ".cu", ".cuh", ".md", ".py", ".sh", ".cmake", ".txt", ".in")
OWN_FOLDERS = ("formats", "reference", "registry", "simd", "cuda", "check", "tools",
               "proptests", "tests", "bench", "scripts", "python", "cmake", "docs")
FILE_CITATION = re.compile(
    r"(?<![\w./-])((?:%s)/[\w./-]*\w\.(?:h|cc|cu|cuh|py|sh|md|cmake|txt))\b" % "|".join(OWN_FOLDERS))
SECTION_CITATION = re.compile(r"formats-reference\.md §(\d+(?:\.\d+)?)")
HEADING_CITATION = re.compile(r'design\.md "([^"]+)"')
RESULTS_CITATION = re.compile(r'(bench/RESULTS(?:-archive-\d{4})?\.md),? "(?:#+ )?([^"]+)"')
UNREACHABLE = re.compile(r"FORMAT-FACTS|\bDESIGN\.md")
# "issue N", "issues N and M", "issue #N", "(issue N)", "IssueNVllm",
# "issueN_recipes" (N, M digits): "issue" not inside a longer word or a URL path, then
# digits after optional spaces, "#", "-" or "_". A percentage is a profiler's
# instruction issue rate ("issue 64%", "issue 66–76%"), not a citation.
ISSUE_MENTION = re.compile(r"(?<![\w/.-])issues?[\s_#-]*\d+(?![\d.]*(?:\s*[–-]\s*[\d.]+)?\s*%)", re.IGNORECASE)
# Not checked: history, kept as written (bench/RESULTS.md holds the current
# results), and the checker and its test, which hold the patterns and planted
# examples.
HISTORY_FILES = ("bench/RESULTS-archive-2026.md",)
UNCHECKED_FILES = HISTORY_FILES + ("python/check_citations.py", "python/check_citations_test.py")


def all_tracked_files(root):
  """Every tracked file that is still in the working tree (one being deleted
  is not read); outside a git checkout, every file of the own folders and of
  the top folder."""
  try:
    out = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True)
    found = out.stdout.splitlines()
  except (OSError, subprocess.CalledProcessError):
    found = [n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n))]
    for folder in OWN_FOLDERS + (".ci",):
      for dirpath, _, names in os.walk(os.path.join(root, folder)):
        found += [os.path.relpath(os.path.join(dirpath, n), root) for n in names]
  return sorted(f for f in found if os.path.isfile(os.path.join(root, f)))


def tracked_files(root):
  return [f for f in all_tracked_files(root) if f.endswith(TEXT_SUFFIXES)]


def text_lines(path):
  """The lines of a text file, or None for a binary one (a NUL byte or not
  UTF-8: the fuzz corpus)."""
  with open(path, "rb") as f:
    data = f.read()
  if b"\0" in data:
    return None
  try:
    return data.decode("utf-8").splitlines()
  except UnicodeDecodeError:
    return None


def issue_mention_problems(root):
  """One line per mention of an issue number: in a file name, or in a line
  of any tracked text file (code, docs, scripts, tests, build files)."""
  problems = []
  for rel in all_tracked_files(root):
    if rel in UNCHECKED_FILES:
      continue
    if any(ISSUE_MENTION.search(part) for part in rel.split("/")):
      problems.append(f"{rel}: the file name cites an issue number; name it for what it holds")
    lines = text_lines(os.path.join(root, rel))
    for number, line in enumerate(lines or [], 1):
      m = ISSUE_MENTION.search(line)
      if m:
        problems.append(f"{rel}:{number}: cites an issue number ({line[m.start():m.end()].strip()!r}), which no "
                        "reader can open; cite a docs/ section, a spec section or a file instead")
  return problems


def resolves(root, path, files):
  """A file citation names a path from the repository root, or an include
  name without its leading lowbit/ (formats/block/packing.h is
  formats/include/lowbit/formats/block/packing.h); "/.../" stands for any
  folders between."""
  folder = path.split("/", 1)[0]
  # A file configured by CMake (lowbitConfig.cmake) is cited by its output name.
  candidates = [path, path + ".in", f"{folder}/include/lowbit/{path}", f"formats/spec/include/lowbit/{path}"]
  # The learners' site serves docs/*.md under reference/ (docs/mkdocs.yml).
  if folder == "reference" and path.endswith(".md"):
    candidates.append("docs/" + path.split("/", 1)[1])
  if "/.../" in path:
    pattern = re.compile(re.escape(path).replace(re.escape("/.../"), "/(?:.+/)?") + "$")
    return any(pattern.search(f) for f in files)
  return any(os.path.exists(os.path.join(root, c)) for c in candidates)


def headings(path, pattern):
  with open(path, encoding="utf-8") as f:
    return {m.group(1).strip() for m in (re.match(pattern, line) for line in f) if m}


def main():
  root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
  sections = headings(os.path.join(root, "docs/formats-reference.md"), r"#+ (\d+(?:\.\d+)?)[. ]")
  design_headings = headings(os.path.join(root, "docs/design.md"), r"#+ (.+)$")
  results_headings = {}
  for name in ("bench/RESULTS.md", "bench/RESULTS-archive-2026.md"):
    if os.path.isfile(os.path.join(root, name)):
      results_headings[name] = headings(os.path.join(root, name), r"#+ (.+)$")
  problems = issue_mention_problems(root)
  files = tracked_files(root)
  for rel in files:
    if rel in UNCHECKED_FILES:
      continue
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
      for number, line in enumerate(f, 1):
        where = f"{rel}:{number}"
        if UNREACHABLE.search(line):
          problems.append(f"{where}: cites a document outside the repository: {line.strip()}")
        for section in SECTION_CITATION.findall(line):
          if section not in sections:
            problems.append(f"{where}: docs/formats-reference.md has no section §{section}")
        for heading in HEADING_CITATION.findall(line):
          if heading not in design_headings:
            problems.append(f'{where}: docs/design.md has no heading "{heading}"')
        for name, title in RESULTS_CITATION.findall(line):
          if name in results_headings and not any(title in h for h in results_headings[name]):
            problems.append(f'{where}: {name} has no section titled "{title}"')
        for path in FILE_CITATION.findall(line):
          if not resolves(root, path, files):
            problems.append(f"{where}: no file {path}")
  for p in problems:
    print(p)
  print(f"check_citations: {len(files)} files read, {len(problems)} citations that do not resolve")
  return 1 if problems else 0


if __name__ == "__main__":
  sys.exit(main())
