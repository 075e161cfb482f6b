from massgen.config import redact


def test_literal_secrets_are_hidden_and_references_kept():
    raw = {
        "agents": [
            {
                "id": "a",
                "backend": {
                    "type": "groq",
                    "api_key": "gsk-live-secret",
                    "max_tokens": 512,
                    "extra_body": {"auth_token": "t0k", "top_k": 5},
                },
            },
            {"id": "b", "backend": {"type": "groq", "api_key": "${GROQ_API_KEY}"}},
        ],
        "servers": {"env": {"GITHUB_TOKEN": "ghp_x", "DB_PASSWORD": "hunter2", "PORT": "80"}},
    }
    clean = redact(raw)
    first, second = clean["agents"][0]["backend"], clean["agents"][1]["backend"]
    assert first["api_key"] == "***"
    assert first["max_tokens"] == 512
    assert first["extra_body"] == {"auth_token": "***", "top_k": 5}
    assert second["api_key"] == "${GROQ_API_KEY}"
    assert clean["servers"]["env"] == {"GITHUB_TOKEN": "***", "DB_PASSWORD": "***", "PORT": "80"}
    # The input is untouched.
    assert raw["agents"][0]["backend"]["api_key"] == "gsk-live-secret"


def test_a_reference_with_a_literal_default_is_still_hidden():
    clean = redact({"api_key": "${KEY:-sk-fallback-secret}", "client_secret": None})
    assert clean == {"api_key": "***", "client_secret": None}
