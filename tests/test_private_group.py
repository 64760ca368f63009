"""A user private group is one no other account can use (issue 28, hostile pass 5A item 1): an account
whose primary group it is (``useradd -g alice mallory``, which /etc/group does not list) or a second
group entry of the same id listing someone else could rewrite a 0664 manifest and have planner remove
the owner's files. pwd and grp are replaced by fakes here, so no account is created."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from planner.core.reportset import private_group

ALICE = SimpleNamespace(pw_name="alice", pw_uid=1001, pw_gid=1001)


def _fake(monkeypatch, users, groups):
    pwd = SimpleNamespace(getpwuid=lambda uid: next(u for u in users if u.pw_uid == uid),
                          getpwall=lambda: list(users))

    def getgrgid(gid):
        for g in groups:
            if g.gr_gid == gid:
                return g
        raise KeyError(gid)

    grp = SimpleNamespace(getgrgid=getgrgid, getgrall=lambda: list(groups))
    monkeypatch.setitem(sys.modules, "pwd", pwd)
    monkeypatch.setitem(sys.modules, "grp", grp)


def _group(name, gid, members=()):
    return SimpleNamespace(gr_name=name, gr_gid=gid, gr_mem=list(members))


def test_the_users_own_group_with_no_one_else_is_private(monkeypatch):
    _fake(monkeypatch, [ALICE, SimpleNamespace(pw_name="bob", pw_uid=1002, pw_gid=1002)],
          [_group("alice", 1001), _group("bob", 1002)])
    assert private_group(1001, 1001)


@pytest.mark.parametrize("users,groups", [
    # mallory's primary group is alice's: /etc/group lists no member, yet mallory can write 0664 files
    ([ALICE, SimpleNamespace(pw_name="mallory", pw_uid=1003, pw_gid=1001)], [_group("alice", 1001)]),
    # a second name for group 1001 that lists eve
    ([ALICE, SimpleNamespace(pw_name="eve", pw_uid=1004, pw_gid=1004)],
     [_group("alice", 1001), _group("alice2", 1001, ["eve"]), _group("eve", 1004)]),
    # the group lists another member
    ([ALICE], [_group("alice", 1001, ["bob"])]),
])
def test_a_group_another_account_can_use_is_not_private(monkeypatch, users, groups):
    _fake(monkeypatch, users, groups)
    assert not private_group(1001, 1001)
