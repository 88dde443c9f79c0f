"""What was observed, per fault code: the templates of the diagnosis texts, English and Chinese.

The catalogue (:mod:`controller.faults`) says what a code means, its causes and checks; this module
says, per code and per way of seeing it (a *variant*: ``"at-rest"``, ``"did-not-move"`` ...), what was
observed, as ``str.format`` templates filled from the measured values. The judging logic
(:mod:`controller.diagnosis`) decides the code and the variant and gives the values; it builds no
text itself. ``{side}`` (E/S/W/N) comes with ``{side_zh}`` (东南西北, :mod:`controller.names`) and
``{phase}`` with ``{phase_zh}``, filled in by :func:`observed`.

Sources: the technician's answers in ../shared/seeds/002_4c2a73aa42bc09ab.txt (升牌杆不到位, the
conveyor motor's wire, the wheel jammed, the lift magnet and its polarity, the gear set with the
power off) for the words a technician uses.
"""

from __future__ import annotations

import string

from .names import phase_zh, side_zh

#: code -> variant -> (English template, Chinese template)
OBSERVED: dict[str, dict[str, tuple[str, str]]] = {
    "E11": {
        "at-rest": ("Lift {side} at rest (down): top limit reads active, bottom limit active too; expected top inactive.",
                    "{side_zh}边升牌在下位：上限位显示到位，下限位也到位；上限位应无信号。"),
        "did-not-move": (
            "Lift {side} was down and its top limit read active at once when it was told to rise ({ms} ms, nominal "
            "{nominal_s:.1f} s), while the bottom limit still reads active: the lift did not move, the top sensor "
            "is stuck active.",
            "{side_zh}边升牌在下位，上升指令一发上限位立即显示到位（{ms} 毫秒，正常 {nominal_s:.1f} 秒），下限位仍到位："
            "升牌没动，上限位传感器卡在到位状态。"),
    },
    "E12": {
        "full-way-down": (
            "Lift {side}: up for {up_s:.1f} s (deadline {deadline_s:.1f} s), the top limit never read active; lowered "
            "again it took {down_s:.2f} s, a full travel (nominal {nominal_s:.2f} s): the lift reached the top, its "
            "sensor did not signal.",
            "{side_zh}边升牌上升 {up_s:.1f} 秒（时限 {deadline_s:.1f} 秒）上限位无信号；回落用时 {down_s:.2f} 秒，为完整行程"
            "（正常 {nominal_s:.2f} 秒）：已到顶，是传感器没有信号。"),
    },
    "E13": {
        "at-top": ("Lift {side} at the top (top limit active after {up_s:.1f} s): the bottom limit still reads active; "
                   "expected inactive.",
                   "{side_zh}边升牌已到顶：下限位仍显示到位，应无信号。"),
        "did-not-move": (
            "Lift {side} was up and its bottom limit read active at once when it was told to go down ({ms} ms, "
            "nominal {nominal_s:.1f} s), while the top limit still reads active: the lift did not move, the bottom "
            "sensor is stuck active.",
            "{side_zh}边升牌在上位，下降指令一发下限位立即显示到位（{ms} 毫秒，正常 {nominal_s:.1f} 秒），上限位仍到位："
            "升牌没动，下限位传感器卡在到位状态。"),
    },
    "E14": {
        "down-deadline": (
            "Lift {side} lowered for {down_s:.1f} s (deadline {deadline_s:.1f} s, nominal travel {nominal_s:.1f} s) "
            "and the bottom limit never read active.",
            "{side_zh}边升牌下降 {down_s:.1f} 秒（时限 {deadline_s:.1f} 秒，正常 {nominal_s:.1f} 秒），下限位始终无信号。"),
        "missed-both": (
            "Lift {side}: up for {up_s:.1f} s (deadline {deadline_s:.1f} s), the top limit never read active; lowered "
            "again for {down_s:.1f} s the bottom limit never read active either.",
            "{side_zh}边升牌上升 {up_s:.1f} 秒（时限 {deadline_s:.1f} 秒）上限位无信号；再下降 {down_s:.1f} 秒下限位也无信号。"),
    },
    "E15": {
        "at-rest": (
            "Lift {side} at rest (down): top limit reads active and bottom limit inactive, the reverse of what it "
            "should be; lowering it ran {down_s:.1f} s ({outcome}) without the bottom limit.",
            "{side_zh}边升牌在下位：上限位有信号、下限位无信号，与正常相反；下降 {down_s:.1f} 秒未见下限位。"),
        "no-travel-up": (
            "Lift {side} was down and its top limit read active at once when it was told to rise ({ms} ms, nominal "
            "{nominal_s:.1f} s), while the bottom limit reads inactive: both limits read the reverse of the lift's "
            "position.",
            "{side_zh}边升牌在下位，上升指令一发上限位立即显示到位（{ms} 毫秒，正常 {nominal_s:.1f} 秒），下限位却无信号："
            "上下限位信号都与实际位置相反。"),
        "no-travel-down": (
            "Lift {side} was up and its bottom limit read active at once when it was told to go down ({ms} ms, "
            "nominal {nominal_s:.1f} s), while the top limit reads inactive: both limits read the reverse of the "
            "lift's position.",
            "{side_zh}边升牌在上位，下降指令一发下限位立即显示到位（{ms} 毫秒，正常 {nominal_s:.1f} 秒），上限位却无信号："
            "上下限位信号都与实际位置相反。"),
    },
    "E21": {
        "short-way-down": (
            "Lift {side}: up for {up_s:.1f} s (deadline {deadline_s:.1f} s), the top limit never read active; lowered "
            "again it took only {down_s:.2f} s (full travel {nominal_s:.2f} s): it stopped part-way, at about "
            "{pct} % of its travel.",
            "{side_zh}边升牌上升 {up_s:.1f} 秒（时限 {deadline_s:.1f} 秒）上限位无信号；回落仅用 {down_s:.2f} 秒"
            "（完整行程 {nominal_s:.2f} 秒）：升牌杆不到位，约停在行程的 {pct}%。"),
    },
    "E22": {
        "late": ("Lift {side} took {up_s:.2f} s to rise (nominal {nominal_s:.2f} s, the other sides {others_s:.2f} s): "
                 "its wall came up late.",
                 "{side_zh}边升牌用时 {up_s:.2f} 秒（正常 {nominal_s:.2f} 秒，其他边 {others_s:.2f} 秒），升起偏慢。"),
    },
    "E23": {
        "growing": ("Lift {side} took {up_s:.2f} s to rise, up from {history} s in earlier cycles (nominal "
                    "{nominal_s:.2f} s, deadline {deadline_s:.1f} s).",
                    "{side_zh}边升牌用时 {up_s:.2f} 秒，之前几次为 {history} 秒（正常 {nominal_s:.2f} 秒），逐次变长。"),
        "growing-missed": (
            "Lift {side} missed the top within {deadline_s:.1f} s; its travel time has been growing over the last "
            "cycles ({history} s, nominal {nominal_s:.1f} s).",
            "{side_zh}边升牌 {deadline_s:.1f} 秒内未到顶；近几次升牌时间逐次变长（{history} 秒，正常 {nominal_s:.1f} 秒）。"),
        "slow": (
            "Lift {side} rose at least {pct} % slower than its nominal {nominal_s:.2f} s in each of the last {cycles} "
            "cycles ({history} s; the other sides {others_s:.2f} s this cycle): still within its deadline, but its "
            "motor or capacitor is weakening.",
            "{side_zh}边升牌最近 {cycles} 次都比正常 {nominal_s:.2f} 秒慢至少 {pct}%（{history} 秒；其他边本次 "
            "{others_s:.2f} 秒）：尚在时限内，但电机或电容正在变弱。"),
    },
    "E24": {
        # the centre lift's stroke: down (the played set drops) or up (the hole closes); it left its starting
        # limit and did not arrive, or never left it
        **{f"{d}-{m}": (
            f"The centre lift was {what} for {{ms_s:.1f}} s (deadline {{deadline_s:.1f}} s, nominal {{nominal_s:.1f}} s) "
            f"and its {limit} limit never read active: {moved} (top {{top}}, bottom {{bottom}}).",
            f"中间升降台{what_zh} {{ms_s:.1f}} 秒（时限 {{deadline_s:.1f}} 秒，正常 {{nominal_s:.1f}} 秒），{limit_zh}限位始终无"
            f"信号：{moved_zh}（上限位 {{top}}，下限位 {{bottom}}）。")
            for d, what, what_zh, limit, limit_zh in (
                ("up", "raised (to close the hole)", "上升（关闭中间口）", "top", "上"),
                ("down", "lowered (to drop the played tiles into the machine)", "下降（让推入的牌落入机器）", "bottom", "下"))
            for m, moved, moved_zh in (("left", "it left its limit but did not arrive", "已离开原限位但未到位"),
                                       ("stuck", "it never left its starting limit", "始终未离开原限位"))},
    },
    "E31": {
        "no-motion": (
            "Feeder {side} was switched on for {ran_s} s: no motion pulse at all, {got} of {expected} stacks.",
            "{side_zh}边输送带电机通电 {ran_s} 秒：没有任何转动信号，码了 {got}/{expected} 墩。"),
        "stopped-turning": (
            "Feeder {side} was switched on for {ran_s} s: it turned at first, then stopped: no motion pulse in its "
            "last {quiet_s:.0f} s, {got} of {expected} stacks.",
            "{side_zh}边输送带电机通电 {ran_s} 秒：开始时在转，之后停转：最后 {quiet_s:.0f} 秒无转动信号，码了 "
            "{got}/{expected} 墩。"),
    },
    "E32": {
        "no-tile": (
            "Feeder {side} turned ({pulses} motion pulses) for {ran_s} s but no tile passed its tile sensor: "
            "0 of {expected} stacks.",
            "{side_zh}边输送带在转（{pulses} 个转动信号）{ran_s} 秒，但没有牌经过有牌传感器：0/{expected} 墩。"),
        "tiles-stopped": (
            "Feeder {side} kept turning but no tile reached its push head after stack {got} ({counts}): the tiles "
            "stopped coming part-way through the build.",
            "{side_zh}边输送带一直在转，但码到第 {got} 墩后再没有牌送到推牌头（{counts_zh}）：码牌中途断牌。"),
    },
    "E33": {
        "no-edge": (
            "Side {side} stacked {got} stacks while its tile-present sensor never changed (it reads {level} all "
            "the time).",
            "{side_zh}边码了 {got} 墩，而有牌传感器始终没有变化（一直为 {level}）。"),
    },
    "E34": {
        "head-out-no-motion": (
            "Feeder {side} was switched on for {ran_s} s: its push head left home and stayed out, and the drive gave "
            "no motion pulse: {got} of {expected} stacks.",
            "{side_zh}边输送带通电 {ran_s} 秒：推牌头离开原位后没有回来，电机无转动信号：码了 {got}/{expected} 墩。"),
        "head-out-stopped": (
            "Feeder {side} was switched on for {ran_s} s: its push head left home and stayed out, and the drive "
            "stopped turning after {got} stacks (no motion pulse in its last {quiet_s:.0f} s): the head jammed, or "
            "the motor lost power with the head out (its wire, as for E31): {got} of {expected} stacks.",
            "{side_zh}边输送带通电 {ran_s} 秒：推牌头离开原位后没有回来，码到 {got} 墩后电机停转（最后 {quiet_s:.0f} 秒"
            "无转动信号）：推牌头卡住，或推牌头在外时电机断电（连接线，同 E31）：码了 {got}/{expected} 墩。"),
        "not-home-after-build": (
            "Side {side} built all {got} stacks but its push head did not come back home within {ran_s} s (home "
            "sensor {home}).",
            "{side_zh}边已码满 {got} 墩，但推牌头在 {ran_s} 秒内没有回到原位（原位信号 {home}）。"),
        "parking": (
            "Push head {side} was out and did not come home within {wait_s:.1f} s before the lifts rise ({pulses} "
            "motion pulses, home sensor {home}); the walls were not raised into it.",
            "{side_zh}边推牌头在外，升牌前 {wait_s:.1f} 秒内未能回到原位（{pulses} 个转动信号，原位信号 {home}）；"
            "未升牌以免撞到推牌头。"),
    },
    "E35": {
        "stopped-changing": (
            "Side {side} built all {got} stacks but its push head was never seen home at the end: the drive kept "
            "turning while the home sensor stopped changing (no change in the last {quiet_s:.0f} s; it reads {home}).",
            "{side_zh}边已码满 {got} 墩，但最后看不到推牌头回原位：电机仍在转，原位信号却不再变化（最后 {quiet_s:.0f} 秒"
            "无变化，读数 {home}）。"),
        "never-changed": (
            "Side {side} built all {got} stacks but its push head was never seen at home: the home sensor did not "
            "change once while building (it reads {home}).",
            "{side_zh}边已码满 {got} 墩，但推牌头原位信号在码牌过程中一次也没有变化（一直为 {home}）。"),
        "parking": (
            "Push head {side} was driven home before the lifts rise: its drive turned ({pulses} motion pulses) for "
            "{wait_s:.1f} s and its home sensor never changed (it reads {home}).",
            "升牌前让{side_zh}边推牌头回原位：电机在转（{pulses} 个转动信号）{wait_s:.1f} 秒，原位信号一次也没有变化"
            "（一直为 {home}）。"),
    },
    "E41": {
        "tiles-left": (
            "Every side built all its stacks ({counts}) and every side still has a tile waiting at its push head: "
            "there are more tiles in the machine than gear {gear} takes.",
            "四边都已码满（{counts_zh}），每边推牌头处仍有牌：机器内的牌比 {gear} 档多。"),
        "all-short": (
            "Every side is {short} stack(s) short of gear {gear} ({counts}): the gear does not match the tiles in "
            "the machine.",
            "四边都比 {gear} 档少 {short} 墩（{counts_zh}）：档位与机器内牌数不符。"),
    },
    "E42": {
        "half-stack": (
            "Side {side} stopped one stack short with a single tile on top ({counts}); the other sides are "
            "complete: one tile is missing.",
            "{side_zh}边少一墩（只有半墩）（{counts_zh}），其他边都满：缺一张牌。"),
    },
    "E43": {
        "counts": ("Stacks built {counts}: neither the gear nor a single missing tile explains it.",
                   "码牌墩数 {counts_zh}：既不是档位问题，也不是缺一张牌。"),
    },
    "E51": {
        "no-pulse": ("The shuffle motor was switched on and no disc rotation pulse came during the shuffle.",
                     "洗牌电机通电后，洗牌期间没有收到大盘转动信号。"),
    },
    "E52": {
        "no-pulse": ("The dice motor ran {ran_s:.1f} s and no dice rotation pulse came; the break below uses "
                     "electronic dice.",
                     "骰子电机运行 {ran_s:.1f} 秒，没有骰子转动信号；下面的开牌位置用电子骰子。"),
    },
    "E53": {
        "jam": ("The jam sensor went active during {phase}: a tile is jammed at the disc outlet; every motor was "
                "stopped.",
                "{phase_zh}阶段卡牌检测触发：大盘出牌口卡牌；已停止所有电机。"),
    },
    "E61": {
        "reset": ("The microcontroller restarted during {phase} (boot counter {previous_boot} -> {boot}); the "
                  "machine was re-homed and the cycle started again.",
                  "主控板在{phase_zh}阶段重启（启动计数 {previous_boot} -> {boot}）；机器已重新归位并重新开始。"),
    },
    "E62": {
        "lost": ("The serial link stopped answering ({reason}); the microcontroller stops its motors by itself "
                 "within its heartbeat window.",
                 "串口无应答；主控板会在心跳时限内自行停止电机。"),
    },
    "E63": {
        "dropped": ("The microcontroller could not send {dropped} sensor events (its queue was full): the serial "
                    "line did not keep up. Stack counts were taken from the microcontroller's own count.",
                    "主控板有 {dropped} 个传感器事件未能发出（发送队列已满）：串口跟不上。墩数以主控板自身计数为准。"),
        "noise": ("{frames_rejected} corrupt frames were dropped and {retransmitted} resent on the serial line "
                  "during the cycle; every command still arrived exactly once.",
                  "本次循环串口丢弃了 {frames_rejected} 个错误帧、重发 {retransmitted} 次；指令仍全部准确送达。"),
    },
    "E71": {
        "did-not-move": ("Lift {side} was driven up for {up_s:.1f} s and its bottom limit never released: the lift "
                         "did not move.",
                         "{side_zh}边升牌上升指令 {up_s:.1f} 秒，下限位始终未离开：升牌没有动。"),
        "rejected": ("The table refused or never answered {what} during {phase}: {reason}.",
                     "{phase_zh}阶段机器拒绝或未应答指令 {what}。"),
        "no-answer": ("No motion finished during {phase} for {waited_s:.1f} s, past every motion deadline; all "
                      "motors were stopped.",
                      "{phase_zh}阶段 {waited_s:.1f} 秒无动作完成，已超过所有动作时限；已停止全部电机。"),
    },
    "E72": {
        "host-timeout": ("The microcontroller heard nothing from the Pi for {silent_ms} ms and stopped every motor.",
                         "主控板 {silent_ms} 毫秒未收到树莓派信号，已停止所有电机。"),
    },
    "E73": {
        "estop": ("The emergency stop input went active; the microcontroller stopped every motor.",
                  "急停输入有效，主控板已停止所有电机。"),
        "estop-held": ("The machine could not leave its safe stop: the emergency stop is still pressed (or the lid "
                       "open). Release it, then clear the fault.",
                       "无法解除安全停机：急停按钮仍被按下（或盖板打开）。请先松开急停，再清除故障。"),
        "operator": ("Stop-all from the {source}: every motor was stopped; clear to re-home.",
                     "操作员（{source}）全部停止：已停止所有电机；清除后重新归位。"),
    },
}


def fields_of(template: str) -> set[str]:
    """The field names a template uses (``{side}``, ``{up_s:.1f}`` -> ``{"side", "up_s"}``)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def observed(code: str, variant: str, **values) -> tuple[str, str]:
    """The observed texts (English, Chinese) of ``code`` seen as ``variant``, filled from ``values``.
    ``side`` (E/S/W/N or None) adds ``side_zh``; ``phase`` (a phase value) adds ``phase_zh``.
    Raises KeyError for a code or variant without a template, or a value a template needs and was not
    given."""
    en, zh = OBSERVED[code][variant]
    if "side" in values:
        values.setdefault("side_zh", side_zh(values["side"]))
    if "phase" in values:
        values.setdefault("phase_zh", phase_zh(values["phase"]))
    return en.format(**values), zh.format(**values)
