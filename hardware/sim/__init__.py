"""The simulated table: machine model, fault injection, and the sim backend."""

from .faults import INJECTABLE, FaultKind, FaultSpec, parse_fault
from .model import LIVE_MODELS, TableModel

__all__ = ["INJECTABLE", "FaultKind", "FaultSpec", "parse_fault", "LIVE_MODELS", "TableModel"]
