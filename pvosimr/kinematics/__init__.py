"""What the sweeps read of the robot at a configuration, one builder per source.

- :mod:`.frames`: :class:`~.frames.Kinematics`, and :func:`~.frames.numeric_kinematics` from
  Pinocchio's ``forwardKinematics``;
- :mod:`.constants`: the numpy single call's constants, kept with the topology;
- :mod:`.joints`: every joint type's ``R(q_i)``, ``p(q_i)``, ``S(q_i)`` on any backend;
- :mod:`.stacked`: a stack of configurations (the batched backend);
- :mod:`.structure`: each entry's structure on the counting backend (the cost model);
- :mod:`.placements`: constraint placements as inputs of a function.
"""
