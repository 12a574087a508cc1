"""Reads of credentials and console sessions: who a password, an API token or a session cookie
is, and the lists an admin sees. Never the secrets."""

from __future__ import annotations

from engine.identity.accounts import Principal, check_password
from engine.queries import Connection, query
from engine.store import accounts as store

__all__ = [
    "count",
    "find_session",
    "list_all",
    "list_sessions",
    "password_record",
    "tokens_of",
    "verify_password",
    "verify_token",
]

password_record = query(store.password_record)
verify_token = query(store.token_principal)
count = query(store.count)
list_all = query(store.list_all)
find_session = query(store.find_session)
list_sessions = query(store.list_sessions)
tokens_of = query(store.tokens_of)


@query
def verify_password(conn: Connection, name: str, password: str) -> Principal | None:
    record = store.password_record(conn, name)
    # Checked even without a record: an unknown name costs the same PBKDF2 as a known one.
    if not check_password(password, record) or record is None:
        return None
    return Principal(name, record.role, name)
