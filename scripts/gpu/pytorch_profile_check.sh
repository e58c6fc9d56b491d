#!/usr/bin/env bash
# Checks the pytorch-cpu, pytorch-cuda and ml_dtypes profiles against PyTorch
# (CPU and CUDA) and ml_dtypes on the GPU machine. Run from the repository
# root; needs g++ (C++20), python3 with torch and ml_dtypes. Writes only to a
# temporary directory and, when $OUT is set, its report to
# $OUT/pytorch_profile_check.txt. Exit status: 0 = no mismatch.
set -euo pipefail
if [[ ! -f formats/include/lowbit/formats/profiles/profiles.h ]]; then
  echo "run from the lowbit repository root" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${CXX:-g++}" -std=c++20 -O2 -I formats/spec/include -I formats/include scripts/gpu/pytorch_profile_dump.cc -o "$work/dump"
mkdir -p "$work/data"
"$work/dump" "$work/data"
report="${OUT:-$work}/pytorch_profile_check.txt"
set +e
"${PYTHON:-python3}" scripts/gpu/pytorch_profile_check.py "$work/data" 2>&1 | tee "$report"
status=${PIPESTATUS[0]}
exit "$status"
