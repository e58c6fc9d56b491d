"""Tests of check_citations.py's rule against issue numbers (and of its check of
cited results sections): a mention planted
in a scratch repository fails the check with one line naming file:line, a
file named after an issue fails it, a link to another project's issue, a
profiler's issue rate and the dated results archive pass, and the repository
itself passes.

Run by ctest (citations_checker); stdlib only. The planted words are built
from pieces so that this file does not itself cite an issue number.
"""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "check_citations.py")
ROOT = os.path.dirname(HERE)
WORD = "iss" + "ue"  # never written whole here


def run_checker(root):
  out = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
  return out.returncode, out.stdout.splitlines()


class ScratchRepository:
  """A git repository in a temporary folder holding the two documents the
  checker reads headings from, plus the files a test adds (all tracked)."""

  def __init__(self, files):
    self.files = {"docs/formats-reference.md": "# 1. Formats\n", "docs/design.md": "# Design\n"}
    self.files.update(files)

  def __enter__(self):
    self.tmp = tempfile.TemporaryDirectory()
    root = self.tmp.name
    for rel, content in self.files.items():
      path = os.path.join(root, rel)
      os.makedirs(os.path.dirname(path), exist_ok=True)
      with open(path, "wb") as f:
        f.write(content if isinstance(content, bytes) else content.encode("utf-8"))
    subprocess.run(["git", "init", "-q", root], check=True)
    subprocess.run(["git", "-C", root, "add", "."], check=True)
    return root

  def __exit__(self, *exc):
    self.tmp.cleanup()


class IssueMentions(unittest.TestCase):

  def test_a_planted_mention_fails_with_one_line_naming_file_and_line(self):
    for mention, shown in ((f"{WORD} 12", f"{WORD} 12"), (f"({WORD} #12)", f"{WORD} #12"),
                           (f"{WORD.capitalize()}14Vllm", f"{WORD.capitalize()}14"), (f"{WORD}s 12 and 14", f"{WORD}s 12")):
      with self.subTest(mention=mention), ScratchRepository(
          {"formats/planted.h": f"// A comment.\n// Fixed in {mention}, see there.\n"}) as root:
        rc, lines = run_checker(root)
        self.assertEqual(rc, 1, lines)
        problems = [l for l in lines if not l.startswith("check_citations:")]
        self.assertEqual(len(problems), 1, lines)
        self.assertTrue(problems[0].startswith("formats/planted.h:2: cites an issue number"), problems[0])
        self.assertIn(f"({shown!r})", problems[0])
        self.assertEqual(lines[-1], "check_citations: 3 files read, 1 citations that do not resolve")

  def test_mentions_in_every_kind_of_file_are_found(self):
    files = {"scripts/run.sh": f"# {WORD} 5\n", "CMakeLists.txt": f"# {WORD} 5\n", "docs/page.md": f"{WORD} 5\n",
             "tests/peers/test_x.py": f'"""{WORD} 5"""\n', "docs/mkdocs.yml": f"# {WORD} 5\n"}
    with ScratchRepository(files) as root:
      rc, lines = run_checker(root)
    self.assertEqual(rc, 1)
    self.assertEqual(sorted(l.split(":")[0] for l in lines[:-1]), sorted(files))

  def test_a_file_named_after_an_issue_fails(self):
    name = f"proptests/model/{WORD}3_test.cc"
    with ScratchRepository({name: "// Tests.\n"}) as root:
      rc, lines = run_checker(root)
    self.assertEqual(rc, 1)
    self.assertEqual(lines[:-1], [f"{name}: the file name cites an {WORD} number; name it for what it holds"])

  def test_links_other_words_rates_the_archive_and_binary_files_pass(self):
    files = {
        "docs/page.md": (f"ml_dtypes confirms it (https://github.com/jax-ml/ml_dtypes/{WORD}s/400).\n"
                         f"The {WORD}'s example; t{WORD} 3; {WORD}: none.\n"
                         f"ncu: {WORD} 64%, {WORD} 66–76%, warps active 12%.\n"),
        "bench/RESULTS-archive-2026.md": f"### Goals of {WORD} 4 (history, kept as written): cuda/src/gone.cu\n",
        "fuzz/corpus/decode/seed": b"\0\xff" + f"{WORD} 9".encode(),
    }
    with ScratchRepository(files) as root:
      rc, lines = run_checker(root)
    self.assertEqual(rc, 0, lines)
    self.assertEqual(lines, ["check_citations: 4 files read, 0 citations that do not resolve"])

  def test_a_results_section_that_moved_fails(self):
    files = {"bench/RESULTS.md": "# Results\n\n## GPU roofline\n",
             "bench/RESULTS-archive-2026.md": "# Log\n\n## CUDA\n",
             "cuda/a.cu": '// (bench/RESULTS.md "GPU roofline"; bench/RESULTS-archive-2026.md "CUDA")\n',
             "cuda/b.cu": '// Measured: bench/RESULTS.md "CUDA".\n'}
    with ScratchRepository(files) as root:
      rc, lines = run_checker(root)
    self.assertEqual(rc, 1)
    self.assertEqual(lines[:-1], ['cuda/b.cu:1: bench/RESULTS.md has no section titled "CUDA"'])

  def test_the_repository_passes(self):
    rc, lines = run_checker(ROOT)
    self.assertEqual(rc, 0, "\n".join(lines))
    files_read = int(lines[-1].split()[1])
    self.assertGreater(files_read, 100, lines[-1])  # the tree was read, not an empty list


if __name__ == "__main__":
  unittest.main()
