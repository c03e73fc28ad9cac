"""Round 2's classes of hostile file through every reader added since (issue #24, "hostile2-style"):
a FIFO, a symlink to /dev/zero, a symlink loop, a folder, a name that is not UTF-8, garbage bytes,
numbers of 6,000 digits, nesting past Python's parser, a file past its cap.

Each reader reads what the app reads through it — the library's folder list, LM Studio's settings,
an Ollama manifest, a llama.cpp log (`evidence`, Import), a stored record and its log, the window's
settings, the library's index, this machine's speed record and its calibration runs, a model's
header fingerprint — and must end within a second or two: read, or ignored, or refused in one line.
The cases of one reader run in a child process under an alarm and a memory limit, so a reader that
blocks or balloons fails its own case, not the test run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent(r'''
    import json, os, resource, signal, sys, traceback
    sys.path.insert(0, "tests")
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    class Hang(BaseException):
        pass

    def alarm(*_):
        raise Hang()

    signal.signal(signal.SIGALRM, alarm)
    from hostile_readers_cases import READERS, CLASSES, prepare
    reader = READERS[sys.argv[1]]
    results = {}
    for kind in CLASSES:
        folder = prepare(sys.argv[2], sys.argv[1], kind)
        signal.alarm(20)
        try:
            results[kind] = "ok: " + str(reader.read(folder))[:200]
        except Hang:
            results[kind] = "HANG"
        except MemoryError:
            results[kind] = "OVER THE MEMORY LIMIT"
        except ValueError as e:  # the project's errors (BudgetError is a ValueError): one line
            text = str(e)
            results[kind] = ("one line: " if text and "\n" not in text else "NOT ONE LINE: ") + text[:200]
        except BaseException:
            results[kind] = "TRACEBACK: " + traceback.format_exc()[-600:]
        finally:
            signal.alarm(0)
    print(json.dumps(results))
''')
READER_NAMES = ("library folders", "lm studio settings", "ollama manifest", "evidence LOG", "import log",
                "store record", "store log", "window settings", "library index", "machine speed", "speed runs",
                "header fingerprint")


@pytest.mark.parametrize("reader", READER_NAMES)
def test_every_reader_ends_on_every_class_of_hostile_file(tmp_path, reader):
    done = subprocess.run([sys.executable, "-c", CHILD, reader, str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).parent.parent,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    bad = {kind: r for kind, r in results.items() if not r.startswith(("ok: ", "one line: "))}
    assert bad == {}
    from hostile_readers_cases import EXPECTED_OK

    assert results["valid, name not UTF-8"].startswith("ok: " + EXPECTED_OK.get(reader, "")), results
