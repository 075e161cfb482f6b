"""A shell command, split the way `/bin/sh` would run it, into the simple commands it runs.

    parse("cd src && cat a.txt > ../out; echo $(whoami)")
      commands: cd src | cat a.txt | echo $(whoami) | whoami
      writes:   ../out

Every part of a chain (`;`, `&`, `&&`, `||`, `|`, newlines, subshells), every command
substitution (`$(…)`, backticks, `<(…)`) and every wrapper that runs its arguments as a
command (`sh -c`, `bash -c`, `eval`, `env X=1 cmd`, `nohup`, `timeout 5`, `xargs`, …) is
a simple command of its own, so each must pass on its own. Redirect targets are writes
(or reads, for `<`). What cannot be known statically (a command name built from a
variable, `eval` of an expansion, interpreter code such as `python -c`, control
structures) is `opaque`, with the reason: the engine treats it as high risk, never as
safe. Text the tokenizer cannot read (an unclosed quote) raises `Unparseable`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from massgen.permissions import runners

MAX_DEPTH = 6  # nested substitutions / wrappers; deeper is unparseable
MAX_LENGTH = 64 * 1024

_OPERATORS = ("&&", "||", "|&", ";;", "<<<", "<<-", "&>>", ">>", "<<", "<>", ">|", "&>", ">&",
              "<&", ";", "&", "|", "(", ")", "<", ">", "\n")  # fmt: skip
_REDIRECTS = frozenset({"<<<", "&>>", ">>", "<>", ">|", "&>", ">&", "<&", "<", ">"})
_HEREDOC = frozenset({"<<", "<<-"})
_READ_REDIRECTS = frozenset({"<", "<<<"})
_SKIP_WORDS = frozenset({"!", "{", "}", "then", "else", "do", "done", "fi", "if", "elif",
                         "while", "until", "time"})  # fmt: skip
_COMPLEX = frozenset({"for", "case", "select", "function", "coproc", "[[", "esac", "in"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "busybox"})
# Wrappers that run the rest of their words as a command, with how many option words
# may precede it (a number after `timeout`, `-n 5` after `nice`, ...).
_PREFIX_WRAPPERS = frozenset({"command", "builtin", "exec", "nohup", "nice", "time",
                              "timeout", "stdbuf", "setsid", "chroot", "unbuffer", "ionice",
                              "chrt", "taskset", "doas", "sudo", "su", "watch", "flock"})  # fmt: skip
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
# A shell function's definition (`f() { …; }`, `function f { …; }`): name and body.
_FUNCTION = re.compile(r"(?:\bfunction\s+)?([A-Za-z_:.][\w:.-]*)\s*(?:\(\s*\))?\s*\{([^}]*)\}")
# What makes a call fork: a pipe, `&` (not `&&`/`||`), a subshell or a substitution.
_FORKS = re.compile(r"(?<![&|])[&|](?![&|])|\(|`")


class Unparseable(ValueError):
    """Text the splitter cannot read as a shell command."""


@dataclass(frozen=True, slots=True)
class Simple:
    """One simple command: its words after quote removal. `dynamic`: a word holds an
    expansion whose value is unknown here (`$VAR`, a glob, a substitution's output)."""

    argv: tuple[str, ...]
    dynamic: bool = False
    computed: bool = False  # an argument holds a variable or a substitution

    def text(self) -> str:
        return " ".join(self.argv)


@dataclass(slots=True)
class Parsed:
    commands: list[Simple] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # redirect targets written
    reads: list[str] = field(default_factory=list)  # redirect sources read
    opaque: list[str] = field(default_factory=list)  # why some of it cannot be known

    def merge(self, other: Parsed) -> None:
        self.commands += other.commands
        self.writes += other.writes
        self.reads += other.reads
        self.opaque += other.opaque


@dataclass(slots=True)
class _Word:
    text: str = ""
    dynamic: bool = False  # holds an expansion: a variable, a substitution
    glob: bool = False  # holds an unquoted glob or brace pattern
    quoted: bool = False
    subs: list[str] = field(default_factory=list)


# --- tokenizer -------------------------------------------------------------------------


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0
        self.tokens: list[_Word | str] = []
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, strip tabs)
        self.opaque: list[str] = []

    def run(self) -> list[_Word | str]:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and self.s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
            elif (op := self._operator()) is not None:
                self._emit_operator(op)
            else:
                self.tokens.append(self._word())
        return self.tokens

    def _operator(self) -> str | None:
        if self.s.startswith(("<(", ">("), self.i):
            return None  # process substitution: a word
        return next((op for op in _OPERATORS if self.s.startswith(op, self.i)), None)

    def _emit_operator(self, op: str) -> None:
        self.i += len(op)
        self.tokens.append(op)
        if op in _HEREDOC:
            while self.i < len(self.s) and self.s[self.i] in " \t":
                self.i += 1
            word = self._word()
            self.tokens.append(word)
            self.heredocs.append((word.text, op == "<<-"))
            self._quoted_heredoc = word.quoted
        elif op == "\n" and self.heredocs:
            self._read_heredocs()

    def _read_heredocs(self) -> None:
        for delimiter, strip in self.heredocs:
            body: list[str] = []
            while True:
                if self.i >= len(self.s):
                    raise Unparseable(f"here-document `{delimiter}` is never closed")
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                line = self.s[self.i : end]
                self.i = end + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                body.append(line)
            text = "\n".join(body)
            if not getattr(self, "_quoted_heredoc", False) and ("$(" in text or "`" in text):
                self.opaque.append("a here-document expands command substitutions")
        self.heredocs.clear()

    def _word(self) -> _Word:
        w = _Word()
        start = self.i
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t\n" or self._operator() is not None:
                break
            if c == "\\":
                w.text += self.s[self.i + 1 : self.i + 2]
                w.quoted = True
                self.i += 2
            elif c == "'":
                end = self.s.find("'", self.i + 1)
                if end < 0:
                    raise Unparseable("a single quote is never closed")
                w.text += self.s[self.i + 1 : end]
                w.quoted = True
                self.i = end + 1
            elif c == '"':
                self._double(w)
            elif c == "`":
                w.subs.append(self._backtick())
                w.dynamic = True
                w.text += "$(…)"
            elif c == "$":
                self._dollar(w)
            elif c in "<>" and self.s.startswith("(", self.i + 1):
                self.i += 1
                w.subs.append(self._balanced("(", ")"))
                w.dynamic, w.text = True, w.text + "<(…)"
            else:
                w.glob = w.glob or c in "*?[{"
                w.text += c
                self.i += 1
        if self.i == start:
            raise Unparseable(f"unexpected `{self.s[self.i : self.i + 1] or 'end of text'}`")
        return w

    def _double(self, w: _Word) -> None:
        self.i += 1
        w.quoted = True
        while True:
            if self.i >= len(self.s):
                raise Unparseable("a double quote is never closed")
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.i + 1 < len(self.s) and self.s[self.i + 1] in '$`"\\\n':
                w.text += self.s[self.i + 1]
                self.i += 2
            elif c == "`":
                w.subs.append(self._backtick())
                w.dynamic, w.text = True, w.text + "$(…)"
            elif c == "$":
                self._dollar(w)
            else:
                w.text += c
                self.i += 1

    def _dollar(self, w: _Word) -> None:
        rest = self.s[self.i + 1 : self.i + 2]
        if self.s.startswith("$((", self.i):
            self.i += 1
            inner = self._balanced("(", ")")
            if "$(" in inner or "`" in inner or "[" in inner:
                self.opaque.append("arithmetic expansion that can run commands")
            w.dynamic, w.text = True, w.text + "$((…))"
        elif rest == "(":
            self.i += 1
            w.subs.append(self._balanced("(", ")"))
            w.dynamic, w.text = True, w.text + "$(…)"
        elif rest == "{":
            self.i += 1
            inner = self._balanced("{", "}")
            if "$(" in inner or "`" in inner:
                self.opaque.append("a parameter expansion runs a command")
            w.dynamic, w.text = True, w.text + "${" + inner + "}"
        elif rest == "'":  # $'...' ANSI-C quoting: its escapes are unknown to us
            end = self.s.find("'", self.i + 2)
            if end < 0:
                raise Unparseable("a $'…' quote is never closed")
            w.dynamic, w.text = True, w.text + self.s[self.i + 2 : end]
            self.i = end + 1
        elif rest and (rest.isalnum() or rest in "_@*#?$!-"):
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|.", self.s[self.i + 1 :])
            assert m is not None
            w.dynamic, w.text = True, w.text + "$" + m.group(0)
            self.i += 1 + len(m.group(0))
        else:
            w.text += "$"
            self.i += 1

    def _balanced(self, open_: str, close: str) -> str:
        """The text between the bracket at `self.i` and its match (quotes respected)."""
        depth, j = 0, self.i
        while j < len(self.s):
            c = self.s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'" and open_ == "(":
                end = self.s.find("'", j + 1)
                if end < 0:
                    break
                j = end + 1
                continue
            if c == '"':
                end = _closing_double(self.s, j)
                if end < 0:
                    break
                j = end + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    inner = self.s[self.i + 1 : j]
                    self.i = j + 1
                    return inner
            j += 1
        raise Unparseable(f"`{open_}` is never closed")

    def _backtick(self) -> str:
        j = self.i + 1
        out = ""
        while j < len(self.s):
            c = self.s[j]
            if c == "\\" and j + 1 < len(self.s):
                out += self.s[j + 1] if self.s[j + 1] in "`$\\" else c + self.s[j + 1]
                j += 2
                continue
            if c == "`":
                self.i = j + 1
                return out
            out += c
            j += 1
        raise Unparseable("a backtick is never closed")


