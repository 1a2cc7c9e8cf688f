"""The HTTP server part: mcpkit's HTTP/1.1 protocol for uvicorn (the request cycle, the
header clock), the process's runner (``run_http_server``, ``serve_http``) and the worker
supervisor. The ASGI app never imports it: any ASGI server may serve that."""
