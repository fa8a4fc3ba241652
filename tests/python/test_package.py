# SPDX-License-Identifier: Apache-2.0
"""The package itself: its version, the names of the API contract, the type stubs and py.typed."""

import ast
import pathlib

import xnorcl
from xnorcl import _xnorcl

PACKAGE = pathlib.Path(xnorcl.__file__).parent


def test_version_is_the_library_version():
    parts = xnorcl.__version__.split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts)


def test_the_contract_names_exist():
    for name in [
        "Runtime", "BinaryConvolution", "reference_binary_convolution", "load", "convert",
        "Error", "InvalidArgument", "DeviceNotFound", "OpenCLError", "BuildError", "__version__",
    ]:
        assert hasattr(xnorcl, name), name
    for name in ["inputs", "outputs", "run", "plan", "last_node_times"]:
        assert hasattr(xnorcl.Model, name), name


def stub_names(path):
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_stubs_cover_the_extension_module():
    # Every public name of the extension has a stub, and every stub names something real.
    def public(name):
        return not name.startswith("_") or name == "__version__"

    stubbed = {n for n in stub_names(PACKAGE / "_xnorcl.pyi") if public(n)}  # _Pair etc. are type aliases
    exported = {n for n in dir(_xnorcl) if public(n)}
    assert stubbed == exported
    for cls in ("Runtime", "BinaryConvolution", "Threshold"):
        tree = ast.parse((PACKAGE / "_xnorcl.pyi").read_text())
        stub = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        members = {n.name for n in stub.body if isinstance(n, ast.FunctionDef)}
        real = {n for n in dir(getattr(_xnorcl, cls)) if not n.startswith("_")} | {"__init__"}
        assert members == real, cls


def test_py_typed_is_installed():
    assert (PACKAGE / "py.typed").exists()
