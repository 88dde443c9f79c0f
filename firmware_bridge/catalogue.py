"""The message catalogue as plain constants: type codes, payload layouts, enum values.

Shared by the device engine (MicroPython-portable: ints and ``struct`` formats only) and
the host's codec, :mod:`firmware_bridge.codec`, which packs and unpacks the table's vocabulary
(:mod:`table_vocabulary`) with these layouts and derives its code maps from these constants by
name. All multi-byte fields are little-endian. ``docs/protocol.md`` documents every entry.
"""

# ---------------------------------------------------------------- sides E/S/W/N
SIDE_E = 0
SIDE_S = 1
SIDE_W = 2
SIDE_N = 3
SIDE_NONE = 0xFF
SIDES = (SIDE_E, SIDE_S, SIDE_W, SIDE_N)

# ------------------------------------------------------------ motors and sensors
MOTOR_SHUFFLE = 0   # side NONE
MOTOR_FEEDER = 1    # per side
MOTOR_LIFT = 2      # per side; direction 1 = up, 0 = down
MOTOR_DICE = 3      # side NONE
MOTOR_CENTRE = 4    # side NONE: the centre lift (played tiles drop through); 1 = up, 0 = down
MOTOR_BUZZER = 5    # side NONE: an output, timed like a motion so that it never stays on
MOTORS = (MOTOR_SHUFFLE, MOTOR_FEEDER, MOTOR_LIFT, MOTOR_DICE, MOTOR_CENTRE, MOTOR_BUZZER)

SENSOR_LIFT_TOP = 0      # per side, 1 = lift at the top limit
SENSOR_LIFT_BOTTOM = 1   # per side, 1 = lift at the bottom limit
SENSOR_STACK = 2         # per side, a 0->1 edge = one stack of two tiles completed
SENSOR_TILE_PRESENT = 3  # per side, 1 = a tile is in the feeder throat
SENSOR_LID = 4           # side NONE, 1 = lid closed
SENSOR_ESTOP = 5         # side NONE, 1 = emergency stop pressed
SENSOR_FEEDER_MOTION = 6  # per side, pulses while the feeder's conveyor wheel turns
SENSOR_DISC_PULSE = 7     # side NONE, pulses while the shuffle disc turns
SENSOR_DICE_PULSE = 8     # side NONE, pulses while the dice cup spins
SENSOR_PUSH_HOME = 9      # per side, 1 = the push (stacking) head is at its home position
SENSOR_CENTRE_TOP = 10    # side NONE, 1 = centre lift at its top limit (hole closed)
SENSOR_CENTRE_BOTTOM = 11  # side NONE, 1 = centre lift at its bottom limit (tiles drop)
SENSOR_JAM = 12           # side NONE, 1 = a tile jammed at the disc outlet / track
SENSOR_LIFT_BUTTON_A = 13  # side NONE, 1 = pressed (the lift button at the dealer's corner)
SENSOR_LIFT_BUTTON_B = 14  # side NONE, 1 = pressed (the lift button at the opposite corner)
SENSOR_DICE_BUTTON = 15   # side NONE, 1 = pressed
SENSORS = (SENSOR_LIFT_TOP, SENSOR_LIFT_BOTTOM, SENSOR_STACK, SENSOR_TILE_PRESENT,
           SENSOR_LID, SENSOR_ESTOP, SENSOR_FEEDER_MOTION, SENSOR_DISC_PULSE,
           SENSOR_DICE_PULSE, SENSOR_PUSH_HOME, SENSOR_CENTRE_TOP, SENSOR_CENTRE_BOTTOM,
           SENSOR_JAM, SENSOR_LIFT_BUTTON_A, SENSOR_LIFT_BUTTON_B, SENSOR_DICE_BUTTON)
PER_SIDE_SENSORS = (SENSOR_LIFT_TOP, SENSOR_LIFT_BOTTOM, SENSOR_STACK, SENSOR_TILE_PRESENT,
                    SENSOR_FEEDER_MOTION, SENSOR_PUSH_HOME)
SIDELESS_SENSORS = (SENSOR_LID, SENSOR_ESTOP, SENSOR_DISC_PULSE, SENSOR_DICE_PULSE,
                    SENSOR_CENTRE_TOP, SENSOR_CENTRE_BOTTOM, SENSOR_JAM,
                    SENSOR_LIFT_BUTTON_A, SENSOR_LIFT_BUTTON_B, SENSOR_DICE_BUTTON)

