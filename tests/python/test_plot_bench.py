# SPDX-License-Identifier: Apache-2.0
"""tools/plot_bench.py refuses what is not a bench file before it reads or writes anything: a FIFO as input
or output would be waited on forever, a device read without end."""

import os
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "plot_bench.py"


def plot(*args):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=60)


def test_a_fifo_or_a_device_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    for args, message in (([str(fifo)], "cannot read"), (["/dev/zero"], "cannot read")):
        result = plot(*args)
        assert result.returncode == 1 and message in result.stderr and "not a regular file" in result.stderr
    good = tmp_path / "good.json"
    good.write_text('{"schema": 1, "steps": []}')
    result = plot(str(good), "-o", str(fifo))
    assert result.returncode == 1 and f"cannot write {fifo}: it is a FIFO" in result.stderr


def test_a_file_too_large_for_a_bench_run_is_refused(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(65 << 20)  # sparse: no disk used
    result = plot(str(big))
    assert result.returncode == 1 and "larger than 64 MiB" in result.stderr
