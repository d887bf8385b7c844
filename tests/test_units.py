"""audiokit.units: exact parsing of durations, frequencies and rates."""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiokit.errors import ParameterError
from audiokit.units import Duration, parse_duration, parse_frequency, parse_rate, round_half_up

rates = st.integers(min_value=1, max_value=3_072_000)


# --- round_half_up -----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Fraction(5, 2), 3),
        (Fraction(-5, 2), -3),
        (Fraction(3, 2), 2),
        (Fraction(7, 3), 2),
        (Fraction(-7, 3), -2),
        (Fraction(0), 0),
    ],
)
def test_round_half_up_examples(value, expected):
    assert round_half_up(value) == expected


@given(st.integers(-(10**9), 10**9), st.integers(1, 10**6))
def test_round_half_up_is_nearest_with_ties_away_from_zero(p, q):
    x = Fraction(p, q)
    r = round_half_up(x)
    assert isinstance(r, int)
    assert abs(x - r) <= Fraction(1, 2)
    if abs(x - r) == Fraction(1, 2):
        assert abs(r) > abs(x)


# --- durations ---------------------------------------------------------------


@given(ms=st.integers(1, 10**7), sr=rates)
def test_milliseconds_to_samples_is_exact(ms, sr):
    assert parse_duration(f"{ms}ms").to_samples(sr) == round_half_up(Fraction(ms * sr, 1000))


@given(us=st.integers(1, 10**9), sr=rates)
def test_microseconds_to_samples_is_exact(us, sr):
    expected = round_half_up(Fraction(us * sr, 10**6))
    assert parse_duration(f"{us}us").to_samples(sr) == expected
    assert parse_duration(f"{us}µs").to_samples(sr) == expected


@given(mantissa=st.integers(1, 10**12), decimals=st.integers(0, 9), sr=rates)
def test_decimal_seconds_parse_exactly(mantissa, decimals, sr):
    whole, frac = divmod(mantissa, 10**decimals)
    text = f"{whole}.{frac:0{decimals}d}s" if decimals else f"{whole}s"
    duration = parse_duration(text)
    assert duration.value == Fraction(mantissa, 10**decimals) == Fraction(Decimal(text[:-1]))
    assert not duration.in_samples
    assert duration.to_samples(sr) == round_half_up(Fraction(mantissa * sr, 10**decimals))


def test_nine_milliseconds_at_48k_is_432_not_431():
    assert int(0.009 * 48000) == 431  # what float truncation gives
    assert parse_duration("0.009s").to_samples(48000) == 432
    assert parse_duration("9ms").to_samples(48000) == 432


@pytest.mark.parametrize("text", ["25ms", "0.025s", "0.025 s", " 25ms ", "25MS", "25000us", "2.5e-2s", ".025s"])
def test_duration_spellings_of_25ms(text):
    duration = parse_duration(text)
    assert duration.value == Fraction(1, 40)
    assert duration.to_samples(16000) == 400
    assert duration.text == text


@given(n=st.integers(1, 10**12), sr=rates)
def test_bare_integer_means_samples(n, sr):
    duration = parse_duration(str(n))
    assert duration == Duration(Fraction(n), True, str(n))
    assert duration.to_samples(sr) == n
    assert duration.to_seconds(sr) == Fraction(n, sr)


@pytest.mark.parametrize("text", ["400samples", "400 samples", "400sample", "400smp"])
def test_explicit_sample_units(text):
    assert parse_duration(text).to_samples(8000) == 400


@pytest.mark.parametrize("text", ["2.5", "400.5", "1e-1", "0.5samples"])
def test_fractional_samples_rejected(text):
    with pytest.raises(ParameterError, match=r"a bare number means samples and must be whole; add s or ms"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["-5ms", "-1", "-0.5s"])
def test_negative_duration_rejected(text):
    with pytest.raises(ParameterError, match=rf"invalid duration '{text}': must be > 0"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["0", "0ms", "0.0s"])
def test_zero_duration_rejected_unless_allowed(text):
    with pytest.raises(ParameterError, match=rf"invalid duration '{text}': must be > 0"):
        parse_duration(text)
    assert parse_duration(text, allow_zero=True).to_samples(48000) == 0


def test_negative_rejected_even_when_zero_allowed():
    with pytest.raises(ParameterError, match=r"invalid duration '-1ms': must be >= 0"):
        parse_duration("-1ms", allow_zero=True)


