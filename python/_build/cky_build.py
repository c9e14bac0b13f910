"""cky_build: the PEP 517 build backend of the cky Python package, standard library only.

A wheel holds the package cky/ and the shared library libcky.so that `make` builds in the
repository's build/ folder (../build/libcky.so from this folder, or the file named by the
environment variable CKY_LIBRARY). The wheel is tagged py3-none-<platform>: the package is
pure Python that loads the library with ctypes, so any Python 3 of the platform can use it.
Hooks: build_wheel, prepare_metadata_for_build_wheel, get_requires_for_build_wheel (none),
build_sdist (the package sources without the library).
"""
import base64
import hashlib
import io
import os
import sysconfig
import tarfile
import zipfile

NAME = "cky"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: Exact CKY parsing with Berkeley latent-variable grammars (GPU or CPU), from Python
Requires-Python: >=3.8
Provides-Extra: nltk
Requires-Dist: nltk; extra == "nltk"

Python bindings of the cky parser (libcky.so through ctypes): cky.Parser(grammar).parse(text).
"""


def _tag():
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _dist_info():
    return f"{NAME}-{VERSION}.dist-info"


def _wheel_text():
    return f"Wheel-Version: 1.0\nGenerator: cky_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n"


def _library():
    """The libcky.so to pack: $CKY_LIBRARY, else the repository's build/libcky.so."""
    path = os.environ.get("CKY_LIBRARY") or os.path.join(HERE, "..", "build", "libcky.so")
    if not os.path.isfile(path):
        raise RuntimeError(
            f"cky: {os.path.abspath(path)} not found: run `make` in the repository first "
            "(it builds build/libcky.so), or set CKY_LIBRARY to a built libcky.so")
    return path


def _package_files():
    """(path in the wheel, path on disk) of the package's Python files."""
    pkg = os.path.join(HERE, NAME)
    return sorted((f"{NAME}/{f}", os.path.join(pkg, f)) for f in os.listdir(pkg)
                  if f.endswith(".py"))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    path = os.path.join(metadata_directory, _dist_info())
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w", encoding="utf-8") as f:
        f.write(METADATA)
    with open(os.path.join(path, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_text())
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = [(arc, open(src, "rb").read()) for arc, src in _package_files()]
    with open(_library(), "rb") as f:
        files.append((f"{NAME}/libcky.so", f.read()))
    info = _dist_info()
    files.append((f"{info}/METADATA", METADATA.encode()))
    files.append((f"{info}/WHEEL", _wheel_text().encode()))
    record = []
    for arc, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arc},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    name = f"{NAME}-{VERSION}-{_tag()}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            info_ = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))
            info_.external_attr = (0o755 if arc.endswith(".so") else 0o644) << 16
            info_.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info_, data)
    return name


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    name = f"{base}.tar.gz"
    pkg_info = METADATA.encode()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "_build/cky_build.py"] + [a for a, _ in _package_files()]:
            t.add(os.path.join(HERE, rel), arcname=f"{base}/{rel}")
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        t.addfile(ti, io.BytesIO(pkg_info))
    return name
