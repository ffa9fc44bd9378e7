"""A griffe extension: pvosimr's reStructuredText docstrings as the Markdown mkdocstrings renders.

The docstrings are written for a reader of the source (and for Sphinx): ``::`` literal blocks,
simple ``====`` tables (the paper-to-code tables of ``pvosimr/algorithms/``), Sphinx roles
(``:func:`compile```), lists right under a paragraph line and ``term`` / indented-definition
pairs.  Markdown reads them differently, so each docstring is rewritten once when griffe loads
it: roles become inline code (never a cross-reference that could dangle), literal blocks become
fenced code, simple tables become Markdown tables, a list gets the blank line Markdown needs, and
a definition becomes a list item.  The source files are not touched.
"""

from __future__ import annotations

import re
import textwrap

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|obj|exc|const|ref|term):`([^`]+)`")
BORDER = re.compile(r"^(\s*)(=+)( +=+)+\s*$")
BULLET = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")
SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Raises|Exceptions|Returns|Yields|Receives|Examples?"
    r"|Attributes|Notes?|Warnings?|Warns|Other Parameters|Methods|Functions|Classes|Modules):\s*$"
)


def _role(match: re.Match) -> str:
    text = match.group(1)
    shown = re.match(r"(.*?)\s*<(.+)>$", text)
    if shown:  # :func:`title <target>`
        return f"`{shown.group(1)}`"
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    return f"`{text.lstrip('.')}`"


def _columns(border: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _cells(line: str, columns: list[tuple[int, int]]) -> list[str]:
    """The cells of one row, split at the columns of the border above."""
    starts = [columns[0][0]]
    for start, _ in columns[1:]:
        if start < len(line) and (line[start - 1] != " " or line[start] == " "):
            # hand alignment missed the column: the nearest run of two spaces divides
            gaps = [g.end() for g in re.finditer(r" {2,}", line) if g.end() > starts[-1]]
            start = min(gaps, key=lambda end: abs(end - start)) if gaps else len(line)
        starts.append(max(start, starts[-1]))
    ends = [*starts[1:], None]
    return [line[start:end].strip() for start, end in zip(starts, ends, strict=True)]


def _table(lines: list[str], start: int) -> tuple[list[str], int] | None:
    """The Markdown of the simple table whose top border is ``lines[start]``, and the index
    after it."""
    columns = _columns(lines[start])
    borders, rows, k = [start], [], start + 1
    while k < len(lines) and len(borders) < 3:
        line = lines[k]
        if BORDER.match(line) and _columns(line) == columns:
            borders.append(k)
        elif line.strip():
            cells = _cells(line, columns)
            if rows and not cells[0] and len(borders) == 2:  # a continuation row
                rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
            else:
                rows.append(cells)
        k += 1
    if len(borders) < 3 or not rows:
        return None
    header_rows = sum(1 for _ in range(borders[0] + 1, borders[1]) if lines[_].strip())
    header = [" ".join(c).strip() for c in zip(*rows[:header_rows], strict=True)]
    body = rows[header_rows:]
    indent = BORDER.match(lines[start]).group(1)

    def row(cells):
        cells = (ROLE.sub(_role, c).replace("|", "\\|") for c in cells)
        return indent + "| " + " | ".join(cells) + " |"

    out = ["", row(header), indent + "|" + "---|" * len(columns), *map(row, body), ""]
    return out, k


def rst_to_markdown(text: str) -> str:
    """One docstring's reStructuredText habits, rewritten as Markdown."""
    lines = text.splitlines()
    out: list[str] = []
    definition = False  # the line written last ended a definition
    k = 0
    while k < len(lines):
        line = ROLE.sub(_role, lines[k])
        if BORDER.match(line):
            table = _table(lines, k)
            if table:
                out.extend(table[0])
                k = table[1]
                continue
        if line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
            # a literal block follows: the indented lines after a blank line
            head = line.rstrip()[:-2].rstrip()
            if head:
                out.append(head + ":")
            definition = False
            j = k + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            base = len(line) - len(line.lstrip())
            block = []
            while j < len(lines) and (
                not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > base
            ):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            if block:
                pad = " " * base
                code = textwrap.dedent("\n".join(block)).splitlines()
                out.extend(["", pad + "```python", *(pad + c for c in code), pad + "```", ""])
                k = j
                continue
        previous = out[-1] if out else ""
        if BULLET.match(line) and previous.strip() and not _in_list(out):
            out.append("")
        if (
            line.strip()
            and not line[0].isspace()
            and not BULLET.match(line)
            and not SECTION.match(line)
            and k + 1 < len(lines)
            and lines[k + 1].startswith("    ")
            and lines[k + 1].strip()
            and (not previous.strip() or definition)
        ):
            # a definition: the term alone on its line, its description indented below
            description = []
            j = k + 1
            while j < len(lines) and lines[j].startswith("    ") and lines[j].strip():
                description.append(lines[j].strip())
                j += 1
            out.append(f"- {line.strip()}: " + ROLE.sub(_role, " ".join(description)))
            definition = True
            k = j
            continue
        definition = False
        out.append(line)
        k += 1
    return "\n".join(out)


def _in_list(out: list[str]) -> bool:
    """Whether the lines just written belong to a list (an item or its continuation)."""
    for line in reversed(out):
        if not line.strip():
            return False
        if BULLET.match(line):
            return True
        if not line[0].isspace():
            return False
    return False


class RstDocstrings(griffe.Extension):
    """Rewrite every docstring griffe loads (see the module docstring), and show each object
    once, where it is defined: a module's imports of the package's own names are dropped (a
    package's submodules are rendered with ``show_submodules``)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        _drop_reexports(pkg)


def _drop_reexports(module: griffe.Module) -> None:
    # members only: an alias is never followed (that would load what it points to)
    members = list(module.members.items())
    for _, member in members:
        if not member.is_alias and member.is_module:
            _drop_reexports(member)
    own = module.path.split(".")[0] + "."
    for name, member in members:
        if member.is_alias and member.target_path.startswith(own):
            module.del_member(name)
