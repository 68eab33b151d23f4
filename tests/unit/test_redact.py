"""PII redaction (mnemolayer.privacy): detectors, actions, masks, the labelled set, and
properties that must hold for any text (never raises, idempotent, spans well formed)."""

from __future__ import annotations

import itertools
import time
from datetime import date
from pathlib import Path

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.pii import load_gold, score_gold
from mnemolayer.errors import ValidationError
from mnemolayer.privacy import Finding, PIIType, RedactionConfig, redact, redact_data
from mnemolayer.privacy.checks import cn_id_ok, iban_ok, jwt_ok, luhn_ok, shannon_entropy

GOLD = Path(__file__).parent.parent / "data" / "pii"
EVERYTHING = RedactionConfig.uniform("redact")
MASK = RedactionConfig.uniform("mask")
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsIm5hbWUiOiJBbGljZSJ9."
    "4pcPyMD09olPSyXnrXCjTwXyr4BsezdI1AVTmud2fU4"
)
HEX36 = "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e"


def found(text: str, config: RedactionConfig = EVERYTHING) -> list[tuple[str, str]]:
    return [(f.type.value, text[f.start : f.end]) for f in redact(text, config).findings]


# -- check digits --------------------------------------------------------------------------


def test_luhn() -> None:
    assert luhn_ok("4242424242424242")
    assert luhn_ok("379603082462817")
    assert not luhn_ok("4242424242424241")
    assert not luhn_ok("42424242a4242424")


def test_cn_id_check_digit_region_and_birth_date() -> None:
    assert cn_id_ok("11010519491231002X")
    assert cn_id_ok("11010519491231002x")  # a lower-case X is still the check character
    assert not cn_id_ok("110105194912310021")  # wrong check character
    assert not cn_id_ok("990105194912310025")  # no region 99
    assert not cn_id_ok("510107197302293310")  # 1973-02-29 does not exist
    # A birth date after "today" is not plausible.
    assert cn_id_ok("440305200106150784", today=date(2024, 1, 1))
    assert not cn_id_ok("440305200106150784", today=date(2001, 6, 14))


def test_iban_length_and_mod97() -> None:
    assert iban_ok("GB82WEST12345698765432")
    assert not iban_ok("GB83WEST12345698765432")  # check digits off by one
    assert not iban_ok("GB82WEST1234569876543")  # one character short for GB
    assert not iban_ok("ZZ82WEST12345698765432")  # no such country


def test_jwt_header_must_decode() -> None:
    assert jwt_ok(JWT)
    assert not jwt_ok("eyJub3RhIjoiand0In0.eyJzdWIiOiI0MiJ9.sig")  # header without alg/typ
    assert not jwt_ok("abc.def.ghi")


def test_entropy() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)


