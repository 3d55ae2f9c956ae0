"""Write `tests/fixtures/store-v1.db`: a store as schema version 1 writes it. Historical.

Kept to show how the fixture was made; run it only from a checkout whose schema is version 1
(regenerating it with a later schema would defeat its purpose: proving that old stores migrate).
It holds one run paused on a deferred write of `calc.py`, in a workspace at `/fixture/ws`.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from ioh_tui.engine import TaskContract, run
from ioh_tui.policy import DeferAll
from ioh_tui.providers import ScriptedProvider
from ioh_tui.providers.testing.scenario import parse_scenario
from ioh_tui.sandbox import select
from ioh_tui.store import Store
from ioh_tui.store.schema import SCHEMA_VERSION
from ioh_tui.verification import Command

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "store-v1.db"
FIX = {
    "name": "edit_file",
    "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"},
}


async def main() -> None:
    assert SCHEMA_VERSION == 1, "this fixture is the version-1 store"
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        (ws / "check_calc.py").write_text("import calc\n\nassert calc.add(2, 3) == 5\n")
        db = Path(tmp) / "store.db"
        provider = ScriptedProvider(
            parse_scenario(
                {"turns": [{"text": "Reading.", "tool_calls": [FIX]}, {"text": "Done."}]}
            )
        )
        contract = TaskContract.workspace("fix add", ws, Command(["python3", "check_calc.py"]))
        async with Store.open(db) as store:
            result = await run(
                contract, provider, store=store, approver=DeferAll(), sandbox=select("floor")
            )
            assert result.outcome == "awaiting_approval"
            await store._db.execute(
                "UPDATE runs SET root = '/fixture/ws', contract = replace(contract, ?, '/fixture/ws')",
                (str(ws),),
            )
            await store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        shutil.copy(db, OUT)
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
