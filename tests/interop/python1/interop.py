"""Drives `agentyard serve` with the official A2A Python SDK 1.x (a2a-sdk 1.3, with
its `grpc` extra).

The client reads each agent's card, must pick its A2A 1.0 transport of the binding
asked for (not the 0.3 compatibility one), and sends, streams, gets, lists, cancels
(twice), subscribes, manages push configs, answers an input-required question, and
meets agentyard's errors and its refusal of a caller without credentials.
AGENTYARD_BINDING names the binding: JSONRPC (the default, the card's first),
HTTP+JSON or GRPC (the card's GRPC interface, `host:port`, with the agent's name as
tenant), which the client is then configured to support alone.

Run by tests/tests/interop.rs, which starts the servers and passes them in
(AGENTYARD_URL, AGENTYARD_AUTH_URL and AGENTYARD_API_KEY). One line per case (`ok`
or `FAIL` with the reason); the exit status is 1 when any case failed.
"""

import asyncio
import os
import sys
import time
import traceback
import uuid

import grpc
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from google.protobuf.json_format import MessageToDict, ParseDict

BASE = os.environ["AGENTYARD_URL"].rstrip("/")
AUTH_BASE = os.environ["AGENTYARD_AUTH_URL"].rstrip("/")
BINDING = os.environ.get("AGENTYARD_BINDING", "JSONRPC")
TRANSPORT = {
    "JSONRPC": "JsonRpcTransport",
    "HTTP+JSON": "RestTransport",
    "GRPC": "GrpcTransport",
}[BINDING]
NAME = {"JSONRPC": "python1", "HTTP+JSON": "python1-rest", "GRPC": "python1-grpc"}[BINDING]
API_KEY = os.environ["AGENTYARD_API_KEY"]
CASE_TIMEOUT_S = 25


class Failed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failed(what)


def send(text, configuration=None, task_id=None, context_id=None):
    """A SendMessageRequest from its ProtoJSON, as a 1.0 client writes it."""
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    if context_id:
        message["contextId"] = context_id
    request = {"message": message}
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


def transport_of(client):
    transport = getattr(client, "_transport", None)
    # The tenant of the chosen interface wraps the transport in a decorator.
    transport = getattr(transport, "_base", transport)
    return type(transport).__name__


async def connect(http, agent, streaming, base=BASE, api_key=None):
    config = ClientConfig(httpx_client=http, streaming=streaming)
    if BINDING != "JSONRPC":
        config.supported_protocol_bindings = [BINDING]
    if BINDING == "GRPC":
        config.grpc_channel_factory = grpc.aio.insecure_channel
    factory = ClientFactory(config)
    kwargs = {}
    if api_key:
        kwargs["resolver_http_kwargs"] = {"headers": {"X-API-Key": api_key}}
    client = await factory.create_from_url(f"{base}/agents/{agent}/", **kwargs)
    transport = transport_of(client)
    check(transport == TRANSPORT, f"the 1.0 {TRANSPORT}, got {transport}")
    return client


def task_id(answer):
    first = answer[0]
    return first["task"]["id"] if "task" in first else first["message"]["taskId"]


async def case_card(http):
    card = (await http.get(f"{BASE}/agents/countdown/.well-known/agent-card.json")).json()
    offered = [
        i
        for i in card["supportedInterfaces"]
        if i["protocolBinding"] == BINDING and i["protocolVersion"] == "1.0"
    ]
    check(len(offered) == 1, f"one 1.0 {BINDING} interface: {card['supportedInterfaces']}")
    interface = offered[0]
    if BINDING == "GRPC":
        check(interface.get("tenant") == "countdown", f"the agent as tenant: {interface}")
        check("://" not in interface["url"], f"a gRPC target, host:port: {interface}")
    else:
        check(interface["url"].endswith("/agents/countdown"), f"the agent's URL: {interface}")


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
    try:
        await client.cancel_task(ParseDict({"id": tid}, CancelTaskRequest()))
    except Exception as error:  # noqa: BLE001 - the class is what is checked
        name = type(error).__name__
        check("NotCancelable" in name, f"TaskNotCancelableError, got {name}: {error}")
    else:
        raise Failed("a second cancel is refused")


