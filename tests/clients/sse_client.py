"""Streams one POST /invoke with httpx-sse, a third-party server-sent events
client (not svc's own parser), and prints one JSON line per event, after a
first line with the answer's status and content type. A refused request
prints its JSON body as the second line instead.

    python sse_client.py URL KEY BODY [STOP_AFTER_TOKENS]

With STOP_AFTER_TOKENS the client closes the connection after that many
`token` events, as a chat front end does when its user leaves.
"""

import json
import sys

import httpx
from httpx_sse import connect_sse


def main() -> None:
    url, key, body = sys.argv[1], sys.argv[2], sys.argv[3]
    stop_after = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    headers = {"X-API-Key": key, "Content-Type": "application/json"}
    with httpx.Client(timeout=60) as client:
        with connect_sse(client, "POST", url, content=body, headers=headers) as source:
            response = source.response
            head = {"status": response.status_code, "content_type": response.headers.get("content-type")}
            print(json.dumps(head), flush=True)
            if response.status_code != 200:
                response.read()
                print(json.dumps(response.json()), flush=True)
                return
            tokens = 0
            for sse in source.iter_sse():
                print(json.dumps({"id": sse.id, "event": sse.event, "data": json.loads(sse.data)}), flush=True)
                if sse.event == "token":
                    tokens += 1
                    if stop_after and tokens >= stop_after:
                        return


if __name__ == "__main__":
    main()
