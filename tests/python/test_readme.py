# SPDX-License-Identifier: Apache-2.0
"""README.md's Python quick start, extracted and run as it is written, so it cannot drift from the API."""

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def readme_example():
    text = README.read_text()
    section = re.search(r"<!-- python-example:begin -->(.*?)<!-- python-example:end -->", text, re.S)
    assert section, "README.md has no <!-- python-example:begin --> ... <!-- python-example:end --> section"
    code = re.search(r"```python\n(.*?)\n```", section.group(1), re.S)
    assert code, "the python-example section of README.md has no ```python block"
    return code.group(1)


def test_readme_python_example_runs(tmp_path):
    script = tmp_path / "readme_example.py"
    script.write_text(readme_example())
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bitwise equal to the reference" in result.stdout
