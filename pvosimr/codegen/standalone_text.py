"""The text files of an export (:mod:`pvosimr.codegen.standalone`): the header, the C of the public
entry points, the CMake project and its package config, and the README.

Every function here takes the export's description ``spec`` (a dict that
:func:`pvosimr.codegen.export` fills in: ``name``, the sizes, the parts, the rows of each
constraint, the joints, the provenance) and returns text; nothing here runs a compiler.
"""

from __future__ import annotations

import json

from ..constraints import ORTHONORMAL_TOLERANCE
from . import c_source as c_text
from .templating import TEMPLATES, blocks, fill

__all__ = [
    "BAD_ARGUMENT",
    "PARTS",
    "cmake_lists",
    "entry_c",
    "entry_name",
    "header",
    "package_config",
    "readme",
]

#: Return code of an exported call given a NULL pointer, a negative row count or thread count.
BAD_ARGUMENT = 6

#: The libraries an export may hold: part -> (file suffix, what it computes, output per row).
PARTS = {
    "G": ("", "G", "m*m"),
    "vjp": ("_vjp", "the gradient of <W, G>", "nv"),
    "derivatives": ("_derivatives", "dG", "nv*m*m"),
}


def _comment_lines(lines: list[str]) -> str:
    return "\n".join(f" * {line}".rstrip() for line in lines)


def header(spec: dict) -> str:
    """``NAME.h``: the ABI (sizes, the joints' q and v offsets, each constraint's frame,
    placement and row order, the layouts, work sizes, codes), the entry points and the
    provenance, ``extern "C"`` for C++; the joints and constraints also as C tables."""
    name, up = spec["name"], spec["name"].upper()
    parts, blocks = spec["parts"], spec["blocks"]
    provenance = [f"  {_PROVENANCE.get(k, k)}: {v}" for k, v in spec["provenance"].items()]
    stack = spec.get("stack_bytes")
    stack_line = (
        f"at most {stack} bytes of stack ({spec['stack_how']})"
        if stack is not None
        else "its stack use was not measured (the compiler has no -fstack-usage)"
    )
    return fill(
        "header.h",
        **{k: spec[k] for k in ("name", "nq", "nv", "m", "n_p", "sz_w", "sz_iw", "flags_text")},
        **{k: spec[k] for k in ("q_bound", "tolerance")},
        up=up,
        provenance=_comment_lines(provenance),
        joints=_comment_lines(_joint_lines(spec)),
        constraints=_comment_lines(_constraint_lines(spec)),
        layouts=_comment_lines(_layout_lines(spec)),
        singles=", ".join(entry_name(name, part) for part in parts),
        stack_line=stack_line,
        stack_bytes=stack if stack is not None else -1,
        njoints=len(spec["joints"]),
        nconstraints=len(blocks),
        version=spec["provenance"]["pvosimr"],
        sha256=spec["provenance"]["model sha256"],
        algorithm=spec["provenance"]["algorithm"],
        c=c_text,  # the return codes
        bad_argument=BAD_ARGUMENT,
        orthonormal=ORTHONORMAL_TOLERANCE,
        nj=max(1, len(spec["joints"])),
        nc=max(1, len(blocks)),
        declarations="".join(_declarations(name, part) for part in parts),
    )


#: How the header names the provenance's entries.
_PROVENANCE = {
    "model sha256": "model: SHA-256 of pin.Model.saveToString() (model.txt)",
    "sources sha256": "generated C: SHA-256 of the CasADi sources, in order",
}


def _joint_lines(spec: dict) -> list[str]:
    """The joints' table in words: q and v offsets, and each kind's coordinates once."""
    width = max((len(j[0]) for j in spec["joints"]), default=5)
    up = spec["name"].upper()
    lines = [
        *_notes("joints", name=spec["name"]),
        f"  {'joint':<{width}}  {'q':<10}  {'v':<10}  kind",
    ]
    for joint, kind, iq, nq, iv, nv in spec["joints"]:
        q = f"q[{iq}..{iq + nq - 1}]" if nq > 1 else f"q[{iq}]"
        v = f"v[{iv}..{iv + nv - 1}]" if nv > 1 else f"v[{iv}]"
        lines.append(f"  {joint:<{width}}  {q:<10}  {v:<10}  {kind.removeprefix('JointModel')}")
    lines.append(
        f"  ({len(spec['joints'])} joints; {up}_NQ = {spec['nq']} and {up}_NV = "
        f"{spec['nv']} entries in all)"
    )
    notes = blocks(TEMPLATES / "header_notes.txt.in")  # the joints' coordinates, by kind
    kinds = dict.fromkeys(kind for _, kind, *_ in spec["joints"] if kind in notes)
    if kinds:
        lines.append("Their coordinates, where more than one angle or length per joint:")
        for k in kinds:
            lines += f"  {k.removeprefix('JointModel')}: {notes[k]}".split("\n")
    return lines


def _numbers(xs: list) -> str:
    return " ".join(f"{x:.6g}" for x in xs)


def _matrix_text(R: list) -> str:
    return "[" + "; ".join(_numbers(row) for row in R) + "]"


