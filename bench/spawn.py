"""`python bench/spawn.py REPORT TIMEOUT CMD...`: run CMD, write its wall time, peak RSS
and exit code to REPORT as JSON.

The bench does not start measured commands itself: Python starts children with vfork, and
Linux then counts the parent's memory in the child's peak RSS, so a large bench process
would inflate every number. This launcher is small and uses a plain fork. Stdlib only.
"""

import json
import os
import signal
import sys
import time


def main() -> None:
    report, timeout, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
    signal.setitimer(signal.ITIMER_REAL, timeout)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    result = {"wall": wall, "rss_kb": usage.ru_maxrss, "code": os.waitstatus_to_exitcode(status)}
    with open(report, "w") as out:
        json.dump(result, out)


if __name__ == "__main__":
    main()
