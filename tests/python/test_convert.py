# SPDX-License-Identifier: Apache-2.0
"""xnorcl.convert and xnorcl-convert: the registry of formats by suffix; a format whose converter is not in
this version is refused with the list of formats, an unknown suffix with the known ones. The converters
themselves are tested in test_openvino_convert.py and test_larq_convert.py."""

import importlib
import os
import pathlib
import stat
import subprocess
import sys

import pytest

import xnorcl

# The package's attribute `convert` is the function; the registry is the module of the same name.
conversion = importlib.import_module("xnorcl.convert")


def test_registry_knows_the_formats_and_their_extras():
    by_suffix = {s: f for f in conversion.FORMATS for s in f.suffixes}
    assert by_suffix[".xml"].extra == "openvino"
    assert by_suffix[".tflite"].extra == "tflite"
    assert by_suffix[".onnx"].extra == "onnx"
    assert conversion.format_for("Model.XML").name == "OpenVINO IR"


def test_a_format_without_its_converter_says_so(tmp_path, monkeypatch):
    planned = conversion.Format("Some Format", (".some",), "some", ("json",), None)
    monkeypatch.setattr(conversion, "FORMATS", conversion.FORMATS + (planned,))
    destination = tmp_path / "out.xnn"
    with pytest.raises(xnorcl.ConverterUnavailable) as info:
        xnorcl.convert(str(tmp_path / "model.some"), str(destination))
    message = str(info.value)
    assert "has no Some Format converter yet" in message
    assert ".xml" in message and ".tflite" in message and "[openvino]" in message and "[tflite]" in message
    assert message.endswith(
        "Converters installed in this version: OpenVINO IR, Larq Compute Engine TFLite, ONNX (PyTorch, QONNX).")
    assert isinstance(info.value, xnorcl.Error)
    assert not destination.exists()


def test_unknown_suffix_lists_the_known_ones(tmp_path):
    with pytest.raises(xnorcl.InvalidArgument, match=r"no converter reads '\.pb' files; the formats are \.xml"):
        xnorcl.convert(str(tmp_path / "model.pb"), str(tmp_path / "out.xnn"))


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "xnorcl.convert.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_console_script_refuses_a_missing_model(tmp_path):
    result = run_cli(str(tmp_path / "model.tflite"), "-o", str(tmp_path / "out.xnn"))
    assert result.returncode == 1
    assert result.stderr.startswith("xnorcl-convert: ") and "model.tflite: cannot read it" in result.stderr
    assert not (tmp_path / "out.xnn").exists()
    listed = run_cli("--list-formats")
    assert listed.returncode == 0 and ".tflite" in listed.stdout and ".xml" in listed.stdout
    assert "OpenVINO IR" in listed.stdout and "Larq Compute Engine TFLite" in listed.stdout
    usage = run_cli()
    assert usage.returncode == 2 and "required" in usage.stderr


def test_console_script_is_installed():
    # pip puts the entry point beside the interpreter of the environment it installed into.
    import importlib.metadata

    scripts = [ep for ep in importlib.metadata.entry_points(group="console_scripts") if ep.name == "xnorcl-convert"]
    assert [ep.value for ep in scripts] == ["xnorcl.convert.cli:main"]


@pytest.mark.parametrize("model,reader,extra", [("model.xml", "openvino", "openvino"),
                                                 ("model.tflite", "flatbuffers", "tflite")])
def test_a_missing_reader_names_the_extra(tmp_path, monkeypatch, model, reader, extra):
    real = conversion.importlib.util.find_spec
    monkeypatch.setattr(
        conversion.importlib.util, "find_spec", lambda name, *a: None if name == reader else real(name, *a)
    )
    destination = tmp_path / "out.xnn"
    with pytest.raises(xnorcl.ConverterUnavailable, match=rf'needs {reader}: pip install "xnorcl\[{extra}\]"'):
        xnorcl.convert(str(tmp_path / model), str(destination))
    assert not destination.exists()


def test_the_output_is_only_ever_a_regular_file(tmp_path):
    model = tmp_path / "model.tflite"
    model.write_bytes(b"not a flatbuffer")  # the paths are refused before the model is read
    fifo = tmp_path / "pipe.xnn"
    os.mkfifo(fifo)
    for destination, message in [
        (fifo, "it is a FIFO; xnorcl-convert writes only regular files"),
        (tmp_path, "it is a directory"),
        (tmp_path / "missing" / "out.xnn", "the folder .*missing does not exist"),
        (model, "it is the model being converted"),
    ]:
        with pytest.raises(xnorcl.InvalidArgument, match=message):
            xnorcl.convert(str(model), str(destination))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and model.read_bytes() == b"not a flatbuffer"
    # A device is refused by the same check, called directly: a regression must not replace /dev/null.
    with pytest.raises(xnorcl.InvalidArgument, match="it is a character device"):
        conversion._common.check_paths(str(model), "/dev/null")


def test_a_fifo_as_the_model_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "model.xml"
    os.mkfifo(fifo)  # reading it would wait for a writer forever
    with pytest.raises(xnorcl.InvalidArgument, match="model.xml: cannot read it: it is a FIFO, not a regular file"):
        xnorcl.convert(str(fifo), str(tmp_path / "out.xnn"))


def test_a_converted_file_gets_the_mode_of_a_new_file(tmp_path):
    pytest.importorskip("tflite")
    source = pathlib.Path(__file__).parent / "larq_fixtures" / "bconv_1x1_c17.tflite"
    umask = os.umask(0o027)
    try:
        xnorcl.convert(str(source), str(tmp_path / "out.xnn"))
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "out.xnn").st_mode) == 0o640


def test_console_script_says_a_missing_ir_in_one_line(tmp_path):
    result = run_cli(str(tmp_path / "missing.xml"), "-o", str(tmp_path / "out.xnn"))
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "missing.xml: cannot read it: No such file or directory" in result.stderr
