"""``mjtable doctor``: checks the Raspberry Pi a table runs on, for the technician who installs it.

Each check gives a :class:`Finding`: an id, PASS / WARN / FAIL / SKIP, what was seen and the fix
(English and Chinese). :func:`run` runs them all; ``mjtable doctor`` prints them and exits 1 when
one FAILs; ``GET /api/doctor`` returns the same report to the page.

The system is read as files under a root folder (default ``/``), so the tests run the checks on
made-up Pi file trees: ``proc/device-tree/model``, ``proc/cpuinfo``, ``proc/sys/kernel/osrelease``,
``proc/meminfo``, ``etc/os-release``, ``etc/group``, ``etc/passwd``, ``boot/firmware/config.txt``
(``boot/config.txt`` before Bookworm), ``boot/firmware/cmdline.txt``, ``dev/gpiochip*``,
``dev/serial0`` (a symlink), ``dev/ttyAMA0``, ``etc/systemd/system/mjtable.service``,
``usr/lib/python3/dist-packages`` (apt's numpy and picamera2) and the table's ``table.toml``.
What cannot be read as a file (this Python's pointer size, ``import lgpio``, the serial handshake,
the camera, free disk space) goes through :class:`Probes`; with a root other than ``/`` those are
not probed (SKIP), unless a test gives its own.

Why in ``service/``: the doctor checks what the service runs with (its table.toml, token file,
state folder and systemd unit), and the service's page shows the report; ``service`` may import
``controller``, ``hardware`` and ``vision``, which the checks need.

Sources: Raspberry Pi documentation, "Configuring UARTs" (Pi 5: ``/dev/serial0`` is the debug
connector's ``ttyAMA10``; the header UART0 is ``ttyAMA0`` with ``dtparam=uart0``;
raspberrypi/documentation#3294); raspberrypi/linux#6117 (``strict_gpiod``, kernel 6.6);
picamera2#1088 and #1211 (apt's picamera2 and simplejpeg are built against apt's numpy 1.24).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from . import pi_arch


class DoctorError(Exception):
    """The doctor cannot run at all (a root folder that does not exist, an unreadable config);
    one line for the user."""


class Status(str, enum.Enum):
    """A check's outcome. FAIL: the table will not work until it is fixed; WARN: it works, but
    something is off; SKIP: the check does not apply here or could not be probed."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclasses.dataclass(frozen=True)
class Finding:
    """One check's result.

    Attributes:
        id: stable name of the check, e.g. ``serial-port``.
        status: PASS / WARN / FAIL / SKIP.
        title_en, title_zh: what is checked.
        seen: what was seen (paths, versions, values), English.
        fix_en, fix_zh: what to do ("" when nothing is to be done).
    """

    id: str
    status: Status
    title_en: str
    title_zh: str
    seen: str
    fix_en: str = ""
    fix_zh: str = ""

    def to_dict(self) -> dict[str, str]:
        d = dataclasses.asdict(self)
        d["status"] = self.status.value
        return d


@dataclasses.dataclass(frozen=True)
class Report:
    """All findings, in the order the checks ran. ``ok``: no FAIL."""

    root: str
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not any(f.status is Status.FAIL for f in self.findings)

    def get(self, check_id: str) -> Finding:
        """The finding of ``check_id``. Raises KeyError."""
        for f in self.findings:
            if f.id == check_id:
                return f
        raise KeyError(check_id)

    def counts(self) -> dict[str, int]:
        return {s.value: sum(f.status is s for f in self.findings) for s in Status}

    def to_dict(self) -> dict[str, Any]:
        """JSON shape of ``mjtable doctor --json`` and ``GET /api/doctor``:
        ``{"ok", "root", "counts": {"PASS": n, ...}, "findings": [{"id", "status", "title_en",
        "title_zh", "seen", "fix_en", "fix_zh"}]}``."""
        return {"ok": self.ok, "root": self.root, "counts": self.counts(),
                "findings": [f.to_dict() for f in self.findings]}


# ---------------------------------------------------------------------------------------- probes
class ProbeFailed(Exception):
    """A probe ran and the thing it probes does not work; the message says what was seen."""


@dataclasses.dataclass(frozen=True)
class Probes:
    """What the checks cannot read as files. Each field is a callable, or None for "not probed"
    (the check then says SKIP, or falls back on what the files show).

    Attributes:
        pointer_bytes: ``() -> 4 | 8``, this Python's ``struct.calcsize("P")``.
        python_version: ``() -> (major, minor)``.
        import_lgpio: ``() -> None``; raises ProbeFailed with the import error.
        venv_numpy: ``() -> (version, folder) | None``: the numpy this Python imports.
        picamera2_import: ``() -> None``; raises ProbeFailed with the last line of the error of
            ``from picamera2 import Picamera2`` in a fresh interpreter.
        handshake: ``(port, profile) -> str`` (what the board said); raises ProbeFailed.
        open_camera: ``(source, device) -> str`` (the frame size read); raises ProbeFailed.
        disk_free: ``(path) -> bytes`` free for an unprivileged user.
        user: ``() -> str``: the user running the doctor.
    """

    pointer_bytes: Callable[[], int] | None = None
    python_version: Callable[[], tuple[int, int]] | None = None
    import_lgpio: Callable[[], None] | None = None
    venv_numpy: Callable[[], tuple[str, str] | None] | None = None
    picamera2_import: Callable[[], None] | None = None
    handshake: Callable[[str, Any], str] | None = None
    open_camera: Callable[[str, int], str] | None = None
    disk_free: Callable[[Path], int] | None = None
    user: Callable[[], str] | None = None

    @classmethod
    def live(cls) -> "Probes":
        """The probes of the running system (``root = /``)."""
        import getpass
        import struct

        def disk_free(p: Path) -> int:
            st = os.statvfs(p)
            return st.f_bavail * st.f_frsize

        return cls(pointer_bytes=lambda: struct.calcsize("P"), python_version=lambda: sys.version_info[:2],
                   import_lgpio=_probe_lgpio, venv_numpy=_probe_numpy, picamera2_import=_probe_picamera2,
                   handshake=_probe_handshake, open_camera=_probe_camera, disk_free=disk_free,
                   user=getpass.getuser)


def _probe_lgpio() -> None:
    try:
        import lgpio  # type: ignore[import-not-found]  # noqa: F401
    except Exception as e:  # noqa: BLE001 - ImportError, or the C library's own error
        raise ProbeFailed(f"import lgpio: {type(e).__name__}: {e}") from None


def _probe_numpy() -> tuple[str, str] | None:
    try:
        import numpy
    except ImportError:
        return None
    return numpy.__version__, str(Path(numpy.__file__).parent.parent)


