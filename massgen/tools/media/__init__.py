"""The media tools, all in one place: `generate_media`, `read_media` and the predecessor's
`understand_*` names.

    plan.py          which tools an agent gets and which provider serves each mode (pure
                     data and checks; what loading and `--validate` import)
    toolbox.py       the tools themselves, their effects and bounds
    openai_calls.py  the calls through the `openai` SDK
    gemini_calls.py  the calls through the `google-genai` SDK

Nothing is imported here: a config without media keys loads `plan.py` alone, and no SDK.
"""
