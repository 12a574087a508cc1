"""The runtime loops: threads that run one loop each, the job executor, the one waiting
fetch-and-lock, LISTEN/NOTIFY, the outbox hub and a Python external-task worker."""
