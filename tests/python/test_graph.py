# SPDX-License-Identifier: Apache-2.0
"""Graph files (.xnn version 2) through xnorcl.load: reduced Bi-Real Net-18 and binary ResNet-18 built in
code, run on both variants against the host reference graph; the plan shows the fused steps; inputs and
outputs go by name; wrong inputs are refused."""

import re

import numpy as np
import pytest

import xnorcl


@pytest.fixture(scope="module", params=["bireal18", "resnet18"])
def model_path(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("graphs") / f"{request.param}.xnn"
    xnorcl.save_model(request.param, str(path), batch=2, size=32, width_divisor=8, seed=5)
    return path


def test_graph_runs_as_its_reference(runtime, model_path):
    assert xnorcl.network_file_version(str(model_path)) == 2
    model = xnorcl.load(str(model_path), runtime=runtime)
    assert model.inputs == [("input", (2, 3, 32, 32))]
    assert model.outputs == [("logits", (2, 1000))]
    x = np.random.default_rng(1).uniform(-1, 1, size=(2, 3, 32, 32)).astype(np.float32)
    y = model.run(x)
    assert y.dtype == np.float32 and y.shape == (2, 1000)
    want = model.reference(x)
    assert np.max(np.abs(y - want)) <= 1e-4 * np.max(np.abs(want))
    assert (np.argmax(y, axis=1) == np.argmax(want, axis=1)).all()
    both = model.run({"input": x})
    assert list(both) == ["logits"] and both["logits"].tobytes() == y.tobytes()  # the same bits every run


def test_plan_shows_fused_steps_and_memory(runtime, model_path):
    model = xnorcl.load(str(model_path), runtime=runtime)
    plan = model.plan()
    assert plan["variant"] == runtime.variant
    # Every binary convolution (named "...convN") absorbs its batch-norm and the residual Add or next sign. A
    # residual sum's sign either rides in the step before as a second output (the Local variant: 5 nodes, the
    # last a sign; 15 of Bi-Real's 16 blocks, 7 of ResNet's, whose other sums feed a sign inside a block) or
    # is the packing of the convolution that reads it (the step's first node a sign).
    conv_steps = [s for s in plan["steps"] if any(re.search(r"\.conv\d$", n) for n in s["nodes"])]
    assert len(conv_steps) == 16
    packing = [s for s in conv_steps if re.search(r"\.sign\d?$", s["nodes"][0])]
    sides = [s for s in conv_steps if "&" in s["step"]]
    assert all(len(s["nodes"]) == 4 + (s in packing) + (s in sides) for s in conv_steps), [
        s["nodes"] for s in conv_steps
    ]
    assert all(re.search(r"\.sign\d?$", s["nodes"][-1]) for s in sides), [s["nodes"] for s in sides]
    want_sides = {"bireal18": 15, "resnet18": 7}[model_path.stem] if runtime.variant == "local" else 0
    assert len(sides) == want_sides
    assert len(sides) + len(packing) == {"bireal18": 16, "resnet18": 8}[model_path.stem]
    assert plan["activation_bytes"] > 0 and plan["weight_bytes"] > 0
    model.run(np.zeros((2, 3, 32, 32), np.float32))
    times = model.last_node_times()
    assert set(times) <= {s["step"] for s in plan["steps"]}
    assert all(ms >= 0 for ms in times.values())


def test_graph_inputs_are_checked(runtime, model_path):
    model = xnorcl.load(str(model_path), runtime=runtime)
    with pytest.raises(xnorcl.InvalidArgument, match=r"'image' is no input of the model \(it has 'input'\)"):
        model.run({"image": np.zeros((2, 3, 32, 32), np.float32)})
    with pytest.raises(xnorcl.InvalidArgument, match="input"):
        model.run(np.zeros((2, 3, 32, 31), np.float32))
    with pytest.raises(xnorcl.InvalidArgument, match="float32"):
        model.run(np.zeros((2, 3, 32, 32), np.float64))


def test_input_names_must_be_strings(runtime, model_path):
    model = xnorcl.load(str(model_path), runtime=runtime)
    x = np.zeros((2, 3, 32, 32), np.float32)
    with pytest.raises(xnorcl.InvalidArgument, match=r"every name must be a str; 1 is a int"):
        model.run({"input": x, 1: x})
    with pytest.raises(xnorcl.InvalidArgument, match=r"every name must be a str; b'input' is a bytes"):
        model.reference({b"input": x})


def test_load_refuses_paths_that_name_no_model(runtime, model_path, tmp_path):
    missing = tmp_path / "nope.xnn"
    with pytest.raises(FileNotFoundError) as error:
        xnorcl.load(str(missing), runtime=runtime)
    assert error.value.filename == str(missing)
    with pytest.raises(IsADirectoryError):
        xnorcl.load(tmp_path, runtime=runtime)
    # Before, the C library stopped at the NUL and loaded the file named by what came before it.
    with pytest.raises(xnorcl.InvalidArgument, match="holds a NUL character at offset"):
        xnorcl.load(str(model_path) + "\0.txt", runtime=runtime)
    with pytest.raises(TypeError, match=r"a path \(str or os.PathLike\) or its bytes .*, not int"):
        xnorcl.load(3, runtime=runtime)
    assert xnorcl.load(model_path, runtime=runtime).inputs[0][0] == "input"  # a pathlib.Path is fine