# -- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail me: ana@example.com.", [("email", "ana@example.com")]),
        ("手机13812345678，谢谢", [("phone", "13812345678")]),
        ("+86 138 1234 5678", [("phone", "+86 138 1234 5678")]),
        ("(415) 555-0132", [("phone", "(415) 555-0132")]),
        ("+44 20 7946 0958", [("phone", "+44 20 7946 0958")]),
        ("4242-4242-4242-4242", [("card", "4242-4242-4242-4242")]),
        ("身份证11010519491231002X。", [("cn_id", "11010519491231002X")]),
        ("DE89 3704 0044 0532 0130 00", [("iban", "DE89 3704 0044 0532 0130 00")]),
        ("AKIA2E0A8F3B244C9986", [("secret", "AKIA2E0A8F3B244C9986")]),
        (
            "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4",
            [("secret", "9f8e7d6c5b4a39281706f5e4")],
        ),
        (f"jwt={JWT}", [("secret", JWT)]),
        ("DB_PASSWORD=hunter22", [("secret", "hunter22")]),
    ],
)
def test_detects(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I paid $1,234.56 on 2024-03-15 for order 1234567890123.",
        "4242 4242 4242 4241",  # fails Luhn
        "1234567890123456",  # a first digit no card network uses
        "110105194912310021",  # wrong ID check character
        "GB83WEST12345698765432",  # wrong IBAN check digits
        "2024年3月15日，订单号20240315123456，金额12,345.67元",
        "version 1.2.3.4567, pi 3.14159265358979, +12 points",
        "the sk-learn and scikit-learn-compatible-pipeline-builder docs",
        "Password: ****** (hidden)",
        "checksum=9e107d9d372bb6826bd81d3542a419d6",  # a hash under a name that is no secret's
        "call 555-0143, serial 123-456-7890",
    ],
)
def test_hard_negatives(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Cards: explicit card context wins over an order word or "#".
        ("order paid with card #5105105105105100", [("card", "5105105105105100")]),
        ("Card #4242 4242 4242 4242 on file", [("card", "4242 4242 4242 4242")]),
        ("订单用信用卡5105105105105100支付", [("card", "5105105105105100")]),
        ("I paid with 4526 0181 5908 3012 yesterday", [("card", "4526 0181 5908 3012")]),
        # IBANs in lower or mixed case, grouped by dashes.
        ("iban de89370400440532013000", [("iban", "de89370400440532013000")]),
        ("De89370400440532013000", [("iban", "De89370400440532013000")]),
        ("DE89-3704-0044-0532-0130-00", [("iban", "DE89-3704-0044-0532-0130-00")]),
        ("gb82 west 1234 5698 7654 32.", [("iban", "gb82 west 1234 5698 7654 32")]),
        # Secrets after a key name written with a space.
        ("my api key is 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e", [("secret", HEX36)]),
        ("API key: 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e", [("secret", HEX36)]),
        ("my access token is 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e", [("secret", HEX36)]),
        ("secret key = 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e", [("secret", HEX36)]),
        ("我的密钥是3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e，别外传", [("secret", HEX36)]),
        ("令牌：3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e", [("secret", HEX36)]),
        # Full-width digits: found as ASCII ones, the original span reported.
        ("卡号４５３９１４８８０３４３６４６７", [("card", "４５３９１４８８０３４３６４６７")]),
        ("手机１３８１２３４５６７８，谢谢", [("phone", "１３８１２３４５６７８")]),
    ],
)
def test_detects_variants(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "We went to Japan in 2010 2011 2012 2013",  # years; this list passes Luhn
        "We went to Japan in 2010 2011 2012 2013 2014 2015 2016 2017",
        "years 2010-2011-2012-2013",
        "Order 2024031500000008 shipped yesterday",
        "ticket #5105105105105100 closed",
        "tracking number: 5105105105105100",
        "Invoice no. 4526018159083012 is due",
        "订单号5105105105105100已发货",
        "快递单号：5105105105105100",
        "工单 5105105105105100 已关闭",
        "Revenue grew +12 345 678 USD",
        "Revenue grew +12 345 678 dollars",
        "Version +1.2.3.4.5.6.7.8",
        "DE89-3704 0044-0532-0130-00",  # two kinds of separator
        "iban de89370400440532013001",  # wrong check digits
        "the secret key is that we never give up",
        "my api key is in the vault",
    ],
)
def test_hard_negatives_in_context(text: str) -> None:
    assert found(text) == []


def test_year_lists_that_pass_luhn_are_not_cards() -> None:
    lists = [
        " ".join(str(y) for y in years) for years in itertools.combinations(range(2010, 2026), 4)
    ]
    assert any(luhn_ok(t.replace(" ", "")) for t in lists)
    assert all(not redact(f"We went there in {t}").changed for t in lists)


def test_variants_mask_keeps_the_original_characters() -> None:
    assert redact("卡号４５３９１４８８０３４３６４６７").text == "卡号************６４６７"
    assert redact("iban de89370400440532013000").text == "iban de****************3000"
    assert redact("DE89-3704-0044-0532-0130-00").text == "DE**-****-****-****-**30-00"
    phone = RedactionConfig(phone="mask")
    assert redact("手机１３８１２３４５６７８", phone).text == "手机１３８****５６７８"
    assert redact("+44 20 7946 0958 today", phone).text == "+44 ** **** 0958 today"


