"""Costing calls from a price table: known models, unknown ones, and user TOML files."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioh_tui.core.errors import ConfigError
from ioh_tui.core.transcript import Usage
from ioh_tui.providers.pricing import Price, PriceTable

TABLE = PriceTable({"model-a": Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)})


def test_cost_bills_fresh_input_cache_and_output_separately() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_read_tokens=400_000,
        cache_write_tokens=100_000,
    )
    # fresh 500k * 3 + out 100k * 15 + read 400k * 0.3 + write 100k * 3.75, per million
    assert TABLE.cost("model-a", usage) == pytest.approx(1.5 + 1.5 + 0.12 + 0.375)


def test_unknown_model_has_no_cost_not_zero() -> None:
    assert TABLE.cost("model-b", Usage(input_tokens=10)) is None
    assert TABLE.cost(None, Usage(input_tokens=10)) is None


@pytest.mark.parametrize(
    "slug", ["model-a", "vendor/model-a", "model-a-20250101", "model-a-2025-01-01"]
)
def test_slug_variants_find_the_price(slug: str) -> None:
    assert TABLE.price_for(slug) is TABLE.prices["model-a"]


def test_a_longer_name_is_not_priced_by_its_prefix() -> None:
    assert TABLE.price_for("model-a-pro") is None


def test_builtin_table_is_dated_and_prices_a_known_model() -> None:
    builtin = PriceTable.builtin()
    assert builtin.as_of
    assert builtin.cost("claude-sonnet-4-20250514", Usage(output_tokens=1_000_000)) == 15.0


def test_user_file_extends_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        'as_of = "2026-01-01"\n'
        '[models."model-a"]\ninput = 1\noutput = 2\n'
        '[models."local"]\ninput = 0\noutput = 0\n'
    )
    table = TABLE.extended(PriceTable.load(path))
    assert table.as_of == "2026-01-01"
    assert table.prices["model-a"] == Price(1.0, 2.0)
    assert table.cost("local", Usage(input_tokens=5, output_tokens=5)) == 0.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models = 3", "models must be a table"),
        ('[models."m"]\ninput = 1', "input and output prices are required"),
        ('[models."m"]\ninput = -1\noutput = 1', "input must be a number >= 0"),
        ('[models."m"]\ninput = 1\noutput = 1\nextra = 2', "unknown key 'extra'"),
        ('[models."m"]\ninput = nan\noutput = 1', "must be finite"),
        ("as_of = 5", "as_of must be a string"),
        ("not toml [", "not valid TOML"),
    ],
)
def test_bad_price_files_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PriceTable.from_toml(text)


def test_missing_price_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read price table"):
        PriceTable.load(tmp_path / "missing.toml")
