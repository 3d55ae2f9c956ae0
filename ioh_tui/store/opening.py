"""The checks made before a store file is used: in `ioh_tui/dbfile/check.py`.

There so the command line checks a store before the app starts without loading this package
(aiosqlite, the asyncio store): issue 23.
"""

from ioh_tui.dbfile.check import check_schema, check_store, expected_tables, unusable

__all__ = ["check_schema", "check_store", "expected_tables", "unusable"]
