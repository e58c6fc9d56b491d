"""Shared set-up of the live-peer tests (docs/profiles.md): the peers must be
importable. scripts/setup.sh installs them (requirements-peers.txt), so in CI
a missing peer is a failure, never a skip; only LOWBIT_NO_PEERS=1 (set by a
developer who chose not to install them) turns it into a skip that names the
reason (ctest shows it as skipped, tests/peers/CMakeLists.txt)."""

import importlib
import os
import warnings

import pytest

# torch 2.15 warns about torchao's enum registrations on import; noise here.
warnings.filterwarnings("ignore", message=".*register_constant.*")


def require(module: str):
    """Imports a peer, failing (or, with LOWBIT_NO_PEERS=1, skipping) with the reason."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        reason = f"{module} is not importable ({e}); scripts/setup.sh installs it from requirements-peers.txt"
        if os.environ.get("LOWBIT_NO_PEERS") == "1":
            pytest.skip(f"LOWBIT_NO_PEERS=1: {reason}", allow_module_level=True)
        pytest.fail(reason, pytrace=False)


def pytest_report_header(config):
    lines = []
    for m in ("torch", "torchao", "modelopt", "lowbit"):
        try:
            lines.append(f"{m} {importlib.import_module(m).__version__}")
        except Exception as e:  # noqa: BLE001 - only a header
            lines.append(f"{m}: {e}")
    return "live peers: " + ", ".join(lines)