# lights (SET_INDICATORS lights mask)
LIGHT_READY = 0x01        # green: walls up, the hand can start
LIGHT_FAULT = 0x02        # red: a fault is latched
LIGHT_DEALER_E = 0x04     # the dealer's seat light; E, S, W, N = 0x04, 0x08, 0x10, 0x20
LIGHTS_ALL = 0x3F

GEARS = (136, 144, 152, 108)  # tile-count gears

# ---------------------------------------------------------------- device state
STATE_IDLE = 0
STATE_BUSY = 1
STATE_SAFE_STOP = 2

STOP_NONE = 0
STOP_HOST_TIMEOUT = 1
STOP_ESTOP = 2
STOP_POWER_ON = 3

# -------------------------------------------------------------- result codes
REPLY_OK = 0
REPLY_SAFE_STOP = 1       # refused: safe-stop latched (clear it first)
REPLY_BUSY = 2            # refused: that motor/side already has a motion
REPLY_BAD_ARGUMENT = 3    # refused: a field out of range
REPLY_UNKNOWN = 4         # refused: unknown command type or wrong payload length

OUTCOME_COMPLETED = 0     # the goal was reached
OUTCOME_STOPPED = 1       # stopped by a stop command
OUTCOME_DEADLINE = 2      # deadline passed before the goal: motor stopped, FAULT sent
OUTCOME_SAFE_STOP = 3     # cut by a safe stop (host timeout, emergency stop)

FAULT_HOST_TIMEOUT = 1    # detail = ms of silence observed
FAULT_DEADLINE = 2        # detail = progress (stacks counted / sensor changes)
FAULT_ESTOP = 3           # detail = 0
FAULT_EVENTS_DROPPED = 4  # detail = number of sensor events dropped (queue full)

# ------------------------------------------------------------- message types
# control (unreliable)
T_HELLO = 0x01            # host -> device
T_HELLO_ACK = 0x02        # device -> host
T_ACK = 0x03              # either, empty
T_NO_SESSION = 0x04       # device -> host
T_HOST_HEARTBEAT = 0x05   # host -> device
T_DEV_HEARTBEAT = 0x06    # device -> host
# commands (reliable, host -> device); every payload starts with cmd_id u16
T_SHUFFLE_START = 0x10
T_SHUFFLE_STOP = 0x11
T_FEED_STACK = 0x12
T_LIFT = 0x13
T_ROLL_DICE = 0x14
T_STOP_ALL = 0x15
T_SET_GEAR = 0x16
T_GET_STATUS = 0x17
T_SELF_TEST = 0x18
T_CLEAR_SAFE_STOP = 0x19
T_SET_INDICATORS = 0x1A
# replies and events (reliable, device -> host)
T_REPLY = 0x20
T_STATUS = 0x21
T_SENSOR = 0x30
T_STACKS = 0x31
T_MOTION_DONE = 0x32
T_FAULT = 0x33

