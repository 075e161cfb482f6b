from massgen.cli import entry

entry()
