# SPDX-License-Identifier: Apache-2.0
"""A network file run through xnorcl.load: the paper's vehicle classifier, bitwise against the host
reference network, through both call forms; and a malformed file refused."""

import numpy as np
import pytest

import xnorcl


@pytest.fixture(scope="module")
def classifier_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("networks") / "vehicle.xnn"
    xnorcl.save_vehicle_classifier(str(path), seed=3, batch=2)
    return path


def pixels(seed, shape):
    return np.random.default_rng(seed).integers(0, 256, size=shape).astype(np.float32)


def test_vehicle_classifier_is_bitwise_the_reference(runtime, classifier_path):
    model = xnorcl.load(str(classifier_path), runtime=runtime)
    assert model.inputs == [("input", (2, 3, 96, 96))]
    assert model.outputs == [("output", (2, 4, 1, 1))]
    for seed in range(3):
        x = pixels(seed, (2, 3, 96, 96))
        y = model.run(x)
        assert y.dtype == np.float32 and y.shape == (2, 4, 1, 1)
        reference = model.reference(x)
        assert y.tobytes() == reference.tobytes()
        # Logits of a binary FC layer are sums of +-1: integers, and not all equal (the network computes).
        assert np.all(y == np.round(y)) and len(set(y.flatten().tolist())) > 1
        ys = model.run({"input": x})
        assert list(ys) == ["output"] and ys["output"].tobytes() == y.tobytes()


def test_plan_and_node_times(runtime, classifier_path):
    model = xnorcl.load(classifier_path, runtime=runtime)
    plan = model.plan()
    assert plan["device"] == runtime.device_name and plan["variant"] == runtime.variant
    # The chain runs as its graph, each convolution one step with the threshold and max-pool after it (the
    # first with its input thresholds too, a sign node in its packing).
    assert plan["nodes"][:2] == [
        "0:convolution.input_sign+0:convolution+1:threshold+2:max_pool",
        "3:convolution+4:threshold+5:max_pool",
    ]
    assert plan["nodes"][-2].startswith("10:fully_connected") and plan["nodes"][-1] == "output.reshape"
    model.run(pixels(9, (2, 3, 96, 96)))
    times = model.last_node_times()
    if runtime.profiling_enabled:
        assert times and set(times) <= set(plan["nodes"])
        assert plan["nodes"][0] in times and all(ms >= 0 for ms in times.values())


def test_default_runtime(classifier_path):
    model = xnorcl.load(str(classifier_path))
    assert model.runtime.device_name
    x = pixels(1, (2, 3, 96, 96))
    assert model.run(x).tobytes() == model.reference(x).tobytes()


def test_bad_inputs_are_refused(runtime, classifier_path):
    model = xnorcl.load(str(classifier_path), runtime=runtime)
    with pytest.raises(xnorcl.InvalidArgument, match=r"input: expected shape \(2, 3, 96, 96\), got \(1, 3, 96, 96\)"):
        model.run(pixels(1, (1, 3, 96, 96)))
    with pytest.raises(xnorcl.InvalidArgument, match="input: expected dtype float32, got uint8"):
        model.run(np.zeros((2, 3, 96, 96), np.uint8))
    with pytest.raises(xnorcl.InvalidArgument, match=r"'image' is no input of the model \(it has 'input'\)"):
        model.run({"image": pixels(1, (2, 3, 96, 96))})


def test_malformed_files_are_refused(runtime, tmp_path, classifier_path):
    bad = tmp_path / "bad.xnn"
    bad.write_bytes(b"NOTANXNN" + bytes(16))
    with pytest.raises(xnorcl.InvalidArgument, match="offset"):
        xnorcl.load(str(bad), runtime=runtime)
    truncated = tmp_path / "truncated.xnn"
    truncated.write_bytes(classifier_path.read_bytes()[:1000])
    with pytest.raises(xnorcl.InvalidArgument, match="offset"):
        xnorcl.load(str(truncated), runtime=runtime)
    with pytest.raises(FileNotFoundError, match="No such file or directory: .*missing.xnn"):
        xnorcl.load(str(tmp_path / "missing.xnn"), runtime=runtime)
