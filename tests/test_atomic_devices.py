"""Writing over a device or a pipe: ``--out /dev/null --force`` or a FIFO a reader waits on is written in place,
never replaced by a regular file (as root, a rename over ``/dev/null`` turned the machine's ``/dev/null`` into a
file that every later process wrote into)."""

import os
import stat
import threading

import pytest

from designer._internal.io import atomic_writer


def test_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    with atomic_writer(fifo, overwrite=True) as fh:
        fh.write(b"a,b\n1,2\n")
    reader.join(timeout=30)
    assert got == [b"a,b\n1,2\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["pipe"]  # no temporary file beside it


def test_a_fifo_is_not_written_without_overwrite(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FileExistsError, match="already exists"), atomic_writer(fifo, overwrite=False) as fh:
        fh.write(b"x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dev_null_stays_a_character_device():
    with atomic_writer("/dev/null", overwrite=True) as fh:
        fh.write(b"discarded")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
