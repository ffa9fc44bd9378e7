"""MkDocs hooks: the generated reports and the notebooks as pages, numbers read from the reports.

- The committed reports (``validation/*.md``, ``figures/*.md`` and their PNGs) are added to the
  site as they are in the repository, at the same paths, so a page links to
  ``validation/report.md`` and the link stays true when a study rewrites the report.
- Each notebook (``notebooks/*.ipynb``, committed without outputs) becomes a page of its text and
  code, ``notebooks/<name>.md``, with the notebook itself beside it for download.
- ``<!-- include: validation/accuracy.md#Summary -->`` in a page becomes that section of the
  report (its body, up to the next heading of its level), links made relative to the page.
- ``<!-- paper-to-code -->`` in a page becomes the paper-to-code table of every module of
  ``pvosimr/algorithms/`` that has one, read from its docstring (:func:`paper_to_code`).
- ``<!-- timings: paths -->`` in a page becomes the table of :func:`path_ratios`, read from
  ``figures/timings.json`` (``pvosimr bench``) at build time; ``tests/test_readme.py`` checks
  the README's copy of those ratios with the same function.

Nothing here needs the network or pvosimr itself; only the hooks need MkDocs.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import posixpath
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ("validation/*.md", "validation/*.png", "figures/*.md", "figures/*.png")
NOTEBOOKS = "notebooks/*.ipynb"
TIMINGS = ROOT / "figures" / "timings.json"

BARE = ("pin-efpa", "pin-pv-osimr")
"""Pinocchio's bare C++ calls, the denominator of every ratio (the faster of the two)."""

PATHS = (
    ("numpy, one q", "`pvosimr.compute_delassus`", ("numpy:pv-osimr",)),
    ("numpy, a batch of 1024", "`pvosimr.compute_delassus_batch`", ("batch:pv-osimr",)),
    ("generated C, one q", "`f(q)`", ("codegen:pv-osimr",)),
    ("generated C, a batch of 1024, 2 threads", "`f(qs)`", ("codegen-batch:B1024:t2",)),
    ("generated C, a batch of 1024, 1 thread", "`f(qs, threads=1)`", ("codegen-batch:B1024:t1",)),
    ("Pinocchio's C++, bare calls", "`pin.computeDelassusMatrix`, `computePvDelassusMatrix`", BARE),
    (
        "Pinocchio's C++ through `pvosimr.reference`",
        "`reference.pinocchio_efpa`, `reference.pinocchio_pv_osimr`",
        ("ref:pin-efpa", "ref:pin-pv-osimr"),
    ),
)
"""The rows of the paths table: what, how it is called, the methods of ``timings.json``."""


def number(x: float) -> str:
    """A ratio as the reports print it: two significant digits, integers from 10 up."""
    return f"{x:.0f}" if x >= 10 else f"{x:#.2g}"


def ratio_range(values: list[float]) -> str:
    """``"43–63×"``, or ``"0.06×"`` when the range is one number."""
    low, high = number(min(values)), number(max(values))
    return f"{low}×" if low == high else f"{low}–{high}×"


def path_ratios(timings: dict) -> dict[str, list[float]]:
    """Per path (the labels of :data:`PATHS`, and ``"dG/dq"``), its ratio on every case of the
    bench run: median time per configuration ÷ the faster bare Pinocchio call on that case (for
    ``"dG/dq"``: the generated derivatives ÷ central differences of ``computeDelassusMatrix``)."""
    ratios: dict[str, list[float]] = {label: [] for label, _, _ in PATHS}
    ratios["dG/dq"] = []
    for case in timings["cases"]:
        t = {name: v["median_us"] for name, v in case["timings"].items() if "median_us" in v}
        if not all(name in t for name in BARE):
            continue
        pinocchio = min(t[name] for name in BARE)
        for label, _, methods in PATHS:
            ratios[label] += [t[name] / pinocchio for name in methods if name in t]
        if "dG:codegen" in t and "dG:fd-pin-efpa" in t:
            ratios["dG/dq"].append(t["dG:codegen"] / t["dG:fd-pin-efpa"])
    return {label: values for label, values in ratios.items() if values}


