"""The fault texts are templates per code next to the catalogue (controller.fault_texts), not strings
built inside the judging logic: every template belongs to a catalogue code, its Chinese form uses the
values of its English form, and every variant the judges name has its template."""

from __future__ import annotations

import re
from pathlib import Path

from controller import diagnosis
from controller.fault_texts import OBSERVED, fields_of, observed
from controller.faults import BY_CODE


def test_every_template_belongs_to_a_catalogue_code():
    assert set(OBSERVED) <= set(BY_CODE)


def test_the_chinese_template_uses_the_values_of_the_english_one():
    for code, variants in OBSERVED.items():
        for variant, (en, zh) in variants.items():
            en_fields = fields_of(en) | {"side", "phase"}
            for f in fields_of(zh):
                assert f in en_fields or (f.endswith("_zh") and f[:-3] in en_fields), (code, variant, f)
            assert re.search(r"[\u4e00-\u9fff]", zh) and not re.search(r"[\u4e00-\u9fff]", en.replace("升牌杆不到位", ""))


def test_every_variant_the_judges_name_has_its_template():
    source = Path(diagnosis.__file__).read_text(encoding="utf-8")
    named = re.findall(r'_diag\("(E\d\d)", [^,]+, "([a-z-]+)"', source)
    assert len(named) > 20
    for code, variant in named:
        assert variant in OBSERVED[code], (code, variant)
    assert "边升牌" not in source and "Lift {side}" not in source  # no text built in the judging logic


def test_a_template_is_filled_with_the_side_in_both_languages():
    en, zh = observed("E21", "short-way-down", side="W", up_s=3.0, deadline_s=3.0, down_s=1.47, nominal_s=1.6,
                      pct=92)
    assert en.startswith("Lift W: up for 3.0 s") and "92 %" in en
    assert zh.startswith("西边升牌上升 3.0 秒") and "92%" in zh
    en, zh = observed("E53", "jam", phase="parking")
    assert "during parking" in en and zh.startswith("推牌头归位阶段")
