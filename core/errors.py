"""The one error family of the app, declared whole here: every failure a person can act on is a `BudgetError`.

Rule 1: `BudgetError` is the root. Its message is one line a person can act on; the CLI
        prints it and exits 2, the window shows it where it happened. Anything that is not a
        `BudgetError` (or an `OSError` from the disk) is a bug: the window says "Internal error —
        details in the log" and the log keeps the traceback.
Rule 2: the root subclasses `ValueError`, so callers that caught `ValueError` before the
        family existed still catch every member of it.
Rule 3: every member is declared in this module (the modules that raise one import it from
        here), and says who is at fault:

        BudgetError                     one line a person can act on (CLI exit 2)
        ├── ModelLoadError              the model cannot be loaded: missing file or shard, unreadable
        │   ├── GGUFFormatError         its bytes are not GGUF we can read (names the byte offset)
        │   │   └── TruncatedHeaderError   they end inside the header (more bytes would help)
        │   └── RemoteError             a model named by a URL: the network, the server, what it sent
        │       ├── Unreachable         no answer (offline, timeout, 5xx): a cached header may stand in
        │       └── FetchCancelled      the person cancelled the transfer; nothing is wrong with the source
        ├── UnreadableFile              a small file that is not a model (a manifest, settings, a log, a
        │   │                           stored record): not a regular file, too large, unreadable, not JSON
        │   └── MissingFile             nothing is at the path: often not an error at all
        ├── DamagedRecord               a record this app stored is not what it wrote (it is ignored)
        │   ├── DamagedMachineRecord    the kept machine measurement (it is measured again)
        │   └── DamagedRuns             the kept speed runs (no calibration from them)
        ├── RequestError                a request, size, range or machine figure is out of bounds
        │   └── LlamaArgsError          a llama.cpp command line llama.cpp itself would refuse
        ├── PlanError                   the model cannot be planned as asked (missing facts, a head
        │   │                           mode it cannot honour)
        │   └── QuantMixError           llama.cpp cannot write this file type for this model
        ├── EvidenceError               runtime evidence cannot be measured, read or stored
        │   ├── LlamaCppLogError        the text is not a llama.cpp log we can read
        │   ├── EvidenceMismatch        the log is of another model than the one given
        │   └── MeasureError            a measurement did not complete: timed out, cancelled, failed
        │       ├── EngineError         no usable llama.cpp, or the one named does not exist
        │       └── UnlinkableModel     a model whose name could forge log lines, and no link to it
        ├── CommandError                command-line arguments that do not go together, or an output
        │                               file the CLI cannot write
        └── ExportError                 the window's export could not be written
Rule 4: `struct.error`, `OSError`, `OverflowError` and `UnicodeDecodeError` met while reading
        a model are wrapped at the edge (`core.gguf`), so no other exception escapes on bad input.
"""

from __future__ import annotations


class BudgetError(ValueError):
    """The root: a one-line reason a person can act on (CLI exit 2)."""


class ModelLoadError(BudgetError):
    """A model could not be loaded: missing file or shard, unreadable, or malformed."""


class GGUFFormatError(ModelLoadError):
    """The bytes are not a GGUF file we can read; `offset` says where it went wrong."""

    def __init__(self, message: str, offset: int | None = None, path: str | None = None):
        self.reason = message
        self.offset = offset
        self.path = path
        where = f" at byte {offset}" if offset is not None else ""
        prefix = f"{path}: " if path else ""
        super().__init__(f"{prefix}{message}{where}")

    def in_file(self, path: str) -> GGUFFormatError:
        """The same error, now naming the file it came from."""
        return type(self)(self.reason, self.offset, path)


class TruncatedHeaderError(GGUFFormatError):
    """The bytes end inside the header: more of the file would let it be read (a remote prefix, a cut download)."""


class RemoteError(ModelLoadError):
    """A model named by a URL could not be read: the network, the server, or what it sent."""


class Unreachable(RemoteError):
    """The network or the server did not answer (offline, a timeout, a dropped connection, 5xx):
    a cached header may stand in; a wrong answer (404, not GGUF) is a plain `RemoteError`."""


class FetchCancelled(RemoteError):
    """The user cancelled the transfer; nothing is wrong with the source."""


class UnreadableFile(BudgetError):
    """A file that is not a model could not be read: not a regular file, over its size cap, unreadable, not JSON."""


class MissingFile(UnreadableFile):
    """Nothing is at the path (or a part of it is not a folder): often not an error at all."""


class DamagedRecord(BudgetError):
    """A stored record that is not one this app wrote: missing fields, wrong types, bad values."""


class DamagedMachineRecord(DamagedRecord):
    """The kept machine measurement is not one `bandwidth_store` wrote (it is measured again)."""


class DamagedRuns(DamagedRecord):
    """The kept speed runs are not what `speed.calibration` wrote (no runs)."""


class RequestError(BudgetError):
    """A value given to the core is out of bounds: a request knob, a size, a range, a machine figure."""


class LlamaArgsError(RequestError):
    """A llama.cpp command line that llama.cpp itself would refuse: an unknown option, a missing or malformed value."""


class PlanError(BudgetError):
    """The model cannot be planned as asked (missing facts, a head mode it cannot honour)."""


class QuantMixError(PlanError):
    """llama.cpp cannot write this file type for this model (a row no type divides)."""


class EvidenceError(BudgetError):
    """Evidence could not be measured, read or stored: one line a person can act on."""


class LlamaCppLogError(EvidenceError):
    """The text is not a llama.cpp log we can read."""


class EvidenceMismatch(EvidenceError):
    """The log is of another model than the one given."""


class MeasureError(EvidenceError):
    """A measurement did not complete: timed out, cancelled, or the engine failed (one line)."""


class EngineError(MeasureError):
    """No usable llama.cpp, or the one named does not exist: one line a person can act on."""


class UnlinkableModel(MeasureError):
    """A model whose name could forge log lines, and no link could be made to it."""


class CommandError(BudgetError):
    """Command-line arguments that do not go together, or an output file that cannot be written (exit 2).

    The core's own errors (a model that does not load, a request out of bounds, a plan it
    refuses) reach the CLI's `main` as they are: it reports every `BudgetError` the same way.
    """


class ExportError(BudgetError):
    """An export could not be written; the message is one line."""


def one_line(error: BaseException) -> str:
    """The first line of the error's message, or its type's name when it has none."""
    lines = str(error).splitlines()
    return lines[0] if lines and lines[0].strip() else type(error).__name__
