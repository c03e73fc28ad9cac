"""The Linux desktop entry and the app icon: the PNGs are current renders of the SVG, the entry
names the icon and program, and packaging/install_desktop.py puts both where XDG looks."""

from __future__ import annotations

import configparser
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

from gguf_budget.resources import (
    APP_ID, DESKTOP_ENTRY, GGUF_MIME_TYPE, ICON_SIZES, MIME_PACKAGE, demo_model_path, icon_path, resource_path,
)

ROOT = Path(__file__).resolve().parent.parent
INSTALLER = ROOT / "packaging" / "install_desktop.py"


def load_script(name: str):
    """A packaging/ script as a module (the folder is not a package: `packaging` is a PyPI name)."""
    spec = importlib.util.spec_from_file_location(f"gguf_budget_packaging_{name}", ROOT / "packaging" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes()).astype(int)


@pytest.mark.parametrize("size", ICON_SIZES)
def test_committed_png_is_a_current_render_of_the_svg(qapp, size):
    committed = QImage(str(icon_path(size)))
    assert (committed.width(), committed.height()) == (size, size)
    fresh = load_script("make_icons").render(size)
    differing = (np.abs(pixels(committed) - pixels(fresh)) > 24).mean()
    assert differing < 0.002, "stale PNG: run packaging/make_icons.py"


def test_desktop_entry_launches_the_app_with_its_icon():
    e = entry(resource_path(DESKTOP_ENTRY))
    assert (e["Type"], e["Icon"], e["Terminal"]) == ("Application", APP_ID, "false")
    assert shlex.split(e["Exec"]) == [APP_ID, "%f"]
    assert e["TryExec"] == APP_ID
    assert e["Categories"].endswith(";") and e["Name"] == "GGUF Budget Explorer"


def test_desktop_entry_opens_gguf_files_by_the_mime_type_the_package_declares():
    e = entry(resource_path(DESKTOP_ENTRY))
    assert e["MimeType"] == f"{GGUF_MIME_TYPE};"
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    declared = ET.parse(resource_path(MIME_PACKAGE)).getroot().find("m:mime-type", ns)
    assert declared.get("type") == GGUF_MIME_TYPE
    assert declared.find("m:glob", ns).get("pattern") == "*.gguf"
    assert declared.find("m:magic/m:match", ns).get("value") == "GGUF"

@pytest.mark.parametrize(
    ("program", "quoted"),
    [
        ("/opt/gguf-budget/gguf-budget", "/opt/gguf-budget/gguf-budget"),
        ("/home/a b/gguf-budget", '"/home/a b/gguf-budget"'),
        ('/x/"q"$`/app', '"/x/\\\\"q\\\\"\\\\$\\\\`/app"'),
        ("/x/100%/app", "/x/100%%/app"),
    ],
)
def test_exec_paths_are_quoted_by_the_desktop_entry_rules(program, quoted):
    assert load_script("install_desktop").exec_quote(program) == quoted


def test_installer_puts_entry_and_every_icon_into_the_data_home(tmp_path):
    home = tmp_path / "share"
    subprocess.run([sys.executable, str(INSTALLER), "--data-home", str(home)], check=True, capture_output=True)
    e = entry(home / "applications" / DESKTOP_ENTRY)
    program = Path(sys.executable).with_name(APP_ID)
    assert shlex.split(e["Exec"]) == [str(program), "%f"] and e["TryExec"] == str(program)
    hicolor = home / "icons" / "hicolor"
    assert (hicolor / "scalable" / "apps" / f"{APP_ID}.svg").read_bytes() == icon_path().read_bytes()
    for size in ICON_SIZES:
        assert (hicolor / f"{size}x{size}" / "apps" / f"{APP_ID}.png").read_bytes() == icon_path(size).read_bytes()


def test_installer_points_a_bundle_entry_at_the_bundle(tmp_path):
    bundle = tmp_path / "my apps" / APP_ID
    (bundle / "_internal" / "gguf_budget").mkdir(parents=True)
    (bundle / "_internal" / "gguf_budget" / "resources").symlink_to(resource_path("."))
    home = tmp_path / "share"
    subprocess.run([sys.executable, str(INSTALLER), "--bundle", str(bundle), "--data-home", str(home)], check=True)
    e = entry(home / "applications" / DESKTOP_ENTRY)
    assert e["Exec"] == f'"{bundle / APP_ID}" %f'
    assert e["TryExec"] == str(bundle / APP_ID)


def test_installed_mime_type_makes_a_gguf_file_known_by_its_name_and_its_first_bytes(tmp_path):
    """The installer puts the package under mime/packages and refreshes the cache; Qt's MIME database (the
    freedesktop one a file manager reads) then names a .gguf file, and a GGUF file without the suffix."""
    if shutil.which("update-mime-database") is None:
        pytest.skip("shared-mime-info's update-mime-database is not installed")
    home = tmp_path / "share"
    subprocess.run([sys.executable, str(INSTALLER), "--data-home", str(home)], check=True, capture_output=True)
    assert (home / "mime" / "packages" / f"{APP_ID}.xml").read_bytes() == resource_path(MIME_PACKAGE).read_bytes()
    unnamed = tmp_path / "model-without-suffix"
    shutil.copyfile(demo_model_path(), unnamed)
    probe = ("import sys; from PySide6.QtCore import QMimeDatabase; db = QMimeDatabase(); "
             "print(db.mimeTypeForFile(sys.argv[1], QMimeDatabase.MatchMode.MatchExtension).name(), "
             "db.mimeTypeForFile(sys.argv[2], QMimeDatabase.MatchMode.MatchContent).name())")
    env = {**os.environ, "XDG_DATA_HOME": str(home)}
    named = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "any.gguf"), str(unnamed)], env=env,
                           capture_output=True, text=True, check=True)
    assert named.stdout.split() == [GGUF_MIME_TYPE, GGUF_MIME_TYPE]
