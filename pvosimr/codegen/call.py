"""The callable of a compiled library (:func:`pvosimr.codegen.build.compile` builds it).

:class:`CompiledDelassus` evaluates one q through the library's CPython extension (or
:mod:`ctypes`) and batches of rows through ``pvosimr_eval_batch`` (:mod:`pvosimr.codegen.c_source`),
maps the C's codes to the library's errors, and lays the column-major outputs out as numpy
arrays.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.machinery
import importlib.util
import itertools
import os
import threading
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..checks import (
    check_configuration,
    check_configurations,
    row_name,
    topology_for,
    undefined_error,
)
from ..coordinates import AS_GIVEN_TOLERANCE, coordinate_plan, unit_part_spans
from ..kinematics.placements import check_placement_vector, placement_labels
from . import c_source as c_text
from .cpython_source import NOT_FAST

__all__ = ["CodegenError", "CompiledDelassus", "EmptyDelassus", "usable_cores"]

_F64 = np.dtype(np.float64)


class CodegenError(RuntimeError):
    """The generated C could not be turned into a loadable library, or failed when run."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the OS tells it), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


class _Library:
    """One loaded library: its entry points and the sizes of its function.

    :meth:`rows` evaluates a batch in one foreign call, which releases the GIL (the
    extension's ``rows`` where the library is one, else ``pvosimr_eval_batch`` through
    :mod:`ctypes`); ``single`` is ``pvosimr_eval`` through ctypes with preallocated buffers
    bound (the single call when there is no extension), serialised by ``lock``;
    ``extension`` is the CPython module, or None.  A library with a weight input (``n_w``
    numbers, :meth:`CompiledDelassus.vjp`) has no ctypes single call: its rows take ``W``.
    """

    def __init__(self, path: Path, info: dict) -> None:
        self.path, self.info = path, info
        self.out_shape: tuple[int, ...] = info["out_shape"]
        self.n_out, self.n_w = info["n_out"], info.get("n_w", 0)
        self.cdll = ctypes.CDLL(str(path))
        batch = self.cdll.pvosimr_eval_batch
        batch.restype = ctypes.c_int
        batch.argtypes = [ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p]
        if self.n_w:
            batch.argtypes += [ctypes.c_void_p, ctypes.c_longlong]
        batch.argtypes += [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        self._batch = batch
        self.extension = None if info["extension"] is None else _load(info["extension"], path)
        self.lock = threading.Lock()
        if self.n_w:
            self.single = None
            return
        single = self.cdll.pvosimr_eval
        single.restype = ctypes.c_int
        single.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int]
        self.q = np.zeros(info["nq"])
        self.out = np.zeros(self.n_out)
        self.view = self.shaped(self.out[None])[0]
        self._w = np.zeros(max(1, info["sz_w"]))
        self._iw = np.zeros(max(1, info["sz_iw"]), dtype=np.int64)
        # single(check) with the buffer addresses bound once: one cheap foreign call.
        self.single = functools.partial(
            single,
            ctypes.c_void_p(self.q.ctypes.data),
            None,
            ctypes.c_void_p(self.out.ctypes.data),
            ctypes.c_void_p(self._w.ctypes.data),
            ctypes.c_void_p(self._iw.ctypes.data),
        )

    def rows(
        self,
        qs: np.ndarray,
        p: np.ndarray | None,
        threads: int,
        check: bool,
        W: np.ndarray | None = None,
    ) -> tuple[int, int, np.ndarray]:
        """``(code, first bad row, out)`` for the C-contiguous float64 rows ``qs``: ``out``
        (B, n_out) holds each row's output as CasADi writes it (:meth:`shaped`).  ``W``
        (a library with a weight input): C-contiguous float64 (1, n_w) for every row or
        (B, n_w), one per row."""
        out = np.empty((len(qs), self.n_out))
        weights = () if W is None else (W,)
        if self.extension is not None:
            rc, bad = self.extension.rows(qs, p, *weights, out, threads, int(check))
            return rc, bad, out
        if W is not None:
            weights = (_address(W), 0 if len(W) == 1 else self.n_w)
        bad = ctypes.c_longlong(-1)
        rc = self._batch(
            _address(qs), len(qs), None if p is None else _address(p), *weights, _address(out),
            threads, int(check), ctypes.byref(bad),
        )  # fmt: skip
        return rc, bad.value, out

    def shaped(self, out: np.ndarray) -> np.ndarray:
        """``out`` (B, n_out) as B outputs of shape ``out_shape`` (a C-contiguous view).

        CasADi writes a matrix column-major (and dG's matrices one after the other); G's lower
        triangle is its upper's own expressions (:func:`pvosimr.symbolic.delassus_function`
        checks), and so is each of dG's, so each matrix read row-major is exactly the
        generated code's.  A vector (the gradient of :meth:`CompiledDelassus.vjp`) is as it
        is.
        """
        return out.reshape(len(out), *self.out_shape)


