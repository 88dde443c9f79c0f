"""The table's vocabulary under its name in :mod:`hardware`: the parts, the goal commands and the
events every backend speaks (see :mod:`table_vocabulary`, where they are written: a leaf package,
so that firmware_bridge's codec can pack and unpack the same classes without importing
:mod:`hardware`)."""

from table_vocabulary import *  # noqa: F401,F403
from table_vocabulary import __all__  # noqa: F401
