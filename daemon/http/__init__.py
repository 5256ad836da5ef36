"""The daemon's HTTP endpoint (``daemon.http.listen``): health, Prometheus metrics, status JSON and
page, opt-in uploads. ``endpoint.HttpEndpoint`` serves it from the daemon's process
(``server.ServerThread``), every request through ``guard.Guard``; its routes are
``readroutes.ReadRoutes`` and ``uploadroutes.UploadRoutes``; ``statuspage`` builds the HTML,
``upload.UploadSink`` streams an upload into an inbox. The API: docs/http.md."""