class CompiledDelassus:
    """``G = f(q)``: the compiled Delassus matrix of one model, constraint list and algorithm.

    ``f(q)``: the m × m matrix at one configuration; ``f(qs)`` with ``qs`` of shape (B, nq)
    (any 2-D array with nq columns): the (B, m, m) matrices, computed in one call into C
    split over ``threads`` threads (default :func:`usable_cores`).  With
    ``placements="input"`` every call takes ``placements=`` (one list for every row).
    :meth:`derivatives` gives dG where the function was compiled with ``derivatives=True``,
    :meth:`vjp` the gradient of ``⟨W, G⟩`` where it was compiled with ``vjp=True``.

    Attributes: ``model``, ``constraint_models``, ``algorithm``, ``m``, ``nq``, ``nv``,
    ``placements`` (``"fixed"`` or ``"input"``), ``library`` (path of the shared library),
    ``source`` (path of the generated C beside it), ``flags``, ``compiled`` (whether this
    :func:`compile` call ran the compiler), ``compile_seconds`` (its wall time, 0 when the
    library came from the cache), ``n_instructions`` (of the CasADi function), ``chunked``
    (whether its C is in runs of small functions, :mod:`pvosimr.codegen.chunks`),
    ``shared_functions`` (how many functions the links' folds and extensions share, where the
    function is outlined, :mod:`pvosimr.backends.outlined`; else 0),
    ``simd_lanes`` (configurations per instruction in batches, :mod:`pvosimr.codegen.simd`; 0:
    scalar), ``binding`` (``"extension"`` or ``"ctypes"``: how the single call passes a float64
    ``q``, see the module docstring), ``derivatives_library`` and ``vjp_library`` (each a
    :class:`pvosimr.codegen.build.Build`, or None).

    Single calls through ctypes are serialised by a lock (the buffers are shared); calls
    through the extension and batched calls run in parallel across threads (their own work
    arrays, the GIL released).
    """

    def __init__(
        self,
        model: pin.Model,
        constraint_models: list,
        algorithm: str,
        build,
        derivatives=None,
        vjp=None,
    ) -> None:
        self.model = model
        self.constraint_models = constraint_models
        self.algorithm = algorithm
        self.library, self.source, self.flags = build.library, build.source, build.flags
        self.compiled, self.compile_seconds = build.compiled, build.compile_seconds
        info = build.info
        self.nq, self.nv, self.m = info["nq"], info["nv"], info["m"]
        self.placements = "input" if info["n_in"] == 2 else "fixed"
        self.n_instructions = info["n_instructions"]
        self.chunked = info.get("chunked", False)
        self.shared_functions = info.get("shared_functions", 0)
        self.simd_lanes = info.get("simd_lanes", 0)
        self.derivatives_library = derivatives
        self._G = _Library(build.library, info)
        self._dG = None if derivatives is None else _Library(derivatives.library, derivatives.info)
        self.vjp_library = vjp
        self._vjp = None if vjp is None else _Library(vjp.library, vjp.info)
        self._vjp_single = None if self._vjp is None else getattr(self._vjp.extension, "vjp", None)
        # Everything the ctypes single call needs, in one attribute (fewer lookups).
        self._fast = (self._G.q, self._G.view, self._G.single, self._G.lock, (self.nq,))
        self._extension = getattr(self._G.extension, "delassus", None)
        self.binding = "ctypes" if self._G.extension is None else "extension"

    def __repr__(self) -> str:
        return (
            f"CompiledDelassus({self.model.name!r}, {self.algorithm!r}, m={self.m}, "
            f"library={str(self.library)!r})"
        )

    def __call__(self, q, placements=None, threads: int | None = None, *, p=None) -> np.ndarray:
        """G at ``q`` (m × m) or at every row of ``qs`` (..., nq) (..., m, m); a new array.

        ``p`` (placements as inputs): the placement vector as an array (..., n_p)
        (:func:`pvosimr.symbolic.placement_vector`'s layout), its leading axes broadcast
        against q's as numpy broadcasts them, each placement checked as a ``pin.SE3`` one is
        (:func:`pvosimr.kinematics.placements.check_placement_vector`); or ``placements=``, one
        entry per constraint.

        ``ValueError`` on a bad ``q`` (for a batch: ``"row r of qs: "`` and the single
        call's message), a bad placement (its row of ``p``, constraint and name) or where G is
        not finite.
        """
        if p is not None:
            return self._evaluate(self._G, q, placements, threads, p=p)
        if placements is None and self._extension is not None:
            G = self._extension(q)
            if G.__class__ is np.ndarray:
                return G
            if G != NOT_FAST:
                return self._retry(G, q)
        if placements is None and self.placements == "fixed" and self._extension is None:
            q_buf, G, invoke, lock, shape = self._fast
            if q.__class__ is np.ndarray and q.dtype is _F64 and q.shape == shape:
                with lock:
                    q_buf[:] = q
                    rc = invoke(1)
                    if rc == c_text.OK:
                        return G.copy(order="K")
                return self._retry(rc, q)
        return self._evaluate(self._G, q, placements, threads)

    def derivatives(self, q, placements=None, threads: int | None = None, *, p=None) -> np.ndarray:
        """dG at ``q``: (nv, m, m), slice ``k`` = d/dε G(pin.integrate(model, q, ε e_k)) at
        ε = 0; at every row of ``qs``: (..., nv, m, m).  ``p`` and errors as for the call."""
        if self._dG is None:
            raise TypeError(
                "this function was compiled without derivatives: pass derivatives=True to "
                "pvosimr.codegen.build.compile"
            )
        return self._evaluate(self._dG, q, placements, threads, p=p)

    def vjp(self, q, W, placements=None, threads: int | None = None, *, p=None) -> np.ndarray:
        """The gradient of ``⟨W, G⟩`` along ``pin.integrate`` at ``q``: (nv,), entry ``k`` =
        ``Σ_ij W_ij ∂G_ij/∂ε_k`` with ``∂G/∂ε_k`` the slice ``k`` of :meth:`derivatives`
        (one reverse-mode pass: a few times G's cost, where dG's is about nv times).

        ``W`` is an (m, m) array of real numbers, used as given: nothing symmetrises it (a
        non-symmetric ``W`` gives ``Σ_ij W_ij ∂G_ij``, which, G being symmetric, equals the
        result for ``(W + Wᵀ)/2`` up to rounding).  At every row of ``qs`` (..., nq):
        (..., nv), with ``W`` (m, m) for every row or (..., m, m), one per row.

        ``p`` and errors as for the call; ``ValueError`` naming the problem for a ``W`` of the
        wrong shape or with a non-finite entry, ``TypeError`` for one that is not real numbers.
        """
        if p is None and placements is None and self._vjp_single is not None:
            g = self._vjp_single(q, W)
            if g.__class__ is np.ndarray:
                return g  # else a code: the general path below says what is wrong
        if self._vjp is None:
            raise TypeError(
                "this function was compiled without vjp: pass vjp=True to "
                "pvosimr.codegen.build.compile"
            )
        return self._evaluate(self._vjp, q, placements, threads, W, p)

    def _weight_rows(self, W, shape: tuple[int, ...]) -> np.ndarray:
        """``W`` as C-contiguous float64 rows: (1, m·m) for one ``W``, (B, m·m) for one per
        row of a batch of leading shape ``shape``; ``ValueError`` for a wrong shape or a
        non-finite entry."""
        a = W if isinstance(W, np.ndarray) else np.asarray(W)
        if a.dtype.kind not in "fiu":
            raise TypeError(f"W must be real numbers, got an array of dtype {a.dtype}")
        m = self.m
        rows, batch = int(np.prod(shape)), bool(shape)
        if a.shape == (m, m):
            a = a.reshape(1, m * m)
        elif batch and a.shape == (*shape, m, m):
            a = a.reshape(rows, m * m)
        else:
            per_row = f" or, for this batch of {rows} rows, {(*shape, m, m)}" if batch else ""
            raise ValueError(
                f"W must be an (m, m) = ({m}, {m}) array{per_row}, not shape {a.shape}"
            )
        a = np.ascontiguousarray(a, dtype=np.float64)
        finite = np.isfinite(a)
        if not finite.all():
            r, e = (int(i) for i in np.argwhere(~finite)[0])
            where = f"W[{e // m}, {e % m}]" if len(a) == 1 else f"W[{r}, {e // m}, {e % m}]"
            raise ValueError(f"W is not finite: {where} = {a[r, e]}")
        return a

    def work_size(self, library: str = "G") -> tuple[int, int]:
        """``(sz_w, sz_iw)``: the doubles and integers (``long long``) of work that one call of
        ``pvosimr_eval`` in the library of G (``"G"``) or of its gradient (``"vjp"``) takes."""
        info = {"G": self._G, "vjp": self._vjp}[library].info
        return int(info["sz_w"]), int(info["sz_iw"])

    def placement_vector(self, placements) -> np.ndarray | None:
        """``p`` for the call's ``placements`` (None for a function of ``q`` alone)."""
        if self.placements == "fixed":
            if placements is not None:
                raise TypeError(
                    "placements= given to a function compiled with placements='fixed' (the "
                    "constraint models' own placements are built in): compile with "
                    "placements='input' to pass them per call"
                )
            return None
        if placements is None:
            raise TypeError(
                "this function was compiled with placements='input': pass placements=[...], "
                "one entry per constraint (see pvosimr.symbolic.placement_vector)"
            )
        from ..kinematics.placements import placement_vector

        p = placement_vector(self.model, self.constraint_models, placements)
        return np.ascontiguousarray(p, dtype=np.float64)

    def _evaluate(
        self, lib: _Library, q, placements, threads: int | None, W=None, p=None
    ) -> np.ndarray:
        """Through the batched entry point: a batch if ``q`` has nq columns and a leading
        axis (or ``p`` has), else one q (``W``: the weights of a library that takes them;
        ``p``: placement rows (..., n_p))."""
        a = q if isinstance(q, np.ndarray) else np.asarray(q)
        if p is None:
            p_rows = self.placement_vector(placements)
            shape = a.shape[:-1] if a.ndim >= 2 and a.shape[-1] == self.nq else ()
        else:
            if placements is not None:
                raise TypeError("pass the placements as placements=[...] or as p=, not both")
            p_rows = self._placement_rows(p)
            if a.ndim == 0 or a.shape[-1] != self.nq:
                raise ValueError(f"q must have shape (..., {self.nq}), not {a.shape}")
            shape = np.broadcast_shapes(a.shape[:-1], p_rows.shape[:-1])
        # a batch where q (or p) has leading axes over rows of nq; anything else is one q,
        # checked as one (a column of nq is neither, and says so)
        batch = bool(shape)
        if batch and a.ndim == 2 and a.shape[:-1] == shape:  # rows as given: no broadcast
            qs = self._rows(a)
        elif batch:
            qs = self._rows(np.broadcast_to(a, (*shape, self.nq)).reshape(-1, self.nq))
        elif a.__class__ is np.ndarray and a.dtype == _F64 and a.shape == (self.nq,):
            qs = np.ascontiguousarray(a)[None]
        else:
            qs = check_configuration(self.model, q)[None]
        threads = usable_cores() if threads is None else int(threads)
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        if lib.n_w:
            W = self._weight_rows(W, shape)
        if p_rows is not None and p_rows.ndim > 1:
            if p_rows.size == p_rows.shape[-1]:  # one p for every row
                p_rows = p_rows.reshape(-1)
            else:
                rows = np.broadcast_to(p_rows, (*shape, p_rows.shape[-1]))
                p_rows = rows.reshape(-1, p_rows.shape[-1])
        one = p_rows is None or p_rows.ndim == 1  # one call into C, else one per run of rows
        outs = []
        for start, stop in [(0, len(qs))] if one else _runs(p_rows, len(qs)):
            p_run = p_rows if one else p_rows[start]
            W_run = W if W is None or len(W) == 1 else W[start:stop]
            rc, bad, out = lib.rows(qs[start:stop], p_run, threads, True, W_run)
            if rc != c_text.OK:
                out = self._failed(
                    lib, rc, bad, qs[start:stop], p_run, threads, batch, W_run, start, shape
                )
            outs.append(out)
        shaped = lib.shaped(outs[0] if len(outs) == 1 else np.concatenate(outs))
        return shaped.reshape(*shape, *shaped.shape[1:]) if batch else shaped[0]

    def _placement_rows(self, p) -> np.ndarray:
        """``p`` (..., n_p) as a checked float64 array (one row per placement vector)."""
        if self.placements == "fixed":
            self.placement_vector(p)  # the TypeError: compiled with placements='fixed'
        a = p if isinstance(p, np.ndarray) else np.asarray(p)
        if a.dtype.kind not in "fiu":
            raise TypeError(f"p must be real numbers, got an array of dtype {a.dtype}")
        if a.ndim == 0 or a.shape[-1] != self.n_p:
            raise ValueError(f"p must have shape (..., {self.n_p}), not {a.shape}")
        a = np.ascontiguousarray(a, dtype=np.float64)
        check_placement_vector(self.placement_labels, a)
        return a

    @functools.cached_property
    def placement_labels(self) -> list[str]:
        """What each placement of ``p`` is (``"constraint k ('name'): joint1_placement"``)."""
        return placement_labels(self.model, self.constraint_models)

    @functools.cached_property
    def unit_spans(self) -> tuple[tuple[int, int], ...]:
        """``(start, length)`` of q's unit parts (:func:`pvosimr.coordinates.unit_part_spans`)."""
        return tuple(unit_part_spans(self.model))

    @functools.cached_property
    def n_p(self) -> int:
        """The length of ``p`` (0 with placements fixed)."""
        return 12 * len(self.placement_labels) if self.placements == "input" else 0

    def entry_point(self, library: str, symbol: str) -> int:
        """The address of ``symbol`` (``"pvosimr_eval_batch"``, ``"pvosimr_eval"``,
        ``"pvosimr_normalize"``, ``"pvosimr_to_coordinates"``) in the library of G (``"G"``) or
        of its gradient (``"vjp"``), for a caller in C (the JAX FFI handler)."""
        lib = {"G": self._G, "vjp": self._vjp}[library]
        return ctypes.cast(getattr(lib.cdll, symbol), ctypes.c_void_p).value

    def to_coordinates(self, q: np.ndarray, q_hat: np.ndarray, g: np.ndarray) -> np.ndarray:
        """The tangent gradients ``g`` (..., nv) at ``q_hat`` = N(q) in q's coordinates
        (..., nq) (:func:`pvosimr.coordinates.tangent_to_coordinates`): the gradient
        library's ``pvosimr_to_coordinates``, the map the JAX handler calls too."""
        if self._vjp is None:
            raise TypeError("this function was compiled without vjp: pass vjp=True")
        plan, entry = self._coordinates
        q = np.ascontiguousarray(q, dtype=np.float64)
        q_hat = np.ascontiguousarray(q_hat, dtype=np.float64)
        g = np.ascontiguousarray(g, dtype=np.float64)
        out = np.empty(q.shape)
        entry(_address(plan), out.size // self.nq, _address(q), _address(q_hat), _address(g),
              _address(out), AS_GIVEN_TOLERANCE)  # fmt: skip
        return out

    @functools.cached_property
    def _coordinates(self) -> tuple[np.ndarray, ctypes._CFuncPtr]:
        entry = self._vjp.cdll.pvosimr_to_coordinates
        entry.restype = None
        entry.argtypes = [ctypes.c_void_p, ctypes.c_longlong, *[ctypes.c_void_p] * 4,
                          ctypes.c_double]  # fmt: skip
        return coordinate_plan(self.model).packed(), entry

    def _rows(self, qs: np.ndarray) -> np.ndarray:
        """``qs`` as C-contiguous float64 rows (values are checked in C)."""
        if qs.dtype.kind not in "fiu":
            qs = check_configurations(self.model, qs)  # TypeError naming a non-real entry
        return np.ascontiguousarray(qs, dtype=np.float64)

    def _failed(
        self,
        lib: _Library,
        rc: int,
        bad: int,
        qs: np.ndarray,
        p: np.ndarray | None,
        threads: int,
        batch: bool,
        W: np.ndarray | None = None,
        offset: int = 0,
        shape: tuple[int, ...] = (),
    ) -> np.ndarray:
        """The error for the first failing row (row ``bad``, code ``rc``; row ``offset +
        bad`` of the batch of leading ``shape``) or, when Python accepts the rows C rejected
        (a norm or a rotation within rounding of the tolerance), the outputs evaluated
        without the check."""
        if rc in (c_text.BAD_Q, c_text.BAD_P):
            first = bad if rc == c_text.BAD_Q else 0  # the rows before ``bad`` passed
            for r in range(first, len(qs)):
                try:
                    check_configuration(self.model, qs[r])
                except ValueError as exc:
                    if not batch:
                        raise
                    row = row_name(shape, offset + r)
                    raise ValueError(f"row {row} of qs: {exc}") from None
            rc, bad, out = lib.rows(qs, p, threads, False, W)
            if rc == c_text.OK:
                return out
        if rc == c_text.NON_FINITE:  # the library's failure: singular M, or precision lost
            topology = topology_for(self.model, self.constraint_models)
            err = undefined_error(
                self.algorithm, self.model, qs[bad], topology, self.constraint_models
            )
            if not batch:
                raise err
            raise ValueError(f"{err.what} at row {row_name(shape, offset + bad)} of qs{err.why}")
        if rc == c_text.BAD_P:  # checked before the call (check_placement_vector)
            raise ValueError("a placement in p is not a rigid transform")
        if rc == c_text.BAD_W:  # checked before the call: not expected here
            raise ValueError(f"W is not finite{f' at row {bad}' if batch else ''}")
        if rc == c_text.NO_MEMORY:
            raise MemoryError(f"{lib.path.name}: no memory for the work arrays")
        raise CodegenError(f"the generated function {lib.path.name} failed (code {rc})")

    def _retry(self, rc: int, q) -> np.ndarray:
        """The single call's error, or G evaluated without the check when Python accepts
        a ``q`` C rejected."""
        q = check_configuration(self.model, q)  # raises the library's message
        rc, bad, out = self._G.rows(q[None], None, 1, rc != c_text.BAD_Q)
        if rc != c_text.OK:
            out = self._failed(self._G, rc, bad, q[None], None, 1, False)
        return self._G.shaped(out)[0]


