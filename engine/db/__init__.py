"""Persistence support: the database and its connections, schema migrations, ids, keyset pages, the
ordered outbox tail, summary rows, history retention and database outages."""
