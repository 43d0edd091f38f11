"""bench/machine.py's commit(): a result's header names the commit it was made from, in a clone and in a
`git worktree` (where the matrix runs are made), read from the files git keeps."""

from bench import machine

A, B = "a" * 40, "b" * 40


def test_a_clone_s_branch_is_found_loose_or_packed(tmp_path, monkeypatch):
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{A} refs/heads/main\n")
    monkeypatch.setattr(machine, "ROOT", tmp_path)
    assert machine.commit() == A
    (git / "refs" / "heads" / "main").write_text(B + "\n")  # a loose ref is newer than the packed one
    assert machine.commit() == B


def test_a_worktree_reads_its_own_head_and_the_repository_s_refs(tmp_path, monkeypatch):
    common = tmp_path / "main" / ".git"
    own = common / "worktrees" / "wt"
    own.mkdir(parents=True)
    (common / "packed-refs").write_text(f"{A} refs/heads/topic\n")
    (own / "commondir").write_text("../..\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {own}\n")
    monkeypatch.setattr(machine, "ROOT", tree)
    (own / "HEAD").write_text(B + "\n")  # detached, as `git worktree add PATH COMMIT` leaves it
    assert machine.commit() == B
    (own / "HEAD").write_text("ref: refs/heads/topic\n")
    assert machine.commit() == A
