//! SQLite (WAL, migrations): events, tasks and checkpoints, sessions, memory, permission decisions.