#: The message catalogue, written once: (TYPE, NAME, direction, struct format, field names).
#: Direction "H>D" host to device, "D>H" device to host, "both". The control messages travel
#: unreliable, the rest reliable; every command payload starts with cmd_id u16. FORMATS,
#: FIELDS, NAMES, COMMAND_TYPES and EVENT_TYPES below are derived from it; docs/protocol.md
#: section 4 is checked against it (tests/firmware_bridge/test_fb_docs.py).
MESSAGES = (
    # control (unreliable)
    (T_HELLO, "HELLO", "H>D", "<BI", ("protocol_version", "nonce")),
    (T_HELLO_ACK, "HELLO_ACK", "D>H", "<BIBBBHHIHB",
     ("protocol_version", "nonce", "fw_major", "fw_minor", "fw_patch", "profile_id", "gear_tiles",
      "boot_counter", "heartbeat_window_ms", "stop_reason")),
    (T_ACK, "ACK", "both", "", ()),
    (T_NO_SESSION, "NO_SESSION", "D>H", "<I", ("boot_counter",)),
    # host time ms (low 32 bits, diagnostic), keepalive period asked of the device (version 3;
    # 0 = 100)
    (T_HOST_HEARTBEAT, "HOST_HEARTBEAT", "H>D", "<IH", ("host_time_ms", "keepalive_period_ms")),
    (T_DEV_HEARTBEAT, "DEV_HEARTBEAT", "D>H", "<IIBBBHI",
     ("uptime_ms", "boot_counter", "state", "stop_reason", "active_motions", "receive_errors",
      "session_nonce")),
    # commands (reliable, host -> device)
    (T_SHUFFLE_START, "SHUFFLE_START", "H>D", "<HI", ("cmd_id", "deadline_ms")),
    (T_SHUFFLE_STOP, "SHUFFLE_STOP", "H>D", "<H", ("cmd_id",)),
    (T_FEED_STACK, "FEED_STACK", "H>D", "<HBBI", ("cmd_id", "side", "stacks", "deadline_ms")),
    # side 0xFF = the centre lift; direction 1 up, 0 down
    (T_LIFT, "LIFT", "H>D", "<HBBI", ("cmd_id", "side", "direction", "deadline_ms")),
    (T_ROLL_DICE, "ROLL_DICE", "H>D", "<HHI", ("cmd_id", "spin_ms", "deadline_ms")),
    (T_STOP_ALL, "STOP_ALL", "H>D", "<H", ("cmd_id",)),
    (T_SET_GEAR, "SET_GEAR", "H>D", "<HH", ("cmd_id", "tiles")),
    (T_GET_STATUS, "GET_STATUS", "H>D", "<H", ("cmd_id",)),
    (T_SELF_TEST, "SELF_TEST", "H>D", "<HBBBHI",
     ("cmd_id", "step", "motor", "side", "jog_ms", "deadline_ms")),
    (T_CLEAR_SAFE_STOP, "CLEAR_SAFE_STOP", "H>D", "<H", ("cmd_id",)),
    # lights mask (LIGHT_*), buzzer ms (0 = silent)
    (T_SET_INDICATORS, "SET_INDICATORS", "H>D", "<HBH", ("cmd_id", "lights_mask", "buzzer_ms")),
    # replies and events (reliable, device -> host)
    (T_REPLY, "REPLY", "D>H", "<HBB", ("cmd_id", "result", "detail")),
    (T_STATUS, "STATUS", "D>H", "<HBBHHQIB",
     ("cmd_id", "state", "stop_reason", "gear_tiles", "motors_mask", "sensors_mask", "uptime_ms",
      "active_motions")),
    (T_SENSOR, "SENSOR", "D>H", "<BBBI", ("sensor", "side", "value", "t_ms")),
    (T_STACKS, "STACKS", "D>H", "<HBBI", ("cmd_id", "side", "count", "t_ms")),
    (T_MOTION_DONE, "MOTION_DONE", "D>H", "<HBBBII",
     ("cmd_id", "command_type", "side", "outcome", "elapsed_ms", "detail")),
    (T_FAULT, "FAULT", "D>H", "<BBHII", ("code", "side", "cmd_id", "detail", "t_ms")),
)

FORMATS = {m[0]: m[3] for m in MESSAGES}
FIELDS = {m[0]: m[4] for m in MESSAGES}
NAMES = {m[0]: m[1] for m in MESSAGES}
_CONTROL = (T_HELLO, T_HELLO_ACK, T_ACK, T_NO_SESSION, T_HOST_HEARTBEAT, T_DEV_HEARTBEAT)
COMMAND_TYPES = tuple(m[0] for m in MESSAGES if m[2] == "H>D" and m[0] not in _CONTROL)
EVENT_TYPES = tuple(m[0] for m in MESSAGES if m[2] == "D>H" and m[0] not in _CONTROL)


def motor_bit(motor, side):
    """Bit index of a motor in the STATUS motors mask: shuffle 0, feeders 1-4 (E S W N),
    lifts 5-8, dice 9, centre lift 10, buzzer 11."""
    if motor == MOTOR_SHUFFLE:
        return 0
    if motor == MOTOR_CENTRE:
        return 10
    if motor == MOTOR_BUZZER:
        return 11
    if motor == MOTOR_FEEDER:
        return 1 + side
    if motor == MOTOR_LIFT:
        return 5 + side
    return 9


_SIDELESS_BITS = {SENSOR_LID: 16, SENSOR_ESTOP: 17, SENSOR_DISC_PULSE: 18,
                  SENSOR_DICE_PULSE: 19, SENSOR_CENTRE_TOP: 20, SENSOR_CENTRE_BOTTOM: 21,
                  SENSOR_JAM: 22, SENSOR_LIFT_BUTTON_A: 23, SENSOR_LIFT_BUTTON_B: 28,
                  SENSOR_DICE_BUTTON: 29}


def sensor_bit(sensor, side):
    """Bit index of a sensor in the STATUS sensors mask (u64): per-side sensors at
    4 * sensor + side (0..15; feeder motion 24..27, push-head home 36..39); lid 16,
    emergency stop 17, disc pulse 18, dice pulse 19, centre top 20, centre bottom 21,
    jam 22, lift button A 23, lift button B 28, dice button 29."""
    bit = _SIDELESS_BITS.get(sensor)
    return 4 * sensor + side if bit is None else bit