def paths_table(timings: dict) -> str:
    """The Markdown table of :func:`path_ratios`, with where the numbers come from."""
    ratios = path_ratios(timings)
    machine = timings.get("machine", {})
    cases = ", ".join(case["name"] for case in timings["cases"])
    lines = [
        "| path | call | time per q ÷ Pinocchio's C++ call |",
        "|---|---|---|",
        *(
            f"| {label} | {call} | {ratio_range(ratios[label])} |"
            for label, call, _ in PATHS
            if label in ratios
        ),
    ]
    if "dG/dq" in ratios:
        lines.append(
            "| generated dG/dq, one q | `f.derivatives(q)` | "
            f"{ratio_range(ratios['dG/dq'])} of central differences of `computeDelassusMatrix` |"
        )
    lines += [
        "",
        f"Ratios over the cases of the last `{timings.get('command', 'pvosimr bench')}` run "
        f"({cases}; {machine.get('cpu', 'machine')}, {machine.get('cores', '')}, "
        f"{machine.get('source', '')}): lowest–highest. "
        "[figures/timings.md](figures/timings.md) has every time, its spread and the machine.",
    ]
    return "\n".join(lines)


def _notebook_page(path: Path) -> str:
    """A notebook's markdown and code cells as one page (it is committed without outputs)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    parts = []
    for k, cell in enumerate(cells):
        source = "".join(cell["source"]).rstrip()
        if cell["cell_type"] == "markdown":
            parts.append(source)
        elif cell["cell_type"] == "code" and source:
            parts.append(f"```python\n{source}\n```")
        if k == 0:
            parts.append(
                f'!!! note "A notebook, shown without its outputs"\n'
                f"    Everything is computed when it runs. Download "
                f"[{path.name}]({path.name}) or open it from `notebooks/` in a clone; "
                f"[Notebooks](../notebooks.md) says how to run and render it."
            )
    return "\n\n".join(parts) + "\n"


def on_files(files, config):
    from mkdocs.structure.files import File  # here: tests/test_readme.py reads this file too

    for pattern in REPORTS:
        for path in sorted(ROOT.glob(pattern)):
            uri = path.relative_to(ROOT).as_posix()
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    for path in sorted(ROOT.glob(NOTEBOOKS)):
        uri = path.relative_to(ROOT).as_posix()
        files.append(File.generated(config, uri, abs_src_path=str(path)))
        page = uri.removesuffix(".ipynb") + ".md"
        files.append(File.generated(config, page, content=_notebook_page(path)))
    return files


INCLUDE = re.compile(r"<!-- include: (?P<path>[^#\s]+)#(?P<heading>[^>]+?) -->")


def section(path: str, heading: str) -> str:
    """The body of the section ``heading`` of the repository file ``path``."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    for k, line in enumerate(lines):
        match = re.match(r"(#+) (.*)", line)
        if match and match.group(2).strip() == heading:
            level = len(match.group(1))
            body = []
            for following in lines[k + 1 :]:
                deeper = re.match(r"(#+) ", following)
                if deeper and len(deeper.group(1)) <= level:
                    break
                body.append(following)
            return "\n".join(body).strip()
    raise ValueError(f"{path} has no section {heading!r}")


def _include(match: re.Match, page_uri: str) -> str:
    path = match.group("path")
    text = section(path, match.group("heading").strip())
    folder = posixpath.relpath(posixpath.dirname(path) or ".", posixpath.dirname(page_uri) or ".")

    def relink(link: re.Match) -> str:
        target = link.group(1)
        if re.match(r"[a-z]+:|/|#", target):
            return link.group(0)
        return f"]({posixpath.normpath(posixpath.join(folder, target))})"

    return re.sub(r"\]\(([^)\s]+)\)", relink, text)


ALGORITHMS = ROOT / "pvosimr" / "algorithms"
ORDER = ("pv_osimr", "pv_osim", "efpa", "pv_osimh", "articulated", "ltl_osim", "naive")
"""The paper's algorithms first, in the paper's order of interest; other modules after."""


def _rst_docstrings():
    spec = importlib.util.spec_from_file_location(
        "rst_docstrings", Path(__file__).with_name("rst_docstrings.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def paper_to_code() -> str:
    """Each algorithm module's title line and its paper-to-code table, as Markdown."""
    convert = _rst_docstrings().rst_to_markdown
    modules = sorted(
        ALGORITHMS.glob("*.py"),
        key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else len(ORDER), p.stem),
    )
    parts = []
    for path in modules:
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        table = [line for line in convert(docstring).splitlines() if line.startswith("|")]
        if not table:
            continue
        title = docstring.splitlines()[0].rstrip(".")
        parts.append(f"### `pvosimr.algorithms.{path.stem}`\n\n{title}.\n\n" + "\n".join(table))
    return "\n\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "<!-- paper-to-code -->" in markdown:
        markdown = markdown.replace("<!-- paper-to-code -->", paper_to_code())
    marker = "<!-- timings: paths -->"
    if marker in markdown:
        table = paths_table(json.loads(TIMINGS.read_text(encoding="utf-8")))
        markdown = markdown.replace(marker, table)
    return INCLUDE.sub(lambda m: _include(m, page.file.src_uri), markdown)
