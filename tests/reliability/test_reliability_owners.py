"""CC-3, CC-8, CC-17: a cache root, or a folder below it, that someone else owns or can write in.

Whichever way the root is named (`cache_dir`, `TORCHAIR_CACHE_HOME`, the default `<cwd>/.torchair_cache`), the
first call checks the real root and every level below it that exists: each must be a directory of the current
user that no one else can write in. Otherwise the call runs uncached (nothing read, nothing written) with a warning
naming the folder and the fix. The levels the writer creates are made 0700 and checked again before anything is
written into them.

The two-user case creates a throwaway user and group (root only): the attacker's steps run under that user's ids
(`setpriv`), the owner is the test's own user.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from tests.reliability.faults import Net, X, cache_files, eager_config, hostile_shared_object, no_hang, snapshot
from torchair_ref import _files
from torchair_ref.inference import cache_compile

FOREIGN_UID = 4242


def _first_call(cached) -> tuple[torch.Tensor, list[str]]:
    with pytest.warns(UserWarning) as caught, no_hang():
        out = cached(X)
    return out, [str(w.message) for w in caught]


def _named(way: str, root: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """The cached Net.forward whose root is `root`, named the way `way` says (cwd is the test's tmp_path)."""
    if way == "cache_dir":
        return cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))
    if way == "TORCHAIR_CACHE_HOME":
        monkeypatch.setenv("TORCHAIR_CACHE_HOME", str(root))
    else:
        assert root == Path.cwd() / ".torchair_cache", root
    return cache_compile(Net().forward, config=eager_config())


@pytest.mark.reliability(
    "Hostile folder: the cache root is group- or world-writable (0775, 2775, 0777), named by `cache_dir`, "
    "`TORCHAIR_CACHE_HOME` or the default `<cwd>/.torchair_cache`",
    "the call runs uncached with a warning naming the root and `chmod go-w`; outputs = plain method; nothing "
    "written under the root",
)
@pytest.mark.parametrize("mode", [0o775, 0o2775, 0o777])
@pytest.mark.parametrize("way", ["cache_dir", "TORCHAIR_CACHE_HOME", "default"])
def test_shared_root_is_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str, mode: int) -> None:
    """CC-8, CC-17: a root others can write in is not used, however it was named."""
    root = tmp_path / ".torchair_cache"
    root.mkdir()
    root.chmod(mode)
    cached = _named(way, root, monkeypatch)
    out, warned = _first_call(cached)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert any("runs without its cache" in w and str(root) in w and "chmod go-w" in w for w in warned), warned
    assert cached.cache_file is None and not any(root.iterdir()), sorted(root.rglob("*"))


def _foreign(folder: Path) -> None:
    os.chown(folder, FOREIGN_UID, FOREIGN_UID)


def _shared(folder: Path) -> None:
    folder.chmod(0o777)


@pytest.mark.reliability(
    "Hostile folder: a level below the root (`<model_info>`, `<func>`, `kernels`) owned by another user or "
    "writable by others, over a valid cache",
    "the call runs uncached with a warning naming that folder and the fix; outputs = plain method; the folder and "
    "everything in it left as it was",
)
@pytest.mark.parametrize("problem", ["another owner", "mode 0777"])
@pytest.mark.parametrize("level", ["<model_info>", "<func>", "kernels"])
def test_untrusted_level_is_never_used(tmp_path: Path, level: str, problem: str) -> None:
    """CC-17: every existing level below the root is checked at the first call."""
    if problem == "another owner" and os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    root = tmp_path / "cache"
    first = cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))
    first(X)
    path = Path(first.cache_file)
    folder = {"<model_info>": path.parents[1], "<func>": path.parent, "kernels": path.parent / "kernels"}[level]
    folder.mkdir(mode=0o700, exist_ok=True)
    (_foreign if problem == "another owner" else _shared)(folder)
    before = snapshot(root)
    cached = cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))
    out, warned = _first_call(cached)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    reason = f"owned by uid {FOREIGN_UID}" if problem == "another owner" else "chmod go-w"
    assert any("runs without its cache" in w and f"{folder} " in w and reason in w for w in warned), warned
    assert snapshot(root) == before, "the untrusted tree was changed"


