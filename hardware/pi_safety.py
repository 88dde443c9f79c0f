"""What keeps a Raspberry Pi's motor outputs off when mjtable is not driving them.

The single source for three places that must agree (issue #23, sections 1-2):

* the profile loader, which refuses an output that the SoC's reset pull would switch on
  (:func:`reset_pull`, :func:`output_on_at_reset`);
* the Pi's ``/boot/firmware/config.txt`` lines of the GPIO build (:func:`config_txt_lines`):
  the motor outputs driven to their off level from early boot, and what makes GPIO 0/1
  and 14/15 safe for the inputs on them;
* the systemd unit (:func:`render_unit`, printed by ``mjtable unit``), whose
  ``ExecStopPost=+`` hook drives every output of :func:`motor_output_pins` to its off
  level after *any* exit of the service (SIGKILL after the stop timeout, the watchdog's
  SIGABRT, the OOM killer), because Pi kernels keep a released GPIO output at its last
  level.

``mjtable doctor`` (another part) checks a Pi against these same functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # the profile loader imports this module (the reset-pull refusal)
    from .profile import Profile

__all__ = ["reset_pull", "pulled_up_at_reset", "output_on_at_reset", "motor_output_pins",
           "off_level", "pin_ranges", "RESET_PULLS", "config_txt_lines", "stop_hook_command", "render_unit",
           "PINCTRL", "UNIT_BACKENDS"]

#: where Raspberry Pi OS (Bookworm, package raspi-utils) installs pinctrl
PINCTRL = "/usr/bin/pinctrl"
#: the backends a unit can be rendered for (service/config.py's BACKENDS)
UNIT_BACKENDS = ("sim", "gpio", "mcu")
#: GPIOs the firmware touches at boot on the GPIO build's board, and the config.txt line
#: that stops it: the HAT ID EEPROM probe drives I2C on GPIO 0/1 (ID_SD/ID_SC); the
#: primary UART (the PL011 on a board without Bluetooth, such as the CM3+) drives TX on
#: GPIO 14 high, into a closed switch; the camera and display auto-detection probe I2C
#: on GPIO 0/1 (or 28/29, 44/45 as the Compute Module's dt-blob routes them).
_BOOT_USERS = (((0, 1), ("force_eeprom_read=0",)),
               ((14, 15), ("enable_uart=0",)),
               ((0, 1, 28, 29, 44, 45), ("camera_auto_detect=0", "display_auto_detect=0")))


#: The pull each GPIO has from reset until software changes it: BCM2835 ARM Peripherals,
#: section 6.2 "Alternative Function Assignments", table 6-31, column "Pull" (GPIO 0-8
#: high, 9-27 low, 28-29 none, 30-33 low, 34-36 high, 37-45 low, 46-53 high). The BCM2837
#: (Pi 3, CM3+) has the BCM2835's GPIO block; the BCM2711 (Pi 4, CM4) datasheet's table
#: 5.3 gives the same defaults for GPIO 0-27, the pins it routes out. Pi 5 (RP1): not checked against
#: an RP1 datasheet here; the table is applied on every board (the Pi 5's header GPIOs 0-27
#: are documented with the same 0-8 high defaults), and docs/wiring.md asks for
#: `pinctrl get` on the bench before motor power is connected.
RESET_PULLS: tuple[tuple[range, str], ...] = (
    (range(0, 9), "up"), (range(9, 28), "down"), (range(28, 30), "none"),
    (range(30, 34), "down"), (range(34, 37), "up"), (range(37, 46), "down"),
    (range(46, 54), "up"))


def reset_pull(pin: int) -> str:
    """``"up"``, ``"down"`` or ``"none"``: the pull of BCM ``pin`` from power-on until
    software (the config.txt ``gpio=`` lines, then the service) claims it; see
    :data:`RESET_PULLS` for the source. Raises ValueError for a pin outside 0-53."""
    for pins, pull in RESET_PULLS:
        if pin in pins:
            return pull
    raise ValueError(f"GPIO{pin!r} is not a BCM GPIO; allowed: 0-53")


def pulled_up_at_reset(pin: int) -> bool:
    """True if BCM ``pin`` (0-53) is pulled up from power-on until software claims it
    (GPIO 0-8, 34-36, 46-53: :data:`RESET_PULLS`). Raises ValueError outside 0-53."""
    return reset_pull(pin) == "up"


def output_on_at_reset(pin: int, active_high: bool) -> bool:
    """True if an output on ``pin`` with that active level would read as *on* while only
    the reset pull drives it (active-high on a pulled-up pin, active-low on a pulled-down
    one). A pin without a pull (28, 29) floats: the driver board's own resistor decides,
    so it is not refused here (docs/wiring.md asks for a pull-down on the board)."""
    return reset_pull(pin) == ("up" if active_high else "down")


def motor_output_pins(profile: Profile) -> list[int]:
    """BCM numbers, ascending, of every output the GPIO build drives: the motor relays
    (shuffle, dice, feeders, lift up/down, centre up/down), the heartbeat that enables
    motor power, and the buzzer and lights where fitted. The stop hook drives all of them
    to their off level (:func:`off_level`): a stopped heartbeat drops motor power, and a
    dead service must not leave the buzzer sounding or a READY light lying."""
    return sorted(p for pins in profile.gpio.outputs.values() for p in pins)


def off_level(profile: Profile) -> str:
    """``"dl"`` (drive low) or ``"dh"`` (drive high): the off level of the outputs in
    pinctrl's and config.txt's words (``gpio.outputs_active_high``)."""
    return "dl" if profile.gpio.outputs_active_high else "dh"


def pin_ranges(pins: Iterable[int]) -> str:
    """``[9, 10, 11, 13, 16, 17]`` -> ``"9-11,13,16-17"``: a pin list in the notation that
    config.txt's ``gpio=`` and pinctrl both read (ascending, duplicates dropped)."""
    out: list[str] = []
    run: list[int] = []
    for p in sorted(set(pins)):
        if run and p == run[-1] + 1:
            run.append(p)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [p]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def _used_pins(profile: Profile) -> set[int]:
    used = {p for pins in profile.gpio.outputs.values() for p in pins}
    used |= {ip.pin for ips in profile.gpio.inputs.values() for ip in ips}
    return used


