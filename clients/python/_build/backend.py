"""A build backend with no dependencies, so ``pip install`` works without a package index.

It implements the hooks pip calls (PEP 517 wheels and sdists, PEP 660 editable installs) for a
package of plain Python files: the ``reelbase`` folder beside ``pyproject.toml``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "reelbase"
NAME = "reelbase"
SUMMARY = "Python client of Reelbase, the production tracker: standard library only."
TAG = "py3-none-any"


def _version() -> str:
    with open(os.path.join(ROOT, PACKAGE, "__init__.py"), encoding="utf-8") as f:
        found = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M)
    if not found:
        raise RuntimeError("no __version__ in reelbase/__init__.py")
    return found.group(1)


def _metadata(version: str) -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {version}\n"
        f"Summary: {SUMMARY}\n"
        "License: Apache-2.0\n"
        "Requires-Python: >=3.9\n"
        "Classifier: Programming Language :: Python :: 3\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def _package_files() -> List[Tuple[str, str]]:
    """(archive name, path on disk) of every file of the package, sorted."""
    out = []
    base = os.path.join(ROOT, PACKAGE)
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".typed")):
                full = os.path.join(folder, name)
                out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    return out


def _write_wheel(directory: str, entries: Dict[str, bytes]) -> str:
    version = _version()
    dist_info = f"{NAME}-{version}.dist-info"
    entries = dict(entries)
    entries[f"{dist_info}/METADATA"] = _metadata(version).encode("utf-8")
    entries[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: reelbase-build\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    ).encode("ascii")
    entries[f"{dist_info}/top_level.txt"] = f"{PACKAGE}\n".encode("ascii")
    record = []
    for name, data in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    entries[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    filename = f"{NAME}-{version}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return filename


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    entries = {}
    for name, path in _package_files():
        with open(path, "rb") as f:
            entries[name] = f.read()
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    # A .pth line puts this folder on sys.path: the installed package is the working copy.
    return _write_wheel(wheel_directory, {f"__editable__.{NAME}.pth": (ROOT + "\n").encode("utf-8")})


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    version = _version()
    base = f"{NAME}-{version}"
    filename = f"{base}.tar.gz"
    files = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")), ("README.md", os.path.join(ROOT, "README.md"))]
    files += [(f"_build/{n}", os.path.join(ROOT, "_build", n)) for n in sorted(os.listdir(os.path.join(ROOT, "_build"))) if n.endswith(".py")]
    files += _package_files()
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tf:
        pkg_info = _metadata(version).encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        tf.addfile(info, io.BytesIO(pkg_info))
        for name, path in files:
            tf.add(path, arcname=f"{base}/{name}", recursive=False)
    return filename
