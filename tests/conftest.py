import sys
from pathlib import Path

# Protocol tests share the scripted backend in tests/scripted.py.
sys.path.insert(0, str(Path(__file__).parent))
