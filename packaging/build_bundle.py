"""Build the wheel and the one-folder desktop bundle from a clean copy of the sources.

Steps, each timed on stdout:
  1. stage   copy pyproject.toml, README.md and the package folders into WORK/src, so nothing
             is written into the checkout and no stale build/ output can leak into the wheel;
  2. wheel   `pip wheel --no-deps` (an isolated build with the setuptools pyproject.toml asks
             for) into DIST/;
  3. site    `pip install --no-deps --target WORK/site` of that wheel: exactly what it ships;
  4. bundle  PyInstaller runs packaging/gguf-budget.spec against WORK/site into DIST/gguf-budget/.

Usage:  python packaging/build_bundle.py [--dist DIR] [--work DIR] [--wheel-only | --wheel FILE]
`--wheel FILE` freezes a wheel this script built before (steps 3–4 only): the tests build the wheel
once and check both it and the bundle frozen from it.
Defaults: dist/ and build/ in the repository root (both git-ignored). Run it with the Python
of the project's virtual environment (`pip install -e '.[test]'` brings PyInstaller).
Exit status 0, or 1 with the failing step named on stderr.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "gguf-budget.spec"
STAGED = ("pyproject.toml", "README.md", "core", "gui", "resources")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def stage(work: Path) -> Path:
    src = fresh(work / "src")
    for name in STAGED:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=IGNORED)
        else:
            shutil.copy2(path, src / name)
    return src


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--quiet", *args], check=True)


def build_wheel(src: Path, work: Path, dist: Path) -> Path:
    out = fresh(work / "wheel")
    pip("wheel", "--no-deps", "--wheel-dir", str(out), str(src))
    (wheel,) = out.glob("gguf_budget-*.whl")
    dist.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(wheel, dist / wheel.name))


def install_site(wheel: Path, work: Path) -> Path:
    site = fresh(work / "site")
    pip("install", "--no-deps", "--no-compile", "--target", str(site), str(wheel))
    return site


def freeze(site: Path, work: Path, dist: Path) -> Path:
    env = {**os.environ, "GGUF_BUDGET_SITE": str(site)}
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
           "--distpath", str(dist), "--workpath", str(work / "pyinstaller"), str(SPEC)]
    subprocess.run(cmd, check=True, env=env)
    return dist / "gguf-budget"


def timed(name: str, fn, *args):
    start = time.perf_counter()
    try:
        result = fn(*args)
    except (subprocess.CalledProcessError, OSError, ValueError) as e:
        print(f"build_bundle: step '{name}' failed: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"[{name}] {time.perf_counter() - start:.1f} s -> {result}", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the gguf-budget wheel and desktop bundle.")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the wheel and bundle go")
    parser.add_argument("--work", type=Path, default=ROOT / "build", help="scratch folder (replaced)")
    built = parser.add_mutually_exclusive_group()
    built.add_argument("--wheel-only", action="store_true", help="stop after the wheel")
    built.add_argument("--wheel", type=Path, metavar="FILE", help="freeze this wheel (built by this script before)")
    args = parser.parse_args(argv)
    dist, work = args.dist.resolve(), args.work.resolve()
    if args.wheel is not None:
        wheel = args.wheel.resolve()
    else:
        wheel = timed("wheel", build_wheel, timed("stage", stage, work), work, dist)
    if not args.wheel_only:
        timed("bundle", freeze, timed("site", install_site, wheel, work), work, dist)
    return 0


if __name__ == "__main__":
    sys.exit(main())
