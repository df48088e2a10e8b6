"""Dates on the command line (ISO dates and times, or an age such as 30m, 12h, 7d, 2w), and the time span a
question names ("in March", "on 14 February", "yesterday", "two weeks ago"), resolved against a reference time."""

from __future__ import annotations

import re
import time
from datetime import date, datetime, timedelta

_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)$")
_UNIT = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_when(text: str) -> float:
    value = text.strip().lower()
    m = _AGE.match(value)
    if m:
        return time.time() - float(m.group(1)) * _UNIT[m.group(2)]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except (ValueError, OverflowError, OSError):  # OverflowError, OSError: a year the clock cannot hold
        raise ValueError(f"cannot read {text!r} as a date: use 2026-11-01, 2026-11-01T14:00 "
                         "or an age like 7d") from None



MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Days whose date never moves: "on Valentine's day" asked, "today" said in a session dated 14 February.
HOLIDAYS = {"new year's day": (1, 1), "valentine's day": (2, 14), "valentines day": (2, 14),
            "st. patrick's day": (3, 17), "st patrick's day": (3, 17), "april fools' day": (4, 1),
            "april fool's day": (4, 1), "independence day": (7, 4), "fourth of july": (7, 4),
            "4th of july": (7, 4), "halloween": (10, 31), "christmas eve": (12, 24), "christmas day": (12, 25),
            "christmas": (12, 25), "new year's eve": (12, 31)}
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}
_MONTH = r"(January|February|March|April|May(?!\s+(?:I|we|you|he|she|they|it)\b)|June|July|August|September" \
         r"|October|November|December|(?i:january|february|march|april|june|july|august|september|october|november|december))"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
# "May" only capitalised: lower-case it is the verb. Day first, month first, or the month alone.
_NAMED = (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b{_YEAR}"), re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}"),
          re.compile(rf"\b{_MONTH}\b{_YEAR}"))
_N = r"(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few)"
_AGO = re.compile(rf"\b{_N}\s+(day|week|month|year)s?\s+(?:ago|before)\b", re.I)
_LAST = re.compile(r"\b(yesterday|today|tonight|this morning|this afternoon|this evening"
                   r"|(?:last|past|this)\s+(?:week|weekend|month|year)"
                   r"|(?:last|this|on)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b", re.I)
_HOLIDAY = re.compile("|".join(re.escape(h) for h in sorted(HOLIDAYS, key=len, reverse=True)), re.I)
DAY = 86400.0


def named_date(text: str) -> tuple[int | None, int, int | None] | None:
    """(year or None, month, day or None) of the first calendar date a text names, else None."""
    found = _named(text)
    return found[0] if found else None


def _named(text: str) -> tuple[tuple[int | None, int, int | None], int] | None:
    """named_date's answer and where in the text the date starts."""
    for n, pattern in enumerate(_NAMED):
        m = pattern.search(text)
        if m is None:
            continue
        if n == 0:
            day, month, year = m.group(1), m.group(2), m.group(3)
        elif n == 1:
            month, day, year = m.group(1), m.group(2), m.group(3)
        else:
            month, day, year = m.group(1), None, m.group(2)
        if day is not None and not 1 <= int(day) <= 31:
            continue
        return (int(year) if year else None, MONTHS.index(month.lower()) + 1, int(day) if day else None), m.start()
    h = _HOLIDAY.search(text)
    if h is not None:
        month, day = HOLIDAYS[h.group(0).lower()]
        return (None, month, day), h.start()
    return None


def _stamp(d: date) -> float:
    return time.mktime(d.timetuple())


def _month(year: int, month: int) -> tuple[float, float]:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return _stamp(date(year, month, 1)), _stamp(nxt)


def query_span(text: str, as_of: float | None = None) -> tuple[float, float] | None:
    """The span of time (start, end: unix times, local calendar) a query names, resolved against `as_of`
    (default now): a calendar date ("on 14 February", "in March 2023", "on Valentine's day": without a year,
    its last occurrence up to `as_of`), or a relative one ("yesterday", "last week", "two weeks ago", "last
    month", "last Saturday"). None when it names none. A named date wins over a relative one, except "before"
    it: "last weekend before April 10, 2023", "two weeks before August 11" count from that date, and "the
    week before August 3" is the seven days before it; such a span runs on to the date named, included,
    since what happened then may be told (and recorded) up to that day."""
    today = datetime.fromtimestamp(time.time() if as_of is None else as_of).date()
    found = _named(text)
    if found is None:
        return _relative(text, today)
    (year, month, day), at = found
    if year is None:  # the last such date up to now
        year = today.year
        if (month, day or 1) > (today.month, today.day):
            year -= 1
    try:
        d = date(year, month, day or 1)
    except ValueError:
        return None
    if day is not None and re.search(r"\bbefore\s+(?:the\s+)?$", text[:at], re.I):
        start = (_relative(text[:at], d) or (_stamp(d - timedelta(days=7)), 0.0))[0]
        return start, _stamp(d + timedelta(days=1))
    if day is None:
        return _month(year, month)
    return _stamp(d), _stamp(d + timedelta(days=1))


def _relative(text: str, today: date) -> tuple[float, float] | None:
    m = _AGO.search(text)
    if m is not None:
        n = int(m.group(1)) if m.group(1).isdigit() else _COUNT[m.group(1).lower()]
        unit = m.group(2).lower()
        if unit == "month":
            return _month(today.year, today.month - n)
        if unit == "year":
            return _stamp(date(today.year - n, 1, 1)), _stamp(date(today.year - n + 1, 1, 1))
        days = n * (7 if unit == "week" else 1)
        slack = 3 if unit == "week" else (1 if n > 1 else 0)  # "two weeks ago" is not to the day
        return (_stamp(today - timedelta(days=days + slack)), _stamp(today - timedelta(days=days - slack - 1)))
    m = _LAST.search(text)
    if m is None:
        return None
    words = m.group(1).lower().split()
    if words[0] in ("today", "tonight", "this") and words[-1] in ("morning", "afternoon", "evening", "today",
                                                                    "tonight"):
        return _stamp(today), _stamp(today + timedelta(days=1))
    if words[0] == "yesterday":
        return _stamp(today - timedelta(days=1)), _stamp(today)
    which, unit = words[0], words[-1]
    monday = today - timedelta(days=today.weekday())
    if unit in WEEKDAYS:  # the last such day before today ("on Saturday": this week's if past, else last)
        back = (today.weekday() - WEEKDAYS.index(unit)) % 7 or 7
        d = today - timedelta(days=back)
        return _stamp(d), _stamp(d + timedelta(days=1))
    if unit == "weekend":
        sat = monday - timedelta(days=2) if which == "last" or today.weekday() < 5 else monday + timedelta(days=5)
        return _stamp(sat), _stamp(sat + timedelta(days=2))
    if unit == "week":
        if which == "past":
            return _stamp(today - timedelta(days=7)), _stamp(today + timedelta(days=1))
        if which == "last":  # both readings: the calendar week before this one, and the past seven days or so
            return _stamp(today - timedelta(days=14)), _stamp(today + timedelta(days=1))
        return _stamp(monday), _stamp(monday + timedelta(days=7))
    if unit == "month":
        if which == "past":
            return _stamp(today - timedelta(days=31)), _stamp(today + timedelta(days=1))
        return _month(today.year, today.month - (which == "last"))
    year = today.year - (which == "last")
    if which == "past":
        return _stamp(today - timedelta(days=366)), _stamp(today + timedelta(days=1))
    return _stamp(date(year, 1, 1)), _stamp(date(year + 1, 1, 1))