def _probe_picamera2() -> None:
    # A fresh interpreter: picamera2 starts libcamera when imported, and a broken import must not
    # leave half a module in this process.
    try:
        r = subprocess.run([sys.executable, "-c", "from picamera2 import Picamera2"], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ProbeFailed(f"could not run the import: {e}") from None
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
        raise ProbeFailed(lines[-1] if lines else f"exit code {r.returncode}")


def _probe_handshake(port: str, profile: Any) -> str:
    import hardware
    try:
        # handshake and one GetStatus: no motor moves
        backend = hardware.open_table(hardware.TableSpec(simulated=False, backend="mcu", port=port, profile=profile))
    except hardware.HardwareError as e:
        raise ProbeFailed(str(e)) from None
    try:
        firmware = backend.health().firmware
        return f"the board answered on {port}" + (f" (firmware {firmware})" if firmware else "")
    finally:
        backend.close()


def _probe_camera(source: str, device: int) -> str:
    from vision.capture import CaptureConfig, open_camera
    from vision.errors import VisionError
    try:
        cam = open_camera(CaptureConfig(source=source, device=device, warmup_frames=2))
    except VisionError as e:
        raise ProbeFailed(e.message if hasattr(e, "message") else str(e)) from None
    try:
        frame = cam.read()
        return f"{source} camera gave a {frame.shape[1]}x{frame.shape[0]} frame"
    except VisionError as e:
        raise ProbeFailed(e.message if hasattr(e, "message") else str(e)) from None
    finally:
        cam.close()


# ---------------------------------------------------------------------------------- reading files
def _read(root: Path, rel: str) -> str | None:
    """Text of ``root/rel`` (NULs, as in device-tree strings, removed), None if absent or unreadable."""
    try:
        return (root / rel.lstrip("/")).read_text(encoding="utf-8", errors="replace").replace("\x00", "")
    except OSError:
        return None


def _under(root: Path, path: str | Path) -> Path:
    """An absolute path of the inspected system, as a path under ``root``."""
    return root / str(path).lstrip("/")


@dataclasses.dataclass(frozen=True)
class PiModel:
    """The board, from ``/proc/device-tree/model`` (e.g. "Raspberry Pi 5 Model B Rev 1.0").

    Attributes: text; generation 1-5 (None: not a Pi); arm64 (its CPU runs a 64-bit OS); filters:
    the config.txt section filters that apply to it (``pi5``, ``pi4``, ``cm4`` ...).
    """

    text: str
    generation: int | None
    arm64: bool
    filters: frozenset[str]


def pi_model(text: str | None) -> PiModel | None:
    """The board from the device-tree model string; None when it is not a Raspberry Pi.

    Source: Raspberry Pi documentation, config.txt "Model filters" ([pi4] also applies to Pi 400
    and CM4, [pi5] to Pi 500 and CM5, [pi3] to 3B, 3B+, 3A+ and CM3); a Pi 2 of revision 1.2 has
    the 64-bit BCM2837.
    """
    if not text or "Raspberry Pi" not in text:
        return None
    t = text.strip()
    f: set[str] = set()
    if m := re.search(r"Raspberry Pi (Compute Module )?(\d+)", t):
        n = int(m.group(2))
        cm = bool(m.group(1))
        gen = {400: 4, 500: 5}.get(n, n)
        if gen in (1, 2, 3, 4, 5):
            f.add(f"pi{gen}")
            if cm:
                f.add(f"cm{gen}" + ("+" if "Plus" in t and gen == 3 else ""))
            if n in (400, 500):
                f.add(f"pi{n}")
            if gen == 3 and "Plus" in t and not cm:
                f.add("pi3+")
        else:
            gen = None
    elif "Zero 2" in t:
        gen, f = 3, {"pi0", "pi02"}
    elif "Zero" in t:
        gen, f = 1, {"pi0"} | ({"pi0w"} if "Zero W" in t else set())
    else:
        gen = None
    arm64 = gen is not None and (gen >= 3 or (gen == 2 and "Rev 1.2" in t))
    return PiModel(t, gen, arm64, frozenset(f))


@dataclasses.dataclass(frozen=True)
class BootConfig:
    """The settings of config.txt that apply to this board.

    Attributes: path (the file read, as a path of the inspected system); values: ``key -> value``
    of plain lines (the last one wins); overlays: names of ``dtoverlay=`` lines; params:
    ``dtparam`` name -> value ("on" when none is given); lines: every applying line, stripped.
    """

    path: str
    values: dict[str, str]
    overlays: tuple[str, ...]
    params: dict[str, str]
    lines: tuple[str, ...]


def boot_config(root: Path, model: PiModel | None) -> BootConfig | None:
    """Parse ``/boot/firmware/config.txt`` (Bookworm and later) or ``/boot/config.txt`` (older),
    keeping the lines whose conditional section applies to ``model``: ``[all]`` resets; a model
    filter (``[pi4]``, ``[cm5]`` ...) applies when it names this board; other filters (``[EDID=..]``,
    ``[gpio4=1]``, ``[tryboot]`` ...) cannot be judged from files and are taken to apply; ``[none]``
    never does. ``include FILE`` is followed (relative to the file's folder). None when neither
    file exists. On Bookworm ``/boot/config.txt`` is a stub pointing to the new place: when both
    exist the new one is read."""
    for rel in ("boot/firmware/config.txt", "boot/config.txt"):
        if (root / rel).is_file():
            break
    else:
        return None
    model_filters = {"pi1", "pi2", "pi3", "pi3+", "pi4", "pi5", "pi400", "pi500", "cm1", "cm3", "cm3+", "cm4",
                     "cm4s", "cm5", "pi0", "pi0w", "pi02"}
    values: dict[str, str] = {}
    overlays: list[str] = []
    params: dict[str, str] = {}
    lines: list[str] = []

    def read(rel_path: str, depth: int) -> None:
        text = _read(root, rel_path)
        if text is None or depth > 4:
            return
        applies = True
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                name = line[1:-1].strip().lower()
                if name == "all":
                    applies = True
                elif name == "none":
                    applies = False
                elif name in model_filters:
                    applies = model is not None and name in model.filters
                else:
                    applies = True
                continue
            if not applies:
                continue
            if line.startswith("include "):
                read(str(Path(rel_path).parent / line.split(None, 1)[1].strip()), depth + 1)
                continue
            lines.append(line)
            key, _, value = line.partition("=")
            key, value = key.strip(), value.strip()
            if key == "dtoverlay":
                name, _, rest = value.partition(",")
                if name:
                    overlays.append(name.strip())
                for p in filter(None, rest.split(",")):
                    pk, _, pv = p.partition("=")
                    params[f"{name}.{pk.strip()}"] = pv.strip() or "on"
            elif key == "dtparam":
                for p in filter(None, value.split(",")):
                    pk, _, pv = p.partition("=")
                    params[pk.strip()] = pv.strip() or "on"
            else:
                values[key] = value

    read(rel, 0)
    return BootConfig("/" + rel, values, tuple(overlays), params, tuple(lines))


def os_release(root: Path) -> dict[str, str]:
    """``/etc/os-release`` as a dict (``ID``, ``VERSION_CODENAME``, ``PRETTY_NAME`` ...); {} if absent."""
    out: dict[str, str] = {}
    for line in (_read(root, "etc/os-release") or "").splitlines():
        k, sep, v = line.partition("=")
        if sep:
            try:
                out[k.strip()] = " ".join(shlex.split(v)) if v.strip() else ""
            except ValueError:
                out[k.strip()] = v.strip().strip('"')
    return out


def kernel_version(release: str) -> tuple[int, int, int] | None:
    """``"6.6.51+rpt-rpi-v8"`` -> ``(6, 6, 51)``; None when it does not start with a version."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", release.strip())
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


@dataclasses.dataclass(frozen=True)
class Unit:
    """The installed ``mjtable.service`` (the keys the doctor needs).

    Attributes: path; user; groups (SupplementaryGroups); env (Environment=); exec_start (argv of
    ExecStart); exec_stop_post (ExecStopPost= command lines); state_directory.
    """

    path: str
    user: str | None
    groups: tuple[str, ...]
    env: dict[str, str]
    exec_start: tuple[str, ...]
    exec_stop_post: tuple[str, ...]
    state_directory: str | None

    def option(self, name: str) -> str | None:
        """The value of ``--name V`` or ``--name=V`` in ExecStart, else None."""
        argv = self.exec_start
        for i, a in enumerate(argv):
            if a == name and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(name + "="):
                return a.split("=", 1)[1]
        return None


UNIT_PATH = "etc/systemd/system/mjtable.service"
#: how the unit is written (``mjtable unit``, hardware.pi_safety.render_unit)
UNIT_CMD = "/opt/mjtable/.venv/bin/mjtable unit --config /etc/mjtable/table.toml | sudo tee /etc/systemd/system/mjtable.service"


def read_unit(root: Path) -> Unit | None:
    """Parse ``/etc/systemd/system/mjtable.service``; None when it is not installed."""
    text = _read(root, UNIT_PATH)
    if text is None:
        return None
    user = None
    groups: list[str] = []
    env: dict[str, str] = {}
    start: tuple[str, ...] = ()
    stop_post: list[str] = []
    state_dir = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;[":
            continue
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if key == "User":
            user = value
        elif key == "SupplementaryGroups":
            groups += value.split()
        elif key == "Environment":
            for item in shlex.split(value):
                k, _, v = item.partition("=")
                env[k] = v
        elif key == "ExecStart":
            start = tuple(shlex.split(value.lstrip("@-:+!")))
        elif key == "ExecStopPost":
            stop_post.append(value.lstrip("@-:+!"))
        elif key == "StateDirectory":
            state_dir = value.split()[0] if value else None
    return Unit("/" + UNIT_PATH, user, tuple(groups), env, start, tuple(stop_post), state_dir)


def group_members(root: Path) -> dict[str, set[str]]:
    """``/etc/group`` and the primary groups of ``/etc/passwd``: group name -> its users."""
    groups: dict[str, set[str]] = {}
    gids: dict[str, str] = {}
    for line in (_read(root, "etc/group") or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 4:
            groups[parts[0]] = {u for u in parts[3].split(",") if u}
            gids[parts[2]] = parts[0]
    for line in (_read(root, "etc/passwd") or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 4 and parts[3] in gids:
            groups[gids[parts[3]]].add(parts[0])
    return groups


def apt_numpy_version(root: Path) -> str | None:
    """The version of apt's numpy (python3-numpy) in ``/usr/lib/python3/dist-packages``, else None."""
    dist = root / "usr/lib/python3/dist-packages"
    for pattern in ("numpy-*.dist-info", "numpy-*.egg-info"):
        for p in sorted(dist.glob(pattern)):
            m = re.match(r"numpy-([0-9][^-]*?)(?:\.dist-info|\.egg-info)$", p.name)
            if m:
                return m.group(1)
    text = _read(root, "usr/lib/python3/dist-packages/numpy/version.py") or ""
    m = re.search(r"""^(?:full_)?version\s*[:=][^'"]*['"]([0-9][^'"]*)['"]""", text, re.M)
    return m.group(1) if m else None


# ---------------------------------------------------------------------------------------- context
@dataclasses.dataclass
class Context:
    """What the checks share: the root, the probes, the board, config.txt, the unit, the service
    configuration and the machine profile (filled by :func:`run`)."""

    root: Path
    live: bool
    probes: Probes
    model: PiModel | None
    boot: BootConfig | None
    unit: Unit | None
    config: Any              # service.config.ServiceConfig
    config_path: str | None  # the table.toml read, or None (defaults)
    profile: Any             # hardware.Profile, or None when it could not be loaded
    profile_error: str | None
    pin_safety: Any          # hardware.pi_safety, or None where that module is missing
    service_running: bool
    link_state: Callable[[], str] | None = None  # in the service: its own link's state


def _f(check_id: str, status: Status, title: tuple[str, str], seen: str, fix: tuple[str, str] = ("", "")) -> Finding:
    return Finding(check_id, status, title[0], title[1], seen, fix[0], fix[1])


def _backend(ctx: Context) -> str:
    return ctx.config.backend


# ----------------------------------------------------------------------------------------- checks
T_MODEL = ("Raspberry Pi model", "树莓派型号")
T_BITS = ("64-bit Raspberry Pi OS", "64位系统")
T_OS = ("OS release and Python", "系统版本与Python")
T_KERNEL = ("Kernel", "内核")
T_LGPIO = ("Pin driver lgpio", "引脚驱动 lgpio")
T_CHIP = ("GPIO character device", "GPIO设备")
T_GROUPS = ("Service user's groups", "服务用户的组")
T_CONFIG = ("Boot configuration (config.txt)", "启动配置 config.txt")
T_UART = ("UART enabled on GPIO 14/15", "GPIO 14/15 串口已启用")
T_HCI = ("Bluetooth modem service (hciuart)", "蓝牙串口服务 hciuart")
T_CONSOLE = ("No login console on the table's UART", "串口上没有登录控制台")
T_STRICT = ("strict_gpiod and the GPIO build's other config.txt lines", "strict_gpiod 及 GPIO 版的其他 config.txt 设置")
T_BOOTPINS = ("Motor pins driven low from boot", "电机引脚上电即为低电平")
T_PORT = ("Serial port of the microcontroller", "主控板串口")
T_HANDSHAKE = ("Microcontroller handshake", "主控板握手")
T_PICAM = ("picamera2 and numpy", "picamera2 与 numpy")
T_CAMERA = ("Camera opens", "摄像头能打开")
T_STATE = ("State folder writable", "状态目录可写")
T_TOKEN = ("Token file", "令牌文件")
T_MEM = ("Memory", "内存")
T_DISK = ("Disk space", "磁盘空间")
T_UNIT = ("systemd unit", "systemd 服务单元")
T_UNITPINS = ("Unit's stop pins match the profile", "服务单元的停机引脚与配置一致")
T_PROFILE = ("Machine profile and table.toml", "机器配置与 table.toml")

NOT_PI = "not a Raspberry Pi"


def check_model(ctx: Context) -> Finding:
    """The board: a Pi 3 or later (a CPU that runs 64-bit Pi OS). Source: device-tree model."""
    text = _read(ctx.root, "proc/device-tree/model")
    if ctx.model is None:
        seen = f"/proc/device-tree/model says {text.strip()!r}" if text else "no /proc/device-tree/model"
        return _f("pi-model", Status.WARN, T_MODEL, f"{NOT_PI} ({seen}): the Pi checks are skipped",
                  ("Run mjtable doctor on the table's Raspberry Pi.", "请在麻将机的树莓派上运行 mjtable doctor。"))
    if not ctx.model.arm64:
        return _f("pi-model", Status.FAIL, T_MODEL, f"{ctx.model.text}: its CPU cannot run a 64-bit OS",
                  ("Use a Raspberry Pi 3, 4 or 5 (or CM3+/CM4/CM5).", "请换用树莓派 3、4 或 5（或 CM3+/CM4/CM5）。"))
    return _f("pi-model", Status.PASS, T_MODEL, ctx.model.text)


def check_bits(ctx: Context) -> Finding:
    """64-bit userland: this Python's pointer size (live), else the ELF class of /usr/bin/python3."""
    bits = None
    how = ""
    if ctx.probes.pointer_bytes is not None:
        bits, how = ctx.probes.pointer_bytes() * 8, "this Python"
    else:
        try:
            with open(_under(ctx.root, "usr/bin/python3"), "rb") as fh:
                head = fh.read(5)
            if head[:4] == b"\x7fELF":
                bits, how = {1: 32, 2: 64}.get(head[4]), "/usr/bin/python3"
        except OSError:
            pass
    if bits is None:
        return _f("os-64bit", Status.SKIP, T_BITS, "not probed: no /usr/bin/python3 to read under this root")
    import platform
    machine = "aarch64" if ctx.model is not None else (platform.machine() if ctx.live else "unknown")
    refusal = pi_arch.arm32_refusal(machine, bits // 8)
    if refusal:
        return _f("os-64bit", Status.FAIL, T_BITS, f"{how} is 32-bit: a 32-bit Raspberry Pi OS",
                  (refusal, "用 Raspberry Pi Imager 重新写入 64 位 Raspberry Pi OS：PyPI 没有 32 位 ARM 的 OpenCV、"
                   "numpy、scipy、onnxruntime 安装包。"))
    return _f("os-64bit", Status.PASS if bits == 64 else Status.WARN, T_BITS, f"{how} is {bits}-bit")


def check_os(ctx: Context) -> Finding:
    """Raspberry Pi OS / Debian Bookworm or later, with Python 3.11 or later (requires-python)."""
    rel = os_release(ctx.root)
    name = rel.get("PRETTY_NAME") or "an unknown system (no /etc/os-release)"
    code = rel.get("VERSION_CODENAME", "")
    ver = ctx.probes.python_version() if ctx.probes.python_version else None
    seen = name + (f", Python {ver[0]}.{ver[1]}" if ver else "")
    old = code in ("buster", "bullseye", "stretch", "jessie")
    if (ver is not None and ver < (3, 11)) or old:
        return _f("os-release", Status.FAIL, T_OS, seen,
                  ("Install Raspberry Pi OS Bookworm (Debian 12) or later: mjtable needs Python 3.11.",
                   "请安装 Raspberry Pi OS Bookworm（Debian 12）或更新版本：mjtable 需要 Python 3.11。"))
    if ctx.model is not None and rel.get("ID") not in ("debian", "raspbian"):
        return _f("os-release", Status.WARN, T_OS, seen + ": not Raspberry Pi OS",
                  ("Raspberry Pi OS is the system these steps are written and tested for.",
                   "本说明针对 Raspberry Pi OS 编写和测试。"))
    return _f("os-release", Status.PASS, T_OS, seen)


#: The first Raspberry Pi OS kernel sure to have ``dtparam=strict_gpiod``: it came into the 6.6
#: series in April 2024 (raspberrypi/linux#6117); the images of July 2024 ship 6.6.31.
STRICT_GPIOD_KERNEL = (6, 6, 31)


def check_kernel(ctx: Context) -> Finding:
    """The kernel release (``/proc/sys/kernel/osrelease``). The GPIO build needs
    ``strict_gpiod`` (outputs fall back to inputs when the service dies; older kernels keep a
    motor output driven): FAIL before 6.6, WARN before ``STRICT_GPIOD_KERNEL``. Other builds:
    WARN before 6.6 (an OS that is not kept up to date)."""
    release = (_read(ctx.root, "proc/sys/kernel/osrelease") or "").strip()
    if not release:
        return _f("kernel", Status.SKIP, T_KERNEL, "no /proc/sys/kernel/osrelease")
    v = kernel_version(release)
    if ctx.model is None or v is None:
        return _f("kernel", Status.PASS if v else Status.WARN, T_KERNEL, release)
    fix = ("sudo apt update && sudo apt full-upgrade, then reboot.", "执行 sudo apt update && sudo apt full-upgrade，然后重启。")
    gpio = _backend(ctx) == "gpio"
    if v < (6, 6, 0):
        return _f("kernel", Status.FAIL if gpio else Status.WARN, T_KERNEL,
                  f"{release}: older than 6.6" + (", without strict_gpiod" if gpio else ""), fix)
    if gpio and v < STRICT_GPIOD_KERNEL:
        return _f("kernel", Status.WARN, T_KERNEL, f"{release}: strict_gpiod came during 6.6 (April 2024); "
                  f"{'.'.join(map(str, STRICT_GPIOD_KERNEL))} and later have it", fix)
    return _f("kernel", Status.PASS, T_KERNEL, release)


def check_lgpio(ctx: Context) -> Finding:
    """``import lgpio`` works (gpiozero's pin driver on every Pi: the ``pi`` extra)."""
    if ctx.model is None:
        return _f("lgpio", Status.SKIP, T_LGPIO, NOT_PI)
    if ctx.probes.import_lgpio is None:
        return _f("lgpio", Status.SKIP, T_LGPIO, "not probed (the root is not this system)")
    try:
        ctx.probes.import_lgpio()
    except ProbeFailed as e:
        status = Status.FAIL if _backend(ctx) == "gpio" else Status.WARN
        return _f("lgpio", status, T_LGPIO, str(e),
                  ("In the venv: pip install -c deploy/pi-constraints.txt -e '.[pi,fast]' (lgpio has an aarch64 "
                   "wheel), or sudo apt install python3-lgpio (the venv sees apt's packages).",
                   "在虚拟环境中执行 pip install -c deploy/pi-constraints.txt -e '.[pi,fast]'，或 sudo apt install "
                   "python3-lgpio。"))
    return _f("lgpio", Status.PASS, T_LGPIO, "import lgpio works")


def check_gpiochip(ctx: Context) -> Finding:
    """``/dev/gpiochip*`` present (the kernel's GPIO character devices lgpio opens)."""
    if ctx.model is None:
        return _f("gpiochip", Status.SKIP, T_CHIP, NOT_PI)
    chips = sorted(p.name for p in (ctx.root / "dev").glob("gpiochip*"))
    if not chips:
        status = Status.FAIL if _backend(ctx) == "gpio" else Status.WARN
        return _f("gpiochip", status, T_CHIP, "no /dev/gpiochip*",
                  ("Update the kernel (sudo apt full-upgrade) and reboot.", "更新内核（sudo apt full-upgrade）并重启。"))
    return _f("gpiochip", Status.PASS, T_CHIP, ", ".join("/dev/" + c for c in chips))


def _service_user(ctx: Context) -> tuple[str | None, str]:
    if ctx.unit is not None and ctx.unit.user:
        return ctx.unit.user, f"{ctx.unit.path} User="
    if ctx.probes.user is not None:
        return ctx.probes.user(), "the user running the doctor"
    return None, ""


def check_groups(ctx: Context) -> Finding:
    """The service user is in ``gpio``, ``dialout`` and ``video`` (``/etc/group``, the primary
    group of ``/etc/passwd``, or the unit's SupplementaryGroups=)."""
    if ctx.model is None:
        return _f("groups", Status.SKIP, T_GROUPS, NOT_PI)
    user, whose = _service_user(ctx)
    if user is None:
        return _f("groups", Status.SKIP, T_GROUPS, "no unit installed and no user probed")
    members = group_members(ctx.root)
    extra = set(ctx.unit.groups) if ctx.unit is not None and ctx.unit.user == user else set()
    missing = [g for g in ("gpio", "dialout", "video") if user != "root" and user not in members.get(g, set())
               and g not in extra]
    if missing:
        return _f("groups", Status.FAIL, T_GROUPS, f"{user} ({whose}) is not in {', '.join(missing)}",
                  (f"sudo usermod -aG {','.join(missing)} {user}, then log in again (or restart the service).",
                   f"执行 sudo usermod -aG {','.join(missing)} {user}，然后重新登录（或重启服务）。"))
    return _f("groups", Status.PASS, T_GROUPS, f"{user} ({whose}): gpio, dialout, video")


def check_config_txt(ctx: Context) -> Finding:
    """config.txt is found where this OS reads it."""
    if ctx.model is None:
        return _f("config-txt", Status.SKIP, T_CONFIG, NOT_PI)
    if ctx.boot is None:
        return _f("config-txt", Status.FAIL, T_CONFIG, "neither /boot/firmware/config.txt nor /boot/config.txt",
                  ("Is the boot partition mounted? It is /boot/firmware on Bookworm.",
                   "启动分区是否已挂载？Bookworm 上是 /boot/firmware。"))
    return _f("config-txt", Status.PASS, T_CONFIG, f"{ctx.boot.path}: {len(ctx.boot.lines)} settings apply")


def _mcu_only(ctx: Context, check_id: str, title: tuple[str, str]) -> Finding | None:
    if ctx.model is None:
        return _f(check_id, Status.SKIP, title, NOT_PI)
    if _backend(ctx) != "mcu":
        return _f(check_id, Status.SKIP, title, f"the machine backend is {_backend(ctx)}, not the microcontroller")
    if ctx.boot is None:
        return _f(check_id, Status.SKIP, title, "no config.txt")
    return None


def check_uart(ctx: Context) -> Finding:
    """The header UART (GPIO 14/15) is a PL011 given to the table: Pi 5 ``dtparam=uart0=on`` (or
    ``dtoverlay=uart0-pi5``); Pi 3/4 ``enable_uart=1`` and ``dtoverlay=disable-bt`` (else the
    PL011 serves Bluetooth and GPIO 14/15 get the mini UART, whose baud rate follows the core
    clock). Source: Raspberry Pi documentation, "Configuring UARTs"."""
    if (skip := _mcu_only(ctx, "uart", T_UART)) is not None:
        return skip
    b, m = ctx.boot, ctx.model
    assert b is not None and m is not None
    if m.generation == 5:
        on = _norm(b.params.get("uart0", "off")) == "on" or "uart0-pi5" in b.overlays or "uart0" in b.overlays
        if not on:
            return _f("uart", Status.FAIL, T_UART, f"{b.path}: no dtparam=uart0=on (a Pi 5's header UART is off)",
                      (f"Add dtparam=uart0=on to {b.path} and reboot; the port is then /dev/ttyAMA0.",
                       f"在 {b.path} 中加入 dtparam=uart0=on 并重启；串口为 /dev/ttyAMA0。"))
        return _f("uart", Status.PASS, T_UART, f"{b.path}: UART0 on (Pi 5: /dev/ttyAMA0)")
    missing = []
    if b.values.get("enable_uart") != "1":
        missing.append("enable_uart=1")
    bt_off = any(o in b.overlays for o in ("disable-bt", "pi3-disable-bt", "miniuart-bt", "pi3-miniuart-bt"))
    # boards whose PL011 serves Bluetooth by default (CM4 may have it: disable-bt is harmless there)
    wireless = (m.generation in (3, 4) and not m.filters & {"cm3", "cm3+"}) or bool(m.filters & {"pi02", "pi0w"})
    if wireless and not bt_off:
        missing.append("dtoverlay=disable-bt")
    if missing:
        return _f("uart", Status.FAIL, T_UART, f"{b.path}: missing {', '.join(missing)}",
                  (f"Add {' and '.join(missing)} to {b.path} and reboot.",
                   f"在 {b.path} 中加入 {'、'.join(missing)} 并重启。"))
    return _f("uart", Status.PASS, T_UART, f"{b.path}: enable_uart=1" + (", Bluetooth off the PL011" if wireless else ""))


def check_hciuart(ctx: Context) -> Finding:
    """With ``disable-bt`` on a Pi 3/4, the ``hciuart`` service must be disabled: it would try to
    reach the Bluetooth modem over the UART the table now uses."""
    if (skip := _mcu_only(ctx, "hciuart", T_HCI)) is not None:
        return skip
    assert ctx.model is not None
    if ctx.model.generation == 5:
        return _f("hciuart", Status.SKIP, T_HCI, "a Pi 5's Bluetooth has its own UART")
    link = ctx.root / "etc/systemd/system/multi-user.target.wants/hciuart.service"
    enabled = link.is_symlink() or link.exists()  # the link's target is absolute: outside a --root tree
    if enabled:
        return _f("hciuart", Status.WARN, T_HCI, "hciuart.service is enabled",
                  ("sudo systemctl disable hciuart", "执行 sudo systemctl disable hciuart"))
    return _f("hciuart", Status.PASS, T_HCI, "hciuart.service is not enabled")


def check_console(ctx: Context) -> Finding:
    """No ``console=serial0`` (or ttyAMA0/ttyS0) in cmdline.txt: a login console on the table's
    UART would answer the microcontroller."""
    if (skip := _mcu_only(ctx, "serial-console", T_CONSOLE)) is not None:
        return skip
    assert ctx.boot is not None
    rel = str(Path(ctx.boot.path).parent / "cmdline.txt")
    text = _read(ctx.root, rel)
    if text is None:
        return _f("serial-console", Status.SKIP, T_CONSOLE, f"no {rel}")
    consoles = [a.split("=", 1)[1].split(",")[0] for a in text.split() if a.startswith("console=")]
    port = Path(ctx.config.serial_port).name
    bad = [c for c in consoles if c in ("serial0", "ttyAMA0", "ttyS0", port)]
    if bad:
        return _f("serial-console", Status.FAIL, T_CONSOLE, f"{rel} has console={bad[0]}",
                  ("sudo raspi-config → Interface Options → Serial Port: login shell No, hardware port Yes; reboot.",
                   "sudo raspi-config → Interface Options → Serial Port：登录 shell 选否，硬件串口选是；重启。"))
    return _f("serial-console", Status.PASS, T_CONSOLE, f"{rel}: consoles {', '.join(consoles) or 'none'}")


def check_strict_gpiod(ctx: Context) -> Finding:
    """``dtparam=strict_gpiod`` (and every line ``hardware.pi_safety.config_txt_lines`` asks for
    that is not a boot pin line) in config.txt when the Pi's pins drive motors."""
    return _config_lines_check(ctx, "strict-gpiod", T_STRICT, boot_pins=False)


def check_boot_pins(ctx: Context) -> Finding:
    """The ``gpio=<pins>=op,dl`` lines of ``hardware.pi_safety.config_txt_lines(profile)``: every
    motor output is driven low from power-on, before Linux runs (Raspberry Pi documentation,
    config.txt "gpio")."""
    return _config_lines_check(ctx, "boot-pins", T_BOOTPINS, boot_pins=True)


def _config_lines_check(ctx: Context, check_id: str, title: tuple[str, str], boot_pins: bool) -> Finding:
    if ctx.model is None:
        return _f(check_id, Status.SKIP, title, NOT_PI)
    if _backend(ctx) != "gpio":
        return _f(check_id, Status.SKIP, title, f"the machine backend is {_backend(ctx)}: the Pi's pins drive no motor")
    if ctx.boot is None or ctx.profile is None:
        return _f(check_id, Status.SKIP, title, "no config.txt" if ctx.boot is None else "no machine profile")
    if ctx.pin_safety is None:
        return _f(check_id, Status.SKIP, title, "hardware.pi_safety is not in this build")
    wanted = [ln for ln in ctx.pin_safety.config_txt_lines(ctx.profile) if ln.startswith("gpio=") == boot_pins]
    if not wanted:
        return _f(check_id, Status.SKIP, title, "the profile asks for no such line")
    have = set(ctx.boot.lines)
    if boot_pins:
        missing = [ln for ln in wanted if not _gpio_line_present(ln, ctx.boot.lines)]
    else:
        missing = [ln for ln in wanted if ln not in have and not _param_present(ln, ctx.boot)
                   and not _value_present(ln, ctx.boot)]
    if not missing:
        return _f(check_id, Status.PASS, title, f"{ctx.boot.path}: {'; '.join(wanted)}")
    return _f(check_id, Status.FAIL, title, f"{ctx.boot.path} lacks: {'; '.join(missing)}",
              (f"Add these lines under [all] in {ctx.boot.path} and reboot (docs/wiring.md): " + "; ".join(missing),
               f"把这些行加入 {ctx.boot.path} 的 [all] 段并重启（见 docs/wiring.md）：" + "; ".join(missing)))


_ON, _OFF = {"on", "1", "true", "yes"}, {"off", "0", "false", "no"}


def _norm(v: str) -> str:
    v = v.strip().lower()
    return "on" if v in _ON else "off" if v in _OFF else v


def _param_present(line: str, boot: BootConfig) -> bool:
    """``dtparam=a=b,c`` is present when every parameter has that value (a bare name means on)."""
    key, _, value = line.partition("=")
    if key != "dtparam":
        return False
    for p in value.split(","):
        name, _, v = p.partition("=")
        if _norm(boot.params.get(name.strip(), "off")) != _norm(v or "on"):
            return False
    return True


def _value_present(line: str, boot: BootConfig) -> bool:
    """``key=value`` (not dtparam/dtoverlay) is present when the last applying ``key=`` has that value."""
    key, sep, value = line.partition("=")
    return bool(sep) and key not in ("dtparam", "dtoverlay") and boot.values.get(key.strip()) == value.strip()


def _gpio_pins(spec: str) -> set[int]:
    pins: set[int] = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        if a.strip().isdigit():
            pins.update(range(int(a), int(b) + 1) if b.strip().isdigit() else [int(a)])
    return pins


def _gpio_line_present(wanted: str, lines: Iterable[str]) -> bool:
    """``gpio=4,5,6-9=op,dl`` is present when the applying ``gpio=`` lines cover the same pins with
    the same settings (in any grouping)."""
    spec, _, settings = wanted[len("gpio="):].partition("=")
    need = _gpio_pins(spec)
    got: set[int] = set()
    for ln in lines:
        if ln.startswith("gpio="):
            s, _, st = ln[len("gpio="):].partition("=")
            if set(st.split(",")) == set(settings.split(",")):
                got |= _gpio_pins(s)
    return need <= got


def _resolve_dev(ctx: Context, port: str) -> tuple[Path, str | None]:
    """``port`` under the root, and the name of its target when it is a symlink (serial0 -> ttyAMA0)."""
    p = _under(ctx.root, port)
    if p.is_symlink():
        return p, Path(os.readlink(p)).name
    return p, None


def check_serial_port(ctx: Context) -> Finding:
    """The configured port exists, and is the header UART: on a Pi 5 ``/dev/serial0`` is the debug
    connector (ttyAMA10) and the header is ``/dev/ttyAMA0``; on a Pi 3/4 ``serial0`` must lead to
    the PL011 ``ttyAMA0``, not the mini UART ``ttyS0``."""
    if ctx.model is None:
        return _f("serial-port", Status.SKIP, T_PORT, NOT_PI)
    if _backend(ctx) != "mcu":
        return _f("serial-port", Status.SKIP, T_PORT, f"the machine backend is {_backend(ctx)}")
    port = ctx.config.serial_port
    assert ctx.model is not None
    path, target = _resolve_dev(ctx, port)
    where = f"[machine] port = {port!r}" + (f" in {ctx.config_path}" if ctx.config_path else " (the default)")
    set_port = ("Set [machine] port = \"/dev/ttyAMA0\" in table.toml.", "在 table.toml 中设置 [machine] port = \"/dev/ttyAMA0\"。")
    if ctx.model.generation == 5 and (Path(port).name == "serial0" or target == "ttyAMA10"):
        return _f("serial-port", Status.FAIL, T_PORT, f"{where}: on a Pi 5 that is the debug connector "
                  f"({target or 'ttyAMA10'}), not GPIO 14/15", set_port)
    if not (path.exists() or path.is_symlink()):
        return _f("serial-port", Status.FAIL, T_PORT, f"{where}: {port} does not exist",
                  ("Enable the UART in config.txt (see the uart check) and reboot; a Pi 5 uses /dev/ttyAMA0.",
                   "在 config.txt 中启用串口（见 uart 项）并重启；树莓派 5 使用 /dev/ttyAMA0。"))
    if target == "ttyS0":
        return _f("serial-port", Status.WARN, T_PORT, f"{where}: {port} -> ttyS0, the mini UART (its baud rate "
                  "follows the core clock)", ("Add dtoverlay=disable-bt to config.txt and reboot: serial0 then "
                                              "leads to ttyAMA0.", "在 config.txt 中加入 dtoverlay=disable-bt 并重启。"))
    return _f("serial-port", Status.PASS, T_PORT, f"{where}" + (f" -> {target}" if target else ""))


def check_handshake(ctx: Context) -> Finding:
    """The board answers the link's handshake (HELLO, then one GetStatus; nothing moves)."""
    if _backend(ctx) != "mcu" or ctx.model is None:
        return _f("handshake", Status.SKIP, T_HANDSHAKE, NOT_PI if ctx.model is None else
                  f"the machine backend is {_backend(ctx)}")
    if ctx.link_state is not None:
        state = ctx.link_state()
        ok = state.startswith("connected")
        return _f("handshake", Status.PASS if ok else Status.FAIL, T_HANDSHAKE, f"the service's link: {state}",
                  ("" if ok else "Check the wiring (TX-RX crossed, common ground) and the board's power.",
                   "" if ok else "检查接线（TX/RX 交叉，共地）和主控板电源。"))
    if ctx.service_running:
        return _f("handshake", Status.SKIP, T_HANDSHAKE, "mjtable.service is running and holds the port: its "
                  "link state is on the page (Doctor)", ("Or stop it first: sudo systemctl stop mjtable",
                                                         "或先停止服务：sudo systemctl stop mjtable"))
    if ctx.probes.handshake is None or ctx.profile is None:
        return _f("handshake", Status.SKIP, T_HANDSHAKE, "not probed (the root is not this system)"
                  if ctx.probes.handshake is None else "no machine profile")
    try:
        said = ctx.probes.handshake(ctx.config.serial_port, ctx.profile)
    except ProbeFailed as e:
        return _f("handshake", Status.FAIL, T_HANDSHAKE, str(e),
                  ("Check the wiring (Pi TX to board RX, RX to TX, common ground), the board's power and the "
                   "port (serial-port check).", "检查接线（树莓派 TX 接主控 RX，RX 接 TX，共地）、主控板电源和串口设置。"))
    return _f("handshake", Status.PASS, T_HANDSHAKE, said)


PICAM_FIX = ("In the venv: pip install -c deploy/pi-constraints.txt -e '.[pi,fast]' (numpy<2, the ABI of apt's "
             "picamera2 and simplejpeg; picamera2#1088, #1211).",
             "在虚拟环境中执行 pip install -c deploy/pi-constraints.txt -e '.[pi,fast]'（numpy<2，与 apt 的 "
             "picamera2/simplejpeg 二进制兼容）。")


def check_picamera2(ctx: Context) -> Finding:
    """apt's picamera2 is there and imports against the venv's numpy. apt builds picamera2's
    simplejpeg against apt's numpy (1.24 on Bookworm); a numpy 2 in the venv shadows it and the
    import fails with "numpy.dtype size changed" (picamera2#1088, #1211)."""
    if ctx.config.camera_source != "picamera":
        return _f("picamera2", Status.SKIP, T_PICAM, f"the camera source is {ctx.config.camera_source or 'none'}")
    dist = ctx.root / "usr/lib/python3/dist-packages"
    if not (dist / "picamera2").is_dir():
        return _f("picamera2", Status.FAIL, T_PICAM, "no /usr/lib/python3/dist-packages/picamera2",
                  ("sudo apt install -y python3-picamera2, and make the venv with --system-site-packages.",
                   "执行 sudo apt install -y python3-picamera2，并用 --system-site-packages 创建虚拟环境。"))
    apt_np = apt_numpy_version(ctx.root)
    venv = ctx.probes.venv_numpy() if ctx.probes.venv_numpy else None
    seen = f"apt's numpy {apt_np or '?'}" + (f", the venv imports numpy {venv[0]} from {venv[1]}" if venv else "")
    mismatch = bool(apt_np and venv and apt_np.split(".")[0] == "1" and venv[0].split(".")[0] != "1")
    if ctx.probes.picamera2_import is not None:  # the import itself decides (a venv's own simplejpeg mends it)
        try:
            ctx.probes.picamera2_import()
        except ProbeFailed as e:
            fix = PICAM_FIX if mismatch or "numpy" in str(e) else (
                "sudo apt install --reinstall python3-picamera2", "执行 sudo apt install --reinstall python3-picamera2")
            return _f("picamera2", Status.FAIL, T_PICAM, f"{seen}; from picamera2 import Picamera2: {e}", fix)
        return _f("picamera2", Status.PASS, T_PICAM, seen + "; from picamera2 import Picamera2 works")
    if mismatch:
        return _f("picamera2", Status.FAIL, T_PICAM, seen + ": picamera2's simplejpeg was built for numpy 1", PICAM_FIX)
    return _f("picamera2", Status.PASS if venv else Status.SKIP, T_PICAM, seen + "; the import was not probed")


def check_camera(ctx: Context) -> Finding:
    """The configured camera opens and gives a frame."""
    src = ctx.config.camera_source
    if src is None:
        img = ctx.config.camera_image
        return _f("camera", Status.SKIP, T_CAMERA, f"the camera is a picture file ({img})" if img else
                  "no camera configured ([camera] source)")
    if ctx.link_state is not None or ctx.service_running:
        return _f("camera", Status.SKIP, T_CAMERA, "the service holds the camera: take a photo from the page")
    if ctx.probes.open_camera is None:
        return _f("camera", Status.SKIP, T_CAMERA, "not probed (the root is not this system)")
    try:
        said = ctx.probes.open_camera(src, ctx.config.camera_device)
    except ProbeFailed as e:
        return _f("camera", Status.FAIL, T_CAMERA, str(e),
                  ("Check the ribbon cable (contacts the right way round), then rpicam-hello --list-cameras."
                   if src == "picamera" else "Check the USB cable, then ls /dev/video*.",
                   "检查排线（触点方向），再运行 rpicam-hello --list-cameras。" if src == "picamera"
                   else "检查 USB 线，再运行 ls /dev/video*。"))
    return _f("camera", Status.PASS, T_CAMERA, said)


def _state_dir(ctx: Context) -> tuple[str, str]:
    """The service's state folder (a path of the inspected system) and where that came from."""
    if ctx.unit is not None and "MJTABLE_STATE_DIR" in ctx.unit.env:
        return ctx.unit.env["MJTABLE_STATE_DIR"], "the unit's MJTABLE_STATE_DIR"
    if ctx.live:
        from controller import settings as ST
        return str(ST.state_dir()), "this user's state folder"
    return "/var/lib/mjtable", "the documented place"


def check_state_dir(ctx: Context) -> Finding:
    """The state folder (settings, event log, token) is writable: a file is created and removed in
    it; a folder the unit's ``StateDirectory=`` makes is created by systemd at start."""
    path, whence = _state_dir(ctx)
    real = _under(ctx.root, path) if not ctx.live else Path(path)
    if not real.exists():
        if ctx.unit is not None and ctx.unit.state_directory and path == "/var/lib/" + ctx.unit.state_directory:
            return _f("state-dir", Status.PASS, T_STATE, f"{path} ({whence}) is created by systemd "
                      "(StateDirectory=) at the service's start")
        parent = next((p for p in real.parents if p.exists()), None)
        if parent is not None and os.access(parent, os.W_OK):
            return _f("state-dir", Status.PASS, T_STATE, f"{path} ({whence}) does not exist yet; it is created at "
                      "the first start")
        return _f("state-dir", Status.FAIL, T_STATE, f"{path} ({whence}) does not exist and cannot be created",
                  (f"sudo mkdir -p {path} && sudo chown <service user> {path}",
                   f"执行 sudo mkdir -p {path} 并 chown 给服务用户"))
    user = ctx.unit.user if ctx.unit is not None else None
    uid = _uid(ctx.root, user) if user else None
    if uid is not None and uid != os.geteuid():
        # the service runs as another user: judge by owner and mode (a write test would test us)
        st = real.stat()
        if ctx.unit is not None and ctx.unit.state_directory and path == "/var/lib/" + ctx.unit.state_directory:
            return _f("state-dir", Status.PASS, T_STATE, f"{path} ({whence}): systemd gives it to {user} at each "
                      "start (StateDirectory=)")
        if st.st_uid == uid and st.st_mode & 0o200:
            return _f("state-dir", Status.PASS, T_STATE, f"{path} ({whence}) is owned by {user}, who can write it")
        return _f("state-dir", Status.FAIL, T_STATE, f"{path} ({whence}) is not writable by {user} (owner uid "
                  f"{st.st_uid}, mode {st.st_mode & 0o777:04o})",
                  (f"sudo chown -R {user} {path}", f"执行 sudo chown -R {user} {path}"))
    try:
        import tempfile
        with tempfile.NamedTemporaryFile(dir=real, prefix=".doctor-"):
            pass
    except OSError as e:
        return _f("state-dir", Status.FAIL, T_STATE, f"{path} ({whence}): {e.strerror}",
                  (f"sudo chown -R <service user> {path}", f"执行 sudo chown -R <服务用户> {path}"))
    return _f("state-dir", Status.PASS, T_STATE, f"{path} ({whence}) is writable")


def _uid(root: Path, user: str) -> int | None:
    """``user``'s uid in ``/etc/passwd`` under ``root``, else None."""
    for line in (_read(root, "etc/passwd") or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 3 and parts[0] == user and parts[2].isdigit():
            return int(parts[2])
    return None


def check_token(ctx: Context) -> Finding:
    """The token file is readable by its owner only (mode 0600), as the service requires."""
    path = None
    if ctx.unit is not None:
        path = ctx.unit.option("--token-file")
    if path is None and ctx.config_path is not None:
        path = str(ctx.config.token_file)
    if path is None:
        path = str(Path(_state_dir(ctx)[0]) / "token")
    real = _under(ctx.root, path) if not ctx.live else Path(path)
    try:
        st = real.stat()
    except FileNotFoundError:
        return _f("token-file", Status.PASS, T_TOKEN, f"{path} does not exist yet: the first start creates it (0600)")
    except OSError as e:
        return _f("token-file", Status.WARN, T_TOKEN, f"{path}: {e.strerror}",
                  ("Run the doctor as the service user (sudo -u mjtable ...) or with sudo.",
                   "请以服务用户（sudo -u mjtable ...）或用 sudo 运行 doctor。"))
    mode = st.st_mode & 0o777
    if mode & 0o077:
        return _f("token-file", Status.FAIL, T_TOKEN, f"{path} has mode {mode:04o}: others can read the token",
                  (f"sudo chmod 600 {path}", f"执行 sudo chmod 600 {path}"))
    return _f("token-file", Status.PASS, T_TOKEN, f"{path} has mode {mode:04o}")


#: Memory the service needs: resident with the camera pipeline loaded (about 160 MB, vision/README)
#: plus headroom for a photo being decoded.
MEM_FAIL_MB, MEM_WARN_MB = 256, 512
#: Free disk for the event log, settings and pip: below these, the log's writes may fail.
DISK_FAIL_MB, DISK_WARN_MB = 200, 1024


def check_memory(ctx: Context) -> Finding:
    """``MemAvailable`` in ``/proc/meminfo``: FAIL under 256 MB, WARN under 512 MB."""
    info = {}
    for line in (_read(ctx.root, "proc/meminfo") or "").splitlines():
        k, _, v = line.partition(":")
        if v.strip().endswith("kB") and v.split()[0].isdigit():
            info[k] = int(v.split()[0]) // 1024
    if "MemAvailable" not in info:
        return _f("memory", Status.SKIP, T_MEM, "no MemAvailable in /proc/meminfo")
    avail, total = info["MemAvailable"], info.get("MemTotal", 0)
    seen = f"{avail} MB available of {total} MB"
    fix = ("Close other programs, or use a Pi with 2 GB or more.", "关闭其他程序，或换用 2 GB 以上内存的树莓派。")
    if avail < MEM_FAIL_MB:
        return _f("memory", Status.FAIL, T_MEM, seen + f" (the service needs {MEM_FAIL_MB} MB)", fix)
    if avail < MEM_WARN_MB:
        return _f("memory", Status.WARN, T_MEM, seen + f" (under {MEM_WARN_MB} MB)", fix)
    return _f("memory", Status.PASS, T_MEM, seen)


def check_disk(ctx: Context) -> Finding:
    """Free space where the state folder is: FAIL under 200 MB, WARN under 1 GB."""
    if ctx.probes.disk_free is None:
        return _f("disk", Status.SKIP, T_DISK, "not probed (the root is not this system)")
    path, _ = _state_dir(ctx)
    real = _under(ctx.root, path) if not ctx.live else Path(path)
    where = next((p for p in (real, *real.parents) if p.exists()), ctx.root)
    free = ctx.probes.disk_free(where) // (1024 * 1024)
    seen = f"{free} MB free at {where if ctx.live else '/' + str(where.relative_to(ctx.root)).lstrip('.')}"
    fix = ("Free space (sudo apt clean, old logs: sudo journalctl --vacuum-size=100M) or use a larger card.",
           "清理空间（sudo apt clean，旧日志 sudo journalctl --vacuum-size=100M）或换更大的存储卡。")
    if free < DISK_FAIL_MB:
        return _f("disk", Status.FAIL, T_DISK, seen, fix)
    if free < DISK_WARN_MB:
        return _f("disk", Status.WARN, T_DISK, seen, fix)
    return _f("disk", Status.PASS, T_DISK, seen)


def check_unit(ctx: Context) -> Finding:
    """``mjtable.service`` is installed and its ExecStart program exists."""
    if ctx.model is None and ctx.unit is None:
        return _f("unit", Status.SKIP, T_UNIT, NOT_PI)
    install = (f"{UNIT_CMD}, then sudo systemctl daemon-reload && sudo systemctl enable --now mjtable",
               f"执行 {UNIT_CMD}，然后 sudo systemctl daemon-reload && sudo systemctl enable --now mjtable")
    if ctx.unit is None:
        return _f("unit", Status.WARN, T_UNIT, f"no /{UNIT_PATH}", install)
    if not ctx.unit.exec_start:
        return _f("unit", Status.FAIL, T_UNIT, f"{ctx.unit.path} has no ExecStart=", install)
    prog = ctx.unit.exec_start[0]
    if not _under(ctx.root, prog).exists():
        return _f("unit", Status.FAIL, T_UNIT, f"{ctx.unit.path}: ExecStart program {prog} does not exist",
                  ("Install mjtable in /opt/mjtable/.venv (docs/raspberry-pi.md) or correct ExecStart.",
                   "把 mjtable 安装到 /opt/mjtable/.venv（见 docs/raspberry-pi.md）或改正 ExecStart。"))
    return _f("unit", Status.PASS, T_UNIT, f"{ctx.unit.path}: {' '.join(ctx.unit.exec_start[:2])}"
              + (" (running)" if ctx.service_running else ""))


def unit_stop_pins(unit: Unit) -> tuple[set[int], set[str]]:
    """The pins of the unit's ``ExecStopPost=… pinctrl set <pins> op dl`` lines, and the levels
    (``dl``/``dh``) they set."""
    pins: set[int] = set()
    levels: set[str] = set()
    for cmd in unit.exec_stop_post:
        argv = shlex.split(cmd)
        if argv and Path(argv[0]).name == "pinctrl" and "set" in argv:
            i = argv.index("set")
            if i + 1 < len(argv):
                pins |= _gpio_pins(argv[i + 1])
                levels |= {a for a in argv[i + 2:] if a in ("dl", "dh")}
    return pins, levels


def check_unit_pins(ctx: Context) -> Finding:
    """The unit's stop command drives every motor output of the profile to its off level
    (``hardware.pi_safety.motor_output_pins`` and ``off_level``), and no other pin."""
    if _backend(ctx) != "gpio":
        return _f("unit-pins", Status.SKIP, T_UNITPINS, f"the machine backend is {_backend(ctx)}: the Pi's pins "
                  "drive no motor")
    if ctx.unit is None or ctx.profile is None:
        return _f("unit-pins", Status.SKIP, T_UNITPINS, "no unit installed" if ctx.unit is None else "no profile")
    if ctx.pin_safety is None:
        return _f("unit-pins", Status.SKIP, T_UNITPINS, "hardware.pi_safety is not in this build")
    ps = ctx.pin_safety
    want, level = set(ps.motor_output_pins(ctx.profile)), ps.off_level(ctx.profile)
    have, levels = unit_stop_pins(ctx.unit)
    if not want:
        return _f("unit-pins", Status.SKIP, T_UNITPINS, "the profile drives no motor from the Pi's pins")
    if want == have and levels == {level}:
        return _f("unit-pins", Status.PASS, T_UNITPINS, f"ExecStopPost sets GPIO {ps.pin_ranges(want)} {level}")
    parts = []
    if want - have:
        parts.append(f"misses GPIO {ps.pin_ranges(want - have)}")
    if have - want:
        parts.append(f"also sets GPIO {ps.pin_ranges(have - want)}")
    if levels != {level}:
        parts.append(f"sets {'/'.join(sorted(levels)) or 'no level'} where the profile's off level is {level}")
    return _f("unit-pins", Status.FAIL, T_UNITPINS, f"{ctx.unit.path}: ExecStopPost {' and '.join(parts)} (profile "
              f"{ctx.profile.name!r})", (f"Write the unit again from the profile: {UNIT_CMD}, then sudo systemctl "
                                         "daemon-reload.", f"按配置重新生成服务单元：{UNIT_CMD}，然后 "
                                         "sudo systemctl daemon-reload。"))


CHECKS: tuple[Callable[[Context], Finding], ...] = (
    check_model, check_bits, check_os, check_kernel, check_lgpio, check_gpiochip, check_groups, check_config_txt,
    check_uart, check_hciuart, check_console, check_strict_gpiod, check_boot_pins, check_serial_port,
    check_handshake, check_picamera2, check_camera, check_state_dir, check_token, check_memory, check_disk,
    check_unit, check_unit_pins)


# -------------------------------------------------------------------------------------------- run
def _find_config(root: Path, config: str | Path | None, unit: Unit | None) -> Path | None:
    if config is not None:
        return Path(config)
    candidates = []
    if unit is not None and unit.option("--config"):
        candidates.append(_under(root, unit.option("--config")))
    candidates.append(root / "etc/mjtable/table.toml")
    return next((c for c in candidates if c.is_file()), None)


def _service_running(root: Path, live: bool) -> bool:
    """``mjtable serve`` runs on the inspected system: systemd's invocation link of the unit
    (``/run/systemd/units/invocation:mjtable.service``), or a process whose command line is
    ``… mjtable serve …`` in ``/proc`` (this process excepted)."""
    if (root / "run/systemd/units/invocation:mjtable.service").is_symlink() or \
            (root / "run/systemd/units/invocation:mjtable.service").exists():
        return True
    me = str(os.getpid()) if live else None
    for cmdline in (root / "proc").glob("[0-9]*/cmdline"):
        if cmdline.parent.name == me:
            continue
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        names = [Path(a.decode(errors="replace")).name for a in argv[:3]]
        if "serve" in (a.decode(errors="replace") for a in argv[1:4]) and "mjtable" in names:
            return True
    return False


def _pin_safety() -> Any:
    try:
        from hardware import pi_safety  # type: ignore[attr-defined]
    except ImportError:
        return None
    return pi_safety


def run(root: str | Path = "/", config: str | Path | None = None, probes: Probes | None = None, *,
        pin_safety: Any = "auto", link_state: Callable[[], str] | None = None,
        service_config: Any = None, profile: Any = None) -> Report:
    """Run every check on the system under ``root``.

    Args:
        root: the inspected system's ``/`` (a mounted SD card, a test's made-up tree).
        config: the table.toml; None: the unit's ``--config``, else ``/etc/mjtable/table.toml``
            under ``root``, else the defaults.
        probes: None: :meth:`Probes.live` when ``root`` is ``/``, else no probes.
        pin_safety: the module with ``motor_output_pins(profile)`` and ``config_txt_lines(profile)``
            ("auto": ``hardware.pi_safety`` when it exists; None: those checks SKIP).
        link_state: in the service, ``() -> "connected ..." | reason``: its own link, used instead
            of a second handshake on the port it holds (and the camera is not opened again).
        service_config: in the service, its ServiceConfig (instead of reading ``config``).
        profile: in the service, the machine profile it runs (instead of the config's).
    Returns: the Report (findings in the order of ``CHECKS``).
    Raises:
        DoctorError: ``root`` is not a folder; the config cannot be read.
    """
    from service import config as C
    from service.errors import ConfigError

    root_p = Path(root)
    if not root_p.is_dir():
        raise DoctorError(f"--root {root}: no such folder (give the / of the system to check, e.g. a mounted SD card)")
    live = root_p.resolve() == Path("/")
    probes = probes if probes is not None else (Probes.live() if live else Probes())
    unit = read_unit(root_p)
    model = pi_model(_read(root_p, "proc/device-tree/model"))
    if service_config is not None:
        cfg, cfg_path = service_config, "the running service's"
    else:
        path = _find_config(root_p, config, unit)
        try:
            cfg = C.load(path)
        except ConfigError as e:
            raise DoctorError(e.message) from None
        cfg_path = str(path) if path is not None else None
        if path is None and model is not None:
            cfg.camera_source = "picamera"  # what deploy/table.toml sets: a table with no config gets checked for it
    profile_error = None
    if profile is None:
        try:
            import hardware
            profile = hardware.load_profile(cfg.profile or "default")
        except Exception as e:  # noqa: BLE001 - hardware.ProfileError and friends: reported as a finding
            profile_error = str(e)
    running = _service_running(root_p, live)
    ctx = Context(root_p, live, probes, model, boot_config(root_p, model), unit, cfg, cfg_path, profile,
                  profile_error, _pin_safety() if pin_safety == "auto" else pin_safety, running, link_state)
    findings = [check(ctx) for check in CHECKS]
    prof = (_f("profile", Status.PASS, T_PROFILE, f"profile {profile.name!r}, backend {cfg.backend}, "
               f"configuration: {cfg_path or 'the defaults (no table.toml)'}") if profile is not None else
            _f("profile", Status.FAIL, T_PROFILE, profile_error or "?",
               ("Correct [machine] profile in table.toml.", "请改正 table.toml 中的 [machine] profile。")))
    findings.insert(0, prof)
    return Report(str(root_p), tuple(findings))



def for_service(control: Any, scorer: Any) -> Report:
    """The report of the Pi a running service is on (``GET /api/doctor``): the root is ``/``, the
    configuration is what the service runs with (backend, serial port, camera, profile), the
    handshake is the state of the service's own link and the camera, which the service holds, is
    not opened again.

    Args:
        control: the service's ``service.control.Control``.
        scorer: its ``service.scorer.Scorer`` (camera source, device, image).
    """
    from service.config import ServiceConfig

    backend = control.backend
    health = getattr(backend, "health", lambda: None)()  # the MCU backend's link counters and port
    cfg = ServiceConfig(backend=backend.kind, serial_port=(health.port if health else "") or ServiceConfig.serial_port,
                        camera_source=scorer.camera_source, camera_device=scorer.camera_device,
                        camera_image=scorer.camera_image)
    state = None
    if backend.kind == "mcu":
        def state() -> str:
            return "connected, healthy" if control.link_ok() else "link down (no answer from the board)"
    return run("/", probes=Probes.live(), link_state=state, service_config=cfg, profile=backend.profile)


def format_report(report: Report) -> str:
    """The report as text: one line per check (status, id, what was seen), then its fix in English
    and Chinese, then a summary line."""
    lines = [f"mjtable doctor: {report.root}"]
    for f in report.findings:
        lines.append(f"{f.status.value:<4}  {f.id:<15} {f.title_en}: {f.seen}")
        if f.fix_en and f.status is not Status.PASS:
            lines.append(f"{'':21} fix: {f.fix_en}")
            lines.append(f"{'':21} 修复: {f.fix_zh}")
    c = report.counts()
    lines.append(f"{c['PASS']} pass, {c['WARN']} warn, {c['FAIL']} fail, {c['SKIP']} skipped"
                 + ("" if report.ok else ": fix the FAIL lines before running the table"))
    return "\n".join(lines)


def to_json(report: Report) -> str:
    return json.dumps(report.to_dict(), ensure_ascii=False, indent=2)
