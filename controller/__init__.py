"""The table's controller: state machine, settings, diagnostics, the event log, the HTTP API and
the ``mjtable`` command line. So far it holds the command line (``controller.cli``)."""