def _rows_text(first: int, count: int) -> str:
    return f"row {first}" if count == 1 else f"rows {first}..{first + count - 1}"


def _row_order(block: dict) -> list[str]:
    """What each row of a constraint's block is, in order (Pinocchio's definitions, which
    pvosimr.constraints documents and tests against pin.getConstraintJacobian)."""
    dim, kind, mapped = block["dim"], block["kind"], bool(block["row_map"])
    first = 0 if mapped else block["first"]  # a map's rows are A times the model's own
    two = block["joint2"] != "universe"
    rel = " relative to c2" if two else ""
    axes = "world axes (LOCAL_WORLD_ALIGNED)" if block["world_aligned"] else "c1's axes (LOCAL)"
    if kind == "joint":
        return [
            f"{_rows_text(first, block['rows'])}: a multiple of the velocity of joint "
            f"{block['joint1']} (a row of a {block['type']})"
        ]
    if kind == "point_anchor":
        at = "c2's point" if two else "the world point c2"
        body2 = " relative to joint2's body" if two else ""
        lines = [
            f"{_rows_text(first, 3)}: minus the linear velocity of joint1's body at {at}"
            f"{body2}, in c1's axes"
        ]
    elif kind == "frame_anchor":
        lines = [
            f"{_rows_text(first, 3)}: minus the linear velocity of c1{rel}, in c1's axes",
            f"{_rows_text(first + 3, 3)}: minus the angular velocity of c1{rel}, in c1's axes",
        ]
    else:
        lines = [f"{_rows_text(first, 3)}: linear velocity of c1's origin{rel}, in {axes}"]
        if dim == 6:
            lines.append(f"{_rows_text(first + 3, 3)}: angular velocity of c1{rel}, in {axes}")
    if block["row_map"]:
        A = block["row_map"]
        lines = [f"the model's own {line}" for line in lines]
        lines.append(
            f"{_rows_text(first, block['rows'])} of G: A times those {dim} rows, "
            f"A ({len(A)}x{dim}) = {_matrix_text(A)}"
        )
    return lines


def _constraint_lines(spec: dict) -> list[str]:
    """Each constraint's block of G: its frame, joints, placements, kind and row order."""
    lines = _notes("constraints", name=spec["name"])
    if not spec["blocks"]:
        return [*lines, "  (the rows are not in constraint order: no table)"]
    for b in spec["blocks"]:
        aligned = ", world-aligned axes" if b["world_aligned"] else ""
        size = "1 row" if b["kind"] == "joint" else f"{b['dim']}D {b['kind']}"
        lines.append(
            f"  {b['name']}: {_rows_text(b['first'], b['rows'])}, {size}{aligned} ({b['type']})"
        )
        for end in ("1", "2"):
            joint, frame, P = b[f"joint{end}"], b[f"frame{end}"], b[f"placement{end}"]
            if end == "2" and joint == "universe" and b["kind"] != "point_anchor":
                continue
            if b["kind"] == "joint":
                continue
            named = f"frame {frame} on " if frame else ""
            lines.append(
                f"    c{end}: {named}joint {joint}, t = [{_numbers(P['t'])}], "
                f"R = {_matrix_text(P['R'])}"
            )
        lines += [f"    {line}" for line in _row_order(b)]
    return lines


def _layout_lines(spec: dict) -> list[str]:
    """The inputs' and outputs' layouts side by side, and what p and the derivatives are."""
    m, nv, parts = spec["m"], spec["nv"], spec["parts"]
    lines = _notes("layouts", nq=spec["nq"], mm=m * m)
    if "vjp" in parts:
        lines += _notes("vjp", mm=m * m, nv=nv)
    if "derivatives" in parts:
        lines += [
            f"  dG {nv * m * m:>7} doubles  nv slices; slice k (dG + k*m*m) is dG/dv_k, "
            "column-major like G",
        ]
    lines.append("  a batch: its rows one after the other (nq doubles of q each), outputs likewise")
    if spec["n_p"]:
        lines += _notes("p", n_p=spec["n_p"])
    else:
        lines.append("  p  unused: the placements are built in (as listed above); pass NULL")
    if "vjp" in parts or "derivatives" in parts:
        lines += _notes("derivatives")
    return lines


def _notes(block: str, **values: object) -> list[str]:
    """The lines of a block of ``templates/header_notes.txt.in``, its fields filled."""
    return blocks(TEMPLATES / "header_notes.txt.in")[block].format(**values).split("\n")


def entry_name(name: str, part: str) -> str:
    """The single call's C name of one library (``_batch`` appended: the batch call's)."""
    return f"{name}_eval" if part == "G" else f"{name}{PARTS[part][0]}"


def _signature(name: str, part: str) -> dict[str, str]:
    """What the declarations and the definitions of one library's calls share: the name, the
    output and the vjp's extra W arguments."""
    vjp = part == "vjp"
    return {
        "name": name,
        "up": name.upper(),
        "stem": entry_name(name, part),
        "out": {"G": "G", "vjp": "g", "derivatives": "dG"}[part],
        "w_one": "const double* W, " if vjp else "",
        "w_many": "const double* Ws, long long w_stride, " if vjp else "",
    }


