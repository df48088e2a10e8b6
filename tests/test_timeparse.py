"""The span of time a query names, resolved against a reference time: calendar dates with and without a
year, fixed holidays, relative days, weeks, months and years, "before" a date, and what is not a date."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

from memory.base.timeparse import named_date, query_span

AS_OF = datetime(2023, 5, 30, 23, 40).timestamp()  # a Tuesday


def days(text: str, as_of: float = AS_OF) -> tuple[str, str] | None:
    """The span as local dates: first day, and the day after the last."""
    span = query_span(text, as_of)
    return None if span is None else tuple(time.strftime("%Y-%m-%d", time.localtime(t)) for t in span)


@pytest.mark.parametrize(("text", "want"), [
    ("What did I buy on May 3, 2023?", ("2023-05-03", "2023-05-04")),
    ("what happened on 14 February", ("2023-02-14", "2023-02-15")),
    ("the 14th of February", ("2023-02-14", "2023-02-15")),
    ("What did I do on Valentine's day?", ("2023-02-14", "2023-02-15")),
    ("which museums did I visit in March", ("2023-03-01", "2023-04-01")),
    ("in December", ("2022-12-01", "2023-01-01")),  # no year: the last December up to the question
    ("a trip in June 2022", ("2022-06-01", "2022-07-01")),
    ("what did I eat yesterday", ("2023-05-29", "2023-05-30")),
    ("a call this morning", ("2023-05-30", "2023-05-31")),
    ("how many hours did I jog last week", ("2023-05-16", "2023-05-31")),  # calendar week or past 7 days
    ("this week", ("2023-05-29", "2023-06-05")),
    ("the museum two weeks ago", ("2023-05-13", "2023-05-20")),  # 14 days back, give or take 3
    ("shoes I cleaned last month", ("2023-04-01", "2023-05-01")),
    ("a charity event a month ago", ("2023-04-01", "2023-05-01")),
    ("the post 5 days ago", ("2023-05-24", "2023-05-27")),
    ("the party last Saturday", ("2023-05-27", "2023-05-28")),
    ("camping this year", ("2023-01-01", "2024-01-01")),
    # "before" a date counts from that date, and runs on to it: the event may be told on the day
    ("What did she do last weekend before April 10, 2023?", ("2023-04-08", "2023-04-11")),
    ("the puppy she got two weeks before August 11, 2023", ("2023-07-25", "2023-08-12")),
    ("the week before August 3, 2023", ("2023-07-27", "2023-08-04")),
])
def test_a_query_names_a_span_resolved_against_its_own_time(text: str, want: tuple[str, str]) -> None:
    assert days(text) == want


@pytest.mark.parametrize("text", ["May I ask how the migration went?", "you may go", "what is the pool size",
                                  "how many days ago did I go", "remember this for later"])
def test_words_that_are_not_dates_name_no_span(text: str) -> None:
    assert query_span(text, AS_OF) is None


def test_the_reference_time_moves_the_span_and_defaults_to_now() -> None:
    assert days("yesterday", datetime(2024, 1, 1, 9).timestamp()) == ("2023-12-31", "2024-01-01")
    assert days("in March", datetime(2023, 2, 1).timestamp()) == ("2022-03-01", "2022-04-01")
    start, end = query_span("today") or (0.0, 0.0)
    assert start <= time.time() < end
    assert named_date("on 3 June, 2023") == (2023, 6, 3) and named_date("no date here") is None
