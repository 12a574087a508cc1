"""What the engine tells operators about itself: metrics, logs and the counting of commands."""