def _declarations(name: str, part: str) -> str:
    """The prototypes of one library's single and batch calls."""
    _, what, per_row = PARTS[part]
    stride = "\n   Ws + r*w_stride is row r's W (w_stride 0: one W for every row)."
    return fill(
        "declarations.h",
        **_signature(name, part),
        what=what,
        per_row=per_row,
        stride=stride if part == "vjp" else "",
        indent=" " * (len(entry_name(name, part)) + 11),
    )


def entry_c(spec: dict, part: str) -> str:
    """The public entry points of one library, after its generated C (the library's own
    ``pvosimr_eval`` / ``pvosimr_eval_batch``, renamed by the export)."""
    vjp = part == "vjp"
    return fill(
        "entry.c",
        **_signature(spec["name"], part),
        tables=_tables(spec) if part == "G" else "",
        p_check=f" || ({spec['name'].upper()}_NP > 0 && p == NULL)",
        w_null=" || W == NULL" if vjp else "",
        w_arg="W, " if vjp else "",
        ws_null=" || Ws == NULL" if vjp else "",
        ws_arg="Ws, w_stride, " if vjp else "",
        stride_check=" || w_stride < 0" if vjp else "",
        bad_argument=BAD_ARGUMENT,
        ok=c_text.OK,
    )


def _c_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _c_array(ctype: str, name: str, values: list[str]) -> str:
    """A public constant table (visible from the shared library too); one placeholder entry
    where the table would be empty (C has no empty arrays)."""
    size = max(1, len(values))
    body = ", ".join(values) or ("0" if "char" not in ctype else '""')
    return f"API const {ctype} {name}[{size}] = {{{body}}};\n"


def _tables(spec: dict) -> str:
    """The joint and constraint tables the header declares."""
    name, joints, blocks = spec["name"], spec["joints"], spec["blocks"]
    out = [
        _c_array("char* const", f"{name}_joint_names", [_c_string(j[0]) for j in joints]),
        _c_array("char* const", f"{name}_joint_kinds", [_c_string(j[1]) for j in joints]),
    ]
    for column, field in ((2, "idx_q"), (3, "nq"), (4, "idx_v"), (5, "nv")):
        out.append(_c_array("int", f"{name}_joint_{field}", [str(j[column]) for j in joints]))
    for field, table in (("name", "names"), ("frame1", "frames"), ("joint1",) * 2, ("joint2",) * 2):
        texts = [_c_string(b[field]) for b in blocks]
        out.append(_c_array("char* const", f"{name}_constraint_{table}", texts))
    for field, table in (("first", "first_row"), ("rows", "rows")):
        out.append(_c_array("int", f"{name}_constraint_{table}", [str(b[field]) for b in blocks]))
    placements = [
        "{" + ", ".join(_placement_c(b[f"placement{end}"]) for end in "12") + "}" for b in blocks
    ]
    size = max(1, len(blocks))
    out.append(
        f"API const double {name}_constraint_placements[{size}][2][12] = "
        f"{{{', '.join(placements) or '{{{0}}}'}}};\n"
    )
    return "".join(out).replace("API ", f"{name.upper()}_API ")


def _placement_c(P: dict) -> str:
    """A placement in p's format: the rotation column-major, then the translation."""
    numbers = [P["R"][r][c] for c in range(3) for r in range(3)] + list(P["t"])
    return "{" + ", ".join(repr(float(x)) for x in numbers) + "}"


def cmake_lists(spec: dict) -> str:
    """``CMakeLists.txt``: shared and static targets, an install rule, a package config."""
    name = spec["name"]
    per_file = "\n".join(
        f"set_source_files_properties({name}{PARTS[part][0]}.c PROPERTIES COMPILE_OPTIONS "
        f'"{";".join(spec["part_flags"][part])}")'
        for part in spec["parts"]
    )
    return fill(
        "CMakeLists.txt",
        name=name,
        version=spec["provenance"]["pvosimr"],
        cmake_version=spec["cmake_version"],
        per_file=per_file,
        files=" ".join(f"{name}{PARTS[part][0]}.c" for part in spec["parts"]),
    )


def package_config(spec: dict) -> str:
    """``NAMEConfig.cmake``: what ``find_package(NAME)`` reads once the export is installed."""
    return fill("Config.cmake", name=spec["name"])


def readme(spec: dict) -> str:
    """``README.md``: what is here and how to build it."""
    name, provenance = spec["name"], spec["provenance"]
    compile_lines = "\n".join(
        f"    cc {' '.join(spec['part_flags'][part])} -c {name}{PARTS[part][0]}.c"
        for part in spec["parts"]
    )
    return fill(
        "README.md",
        **{k: spec[k] for k in ("name", "nq", "nv", "m")},
        **{k: provenance[k] for k in ("model", "algorithm", "exported")},
        up=name.upper(),
        version=provenance["pvosimr"],
        compile_lines=compile_lines,
    )
