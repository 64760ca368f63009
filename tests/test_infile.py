"""The one reader of input files (planner.core.infile): once, bounded, regular files and shell pipes only."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from planner.core.infile import FileProblem, read_input


def _problem(path, **kw) -> FileProblem:
    with pytest.raises(FileProblem) as info:
        read_input(path, **kw)
    return info.value


def test_a_regular_file_is_read_with_its_hash(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_bytes(b"name: x\n")
    f = read_input(p)
    assert f.data == b"name: x\n" and f.text() == "name: x\n"
    assert f.sha256 == hashlib.sha256(b"name: x\n").hexdigest()


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)
    exc = _problem(fifo)  # opening it for reading would block until some program writes to it
    assert str(exc) == ("is a named pipe (FIFO), not a regular file (reading one waits until another program "
                        "writes to it)")
    assert exc.hint == "Give the path of a saved file; a pipe from the shell (<(...), /dev/stdin) is read once."


def test_devices_are_refused_before_a_byte_is_read() -> None:
    assert str(_problem("/dev/zero")) == "is a character device, not a regular file (a device can stream without end)"
    assert str(_problem("/dev/null")).startswith("is a character device")


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "gpus.yaml"
    link.symlink_to("/dev/urandom")
    assert str(_problem(link)).startswith("is a character device, not a regular file")


def test_missing_directory_and_long_names(tmp_path: Path) -> None:
    assert str(_problem(tmp_path / "nope.yaml")) == "no such file"
    assert str(_problem(tmp_path)) == "is a directory, not a file"
    assert str(_problem(tmp_path / ("é" * 200 + ".yaml"))).startswith(
        "cannot be read (its name is too long for the file system)")
    assert str(_problem(tmp_path / "a\0b")) == "cannot be read (its name holds a NUL byte)"


def test_a_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    p = tmp_path / "big.yaml"
    with open(p, "wb") as fh:
        fh.truncate(10**12)  # sparse: reading it would take minutes
    assert str(_problem(p)) == f"is {10**12} bytes, more than the {20 * 2**20} a planner input may be"
    small = tmp_path / "s.yaml"
    small.write_bytes(b"x" * 101)
    assert str(_problem(small, max_bytes=100)) == "is 101 bytes, more than the 100 a planner input may be"


def test_a_shell_pipe_is_read_once_and_hashed_as_read() -> None:
    # what bash passes for <(cat scenario.yaml): /dev/fd/N, the read end of a pipe
    r, w = os.pipe()
    os.write(w, b"name: piped\n")
    os.close(w)
    try:
        f = read_input(f"/dev/fd/{r}")
        assert f.data == b"name: piped\n"
        assert f.sha256 == hashlib.sha256(b"name: piped\n").hexdigest()
    finally:
        os.close(r)


def test_a_pipe_that_streams_past_the_limit_is_refused_after_the_limit() -> None:
    r, w = os.pipe()
    sent = []

    def flood() -> None:  # as <(cat /dev/zero) would, until the reader goes away
        try:
            while True:
                sent.append(os.write(w, b"\0" * 65536))
        except OSError:
            pass
        finally:
            os.close(w)

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    try:
        exc = _problem(f"/dev/fd/{r}", max_bytes=1_000_000)
    finally:
        os.close(r)  # the writer gets EPIPE and stops
    t.join(10)
    assert str(exc) == "holds more than the 1000000 bytes a planner input may be"
    assert sum(sent) < 1_000_000 + 2 * 65536 + 65536 * 16  # read up to the limit, not the stream


def test_text_decoding_problems() -> None:
    from planner.core.infile import InputFile

    assert InputFile(Path("x"), b"\xef\xbb\xbfa: 1\n").text() == "a: 1\n"
    with pytest.raises(FileProblem) as info:
        InputFile(Path("x"), b"a: 1\nb: caf\xe9\n").text()
    assert (str(info.value), info.value.line) == ("is not UTF-8 text (byte 0xe9)", 2)
    with pytest.raises(FileProblem) as info:
        InputFile(Path("x"), b"  \n\n").text()
    assert str(info.value) == "is empty"
