"""Who may act: credentials of people and programs."""
