import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
# The chat tests' fake team member (chat in the app asks it as the plain chat does).
sys.path.insert(0, str(Path(__file__).parents[2] / "chat"))
