# SPDX-License-Identifier: Apache-2.0
"""xnorcl.tune and the Runtime's tuning options: a tuned model runs its kept configurations and computes the
same values; a second Runtime (and a second process) reads the tuning file; "ignore" leaves it; bad
arguments are refused before any device work."""

import os
import subprocess
import sys

import numpy as np
import pytest

import xnorcl
from conftest import runtime_for


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("tuning") / "bireal18.xnn"
    xnorcl.save_model("bireal18", str(path), batch=1, size=32, width_divisor=8, seed=5)
    return str(path)


def tuning_of(model):
    return [s["tuning"] for s in model.plan()["steps"] if s["tuning"]]


def test_tune_keeps_results_that_other_runtimes_and_processes_read(model_path, tmp_path):
    runtime_for("global")  # fails, or skips without a device, as every device test
    file = str(tmp_path / "tuning.txt")
    rt = xnorcl.Runtime(variant="global", tuning_file=file)
    assert rt.tuning_file == file
    model = xnorcl.load(model_path, runtime=rt)
    x = np.random.default_rng(2).uniform(-1, 1, size=(1, 3, 32, 32)).astype(np.float32)
    before = model.run(x)
    assert all(t.startswith("default ") for t in tuning_of(model))
    calls = []
    report = xnorcl.tune(model, repetitions=1, progress=lambda done, total, what: calls.append((done, total)))
    assert report["file"] == file and not report["stopped"]
    assert calls and all(done <= total for done, total in calls)
    assert len(report["classes"]) >= 5
    for c in report["classes"]:
        assert c["candidates"] >= 2 and c["steps"]
        assert c["best_ms"] <= c["default_ms"]
    kept = {c["best_config"] for c in report["classes"] if c["best_config"] != c["default_config"]}
    tuned = tuning_of(model)  # the model was rebuilt with what was kept
    assert sum(t.startswith("tuned ") for t in tuned) >= 5
    assert {t[len("tuned "):] for t in tuned if t.startswith("tuned ")} >= kept
    assert model.run(x).tobytes() == before.tobytes()  # the same values, bit for bit

    again = xnorcl.load(model_path, runtime=xnorcl.Runtime(variant="global", tuning_file=file))
    assert tuning_of(again) == tuned
    ignoring = xnorcl.Runtime(variant="global", tuning_file=file, tuning="ignore")
    assert all(t.startswith("default ") for t in tuning_of(xnorcl.load(model_path, runtime=ignoring)))

    # Another process, the file named by the environment.
    code = (
        "import sys, xnorcl; m = xnorcl.load(sys.argv[1], runtime=xnorcl.Runtime(variant='global'));"
        "print(sum(s['tuning'].startswith('tuned ') for s in m.plan()['steps']))"
    )
    env = {**os.environ, "XNORCL_TUNING_FILE": file}
    out = subprocess.run([sys.executable, "-c", code, model_path], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == len([t for t in tuned if t.startswith("tuned ")])


def test_a_foreign_tuning_file_is_ignored_with_a_warning(model_path, tmp_path):
    runtime_for("global")
    file = tmp_path / "tuning.txt"
    file.write_text("xnorcl tuning file 1\nlibrary 0.0.0\nplatform elsewhere\n")
    code = (
        "import sys, xnorcl; m = xnorcl.load(sys.argv[1], runtime=xnorcl.Runtime(variant='global',"
        " tuning_file=sys.argv[2])); print(all(s['tuning'].startswith('default ') for s in m.plan()['steps']"
        " if s['tuning']))"
    )
    out = subprocess.run([sys.executable, "-c", code, model_path, str(file)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
    assert "tuning file" in out.stderr and "is ignored" in out.stderr and str(file) in out.stderr


def test_bad_tuning_arguments_are_refused(model_path):
    with pytest.raises(xnorcl.InvalidArgument, match="tuning: 'sometimes'"):
        xnorcl.Runtime(tuning="sometimes")
    with pytest.raises(xnorcl.InvalidArgument, match="tuning_file is empty"):
        xnorcl.Runtime(tuning_file="")
    model = xnorcl.load(model_path, runtime=runtime_for("global"))
    with pytest.raises(xnorcl.InvalidArgument, match="mode: 'quick'"):
        xnorcl.tune(model, mode="quick")
    with pytest.raises(xnorcl.InvalidArgument, match="repetitions = -1"):
        xnorcl.tune(model, repetitions=-1)
    with pytest.raises(xnorcl.InvalidArgument, match="progress must be callable"):
        xnorcl.tune(model, progress=3)
    with pytest.raises(xnorcl.InvalidArgument, match="runtime is given"):
        xnorcl.tune(model, runtime=runtime_for("local"))


def test_an_exception_in_progress_aborts_and_stores_nothing(model_path, tmp_path):
    runtime_for("global")
    file = tmp_path / "tuning.txt"
    model = xnorcl.load(model_path, runtime=xnorcl.Runtime(variant="global", tuning_file=str(file)))

    def progress(done, total, what):
        if done > 1:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        xnorcl.tune(model, repetitions=1, progress=progress)
    assert not file.exists()
    assert all(t.startswith("default ") for t in tuning_of(model))
