"""Runs a pytest selection for ctest so that a skip never reads as a pass.

    python run_pytest.py --skips=fail  ARGS...   any skipped test fails the run
    python run_pytest.py --skips=whole ARGS...   every test skipped -> exit 77
                                                 (ctest SKIP_RETURN_CODE: shown
                                                 as skipped); some skipped -> fail

The CPU suite must run whole here; the torch and GPU files skip as a whole
where torch or a GPU is absent (python/CMakeLists.txt registers each).
"""

import sys

import pytest


class _Outcomes:
    def __init__(self):
        self.passed = 0
        self.skipped = []

    def pytest_collectreport(self, report):
        if report.skipped:  # a module-level skip (pytest.importorskip, allow_module_level)
            self.skipped.append(f"{report.nodeid}: {report.longrepr[-1] if report.longrepr else ''}")

    def pytest_runtest_logreport(self, report):
        if report.skipped:
            self.skipped.append(f"{report.nodeid}: {report.longrepr[-1] if report.longrepr else ''}")
        elif report.when == "call" and report.passed:
            self.passed += 1


def main(argv):
    mode = "fail"
    if argv and argv[0].startswith("--skips="):
        mode = argv.pop(0).split("=", 1)[1]
    outcomes = _Outcomes()
    rc = int(pytest.main(["-p", "no:cacheprovider", "-rs", *argv], plugins=[outcomes]))
    no_tests = int(pytest.ExitCode.NO_TESTS_COLLECTED)
    if rc not in (0, no_tests) or (rc == no_tests and not outcomes.skipped):
        return rc
    if outcomes.skipped:
        if mode == "whole" and outcomes.passed == 0:
            print(f"SKIPPED: all {len(outcomes.skipped)} tests skipped: {outcomes.skipped[0]}")
            return 77
        print("FAILED: skipped tests count as failures here:\n  " + "\n  ".join(outcomes.skipped))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