@pytest.mark.reliability(
    "Hostile folder: `cache_dir` replaced, between `cache_compile()` and the first call, by a symlink to a folder "
    "of another user or one others can write in",
    "CC-3's check at `cache_compile()` time is unchanged; the first call checks the real root: runs uncached with "
    "a warning naming it; nothing written there",
)
@pytest.mark.parametrize("problem", ["another owner", "mode 0777"])
def test_cache_dir_swapped_for_a_symlink(tmp_path: Path, problem: str) -> None:
    """CC-3, CC-8, CC-17: the root is checked again, as resolved at the first call."""
    if problem == "another owner" and os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    root, planted = tmp_path / "cache", tmp_path / "planted"
    root.mkdir()
    cached = cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))
    planted.mkdir()
    (_foreign if problem == "another owner" else _shared)(planted)
    root.rmdir()
    root.symlink_to(planted)
    out, warned = _first_call(cached)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert any("runs without its cache" in w and f"{planted} " in w for w in warned), warned
    assert not any(planted.iterdir()), sorted(planted.rglob("*"))


def test_cc3_error_for_an_explicit_cache_dir_stays(tmp_path: Path) -> None:
    """CC-3: an explicit cache_dir of another user is still refused at cache_compile() time, with SPEC's words."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    root = tmp_path / "cache"
    root.mkdir()
    _foreign(root)
    with pytest.raises(ValueError, match=f"Cache dir {root} must be owned by the current user"):
        cache_compile(Net().forward, config=eager_config(), cache_dir=str(root))


@pytest.mark.reliability(
    "Hostile folder made mid-compile: `<model_info>` created writable by all (or given to another user) after the "
    "first call's check and before the save (by a decomposition that runs while the graph compiles)",
    "the levels are checked again after they are made: a `could not be cached` warning naming the folder; outputs "
    "= plain method; nothing written into it",
)
@pytest.mark.parametrize("problem", ["another owner", "mode 0777"])
def test_folder_made_before_the_save_is_checked_again(tmp_path: Path, problem: str) -> None:
    """CC-11, CC-17: the writer re-checks every level after creating the missing ones."""
    if problem == "another owner" and os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another user")
    root = tmp_path / "cache"
    made = []

    def relu_making_a_folder(x: torch.Tensor) -> torch.Tensor:
        if not made:
            folder = Path(cached.cache_file).parents[1]
            folder.mkdir(parents=True)
            (_foreign if problem == "another owner" else _shared)(folder)
            made.append(folder)
        return torch.clamp_min(x, 0)

    cached = cache_compile(Net().forward, config=eager_config(), cache_dir=str(root),
                           custom_decompositions={torch.ops.aten.relu.default: relu_making_a_folder})
    out, warned = _first_call(cached)
    torch.testing.assert_close(out, Net().forward(X).detach(), rtol=0, atol=1e-6)
    assert made, "the decomposition did not run: the folder was never made"
    assert any("could not be cached" in w and f"{made[0]} " in w for w in warned), warned
    assert not any(made[0].iterdir()) and not cache_files(root), sorted(root.rglob("*"))


def test_made_levels_are_private_whatever_the_umask(tmp_path: Path) -> None:
    """CC-11: the levels the writer makes are 0700 even under umask 000."""
    previous = os.umask(0)
    try:
        _files.make_private_levels(str(tmp_path / "root"), str(tmp_path / "root" / "a" / "b"))
    finally:
        os.umask(previous)
    levels = (tmp_path / "root", tmp_path / "root/a", tmp_path / "root/a/b")
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in levels}
    assert set(modes.values()) == {"0o700"}, modes


# -- two users ----------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def throwaway_user() -> Iterator[tuple[str, int, int]]:
    """A new user in a new group of the same name: (name, uid, gid); removed at the end. Root only."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a throwaway user (useradd)")
    for tool in ("useradd", "userdel", "setpriv"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    name = "ta" + uuid.uuid4().hex[:10]
    made = subprocess.run(["useradd", "--user-group", "--no-create-home", "--shell", "/bin/sh", name],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"useradd {name} failed: {made.stderr.strip()}")
    try:
        import pwd

        entry = pwd.getpwnam(name)
        yield name, entry.pw_uid, entry.pw_gid
    finally:
        subprocess.run(["userdel", name], capture_output=True)
        subprocess.run(["groupdel", name], capture_output=True)  # when userdel left the group


def as_user(uid: int, gid: int, script: str, **kwargs) -> subprocess.Popen:
    """`sh -c script` with the attacker's ids only (no root, no other group)."""
    return subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)


