"""The image's health check: calls the server the way a client does, with the standard library alone.

It sends MCP `initialize` (protocol 2025-11-25) to the `default` run at 127.0.0.1:7420 with the host's
token (AGENT_TOOLS_HOST_TOKEN), expects 200 with an `Mcp-Session-Id`, and ends that session with
`DELETE` (so probes leave no session behind). Exit 0: the server answers MCP; 1: it does not, with why
on stderr. The Kubernetes template runs it as its startup, readiness and liveness probe.

usage: python3 /usr/local/lib/agent-tools/probe.py [PORT]
"""

import http.client
import json
import os
import sys

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 7420
PATH = "/runs/default/mcp"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


def main():
    token = os.environ.get("AGENT_TOOLS_HOST_TOKEN", "").strip()
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    connection.request("POST", PATH, body=json.dumps(INITIALIZE), headers=headers)
    response = connection.getresponse()
    session = response.getheader("Mcp-Session-Id")
    body = response.read(65536).decode("utf-8", "replace")
    if response.status != 200 or '"serverInfo"' not in body:
        sys.exit(f"probe: initialize answered {response.status}: {body[:300]}")
    if session:
        connection.request("DELETE", PATH, headers={**headers, "Mcp-Session-Id": session})
        ended = connection.getresponse()
        ended.read()
        if ended.status not in (200, 202, 204):
            sys.exit(f"probe: ending the session answered {ended.status}")


try:
    main()
except OSError as error:
    sys.exit(f"probe: {error}")