def test_overlap_goes_to_the_higher_priority_type() -> None:
    # A QQ address holds a mobile-shaped number; it is one email, not a phone inside one.
    assert found("13812345678@qq.com") == [("email", "13812345678@qq.com")]
    # A valid ID number is an ID, even though a card-shaped run of digits is also there.
    assert found("11010519491231002X") == [("cn_id", "11010519491231002X")]


# -- actions and masks -------------------------------------------------------------------


def test_redact_replaces_with_typed_placeholders() -> None:
    text = "ana@example.com 13812345678 4242424242424242 11010519491231002X"
    result = redact(text, EVERYTHING)
    assert result.text == "[EMAIL] [PHONE] [CARD] [CN_ID]"
    assert result.changed
    assert [f.type for f in result.findings] == [
        PIIType.EMAIL, PIIType.PHONE, PIIType.CARD, PIIType.CN_ID,
    ]  # fmt: skip
    assert all(f.action == "redact" for f in result.findings)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("john.doe@example.com", "j***@e***.com"),
        ("4242-4242-4242-4242", "****-****-****-4242"),
        ("4242424242424242", "************4242"),
        ("13812345678", "138****5678"),
        ("+86 138 1234 5678", "+86 138****5678"),
        ("(202) 555-0143", "(***) ***-0143"),
        ("+44 20 7946 0958", "+44 ** **** 0958"),
        ("11010519491231002X", "**************002X"),
        ("DE89 3704 0044 0532 0130 00", "DE** **** **** **** **30 00"),
        ("sk-proj-4fGh7Jk2Lm9Np3Qr5St8Uv1Wx6Yz0Ab", "sk-p****z0Ab"),
        ("AKIA2E0A8F3B244C9986", "****"),
    ],
)
def test_mask_keeps_a_hint(text: str, masked: str) -> None:
    assert redact(text, MASK).text == masked


def test_keep_reports_without_changing() -> None:
    text = "my email is ana@example.com"
    result = redact(text, RedactionConfig(email="keep"))
    assert result.text == text
    assert not result.changed
    assert result.findings == (Finding(PIIType.EMAIL, 12, 27, "keep", "ana@example.com"),)


def test_defaults_redact_secrets_mask_numbers_keep_contacts() -> None:
    text = "ana@example.com, 13812345678, 4242424242424242, key sk-proj-4fGh7Jk2Lm9Np3Qr5St8Uv1Wx"
    assert redact(text).text == "ana@example.com, 13812345678, ************4242, key [SECRET]"


def test_config_is_validated() -> None:
    with pytest.raises(pydantic.ValidationError):
        RedactionConfig(email="hide")  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError):
        RedactionConfig(passport="redact")  # type: ignore[call-arg]
    with pytest.raises(ValidationError) as info:
        redact("text", {"email": "redact"})  # type: ignore[arg-type]
    assert info.value.field == "config"
    with pytest.raises(ValidationError) as info:
        redact(b"bytes")  # type: ignore[arg-type]
    assert info.value.field == "text"
    assert RedactionConfig.uniform("keep").action("secret") == "keep"


# -- JSON values (metadata) --------------------------------------------------------------


def test_redact_data_walks_json_and_names_paths() -> None:
    meta = {
        "contact": {"emails": ["ana@example.com", "no email here"]},
        "api_key": "Zq8vN3kP7rT2wX5yB9mC4hJ6gF1dS0aL",
        "db_password": "hunter22",
        "count": 3,
        "ratio": 0.5,
        "none": None,
    }
    copy = {**meta}
    value, findings = redact_data(meta, EVERYTHING)
    assert value == {
        "contact": {"emails": ["[EMAIL]", "no email here"]},
        "api_key": "[SECRET]",
        "db_password": "[SECRET]",
        "count": 3,
        "ratio": 0.5,
        "none": None,
    }
    assert meta == copy  # the input is not changed
    assert [(f.type.value, f.path) for f in findings] == [
        ("email", "contact.emails[0]"),
        ("secret", "api_key"),
        ("secret", "db_password"),
    ]