def _closing_double(s: str, j: int) -> int:
    k = j + 1
    while k < len(s):
        if s[k] == "\\":
            k += 2
            continue
        if s[k] == '"':
            return k
        k += 1
    return -1


# --- grammar ---------------------------------------------------------------------------


def parse(text: str, depth: int = 0) -> Parsed:
    """The simple commands `text` runs, its redirect targets, and what is opaque.

    Raises:
        Unparseable: the text is not a shell command we can read (or nests too deep).
    """
    if depth > MAX_DEPTH:
        raise Unparseable("the command nests too deeply")
    if len(text) > MAX_LENGTH:
        raise Unparseable("the command is too long")
    if "\x00" in text:
        raise Unparseable("the command contains a NUL character")
    out = Parsed()
    if forks_recursively(text):
        out.opaque.append("fork bomb")
        out.commands.append(Simple((":(){ :|:& };:",)))
    lexer = _Lexer(text)
    tokens = lexer.run()
    if lexer.heredocs:
        raise Unparseable("a here-document has no body")
    out.opaque += lexer.opaque
    for words, redirects in _simple_commands(tokens):
        _add(out, words, redirects, depth)
    return out


def forks_recursively(text: str) -> bool:
    """Whether `text` defines a shell function that calls itself in a new process
    (`f(){ f & f; }`, `:(){ :|:& };:`, `f(){ (f); }`): processes without end."""
    for match in _FUNCTION.finditer(text):
        name, body = match.group(1), match.group(2)
        if name in _COMPLEX or name in _SKIP_WORDS:
            continue
        calls_itself = re.search(rf"(?<![\w:.-]){re.escape(name)}(?![\w:.-])", body)
        if calls_itself and _FORKS.search(body):
            return True
    return False