SWAP_LOOP = """
set -e
mv "$ROOT/$INFO" "$ROOT/$INFO.aside"
mkdir -p "$ROOT/$INFO/run/kernels"
chmod -R 777 "$ROOT/$INFO"
for name in $KERNELS; do cp "$HOSTILE" "$ROOT/$INFO/run/kernels/$name"; done
echo planted
set +e
while :; do
  for name in $KERNELS; do
    cp "$HOSTILE" "$ROOT/$INFO/run/kernels/.$name.swap" 2>/dev/null && \
      mv -f "$ROOT/$INFO/run/kernels/.$name.swap" "$ROOT/$INFO/run/kernels/$name" 2>/dev/null
  done
done
"""


@pytest.mark.slow
@pytest.mark.inductor
@pytest.mark.reliability(
    "Hostile folder, two users: the owner's root is 2775 (owner and a shared group), the attacker (a throwaway "
    "user in that group) renames `<model_info>` aside, makes their own `<model_info>/run/kernels` and swaps their "
    "shared object in, in a loop, during the owner's warm start (`ge_cache=True`, Inductor)",
    "the owner's call runs uncached with a warning naming the root and `chmod go-w`; outputs = the cold run's; "
    "nothing of the owner's is written into the attacker's folders; the canary is never written",
)
def test_two_users_group_writable_root(cache_program) -> None:
    """CC-17: the kernel-swap attack of issue 12, with a real second account; no foreign code runs."""
    with throwaway_user() as (name, uid, gid), tempfile.TemporaryDirectory(prefix="torchair-two-users-") as base:
        base_path = Path(base)
        base_path.chmod(0o755)
        canary = base_path / "canary"
        hostile = hostile_shared_object(base_path, canary)
        base_path.chmod(0o777)  # the attacker's constructor must be able to write the canary if it ever runs
        hostile.chmod(0o644)
        work, root = base_path / "work", base_path / "work" / "cache"
        work.mkdir()
        job = {"model": "mlp", "run_eagerly": False, "ge_cache": True, "cache_dir": str(root),
               "calls": [{"method": "run", "batch": 3}]}
        env = {"TORCHINDUCTOR_CACHE_DIR": str(base_path / "inductor_cache")}
        cold = cache_program(job, work, env=env)
        (compiled,) = cache_files(root)
        kernels = sorted(p.name for p in (compiled.parent / "kernels").iterdir())
        work.chmod(0o755)
        os.chown(root, os.geteuid(), gid)
        root.chmod(0o2775)  # the owner's mistake: the shared group may write in the root
        info = compiled.parents[1].name
        attacker = as_user(uid, gid, SWAP_LOOP, env={"ROOT": str(root), "INFO": info, "KERNELS": " ".join(kernels),
                                                     "HOSTILE": str(hostile), "PATH": os.environ["PATH"]})
        try:
            assert attacker.stdout.readline().strip() == "planted", attacker.communicate(timeout=10)[0]
            warm = cache_program(job, work, env=env)
        finally:
            attacker.kill()
            attacker.wait()
        planted = [p for p in (root / info).rglob("*")]
        assert all(p.stat().st_uid == uid for p in planted), {str(p): p.stat().st_uid for p in planted}
        assert not canary.exists(), "foreign code ran as the cache's owner"
        assert warm["outputs"] == cold["outputs"], (warm["outputs"], cold["outputs"])
        assert any("runs without its cache" in w and f"{root} " in w and "chmod go-w" in w
                   for w in warm["warnings"]), warm["warnings"]
