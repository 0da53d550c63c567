"""Temporal values and durations between strata and Python.

Dates, times and datetimes are Python's: a datetime with a named zone
gets a zoneinfo.ZoneInfo, one with a fixed offset a datetime.timezone.
Python keeps microseconds: strata's nanoseconds are cut to microseconds
on the way out.  Cypher's durations (months, days, seconds and
nanoseconds, each with its own sign) are strata.Duration."""
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

# strata_type's values (strata.h)
DATE, LOCALTIME, TIME, LOCALDATETIME, DATETIME = 10, 11, 12, 13, 14
_EPOCH = date(1970, 1, 1).toordinal()
_NS = 1_000_000_000


class Duration:
    """A Cypher duration: months, days, seconds and nanoseconds (0 to
    999,999,999, added to seconds)."""

    __slots__ = ("months", "days", "seconds", "nanoseconds")

    def __init__(self, months=0, days=0, seconds=0, nanoseconds=0):
        extra, nanoseconds = divmod(int(nanoseconds), _NS)
        self.months = int(months)
        self.days = int(days)
        self.seconds = int(seconds) + extra
        self.nanoseconds = nanoseconds

    @classmethod
    def from_timedelta(cls, td):
        return cls(0, td.days, td.seconds, td.microseconds * 1000)

    def __eq__(self, other):
        if not isinstance(other, Duration):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.months, self.days, self.seconds, self.nanoseconds)

    def __repr__(self):
        return (f"Duration(months={self.months}, days={self.days}, "
                f"seconds={self.seconds}, nanoseconds={self.nanoseconds})")


def _clock(nanos):
    secs, ns = divmod(nanos, _NS)
    hours, rest = divmod(secs, 3600)
    minutes, seconds = divmod(rest, 60)
    return hours, minutes, seconds, ns // 1000


def _date(days):
    try:
        return date.fromordinal(days + _EPOCH)
    except (ValueError, OverflowError):
        raise ValueError(f"a strata date {days} days from 1970-01-01 is outside "
                         f"Python's years 1 to 9999") from None


def make_temporal(kind, days, nanos, offset, zone):
    """The Python value of a strata temporal (called by _strata)."""
    if kind == DATE:
        return _date(days)
    clock = _clock(nanos)
    if kind == LOCALTIME:
        return time(*clock)
    fixed = timezone(timedelta(seconds=offset))
    if kind == TIME:
        return time(*clock, tzinfo=fixed)
    d = _date(days)
    if kind == LOCALDATETIME:
        return datetime(d.year, d.month, d.day, *clock)
    value = datetime(d.year, d.month, d.day, *clock, tzinfo=ZoneInfo(zone) if zone else fixed)
    if zone and value.utcoffset() != timedelta(seconds=offset):
        value = value.replace(fold=1)   # the second of two equal local times
    return value


def _nanos_of(t):
    return ((t.hour * 60 + t.minute) * 60 + t.second) * _NS + t.microsecond * 1000


def temporal_fields(value):
    """(kind, days, nanos, offset, zone) of a date, time or datetime, a
    Duration for a timedelta, or None for anything else (called by
    _strata)."""
    if isinstance(value, timedelta):
        return Duration.from_timedelta(value)
    if isinstance(value, datetime):
        days = value.date().toordinal() - _EPOCH
        if value.tzinfo is None or value.utcoffset() is None:
            return (LOCALDATETIME, days, _nanos_of(value), 0, "")
        zone = value.tzinfo.key if isinstance(value.tzinfo, ZoneInfo) else ""
        return (DATETIME, days, _nanos_of(value), int(value.utcoffset().total_seconds()), zone)
    if isinstance(value, date):
        return (DATE, value.toordinal() - _EPOCH, 0, 0, "")
    if isinstance(value, time):
        offset = value.utcoffset()
        if offset is None:
            return (LOCALTIME, 0, _nanos_of(value), 0, "")
        return (TIME, 0, _nanos_of(value), int(offset.total_seconds()), "")
    return None
