"""The transactional core: the one path of every mutation (a command in one transaction over one
locked instance in memory), what it records for others, and the caches it reads models through."""
