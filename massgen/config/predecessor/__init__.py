"""The open-source predecessor's config keys that our schema does not declare, each with
what it means here. `translate` applies them to the parsed file before validation:

    mapped    rewritten to our typed keys: `text: {verbosity}` -> `verbosity`,
              `reasoning: {effort, summary}` -> `reasoning_effort`/`reasoning_summary`,
              `ui.type`/`display:` -> `ui.display_type`, `top_k`-style server parameters
              -> `extra_body`, `append_system_prompt` -> the end of `system_message`,
              `custom_tools` entries naming the predecessor's own media tool files ->
              the built-in media tools (`media_tools`, `tools/media/`)
    no effect accepted and dropped, with a note (`--validate` prints them): massgen
              already does what the key asked for its own way (`snapshot_storage`: every
              run has its own snapshot store), or the key tuned a mechanism massgen does
              not have and the run means the same without it
    refused   a ConfigError naming the key path, why, and what to use instead

A key set to an "off" value (false, 0, null, empty) asks for nothing and is dropped
without a note. Keys not listed here go on to the schema, which knows the rest.

The package:

    walk.py     `translate`: the pass over the whole file
    backend.py  an agent's `backend:` block
    keys.py     the tables, as data: each key with no effect (why) or refused (why, fix)
    rules.py    `NoEffect`, `Refused`, `Note`, applying a table, `grouped` notes
    ag2.py      AG2 agents as native agents
    memory.py   the top-level `memory:` block as filesystem memory
    dspy.py     `orchestrator.dspy` as question paraphrases
"""

from massgen.config.predecessor.rules import Note, grouped
from massgen.config.predecessor.walk import translate

__all__ = ["Note", "grouped", "translate"]