def test_redact_data_on_plain_values() -> None:
    assert redact_data("ana@example.com", EVERYTHING)[0] == "[EMAIL]"
    assert redact_data(42)[0] == 42
    assert redact_data({"password": "short"})[0] == {"password": "short"}  # too short


# -- the labelled set --------------------------------------------------------------------


def test_gold_set_precision_and_recall() -> None:
    rows = load_gold(GOLD)
    assert len(rows) >= 80
    assert {r["lang"] for r in rows} == {"en", "zh"}
    negatives = [r for r in rows if not r["findings"]]
    assert len(negatives) >= 30
    table = score_gold(rows).table()
    assert set(table) == {t.value for t in PIIType}
    for kind, row in table.items():
        assert row["precision"] == 1.0, (kind, row)
        assert row["recall"] >= 0.95, (kind, row)
    # Hard negatives: not one detection on any of them.
    assert score_gold(negatives).fp.total() == 0


# -- properties --------------------------------------------------------------------------

PIECES = st.sampled_from(
    [
        "ana@example.com", "13812345678", "+86 138 1234 5678", "(415) 555-0132",
        "4242 4242 4242 4242", "11010519491231002X", "DE89 3704 0044 0532 0130 00",
        "AKIA2E0A8F3B244C9986", JWT, "password: hunter22", "Bearer 9f8e7d6c5b4a39281706",
        "2024-03-15", "$1,234.56", "订单号20240315123456", " ", "，", "@", "+", "-", "*",
    ]
)  # fmt: skip
# Pieces glued together (``"13812345678(415) 555-0132"``) and pieces apart.
GLUED = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=8).map("".join)
# Apart means a separator that is not part of any number: digit groups joined by a bare
# space are ambiguous ("+86 138 1234 5678 4242 4242 4242 4242" is one phone and one card,
# or a longer run; once the phone is replaced, a second pass can read the card alone).
APART = st.lists(
    st.one_of(PIECES, st.text(alphabet=st.characters(categories=["L", "Nd"]), max_size=12)),
    max_size=8,
).map(" / ".join)
CONFIGS = st.builds(
    RedactionConfig, **{t.value: st.sampled_from(["redact", "mask", "keep"]) for t in PIIType}
)
PLACEHOLDERS = [f"[{t.value.upper()}]" for t in PIIType]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GLUED, CONFIGS)
def test_any_text_spans_well_formed_and_deterministic(text: str, config: RedactionConfig) -> None:
    result = redact(text, config)
    last = 0
    for f in result.findings:
        assert last <= f.start < f.end <= len(text)
        last = f.end
        if f.action == "keep":
            assert f.replacement == text[f.start : f.end]
    if not result.changed:
        assert result.text == text
    assert redact(text, config) == result
    # Placeholders are never detected again. (Glued to their neighbours, a second pass
    # may still find a number that the first one's context hid: "…78(415) 555-0132".)
    again = redact(result.text, config).text
    for placeholder in PLACEHOLDERS:
        assert again.count(placeholder) >= result.text.count(placeholder)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(APART, CONFIGS)
def test_idempotent_when_pieces_stand_apart(text: str, config: RedactionConfig) -> None:
    once = redact(text, config).text
    assert redact(once, config).text == once


def test_speed_on_long_adversarial_input() -> None:
    # Long runs of what the patterns look for must not make any of them backtrack.
    runs = [
        "1 " * 50_000, "12-" * 30_000, "a@" * 50_000, "api_key=" * 12_000, "+1(" * 30_000,
        "DE89 " * 20_000, "-----BEGIN PRIVATE KEY-----" * 4_000, "eyJaaaaaaaaa." * 8_000,
    ]  # fmt: skip
    start = time.perf_counter()
    for text in runs:
        redact(text, EVERYTHING)
    assert time.perf_counter() - start < 10.0
