"""Every value kind both ways: parameters in, results out."""
import math
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

import strata


def echo(g, value):
    (row,) = list(g.query("RETURN $x AS x", x=value))
    return row[0]


@pytest.mark.parametrize("value", [
    None, True, False, 0, -1, 2**63 - 1, -2**63, 1.5, -0.0, math.inf, "", "text", "é漢🙂",
    [], [1, 2, 3], [1, "a", None, [2.5, [True]]], {}, {"a": 1, "b": {"c": [1, "x"]}},
    date(2020, 2, 29), date(1, 1, 1), date(9999, 12, 31),
    time(23, 59, 59, 999999), time(12, 0, tzinfo=timezone(timedelta(hours=5, minutes=45))),
    datetime(1969, 12, 31, 23, 59, 59, 500000),
    datetime(2021, 3, 28, 3, 30, tzinfo=ZoneInfo("Europe/Stockholm")),
    datetime(1999, 1, 1, tzinfo=timezone(timedelta(hours=-8))),
    strata.Duration(14, 3, 14706, 500000000), strata.Duration(-1, -2, -3, 0),
])
def test_round_trip(g, value):
    back = echo(g, value)
    assert back == value
    assert type(back) is type(value)


def test_tuple_is_a_list(g):
    assert echo(g, (1, 2)) == [1, 2]


def test_nan(g):
    assert math.isnan(echo(g, math.nan))


def test_timedelta_is_a_duration(g):
    assert echo(g, timedelta(days=2, seconds=5, microseconds=7)) == strata.Duration(0, 2, 5, 7000)


def test_zone_names_survive(g):
    value = echo(g, datetime(2020, 6, 1, 12, tzinfo=ZoneInfo("America/New_York")))
    assert value.tzinfo.key == "America/New_York"
    assert value.utcoffset() == timedelta(hours=-4)


def test_temporals_from_cypher(g):
    (row,) = g.query("RETURN date('2020-01-02') AS d, localtime('10:11:12.000000999') AS t, "
                     "datetime('2021-10-31T02:30:00+01:00[Europe/Stockholm]') AS dt, "
                     "duration('P1Y2M3DT4H') AS dur")
    d, t, dt, dur = row
    assert d == date(2020, 1, 2)
    assert t == time(10, 11, 12)     # nanoseconds are cut to microseconds
    assert dt.utcoffset() == timedelta(hours=1) and dt.fold == 1
    assert dur == strata.Duration(14, 3, 4 * 3600, 0)


def test_integers_outside_64_bits(g):
    with pytest.raises(TypeError, match="parameter 'big'.*64 bits"):
        g.query("RETURN $big", big=2**63)
    with pytest.raises(TypeError, match=r"parameter 'xs'\[1\]"):
        g.query("RETURN $xs", xs=[1, -2**64])


def test_non_string_keys(g):
    with pytest.raises(TypeError, match="parameter 'm'.*not a string"):
        g.query("RETURN $m", m={1: 2})
    with pytest.raises(TypeError, match="parameter names"):
        g.query("RETURN 1", {1: 2})


def test_unsupported_objects(g):
    for bad in (object(), {1, 2}, b"bytes", 1j):
        with pytest.raises(TypeError, match="parameter 'x'"):
            g.query("RETURN $x", x=bad)


def test_params_and_keywords_merge(g):
    (row,) = g.query("RETURN $a + $b", {"a": 1}, b=2)
    assert row == (3,)


def test_params_must_be_a_dict(g):
    with pytest.raises(TypeError):
        g.query("RETURN 1", [1])
