"""`safe_open`: every open stays beneath its root and follows no link, with the kernel's
openat2 and with the component-by-component walk alike; and what `secrets` calls secret."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from massgen.core import safe_open
from massgen.core.secrets import secret_name, secrets_within


@pytest.fixture
def root(open_way, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    top = tmp_path / "root"
    (top / "d").mkdir(parents=True)
    (top / "d" / "a.txt").write_text("inside\n")
    (top / "up").symlink_to(outside, target_is_directory=True)
    (top / "d" / "link.txt").symlink_to(outside / "secret.txt")
    fd = safe_open.open_root(top)
    yield fd, top, outside
    os.close(fd)
    safe_open.use_openat2(True)


def test_a_file_beneath_the_root_is_read(root):
    fd, _, _ = root
    assert safe_open.read_beneath(fd, "d/a.txt", 100) == b"inside\n"


@pytest.mark.parametrize("rel", ["up/secret.txt", "d/link.txt"])
def test_a_link_on_the_way_or_at_the_end_is_refused(root, rel):
    fd, _, _ = root
    with pytest.raises(OSError) as caught:
        safe_open.read_beneath(fd, rel, 100)
    assert caught.value.errno in (errno.ELOOP, errno.EXDEV)


@pytest.mark.parametrize("rel", ["../outside/secret.txt", "/etc/passwd", "d/../../x"])
def test_a_path_that_leaves_the_root_is_refused(root, rel):
    fd, _, _ = root
    with pytest.raises(safe_open.Unsafe):
        safe_open.read_beneath(fd, rel, 100)


def test_a_write_through_a_linked_directory_is_refused_and_leaves_nothing(root):
    fd, top, outside = root
    with pytest.raises(OSError):
        safe_open.write_atomic(fd, "up/new.txt", b"pwned")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    safe_open.write_atomic(fd, "made/deep/new.txt", b"ok", mode=0o600)
    made = top / "made" / "deep" / "new.txt"
    assert made.read_bytes() == b"ok" and made.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in made.parent.iterdir()) == ["new.txt"]  # no temp left


def test_a_rewrite_keeps_the_mode_and_replaces_a_link_instead_of_following_it(root):
    fd, top, outside = root
    os.chmod(top / "d" / "a.txt", 0o640)
    safe_open.write_atomic(fd, "d/a.txt", b"new")
    assert (top / "d" / "a.txt").stat().st_mode & 0o777 == 0o640
    safe_open.write_atomic(fd, "d/link.txt", b"new")
    assert (outside / "secret.txt").read_text() == "outside\n"
    assert not (top / "d" / "link.txt").is_symlink()


def test_reads_are_bounded_and_take_regular_files_only(root):
    fd, top, _ = root
    with pytest.raises(safe_open.Unsafe, match="over the 3 limit"):
        safe_open.read_beneath(fd, "d/a.txt", 3)
    os.mkfifo(top / "fifo")
    with pytest.raises(safe_open.Unsafe, match="not a regular file"):
        safe_open.read_beneath(fd, "fifo", 100)


def test_a_walk_lists_links_without_entering_them(root):
    fd, _, _ = root
    found = {f.rel: f.read(100) if f.name == "a.txt" else None for f in safe_open.Walk(fd)}
    assert sorted(found) == ["d/a.txt", "d/link.txt", "up"]
    assert found["d/a.txt"] == b"inside\n"  # read while the walk is there


def test_a_walk_stops_at_its_bounds(root, monkeypatch):
    fd, top, _ = root
    for i in range(30):
        (top / f"f{i}").write_text("x")
    walk = safe_open.Walk(fd, limit=10)
    assert len(list(walk)) <= 10 and walk.truncated
    deep = top
    for _ in range(safe_open.MAX_WALK_DEPTH + 5):
        deep = deep / "n"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("x")
    walk = safe_open.Walk(fd)
    assert not any(f.name == "bottom.txt" for f in walk) and walk.truncated


def test_a_context_file_is_read_by_its_trusted_name_only(tmp_path: Path):
    (tmp_path / "real.txt").write_text("ok")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "real.txt")
    assert safe_open.read_beneath(None, tmp_path / "real.txt", 10) == b"ok"
    with pytest.raises(OSError):
        safe_open.read_beneath(None, tmp_path / "alias.txt", 10)


@pytest.mark.parametrize(
    ("rel", "secret"),
    [
        (".env", True),
        ("sub/.env.local", True),
        (".env.example", False),
        ("certs/server.pem", True),
        ("tls.key", True),
        ("backup/.ssh/known_hosts", True),
        ("copy-of-home/.config/gh/hosts.yml", True),
        ("copy-of-home/.docker/config.json", True),
        ("project/.docker/php/Dockerfile", False),  # a project's Dockerfiles are not
        ("src/keys.py", False),
    ],
)
def test_what_is_secret_by_name(rel, secret):
    assert bool(secret_name(rel)) is secret


def test_the_secrets_a_sandbox_masks_are_found_near_the_top_first(tmp_path):
    for rel in (".env", "app/.env.local", "home/.config/gh/hosts.yml", "home/.ssh/id_rsa",
                ".docker/config.json", ".docker/php/Dockerfile", "src/main.py"):  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    deep = tmp_path / "node_modules"
    for i in range(50):
        (deep / f"p{i}").mkdir(parents=True)
        (deep / f"p{i}" / "index.js").write_text("x")
    found = {p.relative_to(tmp_path).as_posix() for p in secrets_within(tmp_path, limit=70)}
    assert found == {".env", "app/.env.local", "home/.config/gh", "home/.ssh",
                     ".docker/config.json"}  # fmt: skip
