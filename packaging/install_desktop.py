"""Install the Linux desktop entry and icons from `resources/` into the user's XDG data folder.

Rule 1: the files come from what ships — the installed `gguf_budget.resources` package, or with
        `--bundle DIR` the copy inside a PyInstaller bundle (`DIR/_internal/gguf_budget/resources`).
Rule 2: `Exec=`/`TryExec=` are rewritten to an absolute program path (the bundle's executable,
        or the console script next to this Python), so the entry works without the program on
        PATH; Exec quotes it as an argument, TryExec escapes it as a plain string value.
Rule 3: icons go to the hicolor theme: `NxN/apps/gguf-budget.png` for every PNG render shipped
        (`gguf-budget-N.png`) and `scalable/apps/gguf-budget.svg`; nothing outside `$XDG_DATA_HOME` (default
        `~/.local/share`) or `--data-home` is touched.
Rule 4: the `.gguf` file type (`application/x-gguf`, the entry's `MimeType=`) goes to
        `mime/packages/gguf-budget.xml`; then the desktop's own tools refresh their caches where
        they are installed — `update-mime-database DATA/mime` and `update-desktop-database
        DATA/applications` (shared-mime-info, desktop-file-utils) — so file managers offer the app
        for .gguf files. Without them the files are in place and the next login's refresh finds them.

Run:  python packaging/install_desktop.py [--bundle dist/gguf-budget] [--data-home DIR]
Remove: delete the files it lists.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

APP_ID = "gguf-budget"
MIME_PACKAGE = f"{APP_ID}-mime.xml"
CACHE_TOOLS = (("update-mime-database", "mime"), ("update-desktop-database", "applications"))
RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")
ESCAPED_IN_QUOTES = '"`$\\'


def exec_quote(program: str) -> str:
    """One Exec argument, quoted and escaped as the Desktop Entry spec asks (then as a string value)."""
    arg = program.replace("%", "%%")
    if RESERVED & set(arg):
        arg = '"' + "".join("\\" + c if c in ESCAPED_IN_QUOTES else c for c in arg) + '"'
    return arg.replace("\\", "\\\\")


def desktop_entry(template: str, program: str) -> str:
    """The shipped entry with Exec/TryExec pointing at `program`."""
    lines = []
    for line in template.splitlines():
        if line.startswith("Exec="):
            line = f"Exec={exec_quote(program)} %f"
        elif line.startswith("TryExec="):
            line = "TryExec=" + program.replace("\\", "\\\\")
        lines.append(line)
    return "\n".join(lines) + "\n"


def sources(bundle: Path | None) -> tuple[Path, str]:
    """(resources folder, program path) for a bundle or for the Python running this script."""
    if bundle is not None:
        return bundle / "_internal" / "gguf_budget" / "resources", str((bundle / APP_ID).resolve())
    from gguf_budget.resources import resource_path

    script = Path(sys.executable).with_name(APP_ID)
    return resource_path("."), str(script) if script.exists() else APP_ID


def icon_targets(icons: Path) -> dict[str, Path]:
    """hicolor theme path → shipped file, for the SVG and every PNG render `gguf-budget-N.png`."""
    targets = {f"scalable/apps/{APP_ID}.svg": icons / f"{APP_ID}.svg"}
    for png in sorted(icons.glob(f"{APP_ID}-*.png")):
        size = png.stem.removeprefix(f"{APP_ID}-")
        targets[f"{size}x{size}/apps/{APP_ID}.png"] = png
    return targets


def install(resources: Path, program: str, data_home: Path) -> list[Path]:
    """Copy the entry and icons; returns the files written."""
    entry = data_home / "applications" / f"{APP_ID}.desktop"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(desktop_entry((resources / f"{APP_ID}.desktop").read_text(encoding="utf-8"), program), encoding="utf-8")
    written = [entry]
    hicolor = data_home / "icons" / "hicolor"
    for target, source in icon_targets(resources / "icons").items():
        (hicolor / target).parent.mkdir(parents=True, exist_ok=True)
        written.append(Path(shutil.copyfile(source, hicolor / target)))
    mime = data_home / "mime" / "packages" / f"{APP_ID}.xml"
    mime.parent.mkdir(parents=True, exist_ok=True)
    written.append(Path(shutil.copyfile(resources / MIME_PACKAGE, mime)))
    return written


def refresh_caches(data_home: Path) -> list[str]:
    """Rule 4: run the desktop's cache tools that are installed; returns what ran, or why it did not."""
    said = []
    for tool, folder in CACHE_TOOLS:
        program = shutil.which(tool)
        if program is None:
            said.append(f"{tool} not found: the {folder} cache refreshes at the next login")
            continue
        done = subprocess.run([program, str(data_home / folder)], capture_output=True, text=True)
        said.append(f"{tool} {data_home / folder}" + ("" if done.returncode == 0 else f" failed: {done.stderr.strip()}"))
    return said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, help="a PyInstaller one-folder bundle (dist/gguf-budget)")
    parser.add_argument("--data-home", type=Path, help="default: $XDG_DATA_HOME or ~/.local/share")
    args = parser.parse_args(argv)
    default_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    resources, program = sources(args.bundle)
    data_home = Path(args.data_home or default_home)
    for path in install(resources, program, data_home):
        print(path)
    for line in refresh_caches(data_home):
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
