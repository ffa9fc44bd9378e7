"""The study apps: what checks, counts, times and plots the library, apart from the library.

- :mod:`~pvosimr.study.cli` and :mod:`~pvosimr.study.options`: the ``pvosimr`` command line;
- :mod:`~pvosimr.study.validate`: ``pvosimr validate``, every algorithm against the dense truth;
- :mod:`~pvosimr.study.accuracy`: error against chain depth and conditioning;
- :mod:`~pvosimr.study.count`: ``pvosimr count`` and the operation-count cache;
- :mod:`~pvosimr.study.figures`: ``pvosimr figures``, the paper's figures and claims;
- :mod:`~pvosimr.study.bench`: ``pvosimr bench``, wall time against Pinocchio's C++.

The library (everything outside this package) never imports from here.
"""
