"""`massgen serve` answers only requests that name it (issue #26: DNS rebinding).

A page on `evil.example` that rebinds its name to 127.0.0.1 reaches the server with
`Host: evil.example`; that is refused on every route, `/` and `/health` included, while
the loopback names and `--allowed-host` names are answered.
"""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest
from serve_fixture import TOKEN, Server, running_server, write_team

from massgen.serve.hosts import allowed_names, host_name, is_allowed

ROUTES = ["/", "/health", "/app.js", "/v1/models", "/api/teams", "/api/runs"]


def status_for(server: Server, path: str, host: str) -> int:
    address = urlsplit(server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host)
        connection.putheader("Authorization", f"Bearer {TOKEN}")
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@pytest.mark.parametrize("path", ROUTES)
def test_a_foreign_host_header_is_refused_on_every_route(server: Server, path: str) -> None:
    port = urlsplit(server.url).port
    assert status_for(server, path, f"evil.example:{port}") == 421
    assert status_for(server, path, "evil.example") == 421
    assert status_for(server, path, f"127.0.0.1.evil.example:{port}") == 421


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}",
                                  "LOCALHOST", "127.0.0.2:{port}"])  # fmt: skip
def test_loopback_names_are_answered(server: Server, host: str) -> None:
    port = urlsplit(server.url).port
    assert status_for(server, "/health", host.format(port=port)) == 200
    assert status_for(server, "/", host.format(port=port)) == 200


def test_a_name_given_with_allowed_host_is_answered(tmp_path, fakes) -> None:
    (tmp_path / "home").mkdir()
    write_team(tmp_path / "team.yaml", fakes["fast"].base_url)
    with running_server(tmp_path, "--config", "team.yaml", "--allowed-host", "box.lan") as srv:
        assert status_for(srv, "/health", "box.lan:80") == 200
        assert status_for(srv, "/health", "other.lan") == 421


def test_the_host_names_are_read_as_browsers_send_them() -> None:
    assert [host_name(h) for h in ("Example.COM.:80", "[::1]:8000", "::1", "a")] == [
        "example.com", "::1", "::1", "a"]  # fmt: skip
    assert allowed_names("0.0.0.0") is None  # every interface, no list: any name
    names = allowed_names("0.0.0.0", ["box.lan"])
    assert names is not None and is_allowed("box.lan", names) and not is_allowed("x.lan", names)
    assert is_allowed("127.0.0.1", names)