def _simple_commands(
    tokens: list[_Word | str],
) -> list[tuple[list[_Word], list[tuple[str, _Word]]]]:
    found: list[tuple[list[_Word], list[tuple[str, _Word]]]] = []
    words: list[_Word] = []
    redirects: list[tuple[str, _Word]] = []
    it = iter(tokens)
    for token in it:
        if isinstance(token, _Word):
            words.append(token)
        elif token in _REDIRECTS or token in _HEREDOC:
            target = next(it, None)
            if not isinstance(target, _Word):
                raise Unparseable(f"`{token}` has no target")
            if words and words[-1].text.isdigit() and not words[-1].quoted:
                words.pop()  # the fd number of `2>`
            redirects.append((token, target))
        else:
            found.append((words, redirects))
            words, redirects = [], []
    found.append((words, redirects))
    return [(w, r) for w, r in found if w or r]


def _add(out: Parsed, words: list[_Word], redirects: list[tuple[str, _Word]], depth: int) -> None:
    for op, target in redirects:
        for sub in target.subs:
            out.merge(parse(sub, depth + 1))
        if op in _HEREDOC:
            continue
        if op in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
            continue  # fd duplication, not a file
        (out.reads if op in _READ_REDIRECTS else out.writes).append(target.text)
        if target.dynamic or target.glob:
            out.opaque.append(f"a redirect target is computed (`{target.text}`)")
    for word in words:
        for sub in word.subs:
            out.merge(parse(sub, depth + 1))
    # Quoted values too (`X='a b' cmd` runs cmd); a quoted name only fails to run.
    while words and _ASSIGNMENT.match(words[0].text):
        if (why := runners.hidden_command(("export", words[0].text))) is not None:
            out.opaque.append(why)
        words = words[1:]
    while words and not words[0].quoted and words[0].text in _SKIP_WORDS:
        words = words[1:]
    if not words:
        return
    if not words[0].quoted and words[0].text in _COMPLEX:
        out.opaque.append(f"shell control structure `{words[0].text}`")
    if words[0].dynamic or words[0].glob:
        out.opaque.append(f"the command name is computed (`{words[0].text}`)")
    simple = Simple(
        tuple(w.text for w in words),
        dynamic=any(w.dynamic or w.glob for w in words),
        computed=any(w.dynamic for w in words[1:]),
    )
    _unwrap(out, simple, depth)