def _runs(p_rows: np.ndarray | None, rows: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of the runs of rows that share one placement vector, ``p_rows`` one
    per row (the library takes one ``p`` per call)."""
    if rows == 0:
        return [(0, 0)]
    change = np.flatnonzero((p_rows[1:] != p_rows[:-1]).any(axis=1)) + 1
    bounds = [0, *change.tolist(), rows]
    return list(itertools.pairwise(bounds))


def _load(module: str, library: Path):
    """The library loaded as the CPython extension ``module``."""
    loader = importlib.machinery.ExtensionFileLoader(module, str(library))
    spec = importlib.util.spec_from_loader(module, loader)
    extension = importlib.util.module_from_spec(spec)
    loader.exec_module(extension)
    return extension


def _address(a: np.ndarray) -> int:
    """The address of ``a``'s data (cheaper than ``a.ctypes.data``)."""
    return a.__array_interface__["data"][0]


class EmptyDelassus:
    """No constraint rows: nothing to compile; still validates ``q``."""

    def __init__(self, model: pin.Model, algorithm: str, placements: str) -> None:
        self.model, self.algorithm, self.m, self.nq = model, algorithm, 0, model.nq
        self.nv, self.placements = model.nv, placements
        self.compiled, self.compile_seconds, self.library, self.source = False, 0.0, None, None

    def _shape(self, q) -> tuple[int, ...]:
        a = np.asarray(q)
        if a.ndim >= 2 and a.shape[-1] == self.nq:
            check_configurations(self.model, a.reshape(-1, self.nq))
            return a.shape[:-1]
        check_configuration(self.model, q)
        return ()

    def __call__(self, q, placements=None, threads: int | None = None, *, p=None) -> np.ndarray:
        return np.zeros((*self._shape(q), 0, 0))

    def derivatives(self, q, placements=None, threads: int | None = None, *, p=None) -> np.ndarray:
        return np.zeros((*self._shape(q), self.nv, 0, 0))

    def vjp(self, q, W, placements=None, threads: int | None = None, *, p=None) -> np.ndarray:
        shape = self._shape(q)
        if np.shape(W) not in ((0, 0), (*shape, 0, 0)):
            raise ValueError(f"W must be an (m, m) = (0, 0) array, not shape {np.shape(W)}")
        return np.zeros((*shape, self.nv))
