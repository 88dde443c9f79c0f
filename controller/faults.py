"""The fault catalogue: every fault the controller can diagnose, with a stable code.

Each entry says what the fault means, its likely causes in order, and the technician's next
checks, in English and Chinese. What was *observed* (which sensor or motor, which side, expected
vs seen, timings) is filled in by the diagnosis when the fault happens (``Diagnosis``).

Sources: the technician's answers at the top of ../shared/seeds/002_4c2a73aa42bc09ab.txt
(升牌杆不到位 on one side of a 过山车 machine; 档位 gear table behind the panel, set with the power
off; conveyor motor not turning: wire to the mainboard broken or loose, wheel jammed, turn it by
hand; lift failures: check the lift magnetic sensor (升牌磁控) and its magnet and their polarity,
replace the lift motor and its capacitor) and common repair practice for four-port tables.

Codes are grouped: E1x lift limit sensors, E2x lift motion, E3x feeders and tile sensors,
E4x tile counts, E5x shuffle disc and dice, E6x microcontroller and serial link, E7x safety.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from .names import side_zh


@dataclasses.dataclass(frozen=True, slots=True)
class FaultType:
    """One entry of the catalogue.

    Attributes:
        code: stable code, e.g. ``"E21"``.
        name: short identifier, e.g. ``"lift-not-reaching-top"``.
        kinds: the simulator's injectable fault kinds this code diagnoses (may be empty).
        per_side: whether the fault belongs to one side of the table.
        part_en, part_zh: the part concerned.
        meaning_en, meaning_zh: one line.
        causes_en, causes_zh: likely causes, most likely first.
        checks_en, checks_zh: the technician's next checks, in order.
    """

    code: str
    name: str
    kinds: tuple[str, ...]
    per_side: bool
    part_en: str
    part_zh: str
    meaning_en: str
    meaning_zh: str
    causes_en: tuple[str, ...]
    causes_zh: tuple[str, ...]
    checks_en: tuple[str, ...]
    checks_zh: tuple[str, ...]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


_MAGNET_CHECK_EN = "Check the lift's magnetic sensor (reed/Hall, 升牌磁控) and the small magnet disc on the lift: " \
                   "is the magnet there, close enough, and facing the sensor with the right pole?"
_MAGNET_CHECK_ZH = "查看升牌磁控和磁铁（小圆片），磁铁是否在位、距离是否合适、正负极是否正确。"
_WIRE_CHECK_EN = "Check the sensor's connector and wire to the mainboard (continuity, pins seated)."
_WIRE_CHECK_ZH = "检查传感器插头及到主板的连接线（是否导通、插针是否插紧）。"
_MOTOR_CAP_EN = "Replace the lift motor's capacitor; if travel stays slow, replace the lift motor."
_MOTOR_CAP_ZH = "更换升牌电机电容；仍慢则更换升牌电机。"

CATALOGUE: tuple[FaultType, ...] = (
    FaultType(
        "E11", "lift-top-sensor-stuck-active", ("lift-top-stuck-on",), True,
        "lift top limit sensor", "升牌上限位传感器",
        "The lift's top limit reads active while the lift is down.",
        "升牌在下位时，上限位传感器仍显示到位。",
        ("sensor shorted or stuck (reed contacts welded)", "stray magnet or metal near the sensor",
         "sensor wire shorted to ground/supply"),
        ("传感器短路或卡死（干簧管触点粘连）", "传感器附近有杂散磁铁或金属", "传感器线与地/电源短路"),
        (_MAGNET_CHECK_EN, "Unplug the top sensor: if the input stays active, the wire or mainboard input is shorted.",
         _WIRE_CHECK_EN),
        (_MAGNET_CHECK_ZH, "拔下上限位传感器：若输入仍显示到位，则为线路或主板输入短路。", _WIRE_CHECK_ZH)),
    FaultType(
        "E12", "lift-top-sensor-no-signal", ("lift-top-stuck-off",), True,
        "lift top limit sensor", "升牌上限位传感器",
        "The lift travelled its full way up but the top limit never triggered.",
        "升牌已升到顶，但上限位传感器始终没有信号。",
        ("magnet missing, loose or too far from the sensor", "sensor failed open", "sensor wire broken or unplugged"),
        ("磁铁脱落、松动或离传感器太远", "传感器开路损坏", "传感器线断或插头松脱"),
        (_MAGNET_CHECK_EN, _WIRE_CHECK_EN, "Hold a magnet at the sensor by hand and watch the input in the self-test."),
        (_MAGNET_CHECK_ZH, _WIRE_CHECK_ZH, "在自检中用手持磁铁靠近传感器，观察输入是否变化。")),
    FaultType(
        "E13", "lift-bottom-sensor-stuck-active", ("lift-bottom-stuck-on",), True,
        "lift bottom limit sensor", "升牌下限位传感器",
        "The lift's bottom limit stays active after the lift has left the bottom.",
        "升牌离开下位后，下限位传感器仍显示到位。",
        ("sensor shorted or stuck", "stray magnet near the sensor", "sensor wire shorted"),
        ("传感器短路或卡死", "传感器附近有杂散磁铁", "传感器线短路"),
        (_MAGNET_CHECK_EN, "Unplug the bottom sensor: if the input stays active, the wire or mainboard input is shorted.",
         _WIRE_CHECK_EN),
        (_MAGNET_CHECK_ZH, "拔下下限位传感器：若输入仍显示到位，则为线路或主板输入短路。", _WIRE_CHECK_ZH)),
    FaultType(
        "E14", "lift-bottom-sensor-no-signal", ("lift-bottom-stuck-off",), True,
        "lift bottom limit sensor", "升牌下限位传感器",
        "The lift is down (it travelled its full way) but the bottom limit does not read active.",
        "升牌已降到底，但下限位传感器没有信号。",
        ("magnet missing, loose or too far", "sensor failed open", "sensor wire broken or unplugged"),
        ("磁铁脱落、松动或太远", "传感器开路损坏", "传感器线断或插头松脱"),
        (_MAGNET_CHECK_EN, _WIRE_CHECK_EN),
        (_MAGNET_CHECK_ZH, _WIRE_CHECK_ZH)),
    FaultType(
        "E15", "lift-sensor-polarity-reversed", ("lift-sensor-reversed",), True,
        "lift limit sensors (polarity)", "升牌限位传感器（极性）",
        "Both limits of the lift read inverted: active where the magnet is away, inactive where it is.",
        "升牌上下限位信号反相：磁铁不在时显示到位，在时反而无信号。",
        ("magnet mounted with the wrong pole facing the sensor (after a repair)",
         "sensor of the wrong type (normally-closed instead of normally-open)",
         "the profile's active level wrong for this machine"),
        ("磁铁装反（维修后正负极朝向错误）", "传感器型号不对（常闭代替常开）", "配置中有效电平设置与机器不符"),
        ("Check the magnet's polarity: turn the magnet disc over (查看正负极是否正确).",
         "Compare the sensor part number with the original.",
         "Check the active level of the lift sensors in the machine profile."),
        ("检查磁铁正负极：把小圆片磁铁翻面装回。", "核对传感器型号是否与原装一致。", "检查机器配置文件中升牌传感器的有效电平。")),
    FaultType(
        "E21", "lift-not-reaching-top", ("lift-short",), True,
        "lift (shaft / bar)", "升牌杆",
        "The lift did not reach the top (升牌杆不到位): the wall on this side stays low.",
        "升牌杆不到位：该边牌墙升不到位，四边高低不平。",
        ("lift shaft or bar out of position (变位) or bent", "something blocking the lift's travel",
         "lift motor too weak (capacitor failing)"),
        ("升牌轴/杆变位或弯曲", "升降行程中有异物卡住", "升牌电机无力（电容老化）"),
        ("Lower the lift, open the side and check the lift shaft and bar: straight, seated, nothing in the way.",
         "Run the lift in the self-test and watch where it stops.", _MOTOR_CAP_EN),
        ("降下升牌，打开侧板检查升牌轴和升牌杆：是否变位、弯曲，行程中有无异物。", "在自检中单独升降该边，观察停在哪里。", _MOTOR_CAP_ZH)),
    FaultType(
        "E22", "lift-late", ("lift-late",), True,
        "lift motor", "升牌电机",
        "The lift reached the top, but much later than nominal: the walls rise unevenly.",
        "升牌能到位，但明显比正常慢，四边牌墙升起不同步。",
        ("lift motor capacitor failing", "lift mechanism dry or dirty (friction)", "motor wearing out"),
        ("升牌电机电容老化", "升降机构缺油或脏（阻力大）", "电机老化"),
        (_MOTOR_CAP_EN, "Clean and lubricate the lift guides."),
        (_MOTOR_CAP_ZH, "清洁并润滑升降导轨。")),
    FaultType(
        "E23", "lift-slowing", ("lift-slow",), True,
        "lift motor capacitor", "升牌电机电容",
        "The lift's travel time has been growing cycle after cycle: its motor is weakening.",
        "该边升牌时间逐次变长：升牌电机越来越无力。",
        ("lift motor capacitor losing capacity", "lift mechanism friction increasing"),
        ("升牌电机电容容量下降", "升降机构阻力增大"),
        (_MOTOR_CAP_EN, "Clean and lubricate the lift guides."),
        (_MOTOR_CAP_ZH, "清洁并润滑升降导轨。")),
    FaultType(
        "E24", "centre-lift-not-moving", ("centre-lift-stuck",), False,
        "centre lift (中间升降台)", "中间升降台",
        "The centre lift did not reach its limit: the played tiles pushed into the centre did not drop "
        "into the machine, or the hole stays open.",
        "中间升降台不到位：推入中间的牌没有落入机器，或中间口没有关上。",
        ("tiles wedged between the centre plate and its frame", "centre lift motor or its capacitor failed",
         "centre lift limit sensor or its magnet out of place", "motor wire loose"),
        ("牌卡在中间升降台与框架之间", "中间升降电机或其电容损坏", "中间升降台限位传感器或磁铁移位", "电机连接线松脱"),
        ("Switch off, lift the centre plate's cover and clear any tile wedged at its edge.",
         "Run the centre lift in the self-test and watch whether it moves.",
         "Check the centre lift motor's connector and capacitor, then its limit sensors and magnet."),
        ("关机后打开中间盖板，取出卡在边缘的牌。", "在自检中单独升降中间升降台，观察是否动作。",
         "检查中间升降电机插头和电容，再检查其限位传感器和磁铁。")),
    FaultType(
        "E31", "feeder-no-motion", ("feeder-wire-loose",), True,
        "feeder (conveyor) motor", "输送带电机",
        "The feeder was switched on but did not move: no motion pulses, no tiles.",
        "输送带电机通电后不转：无转动信号，也没有牌送出。",
        ("wire from the conveyor motor to the mainboard broken or loose", "motor burnt out",
         "mainboard driver for this motor failed"),
        ("输送带电机与主板的连接线断了或松了", "电机烧坏", "主板该路驱动损坏"),
        ("Check the motor's wire and connector at the mainboard (连接线是否断了或松了).",
         "Measure the motor's winding resistance; replace the motor if open.",
         "Swap the connector with another side's feeder to tell motor from board."),
        ("检查输送带电机到主板的连接线和插头是否断开或松动。", "测量电机绕组电阻，开路则更换电机。", "与另一边输送带电机对调插头，判断是电机还是主板问题。")),
    FaultType(
        "E32", "feeder-jammed", ("feeder-jammed",), True,
        "feeder (conveyor) wheel", "输送轮",
        "The feeder motor runs but no tiles come through: the wheel is jammed.",
        "输送带电机在转，但没有牌送出：输送轮被卡住。",
        ("conveyor wheel blocked by a tile or debris", "belt off its wheel", "tile stuck at the push head"),
        ("输送轮被牌或杂物卡住", "输送带脱轮", "推牌头处卡牌"),
        ("Switch off and turn the conveyor wheel by hand (用手转动输送轮，看看是不是卡住了); remove what blocks it.",
         "Check the belt is on its wheels.", "Check the push head for a stuck tile."),
        ("关机后用手转动输送轮，看看是不是卡住了，取出异物。", "检查输送带是否脱轮。", "检查推牌头处是否卡牌。")),
    FaultType(
        "E33", "tile-sensor-dirty", ("tile-sensor-dirty",), True,
        "tile-present sensor at the push head", "推牌头处的有牌检测传感器",
        "The tile-present sensor reads tiles that are not there (stuck or chattering).",
        "推牌头处有牌传感器误报（常亮或乱跳）。",
        ("dust or dirt on the optical sensor", "sensor misaligned", "sensor failing"),
        ("光电传感器上有灰尘", "传感器位置偏移", "传感器损坏"),
        ("Clean the sensor window with a dry cloth.", "Check its alignment with the tile path.",
         "Watch the input in the self-test with no tile present."),
        ("用干布擦净传感器窗口。", "检查传感器与牌道是否对正。", "在自检中观察无牌时的输入状态。")),
    FaultType(
        "E34", "push-head-jammed", ("push-head-jammed",), True,
        "push (stacking) head", "推牌头",
        "The push head left home and stuck on its stroke, stalling the drive it shares with the conveyor.",
        "推牌头离开原位后卡住，连带输送电机停转。",
        ("a tile caught under or in front of the push head", "push-head cam or linkage broken or bent",
         "debris on the push-head guide",
         "the feeder motor stopped with the head out (its wire to the mainboard: see E31's checks)"),
        ("推牌头下方或前方卡牌", "推牌凸轮或连杆损坏、变形", "推牌导轨上有异物", "推牌头在外时输送电机停转（连接线问题，检查方法同 E31）"),
        ("Switch off and free the push head by hand; remove the tile or debris in its way.",
         "Check the cam and linkage for play or breakage.",
         "Run that side's feeder in the self-test: the push head must go out and come home."),
        ("关机后用手推动推牌头使其复位，取出卡住的牌或异物。", "检查推牌凸轮和连杆是否松旷或断裂。", "在自检中单独运行该边输送带：推牌头应能推出并回到原位。")),
    FaultType(
        "E35", "push-home-sensor-no-signal", ("push-home-stuck-off",), True,
        "push-head home sensor", "推牌头原位传感器",
        "Every stack was built, but the push head was never seen at home: its home sensor gives no signal.",
        "墩数已码满，但始终检测不到推牌头回到原位：原位传感器没有信号。",
        ("home micro-switch dirty, bent or broken", "sensor connector unplugged", "push head not returning fully"),
        ("原位微动开关脏污、弯曲或损坏", "传感器插头脱落", "推牌头回不到位"),
        ("Watch the push head after a feed: if it is home, check its home switch (press it by hand in the "
         "self-test) and the switch's connector.", _WIRE_CHECK_EN,
         "If it stops short of home, check the cam and its return spring."),
        ("码牌后观察推牌头：若已回原位，在自检中用手按原位开关检查，并检查其插头。", _WIRE_CHECK_ZH,
         "若推牌头停在半路，检查凸轮和回位弹簧。")),
    FaultType(
        "E41", "wrong-tile-count-gear", ("wrong-gear",), False,
        "tile-count gear (档位)", "档位",
        "Every side built the same wrong number of stacks: the gear does not match the tiles in the machine.",
        "四边码出的墩数都一样地不对：档位与机器内的牌数不符。",
        ("the gear switch set for another tile count", "the wrong tile set loaded (e.g. 144 tiles on the 136 gear)"),
        ("档位设置成了其他牌数", "放入的牌副数不对（如136档放了144张）"),
        ("Switch the power off, open the panel and set the gear from the gear table behind it "
         "(打开面板，面板的反面有一张档位表；一定先关掉电再调档位).", "Count the tiles of the set."),
        ("先关掉电源，打开面板，按面板背面的档位表调到对应档位（一定先关电再调）。", "清点整副牌的张数。")),
    FaultType(
        "E42", "missing-tile", ("missing-tile",), False,
        "tile set", "牌",
        "One side is one tile short (a half stack): a tile is missing from the set.",
        "有一边少一张牌（半墩）：整副牌中缺牌。",
        ("a tile fell inside the machine or is under the table", "a tile is stuck in the disc or conveyor"),
        ("有牌掉在机器里或桌下", "有牌卡在转盘或输送带中"),
        ("Look for the tile in the disc, the conveyor of the short side and under the table.",
         "Count the tiles of the set."),
        ("在转盘、缺牌一边的输送带和桌下寻找。", "清点整副牌的张数。")),
    FaultType(
        "E43", "stack-count-mismatch", (), True,
        "stack counter", "墩数计数",
        "A side built a number of stacks that matches neither the gear nor a single missing tile.",
        "某边码出的墩数既不符合档位，也不是缺一张牌的情况。",
        ("stack sensor miscounting", "tiles stuck on that side's conveyor"),
        ("墩数传感器计数不准", "该边输送带卡牌"),
        ("Check that side's stack sensor and conveyor in the self-test.",),
        ("在自检中检查该边的墩数传感器和输送带。",)),
    FaultType(
        "E51", "disc-stall", ("disc-stall",), False,
        "shuffle disc motor", "洗牌大盘电机",
        "The shuffle disc was switched on but does not turn (no rotation pulses).",
        "洗牌大盘通电后不转（无转动信号）。",
        ("disc blocked by tiles or debris", "disc motor or its capacitor failed", "motor wire loose"),
        ("大盘被牌或杂物卡住", "大盘电机或其电容损坏", "电机连接线松脱"),
        ("Switch off and turn the disc by hand; clear what blocks it.", "Check the disc motor's wire and capacitor."),
        ("关机后用手转动大盘，清除卡住的东西。", "检查大盘电机的连接线和电容。")),
    FaultType(
        "E52", "dice-not-spinning", ("dice-stuck",), False,
        "dice motor", "骰子电机",
        "The dice motor was switched on but the dice did not spin.",
        "骰子电机通电后骰子不转。",
        ("dice motor wire loose", "dice motor failed", "dice dome jammed"),
        ("骰子电机连接线松脱", "骰子电机损坏", "骰子罩卡住"),
        ("Check the dice motor's connector; spin the dice by hand.", "Use electronic dice until repaired."),
        ("检查骰子电机插头，用手转动骰子。", "修好前改用电子骰子。")),
    FaultType(
        "E53", "tile-jam", ("tile-jam",), False,
        "disc outlet / tile track (jam sensor)", "大盘出牌口/牌道（卡牌检测）",
        "The jam sensor reports a tile jammed at the disc outlet; the disc stopped.",
        "卡牌检测报告大盘出牌口卡牌，大盘已停转。",
        ("a tile standing on edge or two tiles wedged at the outlet", "a chipped or foreign tile",
         "outlet guide bent"),
        ("牌竖起或两张牌卡在出牌口", "牌有缺损或混入异物", "出牌口导板变形"),
        ("Switch off, open the lid and remove the jammed tile at the disc outlet.",
         "Check the tile for chips; check the outlet guide.", "Clear the fault: the machine re-homes."),
        ("关机，打开盖板，取出出牌口卡住的牌。", "检查该牌是否缺损，检查出牌口导板。", "解除故障后机器重新归位。")),
    FaultType(
        "E61", "mcu-reset", ("mcu-reset",), False,
        "table microcontroller", "主控板单片机",
        "The table's microcontroller restarted (its boot counter changed); the machine is re-homed.",
        "主控板单片机重启（启动计数变化），机器已重新归位。",
        ("power supply dip (motor start pulling the 5 V rail down)", "watchdog reset in the firmware",
         "loose power connector"),
        ("电源电压跌落（电机启动拉低5V）", "固件看门狗复位", "电源插头松动"),
        ("Check the supply voltage while the motors start.", "Check the mainboard's power connector."),
        ("检查电机启动时的电源电压。", "检查主板电源插头。")),
    FaultType(
        "E62", "link-lost", ("link-broken",), False,
        "serial link Pi - microcontroller", "树莓派与主控板串口连线",
        "The microcontroller stopped answering on the serial line; it stops every motor by itself.",
        "主控板串口无应答；主控板已自行停止所有电机。",
        ("serial cable unplugged or broken", "microcontroller hung or without power", "wrong serial device or baud rate"),
        ("串口线松脱或断线", "主控板死机或断电", "串口设备或波特率设置错误"),
        ("Check the serial cable (TX, RX, GND) between the Pi and the table board.",
         "Check the board's power LED.", "Check the configured serial device (/dev/serial0) and baud rate."),
        ("检查树莓派与主控板之间的串口线（TX、RX、GND）。", "检查主板电源指示灯。", "检查配置的串口设备（/dev/serial0）和波特率。")),
    FaultType(
        "E63", "link-noisy", ("link-noise",), False,
        "serial link Pi - microcontroller", "树莓派与主控板串口连线",
        "The serial line is noisy: frames arrive corrupted and are retransmitted (the link still works).",
        "串口线有干扰：数据帧出错需重发（通信仍可用）。",
        ("serial cable run next to motor wires", "missing or poor ground between the boards", "cable too long"),
        ("串口线与电机线并行走线", "两板之间地线不良", "串口线过长"),
        ("Route the serial cable away from motor wires; use a shielded or twisted cable.",
         "Check the GND connection between the Pi and the board."),
        ("串口线远离电机线，改用屏蔽线或双绞线。", "检查树莓派与主板之间的地线。")),
    FaultType(
        "E71", "motion-deadline", (), True,
        "motor", "电机",
        "A motion missed its deadline and its motor was stopped; the symptoms match no more specific fault.",
        "某个动作超时，电机已停止；现象不符合更具体的故障。",
        ("mechanical obstruction", "motor or driver failing", "sensor not signalling"),
        ("机械卡阻", "电机或驱动损坏", "传感器无信号"),
        ("Run that motor alone in the self-test and watch it.",),
        ("在自检中单独运行该电机并观察。",)),
    FaultType(
        "E72", "host-timeout", (), False,
        "microcontroller safety stop", "主控板安全停机",
        "The microcontroller heard nothing from the Pi within its window and stopped every motor.",
        "主控板在规定时间内未收到树莓派的信号，已停止所有电机。",
        ("the Pi's service stalled or restarted", "serial cable interrupted"),
        ("树莓派服务卡顿或重启", "串口线中断"),
        ("Check the service log on the Pi; clear the safe-stop to continue.",),
        ("查看树莓派服务日志，解除安全停机后继续。",)),
    FaultType(
        "E73", "emergency-stop", (), False,
        "emergency stop / lid", "急停按钮/盖板",
        "The emergency stop was pressed (or the lid opened): every motor stopped.",
        "急停按钮被按下（或盖板打开）：所有电机已停止。",
        ("someone pressed the emergency stop", "lid switch open"),
        ("有人按下急停", "盖板开关断开"),
        ("Release the emergency stop and close the lid, then clear the fault.",),
        ("松开急停、盖好盖板后解除故障。",)),
)

BY_CODE: dict[str, FaultType] = {f.code: f for f in CATALOGUE}
BY_KIND: dict[str, FaultType] = {k: f for f in CATALOGUE for k in f.kinds}

assert len(BY_CODE) == len(CATALOGUE), "fault codes must be unique"

_MAINS_EN = ("Switch the table off at its mains switch and pull the plug before you open a side or the top: "
             "the lift, feeder and disc motors of most tables run on mains voltage (capacitor-run AC motors); "
             "wait a minute for the motor capacitors to discharge before touching their leads.")
_MAINS_ZH = "打开侧板或台面之前，先关掉麻将机电源并拔下插头：多数麻将机的升牌、上牌和大盘电机用市电（电容运转交流电机）；" \
            "等一分钟让电机电容放电后再碰其引线。"


@dataclasses.dataclass(frozen=True, slots=True)
class Workshop:
    """What a technician handles for one group of fault codes (E1x, E2x ...): the parts, their
    connectors, and the safety note to read before opening the table. Source: the technician's
    answers in ../shared/seeds/002_4c2a73aa42bc09ab.txt (lift magnetic sensor and magnet, lift
    motor and capacitor, conveyor motor wire to the mainboard, gear table behind the panel, set
    with the power off) and the wiring of the default profile."""

    parts_en: tuple[str, ...]
    parts_zh: tuple[str, ...]
    connectors_en: tuple[str, ...]
    connectors_zh: tuple[str, ...]
    safety_en: str
    safety_zh: str


#: by the code's group: the first two characters of the code ("E1" ... "E7")
WORKSHOP: dict[str, Workshop] = {
    "E1": Workshop(
        ("lift top and bottom limit sensors (升牌磁控: reed or Hall)", "the magnet disc on the lift bar", "the sensor wires"),
        ("升牌上、下限位传感器（升牌磁控：干簧管或霍尔）", "升牌杆上的小圆磁铁", "传感器连接线"),
        ("the sensor's plug at the lift (2 wires for a reed switch; +5 V, GND, signal for a Hall sensor)",
         "the side's lift-sensor socket on the mainboard"),
        ("升牌处的传感器插头（干簧管两线；霍尔三线：+5V、地、信号）", "主板上该边的升牌传感器插座"),
        _MAINS_EN, _MAINS_ZH),
    "E2": Workshop(
        ("lift motor and its run capacitor", "lift bar, shaft and guides", "lift limit sensors"),
        ("升牌电机及其运转电容", "升牌杆、转轴和导轨", "升牌限位传感器"),
        ("the lift motor's plug on the mainboard (that side's motor output)", "the capacitor's two leads",
         "the limit sensors' plugs"),
        ("主板上该边升牌电机插头（电机输出）", "电容两根引线", "限位传感器插头"),
        _MAINS_EN, _MAINS_ZH),
    "E3": Workshop(
        ("feeder (conveyor) motor and wheel", "feeder motion sensor", "tile-present photo sensor", "push head and its home switch"),
        ("上牌（输送）电机及轮", "上牌运动传感器", "有牌光电传感器", "推牌头及其到位开关"),
        ("the feeder motor's plug on the mainboard (the wire the technician's answer names first)",
         "the photo sensor's and the home switch's plugs"),
        ("主板上的上牌电机插头（师傅回答里首先要查的那根线）", "光电传感器和到位开关插头"),
        _MAINS_EN, _MAINS_ZH),
    "E4": Workshop(
        ("tile-count gear selector (档位, the table behind the panel)", "tile-present sensors", "the tile set"),
        ("张数档位开关（面板反面的档位表）", "有牌传感器", "整副麻将牌"),
        ("the gear selector's plug on the mainboard",),
        ("主板上的档位开关插头",),
        "Change the gear only with the power off (the technician's answer: 一定先关掉电再调档位). " + _MAINS_EN,
        "调档位前一定先关电（师傅原话：一定先关掉电再调档位）。" + _MAINS_ZH),
    "E5": Workshop(
        ("shuffle disc (大盘) motor and belt", "disc rotation sensor", "dice motor and sensor", "jam sensor at the disc outlet"),
        ("大盘电机及皮带", "大盘转动传感器", "骰子电机及传感器", "出牌口卡牌传感器"),
        ("the disc and dice motors' plugs on the mainboard", "the rotation and jam sensors' plugs"),
        ("主板上大盘电机、骰子电机插头", "转动传感器和卡牌传感器插头"),
        _MAINS_EN, _MAINS_ZH),
    "E6": Workshop(
        ("the table's microcontroller board", "the serial cable to the Raspberry Pi", "the board's power supply"),
        ("麻将机主控板", "到树莓派的串口线", "主控板电源"),
        ("UART TX, RX and GND between the Pi's header (GPIO 14/15) and the board", "the board's supply connector"),
        ("树莓派排针（GPIO 14/15）与主控板之间的 TX、RX、GND", "主控板电源插头"),
        "Switch the table off before you plug or unplug the serial cable; the board's outputs drive mains motors.",
        "插拔串口线前先关掉麻将机电源；主控板的输出驱动市电电机。"),
    "E7": Workshop(
        ("emergency stop button", "lid switch", "motor power relay or contactor", "every motor (all stopped)"),
        ("急停按钮", "盖板开关", "电机电源继电器或接触器", "全部电机（已全部停止）"),
        ("the emergency stop's two circuits: the one that cuts motor power and the one the controller reads",),
        ("急停的两路：切断电机电源的一路，和控制器读取的一路",),
        _MAINS_EN, _MAINS_ZH),
}


def lookup(code: str) -> FaultType:
    """The catalogue entry of ``code`` (``"E21"``, ``"e21"`` or ``"21"``). Raises KeyError with a
    message listing the codes when there is none."""
    key = code.strip().upper()
    key = key if key.startswith("E") else "E" + key
    if key not in BY_CODE:
        raise KeyError(f"no fault code {code!r}; the codes are {', '.join(BY_CODE)}")
    return BY_CODE[key]


def code_sheet(f: FaultType) -> dict:
    """One code as the technician reads it (``mjtable faults E21``, ``GET /api/faults/codes/E21``):
    ``{"code", "name", "part", "meaning", "causes", "checks", "parts", "connectors", "safety",
    "injected_by"}``, each text also in Chinese (``..._zh``)."""
    w = WORKSHOP[f.code[:2]]
    return {"code": f.code, "name": f.name, "per_side": f.per_side, "part": f.part_en, "part_zh": f.part_zh,
            "meaning": f.meaning_en, "meaning_zh": f.meaning_zh,
            "causes": list(f.causes_en), "causes_zh": list(f.causes_zh),
            "checks": list(f.checks_en), "checks_zh": list(f.checks_zh),
            "parts": list(w.parts_en), "parts_zh": list(w.parts_zh),
            "connectors": list(w.connectors_en), "connectors_zh": list(w.connectors_zh),
            "safety": w.safety_en, "safety_zh": w.safety_zh, "injected_by": list(f.kinds)}


def render_code_sheet(f: FaultType) -> str:
    """``code_sheet`` as terminal text, English then Chinese."""
    d = code_sheet(f)
    def block(sfx: str, heads: tuple[str, ...]) -> list[str]:
        out = [f"{d['code']} {d['name']}: {d['meaning' + sfx]}", f"  {heads[0]} {d['part' + sfx]}"]
        for head, key in zip(heads[1:], ("causes", "checks", "parts", "connectors")):
            out += [f"  {head}"] + [f"    {i}. {c}" for i, c in enumerate(d[key + sfx], 1)]
        return out + [f"  {heads[5]} {d['safety' + sfx]}"]
    lines = block("", ("Part:", "Likely causes:", "Next checks:", "Parts involved:", "Connectors:", "SAFETY:"))
    if d["injected_by"]:
        lines.append(f"  Practise on the simulator: mjtable cycle --sim --fault {d['injected_by'][0]}"
                     + (":W" if d["per_side"] else ""))
    lines += block("_zh", ("部件：", "可能原因：", "检查步骤：", "相关部件：", "插头与连线：", "安全："))
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True, slots=True)
class Diagnosis:
    """A fault as it happened: the catalogue entry plus what was observed.

    Attributes:
        fault: the catalogue entry.
        side: the side of the table (E/S/W/N) or None.
        observed_en, observed_zh: what was seen: which sensor or motor, expected vs seen, timings.
        evidence: the measured values behind it (seconds, counts), for logs and the web page.
    """

    fault: FaultType
    side: str | None
    observed_en: str
    observed_zh: str
    evidence: dict

    @property
    def code(self) -> str:
        return self.fault.code

    def to_dict(self) -> dict:
        """``{"code", "name", "side", "part", "observed", "causes", "checks"}`` plus the Chinese texts."""
        f = self.fault
        return {"code": f.code, "name": f.name, "side": self.side, "part": f.part_en, "part_zh": f.part_zh,
                "meaning": f.meaning_en, "meaning_zh": f.meaning_zh,
                "observed": self.observed_en, "observed_zh": self.observed_zh,
                "causes": list(f.causes_en), "causes_zh": list(f.causes_zh),
                "checks": list(f.checks_en), "checks_zh": list(f.checks_zh), "evidence": dict(self.evidence)}

    def render(self, lang: str = "both", warning: bool = False) -> str:
        """A readable block for the terminal: code, part, side, observed, causes, checks.
        ``warning`` labels a diagnosis that did not stop the machine (警告 instead of 故障)."""
        f = self.fault
        side = f" side {self.side}" if self.side else ""
        lines = []
        if lang in ("en", "both"):
            lines += [f"{'WARNING' if warning else 'FAULT'} {f.code} {f.name}{side}: {f.meaning_en}",
                      f"  Part:     {f.part_en}",
                      f"  Observed: {self.observed_en}",
                      "  Likely causes:"] + [f"    {i}. {c}" for i, c in enumerate(f.causes_en, 1)] + \
                     ["  Next checks:"] + [f"    {i}. {c}" for i, c in enumerate(f.checks_en, 1)]
        if lang in ("zh", "both"):
            where_zh = f"（{side_zh(self.side)}边）" if self.side else ""
            lines += [f"{'警告' if warning else '故障'} {f.code}{where_zh}：{f.meaning_zh}",
                      f"  部件：{f.part_zh}",
                      f"  现象：{self.observed_zh}",
                      "  可能原因："] + [f"    {i}. {c}" for i, c in enumerate(f.causes_zh, 1)] + \
                     ["  检查步骤："] + [f"    {i}. {c}" for i, c in enumerate(f.checks_zh, 1)]
        return "\n".join(lines)


def catalogue_json(injectable: Iterable[tuple[str, tuple[str, ...]]] = ()) -> dict:
    """The ``mjtable faults --list --json`` object:
    ``{"faults": [{"code", "meaning_en", "meaning_zh"}], "injectable": [{"kind", "sides"}]}``."""
    return {"faults": [{"code": f.code, "name": f.name, "meaning_en": f.meaning_en, "meaning_zh": f.meaning_zh}
                       for f in CATALOGUE],
            "injectable": [{"kind": k, "sides": list(s)} for k, s in injectable]}
