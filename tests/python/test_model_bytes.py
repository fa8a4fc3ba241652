# SPDX-License-Identifier: Apache-2.0
"""Models from their bytes (xnorcl.load(data), xnorcl.Model(data)): bytes, bytearray and memoryview load as
the same file does and run bit for bit alike, graphs and version-1 chains; malformed bytes are refused as the
file is, with "model bytes" in place of the path; other types raise TypeError."""

import re

import numpy as np
import pytest

import xnorcl


@pytest.fixture(scope="module")
def graph_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("bytes") / "bireal18.xnn"
    xnorcl.save_model("bireal18", str(path), batch=2, size=32, width_divisor=8, seed=7)
    return path


@pytest.fixture(scope="module")
def chain_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("bytes") / "vehicle.xnn"
    xnorcl.save_vehicle_classifier(str(path), seed=4, batch=2)
    return path


def as_kind(data, kind):
    if kind == "bytes":
        return bytes(data)
    if kind == "bytearray":
        return bytearray(data)
    if kind == "memoryview":
        return memoryview(bytearray(data))
    # A view into the middle of a larger buffer: only its own bytes are the model.
    return memoryview(b"\xffjunk" + bytes(data) + b"trailing")[5:-8]


KINDS = ["bytes", "bytearray", "memoryview", "memoryview slice"]


@pytest.mark.parametrize("kind", KINDS)
def test_graph_bytes_run_as_the_file(runtime, graph_path, kind):
    from_file = xnorcl.load(graph_path, runtime=runtime)
    from_memory = xnorcl.load(as_kind(graph_path.read_bytes(), kind), runtime=runtime)
    assert from_memory.inputs == from_file.inputs == [("input", (2, 3, 32, 32))]
    assert from_memory.outputs == from_file.outputs == [("logits", (2, 1000))]
    assert from_memory.plan()["steps"] == from_file.plan()["steps"]
    x = np.random.default_rng(2).uniform(-1, 1, size=(2, 3, 32, 32)).astype(np.float32)
    want = from_file.run(x)
    got = from_memory.run(x)
    assert got.dtype == np.float32 and got.shape == (2, 1000)
    assert got.tobytes() == want.tobytes()
    assert np.any(got != 0)


@pytest.mark.parametrize("kind", KINDS)
def test_chain_bytes_run_as_the_file(runtime, chain_path, kind):
    assert xnorcl.network_file_version(str(chain_path)) == 1
    from_file = xnorcl.Model(str(chain_path), runtime)
    from_memory = xnorcl.Model(as_kind(chain_path.read_bytes(), kind), runtime)
    assert from_memory.inputs == from_file.inputs == [("input", (2, 3, 96, 96))]
    assert from_memory.outputs == from_file.outputs
    x = np.random.default_rng(3).integers(0, 256, size=(2, 3, 96, 96)).astype(np.float32)
    got = from_memory.run(x)
    assert got.tobytes() == from_file.run(x).tobytes()
    assert got.tobytes() == from_memory.reference(x).tobytes()


def test_a_bytearray_may_change_once_loaded(runtime, graph_path):
    data = bytearray(graph_path.read_bytes())
    model = xnorcl.load(data, runtime=runtime)
    x = np.random.default_rng(4).uniform(-1, 1, size=(2, 3, 32, 32)).astype(np.float32)
    before = model.run(x).tobytes()
    data[:] = bytes(len(data))  # the model holds its own copy of what it parsed
    del data
    assert model.run(x).tobytes() == before


def refusal(load):
    with pytest.raises(xnorcl.InvalidArgument) as error:
        load()
    return str(error.value)


def test_malformed_bytes_are_refused_as_the_file_is(default_runtime, graph_path, chain_path, tmp_path):
    graph = graph_path.read_bytes()
    cases = {
        "truncated graph": graph[:1000],
        "truncated header": graph[:11],
        "wrong magic": b"NOTANXNN" + graph[8:],
        "trailing byte": graph + b"x",
        "truncated chain": chain_path.read_bytes()[:1000],
        "empty": b"",
    }
    for name, data in cases.items():
        message = refusal(lambda: xnorcl.load(data, runtime=default_runtime))
        assert message.startswith("model bytes: "), name
        file = tmp_path / f"{name.replace(' ', '_')}.xnn"
        file.write_bytes(data)
        file_message = refusal(lambda: xnorcl._xnorcl._check_graph_file(str(file)))
        assert file_message == str(file) + message[len("model bytes") :], name
    assert refusal(lambda: xnorcl.load(graph[:11], default_runtime)) == (
        "model bytes: graph file, offset 8: the version needs 4 bytes, 3 are left"
    )
    assert refusal(lambda: xnorcl.load(b"NOTANXNN" + graph[8:], default_runtime)) == (
        "model bytes: graph file, offset 0: not an xnorcl network file (the magic is not XNORNET1)"
    )
    assert re.fullmatch(
        r"model bytes: network file, offset \d+: .* needs \d+ bytes, \d+ are left",
        refusal(lambda: xnorcl.load(chain_path.read_bytes()[:1000], default_runtime)),
    )
    empty = refusal(lambda: xnorcl.load(bytearray(), default_runtime))
    assert empty.startswith("model bytes: empty (0 bytes)")
    with pytest.raises(xnorcl.InvalidArgument, match="model bytes: the memoryview is not C-contiguous"):
        xnorcl.load(memoryview(graph + graph)[::2], default_runtime)


@pytest.mark.parametrize(
    "source, type_name",
    [(3, "int"), (None, "NoneType"), (1.5, "float"), ([1, 2], "list"), (np.zeros(16, np.uint8), "ndarray")],
)
def test_other_types_raise_type_error(default_runtime, source, type_name):
    with pytest.raises(TypeError, match=rf"not {type_name}$"):
        xnorcl.load(source, runtime=default_runtime)
    with pytest.raises(TypeError, match=rf"not {type_name}$"):
        xnorcl.Model(source, default_runtime)
