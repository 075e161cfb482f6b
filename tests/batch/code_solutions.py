"""Reference solutions of `@datasets/code-sample` (kept out of the shipped dataset):
each passes its task's hidden tests (`tests/batch/test_code_scoring.py`)."""

SOLUTIONS: dict[str, str] = {
    "code-01-digit-sum": r"""
def digit_sum(n: int) -> int:
    return sum(int(d) for d in str(n))
""",
    "code-02-is-palindrome": r"""
def is_palindrome(text: str) -> bool:
    kept = [c.lower() for c in text if c.isalnum()]
    return kept == kept[::-1]
""",
    "code-03-count-vowels": r"""
def count_vowels(text: str) -> int:
    return sum(1 for c in text.lower() if c in "aeiou")
""",
    "code-04-fizzbuzz": r"""
def fizzbuzz(n: int) -> list[str]:
    out = []
    for i in range(1, n + 1):
        word = ("Fizz" if i % 3 == 0 else "") + ("Buzz" if i % 5 == 0 else "")
        out.append(word or str(i))
    return out
""",
    "code-05-second-largest": r"""
def second_largest(numbers: list[int]) -> int | None:
    distinct = sorted(set(numbers))
    return distinct[-2] if len(distinct) >= 2 else None
""",
    "code-06-flatten": r"""
def flatten(nested: list) -> list:
    out = []
    for item in nested:
        if isinstance(item, list):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out
""",
    "code-07-rle-encode": r"""
def rle_encode(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{text[i]}{j - i}")
        i = j
    return "".join(out)
""",
    "code-08-rle-decode": r"""
import re


def rle_decode(code: str) -> str:
    return "".join(letter * int(count) for letter, count in re.findall(r"(\D)(\d+)", code))
""",
    "code-09-to-roman": r"""
def to_roman(n: int) -> str:
    table = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
             (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = []
    for value, numeral in table:
        while n >= value:
            out.append(numeral)
            n -= value
    return "".join(out)
""",
    "code-10-from-roman": r"""
def from_roman(numeral: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, c in enumerate(numeral):
        v = values[c]
        if i + 1 < len(numeral) and values[numeral[i + 1]] > v:
            total -= v
        else:
            total += v
    return total
""",
    "code-11-balanced": r"""
def balanced(text: str) -> bool:
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for c in text:
        if c in "([{":
            stack.append(c)
        elif c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return False
    return not stack
""",
    "code-12-merge-intervals": r"""
def merge_intervals(intervals: list[list[int]]) -> list[list[int]]:
    merged: list[list[int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged
""",
    "code-13-word-frequencies": r"""
import re
from collections import Counter


def word_frequencies(text: str) -> dict[str, int]:
    return dict(Counter(w.lower() for w in re.findall(r"[A-Za-z]+", text)))
""",
    "code-14-rotate-matrix": r"""
def rotate(matrix: list[list[int]]) -> list[list[int]]:
    return [list(row) for row in zip(*matrix[::-1])]
""",
    "code-15-spiral-order": r"""
def spiral_order(matrix: list[list[int]]) -> list[int]:
    out = []
    rows = [list(r) for r in matrix]
    while rows:
        out.extend(rows.pop(0))
        rows = [list(r) for r in zip(*rows)][::-1]
    return out
""",
    "code-16-common-prefix": r"""
def common_prefix(words: list[str]) -> str:
    if not words:
        return ""
    first = min(words)
    last = max(words)
    i = 0
    while i < len(first) and first[i] == last[i]:
        i += 1
    return first[:i]
""",
    "code-17-anagram-groups": r"""
def anagram_groups(words: list[str]) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault("".join(sorted(word)), []).append(word)
    return sorted(sorted(group) for group in groups.values())
""",
    "code-18-leftmost-index": r"""
def leftmost_index(items: list[int], target: int) -> int:
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(items) and items[lo] == target else -1
""",
    "code-19-edit-distance": r"""
def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
""",
    "code-20-longest-palindrome": r"""
def longest_palindrome(text: str) -> str:
    best = ""
    for centre in range(2 * len(text) - 1):
        lo, hi = centre // 2, centre // 2 + centre % 2
        while lo >= 0 and hi < len(text) and text[lo] == text[hi]:
            lo, hi = lo - 1, hi + 1
        found = text[lo + 1:hi]
        if len(found) > len(best) or (len(found) == len(best) and lo + 1 < text.find(best)):
            best = found
    return best
""",
    "code-21-next-permutation": r"""
def next_permutation(numbers: list[int]) -> list[int]:
    items = list(numbers)
    i = len(items) - 2
    while i >= 0 and items[i] >= items[i + 1]:
        i -= 1
    if i < 0:
        return sorted(items)
    j = len(items) - 1
    while items[j] <= items[i]:
        j -= 1
    items[i], items[j] = items[j], items[i]
    items[i + 1:] = reversed(items[i + 1:])
    return items
""",
    "code-22-evaluate": r"""
def evaluate(expression: str) -> int:
    tokens = []
    i = 0
    while i < len(expression):
        c = expression[i]
        if c.isdigit():
            j = i
            while j < len(expression) and expression[j].isdigit():
                j += 1
            tokens.append(int(expression[i:j]))
            i = j
            continue
        if c in "+-*/()":
            tokens.append(c)
        i += 1
    position = 0

    def peek():
        return tokens[position] if position < len(tokens) else None

    def take():
        nonlocal position
        position += 1
        return tokens[position - 1]

    def atom() -> int:
        token = take()
        if token == "(":
            value = expr()
            take()
            return value
        return token

    def term() -> int:
        value = atom()
        while peek() in ("*", "/"):
            op, right = take(), atom()
            if op == "*":
                value *= right
            else:
                quotient = abs(value) // abs(right)
                value = quotient if (value >= 0) == (right > 0) else -quotient
        return value

    def expr() -> int:
        value = term()
        while peek() in ("+", "-"):
            op, right = take(), term()
            value = value + right if op == "+" else value - right
        return value

    return expr()
""",
    "code-23-topological-order": r"""
import heapq


def topological_order(needs: dict[str, list[str]]) -> list[str]:
    nodes = set(needs)
    for deps in needs.values():
        nodes.update(deps)
    waiting = {node: set(needs.get(node, ())) for node in nodes}
    ready = [node for node, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    order = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for other, deps in waiting.items():
            if node in deps:
                deps.discard(node)
                if not deps:
                    heapq.heappush(ready, other)
    if len(order) != len(nodes):
        raise ValueError("cycle")
    return order
""",
    "code-24-primes-up-to": r"""
def primes_up_to(n: int) -> list[int]:
    if n < 2:
        return []
    sieve = bytearray([1]) * (n + 1)
    sieve[0] = sieve[1] = 0
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = bytearray(len(range(i * i, n + 1, i)))
    return [i for i, is_prime in enumerate(sieve) if is_prime]
""",
    "code-25-caesar": r"""
def caesar(text: str, shift: int) -> str:
    out = []
    for c in text:
        if "a" <= c <= "z":
            out.append(chr((ord(c) - 97 + shift) % 26 + 97))
        elif "A" <= c <= "Z":
            out.append(chr((ord(c) - 65 + shift) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)
""",
    "code-26-chunk": r"""
def chunk(items: list, size: int) -> list[list]:
    if size < 1:
        raise ValueError("size must be at least 1")
    return [list(items[i:i + size]) for i in range(0, len(items), size)]
""",
    "code-27-max-subarray": r"""
def max_subarray(numbers: list[int]) -> int:
    best = current = numbers[0]
    for n in numbers[1:]:
        current = max(n, current + n)
        best = max(best, current)
    return best
""",
    "code-28-format-duration": r"""
def format_duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{v}{u}" for v, u in ((hours, "h"), (minutes, "m"), (secs, "s")) if v]
    return " ".join(parts) or "0s"
""",
    "code-29-valid-ipv4": r"""
def valid_ipv4(text: str) -> bool:
    parts = text.split(".")
    if len(parts) != 4:
        return False
    for part in parts:
        if not part or not all(c in "0123456789" for c in part):
            return False
        if len(part) > 1 and part[0] == "0":
            return False
        if int(part) > 255:
            return False
    return True
""",
    "code-30-matrix-multiply": r"""
def matrix_multiply(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    if not a or len(a[0]) != len(b):
        raise ValueError("shapes do not match")
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]
""",
    "code-31-compress-ranges": r"""
def compress_ranges(numbers: list[int]) -> str:
    parts = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        parts.append(str(numbers[i]) if i == j else f"{numbers[i]}-{numbers[j]}")
        i = j + 1
    return ",".join(parts)
""",
    "code-32-count-islands": r"""
def count_islands(grid: list[str]) -> int:
    seen = set()
    count = 0
    for r, row in enumerate(grid):
        for c, cell in enumerate(row):
            if cell != "1" or (r, c) in seen:
                continue
            count += 1
            stack = [(r, c)]
            seen.add((r, c))
            while stack:
                y, x = stack.pop()
                for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                    if 0 <= ny < len(grid) and 0 <= nx < len(grid[ny]) and grid[ny][nx] == "1" and (ny, nx) not in seen:
                        seen.add((ny, nx))
                        stack.append((ny, nx))
    return count
""",
    "code-33-fibonacci": r"""
def fibonacci(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
""",
    "code-34-gcd-all": r"""
from math import gcd


def gcd_all(numbers: list[int]) -> int:
    result = 0
    for n in numbers:
        result = gcd(result, n)
    return result
""",
    "code-35-dedupe-keep-order": r"""
def dedupe(items: list) -> list:
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
""",
    "code-36-title-case": r"""
def title_case(text: str, minor: list[str]) -> str:
    small = {word.lower() for word in minor}
    words = []
    for i, word in enumerate(text.split(" ")):
        lower = word.lower()
        words.append(lower if i and lower in small else lower[:1].upper() + lower[1:])
    return " ".join(words)
""",
}
