"""XLA's persistent compilation cache in pvosimr's cache folder, so that a second process
finds the XLA route's compiled ``jit(vmap(G))`` instead of compiling it again."""

from __future__ import annotations

from pathlib import Path

import jax

from ..codegen.compiler import cache_dir

__all__ = ["use_persistent_cache"]


def use_persistent_cache(folder: str | Path | None = None) -> Path | None:
    """Point XLA's persistent compilation cache at ``folder`` (default ``xla/`` in
    :func:`pvosimr.codegen.compiler.cache_dir`) unless JAX already has a cache folder; returns
    the folder in use (None if the caller turned the cache off)."""
    current = jax.config.jax_compilation_cache_dir
    if not jax.config.jax_enable_compilation_cache:
        return None
    if current:
        return Path(current)
    chosen = Path(folder) if folder is not None else cache_dir() / "xla"
    chosen.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(chosen))
    return chosen
