"""The ASGI app: `svc-py run`, or `uvicorn app.main:app` from the project root."""

from svc.server import create_app

app = create_app()
