"""Execute the notebooks headless (nbclient) and save them with their outputs.

From the repository root::

    PVOSIMR_MODEL_PATH=/path/to/models python notebooks/render.py [NOTEBOOK ...] [--out DIR]
        [--images DIR]

Without arguments it runs every ``notebooks/*.ipynb`` (working directory ``notebooks/``, kernel
``python3``) and writes each executed copy, outputs included, to ``notebooks/rendered/`` (not
committed); ``--images DIR`` also saves every figure as ``DIR/<notebook>-<n>.png``.  It prints the
run time of each notebook and exits non-zero if a cell fails or writes to stderr.  The committed
notebooks carry no outputs.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from pvosimr.notices import QUIET_VARIABLE

HERE = Path(__file__).resolve().parent
MODEL_PATH_ENV = "PVOSIMR_MODEL_PATH"


def absolute_model_path() -> None:
    """Make the folders of ``PVOSIMR_MODEL_PATH`` absolute (kernels run in ``notebooks/``)."""
    raw = os.environ.get(MODEL_PATH_ENV)
    if raw:
        folders = [str(Path(p).resolve()) for p in raw.split(os.pathsep) if p]
        os.environ[MODEL_PATH_ENV] = os.pathsep.join(folders)


def notebooks() -> list[Path]:
    """The committed notebooks, sorted."""
    return sorted(HERE.glob("*.ipynb"))


def execute(path: Path, timeout: int = 600) -> tuple[nbformat.NotebookNode, float]:
    """Run ``path`` in a fresh ``python3`` kernel with cwd ``notebooks/``; (notebook, seconds).

    ``timeout`` bounds each cell.  A failing cell raises ``CellExecutionError``.  Relative
    folders in ``PVOSIMR_MODEL_PATH`` are taken from the caller's working directory.
    """
    absolute_model_path()
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, kernel_name="python3", timeout=timeout, resources={"metadata": {"path": str(HERE)}}
    )
    start = time.perf_counter()
    with _quiet():
        client.execute()
    return nb, time.perf_counter() - start


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The kernel without pvosimr's notices: a notice depends on the machine's load (one says
    a one-time step took over 2 s), so a rendered page would differ from run to run."""
    before = os.environ.get(QUIET_VARIABLE)
    os.environ[QUIET_VARIABLE] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[QUIET_VARIABLE]
        else:
            os.environ[QUIET_VARIABLE] = before


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """Error outputs and stderr text (warnings included) of an executed notebook."""
    found = []
    for k, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                found.append(f"cell {k}: {out.ename}: {out.evalue}")
            elif out.output_type == "stream" and out.name == "stderr":
                found.append(f"cell {k} stderr: {out.text.strip()[:300]}")
    return found


def save_images(nb: nbformat.NotebookNode, stem: str, folder: Path) -> list[Path]:
    """Write every PNG output of ``nb`` to ``folder/<stem>-<n>.png``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            png = out.get("data", {}).get("image/png")
            if png:
                path = folder / f"{stem}-{len(paths) + 1}.png"
                path.write_bytes(base64.b64decode(png))
                paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--out", type=Path, default=HERE / "rendered", help="output folder")
    parser.add_argument("--images", type=Path, help="also save every figure as PNG here")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = False
    for path in args.notebooks or notebooks():
        try:
            nb, seconds = execute(path.resolve(), args.timeout)
        except CellExecutionError as exc:
            print(f"{path.name}: FAILED\n{exc}", file=sys.stderr)
            failed = True
            continue
        nbformat.write(nb, args.out / path.name)
        issues = problems(nb)
        failed |= bool(issues)
        images = save_images(nb, path.stem, args.images) if args.images else []
        print(
            f"{path.name}: {seconds:.1f} s -> {args.out / path.name}"
            + (f", {len(images)} figures in {args.images}" if args.images else "")
            + "".join(f"\n  {issue}" for issue in issues)
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
