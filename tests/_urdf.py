"""Small URDF models written by tests, element by element: a link with or without its
inertia, a joint with its origin, axis, limits and extra tags, and the robot around them."""

from __future__ import annotations


def link(name: str, mass: str = "", com: str = "0 0 0", inertia: str = "") -> str:
    """A ``<link>``: massless without ``mass``, else with its centre of mass ``com`` and its
    principal moments ``inertia`` (``"ixx iyy izz"``, the products zero)."""
    if not mass:
        return f'<link name="{name}"/>'
    ixx, iyy, izz = inertia.split()
    return (
        f'<link name="{name}"><inertial><mass value="{mass}"/><origin xyz="{com}"/>'
        f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/>'
        "</inertial></link>"
    )


def joint(
    name: str,
    kind: str,
    parent: str,
    child: str,
    origin: str = "",
    axis: str = "",
    limits: str = "",
    extra: str = "",
) -> str:
    """A ``<joint>`` of ``kind`` from ``parent`` to ``child``: ``origin`` its attributes
    (``xyz="..." rpy="..."``), ``axis`` its ``xyz``, ``limits`` ``"lower upper effort
    velocity"``, ``extra`` any further tags (a ``<mimic>``)."""
    tags = [f'<parent link="{parent}"/><child link="{child}"/>']
    if origin:
        tags.append(f"<origin {origin}/>")
    if axis:
        tags.append(f'<axis xyz="{axis}"/>')
    if limits:
        lower, upper, effort, velocity = limits.split()
        tags.append(
            f'<limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="{velocity}"/>'
        )
    return f'<joint name="{name}" type="{kind}">{"".join(tags)}{extra}</joint>'


def robot(name: str, *elements: str) -> str:
    """The URDF file of robot ``name`` with ``elements`` (links and joints), one a line."""
    body = "\n".join(f"  {e}" for e in elements)
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'
