"""Recording what agents' current releases really write (`make record`; not in the wheel).

A scripted model server (``server``) speaks the providers' APIs on 127.0.0.1 and logs the exact
request of every call; a driver per agent (``drivers/<agent>.py``) installs the agent's release
from the npm registry into ``/tmp/adfkit-record/<agent>/`` (the same path on every machine),
runs it with a fresh HOME against the server and copies the files it wrote (machine paths
neutralised) into
``tests/fixtures/recorded/<agent>/<version>/`` beside ``requests.jsonl`` (the log) and
``truth.json`` (figures computed from the log only, ``truth``).

The pieces:
  script    the neutral view of a request (``Call``), what the model answers (``Answer``),
            scenarios as stateless scripts (the answer depends on the request alone), usage
  server    the HTTP server: routes each request to a dialect, logs request and answer
  dialects/ one module per provider API: parse a request into the neutral view, write an
            answer in the API's JSON or server-sent events
  drivers/  one module per agent: install, configure, drive the scenarios, collect the files
  truth     figures from the log alone
"""
