"""Terminal policy of the CLI: color environment, Ctrl-C, shell completions."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cctool.cli._io import auto_color
from cctool.cli._options import COLORMAP_NAMES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("env", "isatty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": ""}, True, True),  # no-color.org: only a non-empty value counts
        ({"NO_COLOR": "1"}, True, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": "0"}, False, False),
        ({"CLICOLOR_FORCE": "1"}, False, True),
        ({"FORCE_COLOR": ""}, False, False),
        ({"TERM": "dumb"}, True, False),
        ({"TERM": "dumb", "FORCE_COLOR": "1"}, True, True),
        ({"TERM": "dumb", "CLICOLOR_FORCE": "1"}, False, True),
        ({"TERM": "xterm-256color"}, True, True),
    ],
)
def test_auto_color_follows_the_environment(env: dict[str, str], isatty: bool,
                                            expected: bool) -> None:
    assert auto_color(env, isatty) is expected


def test_force_color_colors_a_pipe(tmp_path: Path) -> None:
    prof = ROOT / "tests" / "data" / "callgrind" / "callgrind.out.sample"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FORCE_COLOR": "1"}
    env.pop("NO_COLOR", None)
    out = subprocess.run([sys.executable, "-m", "cctool", "tree", str(prof), "--depth", "2"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "\x1b[" in out.stdout
    env["NO_COLOR"] = "1"
    out = subprocess.run([sys.executable, "-m", "cctool", "tree", str(prof), "--depth", "2"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert "\x1b[" not in out.stdout


def _on_a_terminal(args: list[str], env: dict[str, str]) -> bytes:
    """What cctool writes to stdout and stderr when both are a terminal (a pseudo-terminal)."""
    import pty

    main, sub = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "cctool", *args], stdin=subprocess.DEVNULL,
                            stdout=sub, stderr=sub, env=env)
    os.close(sub)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert proc.wait(timeout=120) == 0, out.decode(errors="replace")
    return out


def test_a_dumb_terminal_gets_no_escape_sequences() -> None:
    prof = ROOT / "tests" / "data" / "callgrind" / "callgrind.out.sample"
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE")}
    env.update(PYTHONPATH=str(ROOT), COLUMNS="100")
    args = ["tree", str(prof), "--depth", "3"]
    assert b"\x1b[" in _on_a_terminal(args, {**env, "TERM": "xterm-256color"})
    out = _on_a_terminal(args, {**env, "TERM": "dumb"})
    assert b"\x1b" not in out and b"Legend" in out
    assert b"\x1b[" in _on_a_terminal(args, {**env, "TERM": "dumb", "FORCE_COLOR": "1"})


def test_ctrl_c_exits_130_without_traceback(tmp_path: Path) -> None:
    # stdin is a pipe nobody writes to: the command blocks mid-read until interrupted.
    out = tmp_path / "out.cct"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "cctool", "read", "-", "-o", str(out)],
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _wait_until_reading(proc.pid)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip() == "interrupted"
    assert list(tmp_path.iterdir()) == []


def _wait_until_reading(pid: int, timeout: float = 60.0) -> None:
    """Wait until the process sleeps in a read (its imports done), or at most ``timeout``."""
    wchan = Path(f"/proc/{pid}/wchan")
    end = time.monotonic() + timeout
    time.sleep(0.5)
    while time.monotonic() < end:
        try:
            if "read" in wchan.read_text():
                time.sleep(0.2)
                return
        except OSError:
            break
        time.sleep(0.1)
    time.sleep(3)  # no wchan to look at: give start-up a moment


def test_interrupted_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    from cctool.render import files

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        files.write_bytes_atomic(tmp_path / "x.json", b"{}")
    assert list(tmp_path.iterdir()) == []


def test_colormap_names_match_the_renderer() -> None:
    from cctool.render import COLORMAPS

    assert tuple(COLORMAPS) == COLORMAP_NAMES


def _bash_complete(words: list[str], cwd: Path) -> list[str]:
    script = (ROOT / "completions" / "cctool.bash").as_posix()
    arr = " ".join(f"'{w}'" for w in words)
    code = (f"source '{script}'; COMP_WORDS=({arr}); COMP_CWORD={len(words) - 1}; _cctool; "
            'printf "%s\\n" "${COMPREPLY[@]}"')
    out = subprocess.run(["bash", "-c", code], cwd=cwd, capture_output=True, text=True,
                         check=True)
    return [line for line in out.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_paths_with_spaces_and_no_files_for_free_values(tmp_path: Path) -> None:
    (tmp_path / "my run.cali").touch()
    (tmp_path / "other.cct").touch()
    assert _bash_complete(["cctool", "tree", "my"], tmp_path) == ["my run.cali"]
    assert _bash_complete(["cctool", "tree", "--colormap", ""], tmp_path) == list(
        COLORMAP_NAMES)
    assert _bash_complete(["cctool", "tree", "--by", ""], tmp_path) == []
    assert _bash_complete(["cctool", "tree", "-o", "oth"], tmp_path) == ["other.cct"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_the_commands_of_a_command_group(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    assert _bash_complete(["cctool", "history", ""], tmp_path) == [
        "-h", "--help", "add", "check", "show"]
    assert _bash_complete(["cctool", "history", "add", "--k"], tmp_path) == ["--key"]
    assert _bash_complete(["cctool", "history", "check", "--to", "m"], tmp_path) == [
        "markdown"]
    assert _bash_complete(["cctool", "history", "show", "st"], tmp_path) == ["store"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_file_can_be_sourced() -> None:
    script = (ROOT / "completions" / "cctool.zsh").as_posix()
    out = subprocess.run(["zsh", "-fc", f"autoload -Uz compinit && compinit -u && "
                          f"source '{script}' && echo ${{_comps[cctool]}}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert out.stdout.strip() == "_cctool"


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_offers_no_files_beside_choices(tmp_path: Path) -> None:
    (tmp_path / "my run.cali").touch()
    script = (ROOT / "completions" / "cctool.fish").as_posix()

    def complete(line: str) -> list[str]:
        out = subprocess.run(["fish", "--no-config", "-c",
                              f"source '{script}'; complete -C '{line}'"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return [c.split("\t")[0] for c in out.stdout.splitlines()]

    assert sorted(complete("cctool tree --colormap ")) == sorted(COLORMAP_NAMES)
    assert complete("cctool tree --by ") == []
    assert "my run.cali" in complete("cctool tree ")
    assert sorted(complete("cctool history ")) == ["add", "check", "show"]
    assert "markdown" in complete("cctool history check --to ")
    assert "--path" in complete("cctool history show --")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_command_prints_the_script_a_real_shell_loads(shell: str,
                                                                 tmp_path: Path) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "cctool", "completion", shell],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout == (ROOT / "completions" / f"cctool.{shell}").read_text()
    script = tmp_path / f"cctool.{shell}"
    script.write_text(out.stdout)
    if shell == "bash":
        code = (f"source '{script}'; COMP_WORDS=(cctool completion z); COMP_CWORD=2; _cctool; "
                'printf "%s\\n" "${COMPREPLY[@]}"')
        done = subprocess.run(["bash", "-c", code], capture_output=True, text=True, timeout=60)
        assert done.stdout.split() == ["zsh"]
    elif shell == "zsh":
        done = subprocess.run(["zsh", "-fc", f"autoload -Uz compinit && compinit -u && "
                               f"source '{script}' && echo ${{_comps[cctool]}}"],
                              capture_output=True, text=True, timeout=60)
        assert done.stderr == "" and done.stdout.strip() == "_cctool"
        assert "completion) _arguments" in out.stdout and "'1:value:(bash zsh fish)'" in out.stdout
    else:
        done = subprocess.run(["fish", "--no-config", "-c",
                               f"source '{script}'; complete -C 'cctool completion '"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert sorted(c.split("\t")[0] for c in done.stdout.splitlines()) == ["bash", "fish", "zsh"]


def test_piped_text_follows_columns_then_120(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text width: --width, else the terminal's, else COLUMNS, else 120 (a pipe here)."""
    from click.testing import CliRunner

    from cctool.cli import cli

    prof = ROOT / "tests" / "data" / "callgrind" / "callgrind.out.sample"
    args = ["tree", str(prof), "--view", "bottom-up"]  # rows wider than 100: names elided

    def widest(env: dict[str, str], *extra: str) -> int:
        res = CliRunner(env=env).invoke(cli, [*args, *extra])
        assert res.exit_code == 0, res.output
        return max(len(line) for line in res.stdout.splitlines())

    monkeypatch.delenv("COLUMNS", raising=False)
    assert widest({}) <= 120 and widest({}) == widest({"COLUMNS": "120"})
    assert widest({"COLUMNS": "100"}) == 100
    assert widest({"COLUMNS": "60"}) == 60
    assert widest({"COLUMNS": "60"}, "--width", "80") == 80
    assert widest({"COLUMNS": "junk"}) == widest({})


def test_text_width_prefers_the_terminal_to_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from cctool.cli import _io

    monkeypatch.setenv("COLUMNS", "70")
    monkeypatch.setattr(_io.sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(_io.os, "get_terminal_size", lambda fd: os.terminal_size((91, 30)))
    monkeypatch.setattr(_io.sys.stdout, "fileno", lambda: 1)
    assert _io.text_width(None) == 91
    assert _io.text_width(40) == 40
    assert _io.text_width(None, "out.txt") == 70  # a file: no terminal to fit
    monkeypatch.delenv("COLUMNS")
    assert _io.text_width(None, "out.txt") == 120
