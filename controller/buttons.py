"""The table's buttons: two lift buttons and the dice button, turned into operator actions.

The buttons are inputs like any sensor (``Sensor.LIFT_BUTTON_A`` / ``LIFT_BUTTON_B`` /
``DICE_BUTTON``, 1 = pressed); :class:`ButtonPanel` reads their ``SensorChanged`` events and says
what the player asked for:

* ``"refill"`` (补牌): both lift buttons down together, the second pressed while the first is held.
  Reported at once; pauses a build, or resumes it (``cycle.RefillButtons``).
* ``"cycle"``: one lift button pressed and released alone: start the next cycle (the walls of the
  played hand go down, the next set is shuffled, built and raised). Reported on the release, so that
  the first button of a two-button press does not start a cycle.
* ``"dice"``: the dice button pressed: throw the dice again with the walls up (``cycle.DiceButton``).

Pure and small: no clock. Contact bounce is the input layer's business (gpiozero ``bounce_time`` on
a Pi build, the microcontroller's input filter on the MCU build); a bounce that gets through shows as
an extra press. A build without buttons (``backend.fitted``) never produces these events.
"""

from __future__ import annotations

from hardware.vocabulary import Sensor, SensorChanged

LIFT_BUTTONS = (Sensor.LIFT_BUTTON_A, Sensor.LIFT_BUTTON_B)
BUTTONS = LIFT_BUTTONS + (Sensor.DICE_BUTTON,)


class ButtonPanel:
    """State of the two lift buttons between events (which are held, whether they were chorded)."""

    def __init__(self) -> None:
        self.held: set[Sensor] = set()
        self.chord = False

    def event(self, ev) -> str | None:
        """The action a button event asks for (``"cycle"``, ``"refill"``, ``"dice"``) or None."""
        if not isinstance(ev, SensorChanged) or ev.sensor not in BUTTONS:
            return None
        if ev.sensor is Sensor.DICE_BUTTON:
            return "dice" if ev.value == 1 else None
        if ev.value == 1:
            if ev.sensor in self.held:
                return None
            self.held.add(ev.sensor)
            if len(self.held) == 2 and not self.chord:
                self.chord = True
                return "refill"
            return None
        if ev.sensor not in self.held:
            return None  # released without a press seen (e.g. held at power-on)
        self.held.discard(ev.sensor)
        if self.held:
            return None
        chord, self.chord = self.chord, False
        return None if chord else "cycle"
