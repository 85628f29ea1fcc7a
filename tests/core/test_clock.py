"""The clock's parser: the storage format's fast path reads exactly what the general path reads."""

from datetime import datetime, timezone

import pytest

from mindos.core import clock
from mindos.errors import InvalidInput


def test_storage_format_parses_to_utc():
    assert clock.parse("2026-01-01T10:00:00Z") == datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
    assert clock.normalize("2026-01-01T10:00:00Z") == "2026-01-01T10:00:00Z"


@pytest.mark.parametrize("text", ["2026-01-01T10:00+01Z", "2026-01-01T10+01:00Z", "2026-01-01T10:-0800Z"])
def test_an_offset_followed_by_z_is_refused_not_misread(text):
    # 20 characters ending in Z, yet not the storage format: the offset is never dropped
    with pytest.raises(InvalidInput):
        clock.parse(text)


@pytest.mark.parametrize("text", ["2026-01-01T18:00.80Z", "1026-01-01T10500702Z"])
def test_a_fraction_in_twenty_characters_is_dropped_like_any_other(text):
    assert clock.parse(text).microsecond == 0