@pytest.mark.parametrize("text", ["", "ms", "abc", "1.2.3s", "10 m s", "5hz", "nan", "inf", "1e", "--5ms", "1/2s", "5min"])
def test_invalid_duration_text_rejected(text):
    with pytest.raises(ParameterError, match=r"invalid duration .*use e\.g\. 25ms, 0\.025s"):
        parse_duration(text)


def test_duration_seconds_of_sample_count_and_time():
    assert parse_duration("441").to_seconds(44100) == Fraction(1, 100)
    assert parse_duration("10ms").to_seconds(44100) == Fraction(1, 100)


# --- frequencies and rates -----------------------------------------------------


@pytest.mark.parametrize("text", ["8kHz", "8khz", "8KHZ", "8000Hz", "8000", "8k", "8 kHz", "8000.0", "8e3"])
def test_frequency_spellings_of_8k(text):
    assert parse_frequency(text) == 8000


@pytest.mark.parametrize(("text", "hz"), [("1.5k", 1500), ("44.1kHz", 44100), ("0.5", Fraction(1, 2)), ("1MHz", 10**6), ("0", 0)])
def test_frequency_values(text, hz):
    assert parse_frequency(text) == hz


@given(n=st.integers(0, 10**9))
def test_integer_frequencies(n):
    assert parse_frequency(f"{n}Hz") == n
    assert parse_frequency(str(n)) == n
    assert parse_frequency(f"{n}k") == 1000 * n == parse_frequency(f"{n}kHz")


def test_negative_frequency_rejected():
    with pytest.raises(ParameterError, match=r"invalid frequency '-440': must be >= 0"):
        parse_frequency("-440")


def test_zero_frequency_rejected_when_not_allowed():
    with pytest.raises(ParameterError, match=r"invalid frequency '0Hz': must be > 0"):
        parse_frequency("0Hz", allow_zero=False)


@pytest.mark.parametrize("text", ["", "Hz", "k", "8 kilohertz", "1/2", "8kk", "8ms", "fast", "1e"])
def test_invalid_frequency_text_rejected(text):
    with pytest.raises(ParameterError, match=r"invalid frequency .*use e\.g\. 440, 440Hz, 8kHz or 1\.5k"):
        parse_frequency(text)


@pytest.mark.parametrize(
    ("text", "sr"), [("16000", 16000), ("16k", 16000), ("44.1kHz", 44100), ("22.05k", 22050), ("8000Hz", 8000)]
)
def test_parse_rate(text, sr):
    value = parse_rate(text)
    assert value == sr and type(value) is int


@given(n=st.integers(1, 10**7))
def test_parse_rate_integers(n):
    assert parse_rate(str(n)) == n


@pytest.mark.parametrize("text", ["0", "0Hz", "-16000"])
def test_rate_not_positive_rejected(text):
    with pytest.raises(ParameterError, match=r"must be > 0"):
        parse_rate(text)


@pytest.mark.parametrize("text", ["22.05", "44.1001k"])
def test_fractional_rate_rejected(text):
    with pytest.raises(ParameterError, match=rf"invalid sample rate '{text}': must be a whole number of Hz"):
        parse_rate(text)


# --- robustness: any text gives a value or a ParameterError, never another exception


near_valid = st.text(alphabet="0123456789.eE+-_ smuµkKhHzZ/٣\t", max_size=12)


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=20), near_valid))
def test_any_text_is_a_value_or_a_parameter_error(text):
    for parse in (parse_duration, parse_frequency, parse_rate):
        try:
            parse(text)
        except ParameterError as exc:
            assert str(exc).startswith("invalid ") and repr(text) in str(exc)


@pytest.mark.parametrize(
    "text",
    ["1" * 5000, "1" * 5000 + "ms", "0." + "1" * 5000 + "s", "1e5000s", "1e99999999s", "1e-99999999s"],
    ids=["5000-digit-samples", "5000-digit-ms", "5000-decimals", "exp-5000", "exp-1e8", "exp-minus-1e8"],
)
def test_absurdly_long_numbers_rejected_quickly(text):
    start = time.perf_counter()
    with pytest.raises(ParameterError, match="invalid duration"):
        parse_duration(text)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("text", ["1" * 5000, "1e99999999k"], ids=["5000-digits", "exp-1e8"])
def test_absurdly_long_frequencies_rejected(text):
    with pytest.raises(ParameterError, match="invalid frequency"):
        parse_frequency(text)
