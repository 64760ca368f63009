"""planner.core.versions: reading release strings and refusing releases older than modelled."""

import pytest

from planner.core.versions import Change, ReleaseLine, parse_release, release_key


@pytest.mark.parametrize("text, want", [
    ("4.36.0", ("dotted", (4, 36))), ("4.36", ("dotted", (4, 36))), ("v0.8.5", ("dotted", (0, 8, 5))),
    ("0.6.3.post1", ("dotted", (0, 6, 3))), ("2024.12.4", ("dotted", (2024, 12, 4))),
    ("2.5.0rc1", ("dotted", (2, 5))), (2024.12, ("dotted", (2024, 12))), ("b4567", ("build", (4567,))),
])
def test_parse_release(text, want):
    assert parse_release(text) == want


def test_dotted_releases_compare_number_by_number():
    # 4.9 is older than 4.36 (a string comparison would say the opposite)
    assert release_key("4.9") < release_key("4.36.0") < release_key("4.36.1")


@pytest.mark.parametrize("bad", ["latest", "", "4..3", True, None, "b12x"])
def test_parse_release_refuses(bad):
    with pytest.raises(ValueError) as err:
        parse_release(bad)
    assert "release" in str(err.value)


LINE = ReleaseLine("tool", current="2.0", oldest="1.2", changes=(Change("1.5", "x", "https://example.org"),))


def test_resolve_defaults_to_current_and_keeps_the_text():
    assert LINE.resolve(None) == "2.0"
    assert LINE.resolve("1.2.0") == "1.2.0"


def test_resolve_refuses_older_than_modelled_naming_the_oldest():
    with pytest.raises(ValueError) as err:
        LINE.resolve("1.1.9")
    assert "oldest release planner models (1.2)" in str(err.value)


def test_resolve_refuses_another_scheme():
    with pytest.raises(ValueError) as err:
        LINE.resolve("b4000")
    assert "dotted release" in str(err.value)


def test_has_a_change():
    assert LINE.has("1.5", "1.5") and LINE.has("2.0", "1.5") and not LINE.has("1.4.9", "1.5")