async def case_subscribe(http):
    unary = await connect(http, "countdown", streaming=False)
    tid = task_id(await events(unary.send_message(send("2", {"returnImmediately": True}))))
    client = await connect(http, "countdown", streaming=True)
    found = await events(client.subscribe(ParseDict({"id": tid}, SubscribeToTaskRequest())))
    states = [e["statusUpdate"]["status"]["state"] for e in found if "statusUpdate" in e]
    check(states and states[-1] == "TASK_STATE_COMPLETED", f"followed to the end: {states}")


async def case_push_configs(http):
    client = await connect(http, "countdown", streaming=False)
    tid = task_id(await events(client.send_message(send("5", {"returnImmediately": True}))))
    created = await client.create_task_push_notification_config(
        ParseDict(
            {"taskId": tid, "id": "hook-1", "url": "http://127.0.0.1:9/hook", "token": "t"},
            TaskPushNotificationConfig(),
        )
    )
    check(created.id == "hook-1" and created.task_id == tid, f"created: {created}")
    got = await client.get_task_push_notification_config(
        ParseDict({"taskId": tid, "id": "hook-1"}, GetTaskPushNotificationConfigRequest())
    )
    check(got.url == "http://127.0.0.1:9/hook", f"got: {got}")
    listed = await client.list_task_push_notification_configs(
        ParseDict({"taskId": tid}, ListTaskPushNotificationConfigsRequest())
    )
    check([c.id for c in listed.configs] == ["hook-1"], f"listed: {listed}")
    await client.delete_task_push_notification_config(
        ParseDict({"taskId": tid, "id": "hook-1"}, DeleteTaskPushNotificationConfigRequest())
    )
    listed = await client.list_task_push_notification_configs(
        ParseDict({"taskId": tid}, ListTaskPushNotificationConfigsRequest())
    )
    check(not listed.configs, f"deleted: {listed}")
    await client.cancel_task(ParseDict({"id": tid}, CancelTaskRequest()))


async def case_input_required(http):
    client = await connect(http, "ask", streaming=False)
    asked = await events(client.send_message(send("hello")))
    task = asked[0]["task"]
    check(task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", f"a question: {task}")
    answered = await events(
        client.send_message(send("Ada", task_id=task["id"], context_id=task["contextId"]))
    )
    done = answered[0]["task"]
    check(done["status"]["state"] == "TASK_STATE_COMPLETED", f"completed: {done}")
    check(done["id"] == task["id"], "the same task")


async def case_not_found(http):
    client = await connect(http, "countdown", streaming=False)
    try:
        await client.get_task(ParseDict({"id": "no-such-task"}, GetTaskRequest()))
    except Exception as error:  # noqa: BLE001 - the class is what is checked
        name = type(error).__name__
        check("TaskNotFound" in name, f"TaskNotFoundError from the ErrorInfo, got {name}")
    else:
        raise Failed("an unknown task is an error")


async def case_auth(http):
    client = await connect(http, "echo", streaming=False, base=AUTH_BASE, api_key=API_KEY)
    try:
        await events(client.send_message(send("no key")))
    except Exception as error:  # noqa: BLE001 - the status is what is checked
        # gRPC's status, HTTP's 401.
        refused = "UNAUTHENTICATED" in str(error) or "401" in str(error)
        check(refused, f"UNAUTHENTICATED or HTTP 401, got {error!r}")
    else:
        raise Failed("a call without the key is refused")


CASES = {
    "card": case_card,
    "send": case_send,
    "stream": case_stream,
    "get": case_get,
    "list": case_list,
    "cancel": case_cancel,
    "subscribe": case_subscribe,
    "push-configs": case_push_configs,
    "input-required": case_input_required,
    "not-found": case_not_found,
    "auth": case_auth,
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
