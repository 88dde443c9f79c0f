"""The ``sim`` backend: the controller's commands executed directly against the machine
model, on its virtual clock. The fastest backend (tests, the demo)."""

from __future__ import annotations

from firmware_bridge.codec import SENSOR_CODES

from ..interface import SensorSnapshot
from ..local import LocalBackend, LocalExecutor
from ..profile import ALL_PARTS, Profile
from .model import TableModel


class ModelMachine:
    """:class:`firmware_bridge.machine.Machine` over the model's motors (used by the sim
    backend and by the simulated microcontroller)."""

    def __init__(self, model: TableModel) -> None:
        self.model = model

    def start(self, motor: int, side: int, direction: int) -> None:
        self.model.set_motor(motor, side, True, direction)

    def stop(self, motor: int, side: int) -> None:
        self.model.set_motor(motor, side, False)

    def stop_all(self) -> None:
        self.model.stop_all()

    def set_gear(self, tiles: int) -> None:
        self.model.set_gear(tiles)

    def set_lights(self, mask: int) -> None:
        self.model.set_lights(mask)


class SimBackend(LocalBackend):
    """:class:`~hardware.interface.TableBackend` over a :class:`TableModel`."""

    kind = "sim"
    fitted = ALL_PARTS

    def __init__(self, profile: Profile, model: TableModel) -> None:
        super().__init__(profile, model)
        self.executor = LocalExecutor(ModelMachine(model), self.now_ms, self._emit,
                                      lambda s, side: model.reading[(s, side)],
                                      gear=model.gear)
        model.sink = self.executor.on_sensor

    def sensors(self) -> SensorSnapshot:
        r = self.model.reading
        return SensorSnapshot(self.now(), {key: r[code] for key, code in SENSOR_CODES.items()})
