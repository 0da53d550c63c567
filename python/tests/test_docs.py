"""docs/PYTHON.md's walkthrough runs as written."""
import os
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "PYTHON.md"


@pytest.mark.skipif(not DOC.exists(), reason="docs/PYTHON.md is not beside the package")
def test_walkthrough(tmp_path, monkeypatch):
    section = DOC.read_text().split("## A walkthrough")[1].split("## Reference")[0]
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    try:
        import matplotlib  # noqa: F401
    except ImportError:   # the plot needs matplotlib; everything before it runs
        code = code.replace(".plot.bar()", ".to_dict()")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(DOC), "exec"), {})
    assert os.path.exists(tmp_path / "people.db")
