"""Drives `agentyard serve` with the official A2A Python SDK 1.x client (a2a-sdk 1.3).

The client reads the card, must pick its A2A 1.0 transport of the binding asked
for (not the 0.3 compatibility one), and sends, streams, gets, lists, cancels and
subscribes. AGENTYARD_BINDING names the binding: JSONRPC (the default, the card's
first) or HTTP+JSON, which the client is then configured to support alone.

Run by tests/tests/interop.rs, which starts the servers and passes them in
(AGENTYARD_URL; the auth server's variables are not used here). One line per case
(`ok` or `FAIL` with the reason); the exit status is 1 when any case failed.
"""

import asyncio
import os
import sys
import time
import traceback
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from google.protobuf.json_format import MessageToDict, ParseDict

BASE = os.environ["AGENTYARD_URL"].rstrip("/")
BINDING = os.environ.get("AGENTYARD_BINDING", "JSONRPC")
TRANSPORT = {"JSONRPC": "JsonRpcTransport", "HTTP+JSON": "RestTransport"}[BINDING]
NAME = "python1" if BINDING == "JSONRPC" else "python1-rest"
CASE_TIMEOUT_S = 25


class Failed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failed(what)


def send(text, configuration=None):
    """A SendMessageRequest from its ProtoJSON, as a 1.0 client writes it."""
    request = {
        "message": {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
    }
    if configuration:
        request["configuration"] = configuration
    return ParseDict(request, SendMessageRequest())


async def events(stream):
    """Every event of a client stream, as ProtoJSON dicts."""
    found = []
    async for event in stream:
        if isinstance(event, tuple):
            event = event[0]
        found.append(MessageToDict(event))
    return found


async def connect(http, agent, streaming):
    config = ClientConfig(httpx_client=http, streaming=streaming)
    if BINDING != "JSONRPC":
        config.supported_protocol_bindings = [BINDING]
    factory = ClientFactory(config)
    client = await factory.create_from_url(f"{BASE}/agents/{agent}/")
    transport = type(getattr(client, "_transport", None)).__name__
    check(transport == TRANSPORT, f"the 1.0 {TRANSPORT}, got {transport}")
    return client


def task_id(answer):
    first = answer[0]
    return first["task"]["id"] if "task" in first else first["message"]["taskId"]


async def case_send(http):
    client = await connect(http, "echo", streaming=False)
    answer = await events(client.send_message(send("hello from python 1.x")))
    message = answer[0].get("message", {})
    check(message.get("parts") == [{"text": "hello from python 1.x"}], f"echo's reply: {answer}")
    check(message.get("role") == "ROLE_AGENT", f"ROLE_AGENT: {answer}")


async def case_stream(http):
    client = await connect(http, "countdown", streaming=True)
    found = await events(client.send_message(send("2")))
    check("task" in found[0], f"the task first: {found[0]}")
    states = [e["statusUpdate"]["status"]["state"] for e in found if "statusUpdate" in e]
    check("TASK_STATE_WORKING" in states, f"a working update: {states}")
    check(states[-1] == "TASK_STATE_COMPLETED", f"ends completed: {states}")
    check(sum("artifactUpdate" in e for e in found) >= 2, "artifact chunks stream")


async def case_get(http):
    client = await connect(http, "countdown", streaming=False)
    done = await events(client.send_message(send("0")))
    tid = task_id(done)
    got = await client.get_task(ParseDict({"id": tid, "historyLength": 1}, GetTaskRequest()))
    got = MessageToDict(got)
    check(got["status"]["state"] == "TASK_STATE_COMPLETED", f"state {got['status']}")
    check(len(got.get("history", [])) == 1, f"historyLength 1: {got.get('history')}")


async def case_list(http):
    client = await connect(http, "countdown", streaming=False)
    first = task_id(await events(client.send_message(send("0"))))
    second = task_id(await events(client.send_message(send("0"))))
    page = await client.list_tasks(ParseDict({"pageSize": 1}, ListTasksRequest()))
    check([t.id for t in page.tasks] == [second], f"newest first: {page.tasks}")
    check(page.total_size >= 2 and page.next_page_token, f"more pages: {page.total_size}")
    page = await client.list_tasks(
        ParseDict({"pageSize": 1, "pageToken": page.next_page_token}, ListTasksRequest())
    )
    check([t.id for t in page.tasks] == [first], f"the next page: {page.tasks}")


async def case_cancel(http):
    client = await connect(http, "countdown", streaming=False)
    started = await events(client.send_message(send("30", {"returnImmediately": True})))
    tid = task_id(started)
    deadline = time.monotonic() + 10
    while True:
        task = await client.get_task(ParseDict({"id": tid}, GetTaskRequest()))
        if MessageToDict(task)["status"]["state"] == "TASK_STATE_WORKING":
            break
        check(time.monotonic() < deadline, "the task starts working")
        await asyncio.sleep(0.05)
    canceled = MessageToDict(await client.cancel_task(ParseDict({"id": tid}, CancelTaskRequest())))
    check(canceled["status"]["state"] == "TASK_STATE_CANCELED", f"state {canceled['status']}")


async def case_subscribe(http):
    unary = await connect(http, "countdown", streaming=False)
    tid = task_id(await events(unary.send_message(send("2", {"returnImmediately": True}))))
    client = await connect(http, "countdown", streaming=True)
    found = await events(client.subscribe(ParseDict({"id": tid}, SubscribeToTaskRequest())))
    states = [e["statusUpdate"]["status"]["state"] for e in found if "statusUpdate" in e]
    check(states and states[-1] == "TASK_STATE_COMPLETED", f"followed to the end: {states}")


CASES = {
    "send": case_send,
    "stream": case_stream,
    "get": case_get,
    "list": case_list,
    "cancel": case_cancel,
    "subscribe": case_subscribe,
}


async def main():
    only = set(sys.argv[1:])
    failed = 0
    async with httpx.AsyncClient(timeout=30) as http:
        for name, run in CASES.items():
            if only and name not in only:
                continue
            began = time.monotonic()
            try:
                await asyncio.wait_for(run(http), CASE_TIMEOUT_S)
                print(f"ok   {NAME} {name} ({time.monotonic() - began:.1f} s)", flush=True)
            except Failed as error:
                failed += 1
                print(f"FAIL {NAME} {name}: {error}", flush=True)
            except Exception:  # noqa: BLE001 - every failure is reported, then counted
                failed += 1
                print(f"FAIL {NAME} {name}: {traceback.format_exc()}", flush=True)
    return 1 if failed else 0


sys.exit(asyncio.run(main()))
