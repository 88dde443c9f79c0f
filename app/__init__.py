"""The composition root: the ``mjtable`` command line (``app.cli``), above ``service`` and
``controller``.

Every sub-command's shell lives here: ``cli`` (the parser, scoring, the demo), ``table_cli``
(cycle, diagnose, selftest, dice, config, faults), ``service_cli`` (serve, token, unit),
``doctor_cli``, ``rules_cli`` (other rule systems), ``vision_cli`` (recognize, score-photo) and
``cli_args`` (argument types they share). This package may import every package below it; none
imports it (see ../shared/DESIGN.md).
"""
