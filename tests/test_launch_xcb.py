"""The launcher checks Qt's xcb platform libraries before Qt starts (issue 17, item 1): a missing
one is one line naming it and the package to install, exit 2 — never Qt's abort."""

from __future__ import annotations

import pytest

from gguf_budget.gui.cli import launch as launch_module
from gguf_budget.gui.cli import xcb_check
from gguf_budget.gui.cli.launch import launch
from gguf_budget.gui.cli.xcb_check import XCB_LIBRARIES, Family, family_of, install_hint, missing_libraries, platform_is_xcb
from gguf_budget.resources import demo_model_path

ABSENT = ("libxcb-icccm.so.4", "libxcb-keysyms.so.1")  # what a stock desktop lacked in the report


def loader_without(*absent: str):
    def load(soname: str) -> object:
        if soname in absent:
            raise OSError(f"{soname}: cannot open shared object file: No such file or directory")
        return object()

    return load


@pytest.mark.parametrize(("os_release", "command"), [
    ('ID=ubuntu\nID_LIKE=debian\n', "sudo apt install libxcb-icccm4 libxcb-keysyms1"),
    ('ID="fedora"\n', "sudo dnf install xcb-util-wm xcb-util-keysyms"),
    ('ID=manjaro\nID_LIKE=arch\n', "sudo pacman -S xcb-util-wm xcb-util-keysyms"),
])
def test_xcb_requested_with_libraries_missing_prints_one_line_and_exits_2(capsys, monkeypatch, os_release, command):
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    monkeypatch.setattr(launch_module, "read_os_release", lambda: os_release)
    monkeypatch.setattr(xcb_check.os, "geteuid", lambda: 1000)  # a desktop user (the check itself may run as root)
    assert launch([str(demo_model_path())], load_library=loader_without(*ABSENT)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gguf-budget: the window cannot start")
    assert all(name in err for name in ABSENT) and command in err
    assert "libxcb-cursor" not in err


def test_an_unknown_family_gets_every_familys_packages():
    hint = install_hint(tuple(lib for lib in XCB_LIBRARIES if lib.soname in ABSENT), None, root=False)
    assert all(f.value in hint for f in Family) and "libxcb-icccm4" in hint and "xcb-util-wm" in hint


@pytest.mark.parametrize("family", [Family.APT, None])
def test_root_is_told_no_sudo(family):
    hint = install_hint(tuple(lib for lib in XCB_LIBRARIES if lib.soname in ABSENT), family, root=True)
    assert "sudo" not in hint and "apt install libxcb-icccm4" in hint


@pytest.mark.parametrize(("os_release", "family"), [
    ("ID=debian\n", Family.APT), ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', Family.APT),
    ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', Family.DNF), ("ID=arch\n", Family.PACMAN),
    ("ID=gentoo\n", None), ("", None),
])
def test_the_family_comes_from_os_release(os_release, family):
    assert family_of(os_release) is family


@pytest.mark.parametrize(("environ", "platform", "xcb"), [
    ({"DISPLAY": ":0"}, "linux", True), ({"QT_QPA_PLATFORM": "xcb"}, "linux", True),
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux", False),
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux", False),
    ({"QT_QPA_PLATFORM": "wayland"}, "linux", False), ({"DISPLAY": ":0"}, "darwin", False),
])
def test_the_check_runs_only_where_qt_will_use_xcb(environ, platform, xcb):
    assert platform_is_xcb(environ, platform) is xcb


def test_with_every_library_there_nothing_is_missing_and_the_real_loader_is_asked():
    assert missing_libraries(loader_without()) == ()
    asked: list[str] = []
    missing_libraries(lambda soname: asked.append(soname))
    assert asked == [lib.soname for lib in XCB_LIBRARIES]