def config_txt_lines(profile: Profile) -> list[str]:
    """The lines the GPIO build needs in ``/boot/firmware/config.txt`` (under ``[all]``),
    in order:

    * ``gpio=<outputs>=op,dl`` (``op,dh`` for active-low drivers): the firmware makes
      every output of :func:`motor_output_pins` an output at its off level a few seconds
      after power-on, long before the service starts (Raspberry Pi documentation,
      config.txt "GPIO control"; until then the reset pulls hold, which the profile
      loader checks);
    * ``dtparam=strict_gpiod``: a GPIO line the kernel releases returns to its default
      state instead of keeping its last level (turns off ``persist_gpio_outputs`` of the
      Pi kernels' pinctrl drivers);
    * where the pin map uses GPIO 0/1: ``force_eeprom_read=0`` (no HAT EEPROM probe on
      them at boot); where it uses 14/15: ``enable_uart=0`` (no UART TX driving GPIO 14;
      ``console=serial0,...`` must also go from cmdline.txt, see docs/wiring.md); where
      it uses the camera's or display's I2C pins: ``camera_auto_detect=0`` and
      ``display_auto_detect=0`` (this build needs a USB camera).

    Returns an empty list when the profile has no outputs (nothing to hold off)."""
    pins = motor_output_pins(profile)
    if not pins:
        return []
    lines = [f"gpio={pin_ranges(pins)}=op,{off_level(profile)}", "dtparam=strict_gpiod"]
    used = _used_pins(profile)
    for boot_pins, extra in _BOOT_USERS:
        if used & set(boot_pins):
            lines.extend(x for x in extra if x not in lines)
    return lines


def stop_hook_command(profile: Profile, pinctrl: str = PINCTRL) -> list[str]:
    """argv of the stop hook: ``pinctrl set <pins> op dl`` for :func:`motor_output_pins`
    (``op dh`` for active-low drivers). Raises ValueError when the profile has no output."""
    pins = motor_output_pins(profile)
    if not pins:
        raise ValueError(f"profile {profile.name!r} has no GPIO outputs to switch off")
    return [pinctrl, "set", pin_ranges(pins), "op", off_level(profile)]


