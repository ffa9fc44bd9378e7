"""``python -m pvosimr.study.accuracy``: see :func:`pvosimr.study.accuracy.main`."""

from .cli import main

main()
