"""The study apps: what checks, counts, times and plots the library, apart from the library.

- :mod:`~pvosimr.study.cli` and :mod:`~pvosimr.study.options`: the ``pvosimr`` command line;
- :mod:`~pvosimr.study.validate`: ``pvosimr validate``, every algorithm against the dense truth;
- :mod:`~pvosimr.study.count`: ``pvosimr count`` and the operation-count cache;
- :mod:`~pvosimr.study.figures`: ``pvosimr figures``, the paper's figures and claims;
- :mod:`~pvosimr.study.record`: the reports' markdown tables and prose.

``pvosimr bench`` runs the repository's ``benchmarks/`` (not installed): the timings, the GPU
section and the accuracy study.

The library (everything outside this package) never imports from here.
"""
