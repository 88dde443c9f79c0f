"""Runs at power-on (MicroPython runs main.py from the board's flash).

Every output is switched off first (the output chain is cleared before its /OE is
enabled, in app.App). Holding the Pico's BOOTSEL button during the first second after
power-on keeps the firmware from starting, so that ``mpremote`` can reach the REPL (the
firmware disables Ctrl-C on the USB port: a 0x03 byte in a frame must not stop it).
"""

import time

try:
    import rp2
    _wait_until = time.ticks_add(time.ticks_ms(), 1000)
    _maintenance = False
    while time.ticks_diff(_wait_until, time.ticks_ms()) > 0:
        if rp2.bootsel_button():
            _maintenance = True
            break
        time.sleep_ms(20)
except ImportError:   # not an RP2040
    _maintenance = False

if not _maintenance:
    import app
    app.main()