def render_unit(profile: Profile, backend: str = "gpio", *,
                config_path: str = "/etc/mjtable/table.toml",
                install_dir: str = "/opt/mjtable", state_dir: str = "/var/lib/mjtable",
                memory_max: str = "768M", watchdog_s: int = 10, nofile: int = 4096) -> str:
    """The systemd unit of the table service, whole (``deploy/mjtable.service`` is this
    for the default configuration; a test keeps the two equal).

    Args:
        profile: the machine profile (its GPIO outputs make the stop hook's pin list).
        backend: "gpio" renders ``ExecStopPost=+/usr/bin/pinctrl set <pins> op dl``;
            "mcu" and "sim" render none (the Pi's pins drive no motor: the
            microcontroller stops its motors itself when the Pi goes silent), with a
            comment saying so.
        config_path: the table.toml that ``ExecStart`` passes to ``mjtable serve``.
        install_dir: the checkout with its ``.venv`` (``/opt/mjtable``).
        state_dir: the service's state (token, event log), systemd's StateDirectory.
        memory_max: ``MemoryMax=`` (benchmarks/service_bench.py targets under 250 MB
            resident with the camera pipeline; 768M leaves headroom on a 1 GB CM3+ and
            turns a leak into a restart, with the stop hook run).
        watchdog_s: ``WatchdogSec=`` (the control loop pings while healthy).
        nofile: ``LimitNOFILE=``, the open-file limit (64..1048576; issue #18 section 4: 1,100
            open event streams once exhausted systemd's default soft limit of 1024).
    Raises ValueError for an unknown backend or a value that would break the unit
    (a newline, a relative path, a space in a path, a watchdog outside 1..600 s).
    Sources: systemd.service(5) (``ExecStopPost=``, ``+`` prefix: full privileges),
    systemd.exec(5), systemd.resource-control(5); issue #23 sections 1 and 4.
    """
    if backend not in UNIT_BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(UNIT_BACKENDS)}, got {backend!r}")
    for name, value in (("config_path", config_path), ("install_dir", install_dir),
                        ("state_dir", state_dir)):
        if not value.startswith("/") or any(c.isspace() for c in value):
            raise ValueError(f"{name} must be an absolute path without spaces, got {value!r}")
    if not (isinstance(watchdog_s, int) and 1 <= watchdog_s <= 600):
        raise ValueError(f"watchdog_s must be an integer 1..600, got {watchdog_s!r}")
    if not (isinstance(nofile, int) and 64 <= nofile <= 1048576):
        raise ValueError(f"nofile must be an integer 64..1048576, got {nofile!r}")
    if not memory_max or any(c.isspace() for c in memory_max):
        raise ValueError(f"memory_max must be a systemd size such as 768M, got {memory_max!r}")
    if backend == "gpio":
        hook = ["# After ANY exit (SIGTERM, SIGKILL after TimeoutStopSec, the watchdog's SIGABRT, the OOM",
                "# killer) drive every output of the pin map to its off level: Pi kernels keep a released",
                "# output at its last level. '+': runs as root, outside the sandbox. Pins from the profile",
                f"# {profile.name!r} (mjtable unit renders them).",
                "ExecStopPost=+" + " ".join(stop_hook_command(profile))]
    else:
        hook = [f"# backend {backend}: the Pi's pins drive no motor, so there is no pinctrl stop hook",
                "# (render with `mjtable unit --backend gpio` for the GPIO build)."]
    lines = [
        "# systemd unit of the table service, rendered by `mjtable unit` (hardware/pi_safety.py):",
        "# do not edit by hand, render it again. Install: see docs/wiring.md and the README.",
        f"#   sudo useradd --system --home {state_dir} --shell /usr/sbin/nologin "
        "--groups dialout,gpio,video mjtable",
        f"#   {install_dir}/.venv/bin/mjtable unit --config {config_path} "
        "| sudo tee /etc/systemd/system/mjtable.service",
        "#   sudo systemctl daemon-reload && sudo systemctl enable --now mjtable",
        "[Unit]",
        "Description=mjtable: automatic mahjong table service (麻将机)",
        "# no network-online.target wait: the service binds its port without a network and must",
        "# not hold up the table when the router is off",
        "After=network.target",
        "",
        "[Service]",
        "Type=notify",
        "# READY=1 once the API listens; WATCHDOG=1 from a liveness thread while the control loop and",
        "# the web server both turn (a self-test keeps the loop turning): a hung loop makes systemd",
        "# abort and restart the service; a lost link to the board does not (it is fault E62 on the page).",
        "# KillMode is the default (control-group): the photo worker process ends with the service.",
        f"WatchdogSec={watchdog_s}",
        "NotifyAccess=main",
        "User=mjtable",
        "Group=mjtable",
        "SupplementaryGroups=dialout gpio video",
        f"Environment=MJTABLE_STATE_DIR={state_dir}",
        "StateDirectory=mjtable",
        "StateDirectoryMode=0700",
        f"WorkingDirectory={install_dir}",
        f"ExecStart={install_dir}/.venv/bin/mjtable serve --config {config_path} "
        f"--token-file {state_dir}/token",
        *hook,
        "# SIGTERM: the service stops every motor before it exits",
        "KillSignal=SIGTERM",
        "TimeoutStopSec=15",
        "Restart=on-failure",
        "RestartSec=3",
        f"MemoryMax={memory_max}",
        "# open files: the web server's connections, the log, the serial port, the camera; the service",
        "# raises its soft limit to this and keeps a reserve of it so that status and stop always answer",
        "# (event streams and connections are capped below it: service/guard.py)",
        f"LimitNOFILE={nofile}",
        "# Hardening that keeps /dev/gpiochip*, /dev/ttyAMA* (serial0), /dev/ttyACM* and /dev/video*",
        "# reachable: no PrivateDevices=, DevicePolicy=, DeviceAllow=, ProtectClock= (it implies a",
        "# DeviceAllow= list) or PrivateUsers= (the gpio, dialout and",
        "# video groups give the access).",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectKernelLogs=yes",
        "ProtectControlGroups=yes",
        "ProtectHostname=yes",
        "RestrictNamespaces=yes",
        "RestrictRealtime=yes",
        "RestrictSUIDSGID=yes",
        "LockPersonality=yes",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
        "SystemCallArchitectures=native",
        "CapabilityBoundingSet=",
        "UMask=0077",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
    ]
    return "\n".join(lines) + "\n"

