"""Keeps README.md true: its Python examples run and print what they say, and
its C++ example is the body of examples/quickstart.cc (which ctest builds and
runs)."""

import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
README = (ROOT / "README.md").read_text()


def _blocks(lang):
    return re.findall(r"```" + lang + r"\n(.*?)```", README, flags=re.S)


def test_readme_has_exactly_two_setup_commands():
    section = README.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    commands = [b.strip() for b in re.findall(r"```sh\n(.*?)```", section, flags=re.S)]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    for script in ("demo.sh", "test.sh"):
        assert (ROOT / "scripts" / script).is_file()


def _printed_value(code):
    """The `# <value>` comment of the block's last print line: what it prints."""
    prints = [line for line in code.splitlines() if line.lstrip().startswith("print(")]
    assert prints, "a README Python example prints nothing:\n" + code
    m = re.search(r"\)\s*#\s*(.+?)\s*$", prints[-1])
    assert m, "the last print line has no '# <value>' comment: " + prints[-1]
    return m.group(1)


def test_readme_has_python_examples():
    assert len(_blocks("python")) >= 2


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_example_runs_with_the_venv_and_prints_its_comment(index, tmp_path):
    # The README says to run the examples with .venv/bin/python, which either
    # set-up command prepares. The environment is kept, so that a staged
    # package (scripts/dev-pytest.sh's PYTHONPATH) is the one imported.
    code = _blocks("python")[index]
    assert VENV_PYTHON.exists(), "no %s: run bash scripts/test.sh" % VENV_PYTHON
    out = subprocess.run([str(VENV_PYTHON), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=50)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == _printed_value(code)


def test_cpp_example_is_the_quickstart_program():
    (code,) = _blocks("cpp")
    quickstart = (ROOT / "examples" / "quickstart.cc").read_text()
    body = [line[2:] if line.startswith("  ") else line for line in quickstart.splitlines()]
    snippet = [line for line in code.splitlines()]
    # The README shows main's body from the first statement, unindented.
    start = body.index(snippet[0])
    assert body[start:start + len(snippet)] == snippet
