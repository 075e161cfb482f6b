"""`python bench/spawn.py REPORT TIMEOUT CMD...`: run CMD, write its wall time, peak RSS,
exit code and start time (`time.monotonic()`, the clock every process on the machine
shares) to REPORT as JSON.

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
    started = time.monotonic()
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
    code = os.waitstatus_to_exitcode(status)
    result = {"wall": wall, "rss_kb": usage.ru_maxrss, "code": code, "started": started}
    with open(report, "w") as out:
        json.dump(result, out)


if __name__ == "__main__":
    main()
