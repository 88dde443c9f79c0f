"""The table's controller: the pure state machine of a cycle, settings, dice, the fault catalogue
and diagnosis, the self-test and the runtime that drives a backend. The command line that runs it
is ``app`` (the composition root above ``controller`` and ``service``)."""
