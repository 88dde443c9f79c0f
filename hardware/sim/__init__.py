"""The simulated table: the machine model composed of part models, fault injection, and the sim
backend."""

from .faults import INJECTABLE, FaultKind, FaultParam, FaultSpec, parse_fault
from .model import LIVE_MODELS, TableModel
from .parts import CentreLift, Dice, Disc, Feeder, Link, Lift, Part, PushHead

__all__ = ["INJECTABLE", "FaultKind", "FaultParam", "FaultSpec", "parse_fault", "LIVE_MODELS",
           "TableModel", "Part", "Disc", "Feeder", "PushHead", "Lift", "CentreLift", "Dice", "Link"]
