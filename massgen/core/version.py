"""massgen's version, where every layer may read it (`massgen.__version__` is this)."""

VERSION = "0.1.0"
