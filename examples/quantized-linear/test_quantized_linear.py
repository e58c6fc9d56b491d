"""The quantized-linear example on the CPU rows (python_pytest runs it in CI;
scripts/gpu runs `quantized_linear.py --device cuda` on the GPU machine)."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import quantized_linear  # noqa: E402


def test_example_on_cpu_rows(capsys):
    assert quantized_linear.main(["--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "all checks passed" in out
    # Every case ran through both rows.
    assert out.count("gemv: ok") == 3 * len(quantized_linear.CASES)
    assert out.count("gemm: ok") == len(quantized_linear.CASES)
