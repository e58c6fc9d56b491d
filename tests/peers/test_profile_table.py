"""docs/profiles.md names every profile and recipe the registry has (issue
14): the table is written by hand, this test keeps it complete."""

import pathlib
import re

import lowbit

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "profiles.md"


def _names_in_doc() -> set:
    return set(re.findall(r"`([a-z0-9_.:-]+)`", DOC.read_text(encoding="utf-8")))


def test_every_profile_is_in_the_table():
    missing = sorted(set(lowbit.profiles) - _names_in_doc())
    assert not missing, f"docs/profiles.md lacks the profiles {missing}"


def test_every_recipe_is_in_the_table():
    missing = sorted(set(lowbit.recipes) - _names_in_doc())
    assert not missing, f"docs/profiles.md lacks the recipes {missing}"


def test_the_table_names_no_recipe_the_registry_lacks():
    named = {n for n in _names_in_doc() if re.fullmatch(r"[a-z0-9_]+:[a-z0-9-]+", n)}
    stale = sorted(named - set(lowbit.recipes))
    assert not stale, f"docs/profiles.md names recipes lowbit does not have: {stale}"


README = DOC.parents[1] / "README.md"


def _readme_profile_table() -> set:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Profiles\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`([a-z0-9_.-]+)`", section))


def test_the_readme_table_names_every_element_and_recipe_profile():
    named = _readme_profile_table()
    recipe_profiles = {name.split(":", 1)[1] for name in lowbit.recipes}
    missing = sorted((set(lowbit.profiles) | recipe_profiles) - named)
    assert not missing, f"README.md's profile table lacks {missing}"
