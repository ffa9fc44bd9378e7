"""The waits that say so in one line on stderr (``pvosimr: ...``), and ``PVOSIMR_QUIET=1`` that
silences them: the XLA route's traces (JAX and PyTorch) and ``pvosimr export --time``'s cases.

The thresholds are set to zero here, so a two-joint model's quick compile is a "slow" one."""

from __future__ import annotations

import numpy as np
import pytest
from _trees import mass_on_the_first_axis

from pvosimr import notices


@pytest.fixture(params=["told", "quiet"])
def quiet(request, monkeypatch) -> bool:
    """Each test twice: notices on, and silenced by PVOSIMR_QUIET=1."""
    monkeypatch.setenv(notices.QUIET_VARIABLE, "1" if request.param == "quiet" else "0")
    monkeypatch.setattr(notices, "SLOW_SECONDS", 0.0)  # every block is slow
    return request.param == "quiet"


def _notices(capfd) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if line.startswith("pvosimr:")]


def test_the_xla_route_says_that_a_trace_and_its_compile_take_time(quiet, capfd, monkeypatch):
    jax = pytest.importorskip("jax")
    from pvosimr.jax import xla

    monkeypatch.setattr(xla, "TRACE_NOTICE_SECONDS", 0.0)
    model, cms, qs = mass_on_the_first_axis()
    G = xla.compile_xla(model, cms)
    q = np.asarray(qs[0], np.float32)
    jax.jit(G)(q).block_until_ready()
    jax.jit(G)(q).block_until_ready()  # jit's cache: no second trace, no second line
    told = _notices(capfd)
    if quiet:
        assert told == []
        return
    traced = [line for line in told if "traced G of model" in line]
    assert len(traced) == 1 and "XLA compiles it next" in traced[0]
    assert all(line.startswith("pvosimr: XLA route: ") for line in told)


def test_an_eager_call_of_the_xla_route_says_so_once(quiet, capfd):
    pytest.importorskip("jax")
    from pvosimr.jax import xla

    model, cms, qs = mass_on_the_first_axis()
    G = xla.compile_xla(model, cms)
    for q in qs[:2]:
        G(np.asarray(q, np.float32)).block_until_ready()
    told = _notices(capfd)
    if quiet:
        assert told == []
        return
    (line,) = told  # once: the second configuration is not told again
    assert "pv-osimr) op by op, outside jax.jit" in line
    assert "jax.jit of G or of its gradient compiles it whole" in line


@pytest.mark.slow  # JAX compiles each operation of the gradient: about 5 s
def test_an_eager_gradient_says_so_once_and_no_compile(quiet, capfd, monkeypatch):
    jax = pytest.importorskip("jax")
    from pvosimr.jax import xla

    monkeypatch.setattr(xla, "TRACE_NOTICE_SECONDS", 0.0)
    model, cms, qs = mass_on_the_first_axis()
    G = xla.compile_xla(model, cms)
    for q in qs[:2]:
        jax.grad(lambda x: G(x).sum())(np.asarray(q, np.float32))
    told = _notices(capfd)
    if quiet:
        assert told == []
        return
    (line,) = told  # op by op, once; no "XLA compiles it next": nothing is jitted
    assert "pv-osimr) under grad or vmap op by op, outside jax.jit" in line


def test_pytorch_s_xla_route_says_that_it_compiles_g_and_its_gradient(quiet, capfd):
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    import pvosimr.torch

    model, cms, qs = mass_on_the_first_axis()
    G = pvosimr.torch.delassus(model, cms, route="xla")
    q = torch.tensor(qs[:2], dtype=torch.float32, requires_grad=True)
    G(q).sum().backward()
    G(q).sum().backward()  # the same shapes: compiled already, nothing said
    told = [line for line in _notices(capfd) if "PyTorch's XLA route" in line]
    if quiet:
        assert told == []
        return
    assert len(told) == 2
    assert "compiling G of model" in told[0] and "float32[2, 2]" in told[0]
    assert "compiling the gradient of G of model" in told[1]


def test_export_time_refuses_a_mistyped_case_before_timing_any(quiet, capfd, monkeypatch):
    from pvosimr.study import export_timing

    monkeypatch.setattr(export_timing, "time_case", lambda *_: pytest.fail("timed"))
    with pytest.raises(ValueError, match=r"unknown robot 'ur55'. Did you mean 'ur5/tool_6d'"):
        export_timing.time_cases(["ur5/tool_6d", "ur55/tool_6d"])
    assert capfd.readouterr().err == ""


def test_export_time_says_which_case_it_times(quiet, capfd, monkeypatch):
    from pvosimr.study import export_timing

    timed = []
    monkeypatch.setattr(export_timing, "time_case", lambda case, *_: timed.append(case) or case)
    cases = ["ur5/tool_6d", "double_pendulum/com_3d"]
    assert export_timing.time_cases(cases, rounds=3) == cases
    err = capfd.readouterr().err
    told = [line for line in err.splitlines() if line.startswith("pvosimr:")]
    assert "export --time: 2/2 case, done" in err  # the progress bar, not a notice
    if quiet:
        assert told == []
        return
    assert len(told) == 2
    for k, case in enumerate(cases, 1):
        assert told[k - 1].startswith(f"pvosimr: export --time: {case} ({k} of 2): exporting")
