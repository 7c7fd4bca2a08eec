"""The store a command opens when none is named (no database library imported here)."""

DEFAULT_URL = "sqlite:///./nimo.db"
