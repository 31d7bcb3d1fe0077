"""A structural search, and a staged rewrite resolved: staging writes nothing, accept writes it all."""

from __future__ import annotations

from pathlib import Path

from agent_tools import Host, Run
from conftest import RUST_MAIN


def test_ast_grep_finds_the_call_with_its_place_and_capture(rust_root: Path) -> None:
    with Run(rust_root, cap="read") as run:
        r = run.call_sync("ast_grep", {"pattern": "$X.unwrap()", "language": "rust"})
    assert not r.is_error and not r.refused, r.text
    assert 'main.rs:2:17: "4".parse().unwrap()  [$X = "4".parse()]' in r.text
    assert r.structured["total"] == 1
    match = r.structured["matches"][0]
    assert (match["file"], match["line"], match["column"]) == ("main.rs", 2, 17)
    assert match["captures"]["X"]["text"] == '"4".parse()'


def test_ast_edit_stages_and_resolve_accept_writes(rust_root: Path) -> None:
    with Run(rust_root, cap="write") as run:
        staged = run.call_sync("ast_edit", {"pattern": "$X.unwrap()", "rewrite": "$X?", "language": "rust"})
        assert not staged.is_error, staged.text
        assert staged.text.startswith("(proposed) 1 replacement in 1 file"), staged.text
        assert (rust_root / "main.rs").read_text() == RUST_MAIN
        edit_id = staged.structured["edit_id"]
        accepted = run.call_sync("resolve", {"edit_id": edit_id, "action": "accept"})
        assert not accepted.is_error, accepted.text
        assert (rust_root / "main.rs").read_text() == RUST_MAIN.replace(".unwrap()", "?")
        # The staged change is spent: a second accept is an error the model reads.
        again = run.call_sync("resolve", {"edit_id": edit_id, "action": "accept"})
        assert again.is_error and not again.refused, again.text


def test_resolve_discard_writes_nothing(rust_root: Path) -> None:
    with Run(rust_root, cap="write") as run:
        staged = run.call_sync("ast_edit", {"pattern": "$X.unwrap()", "rewrite": "$X?", "language": "rust"})
        discarded = run.call_sync("resolve", {"edit_id": staged.structured["edit_id"], "action": "discard"})
        assert not discarded.is_error, discarded.text
    assert (rust_root / "main.rs").read_text() == RUST_MAIN


def test_a_later_run_loads_the_trees_an_earlier_one_stored(rust_root: Path, tmp_path: Path) -> None:
    store = tmp_path / "trees"
    pattern = {"pattern": "$X.unwrap()", "language": "rust"}

    def search(**run_args: object) -> dict:
        with Run(rust_root, cap="read", **run_args) as run:
            r = run.call_sync("ast_grep", pattern)
        assert not r.is_error, r.text
        assert r.structured["total"] == 1
        return r.structured["parse_cache"]

    # A run's settings name its store; a second run (as a second process would) loads the tree.
    first = search(set={"search.tree_store": str(store)})["store"]
    assert (first["dir"], first["loaded"], first["written"]) == (str(store), 0, 1)
    later = search(set={"search.tree_store": str(store)})["store"]
    assert (later["loaded"], later["written"]) == (1, 0)
    assert "store" not in search(set={"search.tree_store_mb": 0})
    # A host's store is the host's: its runs share it.
    on_host = search(host=Host(tree_store=store))["store"]
    assert (on_host["dir"], on_host["loaded"], on_host["written"]) == (str(store), 1, 0)
    assert "store" not in search(host=Host(tree_store_mb=0))
