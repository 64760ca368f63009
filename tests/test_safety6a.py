"""Hostile pass 5A (reports/h5a.md): the fixes of issue 28's sixth safety round, one test each."""
from __future__ import annotations

import grp
import pwd

import pytest

from planner.core.reportset import private_group

# Accounts as /etc/passwd and /etc/group would list them (pwd.struct_passwd / grp.struct_group fields).
ALICE = pwd.struct_passwd(("alice", "x", 1001, 1001, "", "/home/alice", "/bin/sh"))
MALLORY = pwd.struct_passwd(("mallory", "x", 1002, 1001, "", "/home/mallory", "/bin/sh"))
BOB = pwd.struct_passwd(("bob", "x", 1003, 1003, "", "/home/bob", "/bin/sh"))
ALICE_GROUP = grp.struct_group(("alice", "x", 1001, []))


def _mock(monkeypatch: pytest.MonkeyPatch, accounts: list, groups: list) -> None:
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: next(a for a in accounts if a.pw_uid == uid))
    monkeypatch.setattr(pwd, "getpwall", lambda: list(accounts))
    monkeypatch.setattr(grp, "getgrgid", lambda gid: next(g for g in groups if g.gr_gid == gid))
    monkeypatch.setattr(grp, "getgrall", lambda: list(groups))


def test_private_group_alone_is_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    _mock(monkeypatch, [ALICE, BOB], [ALICE_GROUP])
    assert private_group(1001, 1001)


def test_private_group_with_another_primary_member_is_distrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    # useradd -g alice mallory: mallory's primary gid is alice's group, /etc/group lists nobody
    _mock(monkeypatch, [ALICE, MALLORY], [ALICE_GROUP])
    assert not private_group(1001, 1001)


def test_private_group_with_a_second_entry_of_the_same_gid_is_distrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    # alice2:x:1001:eve in /etc/group: eve is in gid 1001 through another name
    _mock(monkeypatch, [ALICE], [ALICE_GROUP, grp.struct_group(("alice2", "x", 1001, ["eve"]))])
    assert not private_group(1001, 1001)