def _unwrap(out: Parsed, simple: Simple, depth: int) -> None:
    """Record `simple`, and what it runs in turn when it is a wrapper."""
    out.commands.append(simple)
    argv = simple.argv
    if (why := runners.hidden_command(argv)) is not None:
        out.opaque.append(why)
    name = _base(argv[0])
    if name in _SHELLS:
        script = _shell_script(argv)
        if script is None:
            if len(argv) == 1 or all(a.startswith("-") for a in argv[1:]):
                out.opaque.append(f"`{name}` reads commands from its input")
            return
        if simple.dynamic:
            out.opaque.append(f"`{name} -c` runs computed text")
        out.merge(parse(script, depth + 1))
    elif name == "eval":
        if simple.dynamic:
            out.opaque.append("`eval` of computed text")
        out.merge(parse(" ".join(argv[1:]), depth + 1))
    elif name == "env":
        rest = _after_env(argv)
        if rest:
            _unwrap(out, Simple(rest, simple.dynamic, simple.computed), depth + 1)
    elif name in _PREFIX_WRAPPERS:
        rest = _after_options(argv[1:], numeric=name in ("timeout", "nice", "chrt", "taskset"))
        if rest:
            _unwrap(out, Simple(rest, simple.dynamic, simple.computed), depth + 1)
    elif name == "xargs":
        rest = _after_options(argv[1:])
        out.opaque.append("`xargs` runs a command on computed arguments")
        if rest:
            _unwrap(out, Simple(rest, True, True), depth + 1)
    elif name == "find" and any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in argv):
        out.opaque.append("`find -exec` runs a command on computed arguments")
        for index, word in enumerate(argv):
            if word in ("-exec", "-execdir", "-ok", "-okdir") and index + 1 < len(argv):
                tail = [a for a in argv[index + 1 :] if a not in (";", "+", "{}")]
                if tail:
                    _unwrap(out, Simple(tuple(tail), True, True), depth + 1)


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _shell_script(argv: tuple[str, ...]) -> str | None:
    for index, word in enumerate(argv[1:], 1):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return argv[index + 1] if index + 1 < len(argv) else ""
        if not word.startswith("-"):
            return None  # a script file: its contents are the user's
    return None


def _after_env(argv: tuple[str, ...]) -> tuple[str, ...]:
    rest = list(argv[1:])
    while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
        option = rest.pop(0)
        if option in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string") and rest:
            value = rest.pop(0)
            if option in ("-S", "--split-string"):
                return tuple(value.split()) + tuple(rest)
    return tuple(rest)


def _after_options(words: tuple[str, ...], *, numeric: bool = False) -> tuple[str, ...]:
    rest = list(words)
    while rest and rest[0].startswith("-"):
        rest.pop(0)
    if numeric and rest and re.fullmatch(r"[0-9.]+[smhd]?", rest[0]):
        rest.pop(0)
    return tuple(rest)
