"""First-run setup: the interactive wizard and the files it writes (`~/.config/massgen/`)."""
