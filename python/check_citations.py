"""Fails when a citation in the repository does not resolve.

lowbit's comments and docs cite three kinds of place (docs/design.md "Build and
layout"): a section of docs/formats-reference.md (`docs/formats-reference.md §4.1`),
a heading of docs/design.md (`docs/design.md "Known traps (measured)"`) and a
file of the repository (`simd/src/convert-inl.h`). This script reads every
tracked text file and reports each citation whose target is missing, and every
mention of the pre-repository documents (FORMAT-FACTS, DESIGN.md) that readers
cannot open. Usage: check_citations.py [REPOSITORY_ROOT]
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
UNREACHABLE = re.compile(r"FORMAT-FACTS|\bDESIGN\.md")


def tracked_files(root):
  try:
    out = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True)
    return [f for f in out.stdout.splitlines() if f.endswith(TEXT_SUFFIXES)]
  except (OSError, subprocess.CalledProcessError):
    found = []
    for folder in OWN_FOLDERS + (".ci",):
      for dirpath, _, names in os.walk(os.path.join(root, folder)):
        found += [os.path.relpath(os.path.join(dirpath, n), root) for n in names
                  if n.endswith(TEXT_SUFFIXES)]
    return found + ["README.md", "CMakeLists.txt"]


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
  problems = []
  files = tracked_files(root)
  for rel in files:
    if rel == "python/check_citations.py":
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
        for path in FILE_CITATION.findall(line):
          if not resolves(root, path, files):
            problems.append(f"{where}: no file {path}")
  for p in problems:
    print(p)
  print(f"check_citations: {len(files)} files read, {len(problems)} citations that do not resolve")
  return 1 if problems else 0


if __name__ == "__main__":
  sys.exit(main())
