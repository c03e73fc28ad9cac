"""Before Qt starts on X11: are the libraries of Qt's xcb platform plugin there? (issue 17, item 1)

Qt aborts (exit 134, a core dump) when its xcb plugin cannot load, naming `libxcb-cursor0`
whatever is really missing. So the launcher asks first and says in one line what to install.

Rule 1: the platform will be xcb on Linux when QT_QPA_PLATFORM says xcb, or says nothing and
        there is no Wayland display (Qt picks Wayland when WAYLAND_DISPLAY is set).
Rule 2: a library is there when the dynamic loader can load it by its soname (the loader Qt
        will use, LD_LIBRARY_PATH included). XCB_LIBRARIES lists what `libQt6XcbQpa` links
        beyond libc and Qt (`ldd`), each with its package per distribution family.
Rule 3: the family comes from /etc/os-release (ID, then ID_LIKE); unknown families get every
        family's package names.
Rule 4: root needs no `sudo` (a container often has none): the command is given without it.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Callable, Mapping

from gguf_budget.core.errors import UnreadableFile
from gguf_budget.core.regular_file import FileKind, read_text
from gguf_budget.core.vocab import TextEnum

OS_RELEASE = "/etc/os-release"


class Family(TextEnum):
    """A distribution family, by its package manager's install command."""

    APT = "sudo apt install"
    DNF = "sudo dnf install"
    PACMAN = "sudo pacman -S"


FAMILY_OF_ID: dict[str, Family] = {
    "debian": Family.APT, "ubuntu": Family.APT,
    "fedora": Family.DNF, "rhel": Family.DNF, "centos": Family.DNF,
    "arch": Family.PACMAN,
}


@dataclass(frozen=True)
class SystemLibrary:
    soname: str
    packages: Mapping[Family, str]


def _lib(soname: str, apt: str, dnf: str, pacman: str) -> SystemLibrary:
    return SystemLibrary(soname, {Family.APT: apt, Family.DNF: dnf, Family.PACMAN: pacman})


XCB_LIBRARIES: tuple[SystemLibrary, ...] = (
    _lib("libxcb.so.1", "libxcb1", "libxcb", "libxcb"),
    _lib("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb", "libx11"),
    _lib("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    _lib("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    _lib("libxcb-image.so.0", "libxcb-image0", "xcb-util-image", "xcb-util-image"),
    _lib("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    _lib("libxcb-randr.so.0", "libxcb-randr0", "libxcb", "libxcb"),
    _lib("libxcb-render.so.0", "libxcb-render0", "libxcb", "libxcb"),
    _lib("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil", "xcb-util-renderutil"),
    _lib("libxcb-shape.so.0", "libxcb-shape0", "libxcb", "libxcb"),
    _lib("libxcb-shm.so.0", "libxcb-shm0", "libxcb", "libxcb"),
    _lib("libxcb-sync.so.1", "libxcb-sync1", "libxcb", "libxcb"),
    _lib("libxcb-util.so.1", "libxcb-util1", "xcb-util", "xcb-util"),
    _lib("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb", "libxcb"),
    _lib("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb", "libxcb"),
    _lib("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    _lib("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
)

Loader = Callable[[str], object]


def platform_is_xcb(environ: Mapping[str, str], platform: str) -> bool:
    """Rule 1."""
    if not platform.startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "")
    return chosen.startswith("xcb") or (not chosen and not environ.get("WAYLAND_DISPLAY"))


def _loads(load: Loader, soname: str) -> bool:
    try:
        load(soname)
    except OSError:
        return False
    return True


def missing_libraries(load: Loader = ctypes.CDLL) -> tuple[SystemLibrary, ...]:
    """The xcb plugin's libraries the dynamic loader cannot load (Rule 2)."""
    return tuple(lib for lib in XCB_LIBRARIES if not _loads(load, lib.soname))


def family_of(os_release: str) -> Family | None:
    """Rule 3: the family of ID, else of the first known ID_LIKE word; None when unknown."""
    fields = dict(line.split("=", 1) for line in os_release.splitlines() if "=" in line)
    words = [fields.get(key, "").strip().strip('"').lower() for key in ("ID", "ID_LIKE")]
    for word in " ".join(words).split():
        if word in FAMILY_OF_ID:
            return FAMILY_OF_ID[word]
    return None


def read_os_release(path: str = OS_RELEASE) -> str:
    try:
        return read_text(path, FileKind.SYSTEM)
    except UnreadableFile:
        return ""


def install_hint(missing: tuple[SystemLibrary, ...], family: Family | None, root: bool | None = None) -> str:
    """One line: what is missing, and the command that installs it (every family's when unknown); Rule 4: without
    `sudo` for root (`root` None: this process's user)."""
    as_root = os.geteuid() == 0 if root is None else root

    def packages(f: Family) -> str:
        words = " ".join(dict.fromkeys(lib.packages[f] for lib in missing))
        return f"{f.value.removeprefix('sudo ') if as_root else f.value} {words}"

    names = ", ".join(lib.soname for lib in missing)
    if family is not None:
        how = f"install with: {packages(family)}"
    else:
        how = "install the packages that provide them: " + "; ".join(packages(f) for f in Family)
    return (f"the window cannot start: Qt's X11 (xcb) platform needs {names}, which the system lacks; {how} "
            "(--screenshot PATH and the subcommands need no display)")
