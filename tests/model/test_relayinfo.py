"""relay-log.info (WL#344 "Durability of option"): both formats byte for byte, garbage tails left
by in-place overwrites, and an error naming the line and field for everything unreadable."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replcheck.spec.formats import MAX_MASTER_DELAY
from replcheck.model.relayinfo import RelayLogInfo, RelayLogInfoError, overwrite, parse

NEW = "5\n./relay.000001\n4\nbin.000001\n4\n0\n"

# Names never contain \n; a relay log name always contains a '.', so it is never an integer.
name_chars = st.characters(blacklist_characters="\n", blacklist_categories=("Cs",))
relay_names = st.builds(lambda a, b: f"{a}.{b}", st.text(name_chars, max_size=12), st.text(name_chars, max_size=8))
master_names = st.text(name_chars, max_size=20)
positions = st.integers(min_value=0, max_value=2**64)
infos = st.builds(RelayLogInfo, relay_names, positions, master_names, positions, st.integers(0, MAX_MASTER_DELAY))
garbage = st.text(max_size=60)
examples = settings(max_examples=150, deadline=None)


def values(info: RelayLogInfo) -> tuple:
    return info.relay_log_name, info.relay_log_pos, info.master_log_name, info.master_log_pos, info.delay


def old_format(info: RelayLogInfo) -> str:
    return "".join(f"{f}\n" for f in values(info)[:4])


# -- round trips ----------------------------------------------------------------------------------
def test_new_format_layout():
    assert RelayLogInfo("./relay.000001", 4, "bin.000001", 4, 0).encode() == NEW
    assert parse(NEW) == RelayLogInfo("./relay.000001", 4, "bin.000001", 4, 0)


@examples
@given(infos, garbage)
def test_new_format_round_trip(info, tail):
    content = info.encode() + tail
    got = parse(content)
    assert values(got) == values(info) and not got.old_format
    assert got.encode() + got.garbage == content  # byte for byte


@examples
@given(infos, garbage)
def test_old_format_round_trip(info, tail):
    content = old_format(info) + tail
    got = parse(content)
    assert values(got) == values(info)[:4] + (0,) and got.old_format  # no delay field: 0
    assert old_format(got) + got.garbage == content
    assert got.encode() + got.garbage == content  # the codec writes the old format back byte for byte


# -- garbage tails --------------------------------------------------------------------------------
@examples
@given(infos, infos, garbage, st.booleans())
def test_overwrite_leaves_a_tail_that_still_parses_to_the_new_values(old, new, tail, old_was_old_format):
    before = (old_format(old) if old_was_old_format else old.encode()) + tail
    after = overwrite(before, new)
    # In place and never truncated: the file's bytes past the new content are the old ones, even
    # when that cuts a multi-byte character (kept as surrogate escapes, as the file's raw bytes).
    raw = lambda text: text.encode("utf-8", "surrogateescape")  # noqa: E731
    n = len(raw(new.encode()))
    assert raw(after) == raw(new.encode()) + raw(before)[n:]
    got = parse(after)
    assert values(got) == values(new) and raw(got.garbage) == raw(before)[n:]


def test_shorter_file_over_a_longer_one():
    longer = "5\n./relay.000009\n98765\nbin.000002\n123456\n3600\n"
    after = overwrite(longer, RelayLogInfo("./relay.000010", 4, "bin.000003", 4, 7))
    # The tail holds the old master_log_pos and delay: numbers, but not fields.
    assert after == "5\n./relay.000010\n4\nbin.000003\n4\n7\n123456\n3600\n"
    got = parse(after)
    assert values(got) == ("./relay.000010", 4, "bin.000003", 4, 7) and got.garbage == "123456\n3600\n"


def test_old_format_with_numeric_garbage_reads_delay_0():
    # The seed's upgrade hazard: garbage that looks like a fifth field is not a delay.
    got = parse("./relay.000003\n1234\nbin.000001\n5678\n99999999\ngarbage\n")
    assert got.old_format and got.delay == 0 and got.garbage == "99999999\ngarbage\n"
    assert values(got)[:4] == ("./relay.000003", 1234, "bin.000001", 5678)


# -- number_of_fields -----------------------------------------------------------------------------
@pytest.mark.parametrize("count", [0, 1, 4, "04"])
def test_fewer_than_5_fields_is_an_error_on_line_1(count):
    with pytest.raises(RelayLogInfoError) as e:
        parse(f"{count}\n./relay.000001\n4\nbin.000001\n4\n0\n")
    assert (e.value.line, e.value.field) == (1, "number_of_fields")


def test_fields_beyond_5_are_skipped():
    got = parse("7\n./relay.000001\n4\nbin.000001\n4\n9\nfuture-6\nfuture-7\ntail")
    assert values(got) == ("./relay.000001", 4, "bin.000001", 4, 9) and not got.old_format
    assert got.garbage == "tail"


def test_declared_fields_missing_names_the_line():
    with pytest.raises(RelayLogInfoError) as e:
        parse("7\n./relay.000001\n4\nbin.000001\n4\n9\n")
    assert e.value.line == 7  # the 6th field would be on line 7


def test_declared_fields_missing_names_the_field():
    with pytest.raises(RelayLogInfoError) as e:
        parse("7\n./relay.000001\n4\nbin.000001\n4\n9\n")
    assert e.value.field == "field 6"


# -- missing lines and bad numbers ----------------------------------------------------------------
@pytest.mark.parametrize("content,line,field", [
    ("", 1, "first line"),
    ("5", 1, "first line"),
    ("5\n", 2, "relay_log_name"),
    ("5\n./relay.000001\n", 3, "relay_log_pos"),
    ("5\n./relay.000001\n4\n", 4, "master_log_name"),
    ("5\n./relay.000001\n4\nbin.000001\n", 5, "master_log_pos"),
    ("5\n./relay.000001\n4\nbin.000001\n4\n", 6, "delay"),
    ("5\n./relay.000001\n4\nbin.000001\n4\n7", 6, "delay"),  # not \n-terminated
    ("./relay.000001\n", 2, "relay_log_pos"),
    ("./relay.000001\n4\nbin.000001\n", 4, "master_log_pos"),
    ("./relay.000001\n4\nbin.000001\n4", 4, "master_log_pos"),
])
def test_missing_line(content, line, field):
    with pytest.raises(RelayLogInfoError) as e:
        parse(content)
    assert (e.value.line, e.value.field) == (line, field)
    assert str(e.value).startswith(f"line {line}: {field}: ")


@pytest.mark.parametrize("bad", ["abc", "-1", "12a", "", " 4", "1.5", "\u0663"])
@pytest.mark.parametrize("content,line,field", [
    ("5\n./relay.000001\n{}\nbin.000001\n4\n0\n", 3, "relay_log_pos"),
    ("5\n./relay.000001\n4\nbin.000001\n{}\n0\n", 5, "master_log_pos"),
    ("5\n./relay.000001\n4\nbin.000001\n4\n{}\n", 6, "delay"),
    ("./relay.000001\n{}\nbin.000001\n4\n", 2, "relay_log_pos"),
    ("./relay.000001\n4\nbin.000001\n{}\n", 4, "master_log_pos"),
])
def test_non_numeric_field(content, line, field, bad):
    with pytest.raises(RelayLogInfoError) as e:
        parse(content.format(bad))
    assert (e.value.line, e.value.field) == (line, field)


# -- the delay's range ----------------------------------------------------------------------------
def test_delay_up_to_2_31_minus_1():
    assert parse(f"5\n./relay.000001\n4\nbin.000001\n4\n{MAX_MASTER_DELAY}\n").delay == 2**31 - 1
    with pytest.raises(RelayLogInfoError) as e:
        parse(f"5\n./relay.000001\n4\nbin.000001\n4\n{MAX_MASTER_DELAY + 1}\n")
    assert (e.value.line, e.value.field) == (6, "delay")
