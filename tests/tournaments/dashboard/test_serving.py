"""Serving the site as a deployment does: offline docs, collected static files, error pages."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.test import RequestFactory

from config.startup import EMBEDDED_NOTED
from config.urls import handler500
from tests.support.workers import wait_for

ROOT = Path(__file__).resolve().parents[3]
STYLESHEET = re.compile(r'<link rel="stylesheet" href="/static/dashboard/dashboard\.css"')


@pytest.mark.parametrize("path", ["/api/redoc/", "/api/docs/"])
def test_the_api_docs_load_nothing_from_other_sites(client, path: str) -> None:
    page = client.get(path).content.decode()
    assert re.findall(r"https?://", page) == []
    assert "/static/drf_spectacular_sidecar/" in page


def test_swagger_ui_asks_no_online_validator(client) -> None:
    start_up = client.get("/api/docs/?script").content.decode()  # Swagger UI's start-up script
    assert '"validatorUrl": null' in start_up


@pytest.mark.django_db
def test_the_not_found_page_is_styled_like_the_dashboard(client) -> None:
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert STYLESHEET.search(page) and 'class="site"' in page


def test_the_server_error_page_is_styled_like_the_dashboard() -> None:
    response = handler500(RequestFactory().get("/leaderboard/"))
    assert response.status_code == 500
    page = response.content.decode()
    assert STYLESHEET.search(page) and "Something went wrong" in page


def test_the_development_server_and_its_reloaded_child_say_once_they_run_on_embedded_defaults(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", EMBEDDED_NOTED)}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", CELERY_EAGER="1", PYTHONUNBUFFERED="1"
    )
    out, err = tmp_path / "out.log", tmp_path / "err.log"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        # With its reloader on, the parent starts the child that serves, with its environment.
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{free_port()}"],
            cwd=ROOT,
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        wait_for(
            lambda: "Quit the server" in out.read_text() or server.poll() is not None,
            120,
            "the development server's banner",
        )
        assert server.poll() is None, err.read_text()[-2000:]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    assert err.read_text().count("running on embedded defaults") == 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> tuple[int, str, str]:
    """Status, content type and body of a GET; connection errors propagate."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
            return response.status, response.headers["Content-Type"], body
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def test_run_serve_with_debug_off_serves_styled_pages(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", EMBEDDED_NOTED)}
    env.update(
        DEBUG="0",
        SECRET_KEY="a-test-key-that-is-long-enough-for-django-0123456789",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        STATIC_ROOT=str(tmp_path / "static"),
        CELERY_EAGER="1",
        PORT=str(port),
    )
    server = subprocess.Popen(
        [str(ROOT / "run"), "serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert server.stderr is not None
    try:
        deadline = time.monotonic() + 240
        while True:
            assert server.poll() is None, server.stderr.read().decode()[-2000:]
            try:
                status, _, page = fetch(f"http://127.0.0.1:{port}/variants/")
                break
            except OSError:
                assert time.monotonic() < deadline, "./run serve did not answer in 240 s"
                time.sleep(0.5)
        assert status == 200
        assert STYLESHEET.search(page)
        status, kind, css = fetch(f"http://127.0.0.1:{port}/static/dashboard/dashboard.css")
        assert (status, kind.split(";")[0]) == (200, "text/css") and "--accent" in css
        status, _, missing = fetch(f"http://127.0.0.1:{port}/no/such/page/")
        assert status == 404 and STYLESHEET.search(missing)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        server.stderr.close()
