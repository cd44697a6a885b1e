"""Keeps README.md true: its Python examples run and print what they say, and
its C++ example is the body of examples/quickstart.cc (which ctest builds and
runs)."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _blocks(lang):
    return re.findall(r"```" + lang + r"\n(.*?)```", README, flags=re.S)


def test_readme_has_exactly_two_setup_commands():
    section = README.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    commands = [b.strip() for b in re.findall(r"```sh\n(.*?)```", section, flags=re.S)]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    for script in ("demo.sh", "test.sh"):
        assert (ROOT / "scripts" / script).is_file()


def test_python_examples_run_and_print_their_result():
    blocks = _blocks("python")
    assert len(blocks) == 2
    for code in blocks:
        expected = re.search(r"print\(total\)\s*#\s*(\S+)", code).group(1)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == expected


def test_cpp_example_is_the_quickstart_program():
    (code,) = _blocks("cpp")
    quickstart = (ROOT / "examples" / "quickstart.cc").read_text()
    body = [line[2:] if line.startswith("  ") else line for line in quickstart.splitlines()]
    snippet = [line for line in code.splitlines()]
    # The README shows main's body from the first statement, unindented.
    start = body.index(snippet[0])
    assert body[start:start + len(snippet)] == snippet
