"""Drives `agentyard serve` over gRPC with the official A2A Python SDK 0.3.x client
(a2a-sdk 0.3, its `grpc` extra), on the `a2a.v1.A2AService` of A2A 0.3.0.

0.3 requests carry no tenant, so the 0.3 gRPC interface reaches the default agent
and only the default agent's card lists it. The client connects from that card; to
reach another agent the cases add agentyard's `a2a-agent` metadata with a gRPC
client interceptor on the channel.

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

import grpc
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    GetTaskPushNotificationConfigParams,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TextPart,
    TransportProtocol,
)

BASE = os.environ["AGENTYARD_URL"].rstrip("/")
CASE_TIMEOUT = 25.0


class Failed(Exception):
    """A case's check did not hold."""


def check(condition, what):
    if not condition:
        raise Failed(what)


def text_message(text, task_id=None, context_id=None):
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[Part(root=TextPart(text=text))],
        task_id=task_id,
        context_id=context_id,
    )


def with_agent(details, agent):
    """`details` with `a2a-agent: <agent>` added: which agent a 0.3 call is for."""
    metadata = grpc.aio.Metadata(*list(details.metadata or []), ("a2a-agent", agent))
    return grpc.aio.ClientCallDetails(
        details.method,
        details.timeout,
        metadata,
        details.credentials,
        details.wait_for_ready,
    )


# One class per kind of call: grpc.aio files an interceptor under the first kind it
# is an instance of, so one class for both would miss the streaming calls.
class UnaryAgent(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, agent):
        self.agent = agent

    async def intercept_unary_unary(self, continuation, details, request):
        return await continuation(with_agent(details, self.agent), request)


class StreamAgent(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, agent):
        self.agent = agent

    async def intercept_unary_stream(self, continuation, details, request):
        return await continuation(with_agent(details, self.agent), request)


async def connect(agent=None, streaming=True, polling=False):
    """A client from the default agent's card, over gRPC; `agent` names another."""

    def channel(url):
        interceptors = [UnaryAgent(agent), StreamAgent(agent)] if agent else None
        return grpc.aio.insecure_channel(url, interceptors=interceptors)

    config = ClientConfig(
        httpx_client=httpx.AsyncClient(timeout=httpx.Timeout(30.0)),
        streaming=streaming,
        polling=polling,
        supported_transports=[TransportProtocol.grpc],
        grpc_channel_factory=channel,
    )
    client = await ClientFactory.connect(BASE, client_config=config)
    transport = type(getattr(client, "_transport", None)).__name__
    check(transport == "GrpcTransport", f"the gRPC transport, got {transport}")
    return client


async def last_event(client, message):
    """Sends and returns the last thing the client yields (a Message or a Task)."""
    last = None
    async for event in client.send_message(message):
        last = event
    if isinstance(last, tuple):
        return last[0]
    return last


async def case_cards():
    async with httpx.AsyncClient() as h:
        root = await A2ACardResolver(h, BASE).get_agent_card()
        other = await A2ACardResolver(h, f"{BASE}/agents/countdown").get_agent_card()
    grpc_urls = [i.url for i in root.additional_interfaces or [] if i.transport == "GRPC"]
    check(len(grpc_urls) == 1 and "://" not in grpc_urls[0], f"host:port: {grpc_urls}")
    check(
        not [i for i in other.additional_interfaces or [] if i.transport == "GRPC"],
        "no 0.3 gRPC interface off the default agent",
    )


async def case_send():
    client = await connect(streaming=False)
    answer = await last_event(client, text_message("hello over grpc"))
    check(isinstance(answer, Message), f"echo answers with a Message, got {answer!r}")
    text = "".join(p.root.text for p in answer.parts if isinstance(p.root, TextPart))
    check(text == "hello over grpc", f"echo's text: {text!r}")


async def case_stream():
    client = await connect("countdown")
    seen = []
    async for event in client.send_message(text_message("2")):
        task, update = event if isinstance(event, tuple) else (event, None)
        seen.append(update)
    check(isinstance(task, Task), f"a task: {task!r}")
    check(task.status.state == TaskState.completed, f"ends completed: {task.status.state}")
    check(seen[-1] is not None and seen[-1].final, "the last update is final")
    check(task.artifacts, f"countdown's artifacts, so the call reached it: {task!r}")


async def case_get():
    client = await connect("countdown", streaming=False)
    done = await last_event(client, text_message("0"))
    got = await client.get_task(TaskQueryParams(id=done.id, history_length=1))
    check(got.status.state == TaskState.completed, f"state {got.status.state}")
    check(len(got.history or []) == 1, f"historyLength 1: {got.history}")


async def case_cancel_and_resubscribe():
    client = await connect("countdown", streaming=False, polling=True)
    started = await last_event(client, text_message("30"))
    check(isinstance(started, Task), f"a task: {started!r}")
    end = time.monotonic() + 10
    while (await client.get_task(TaskQueryParams(id=started.id))).status.state != TaskState.working:
        check(time.monotonic() < end, "the task starts working")
        await asyncio.sleep(0.05)
    canceled = await client.cancel_task(TaskIdParams(id=started.id))
    check(canceled.status.state == TaskState.canceled, f"state {canceled.status.state}")
    try:
        await client.cancel_task(TaskIdParams(id=started.id))
    except Exception as error:  # noqa: BLE001 - the status is what is checked
        check("FAILED_PRECONDITION" in repr(error) or "cancel" in str(error).lower(), repr(error))
    else:
        raise Failed("a second cancel is refused")

    short = await last_event(client, text_message("2"))
    streaming = await connect("countdown")
    updates = []
    async for event in streaming.resubscribe(TaskIdParams(id=short.id)):
        task, update = event if isinstance(event, tuple) else (event, None)
        updates.append(update)
    check(task.status.state == TaskState.completed, f"followed to the end: {task.status.state}")


async def case_push_config():
    client = await connect("countdown", streaming=False, polling=True)
    started = await last_event(client, text_message("5"))
    stored = await client.set_task_callback(
        TaskPushNotificationConfig(
            task_id=started.id,
            push_notification_config=PushNotificationConfig(
                id="hook-1", url="http://127.0.0.1:9/hook", token="t"
            ),
        )
    )
    check(stored.task_id == started.id, f"stored for the task: {stored}")
    check(stored.push_notification_config.id == "hook-1", f"its id: {stored}")
    got = await client.get_task_callback(
        GetTaskPushNotificationConfigParams(id=started.id, push_notification_config_id="hook-1")
    )
    check(got.push_notification_config.url == "http://127.0.0.1:9/hook", f"got: {got}")
    await client.cancel_task(TaskIdParams(id=started.id))


async def case_input_required():
    client = await connect("ask", streaming=False)
    asked = await last_event(client, text_message("hello"))
    check(asked.status.state == TaskState.input_required, f"a question: {asked.status.state}")
    answered = await last_event(
        client, text_message("Ada", task_id=asked.id, context_id=asked.context_id)
    )
    check(answered.status.state == TaskState.completed, f"completed: {answered.status.state}")
    check(answered.id == asked.id, "the same task")


async def case_not_found():
    client = await connect(streaming=False)
    try:
        await client.get_task(TaskQueryParams(id="no-such-task"))
    except Exception as error:  # noqa: BLE001 - the status is what is checked
        check("NOT_FOUND" in repr(error) or "not found" in str(error).lower(), repr(error))
    else:
        raise Failed("an unknown task is an error")


CASES = {
    "cards": case_cards,
    "send": case_send,
    "stream": case_stream,
    "get": case_get,
    "cancel-and-resubscribe": case_cancel_and_resubscribe,
    "push-config": case_push_config,
    "input-required": case_input_required,
    "not-found": case_not_found,
}


async def main():
    only = set(sys.argv[1:])
    failed = 0
    for name, run in CASES.items():
        if only and name not in only:
            continue
        began = time.monotonic()
        try:
            await asyncio.wait_for(run(), CASE_TIMEOUT)
            print(f"ok   python-grpc {name} ({time.monotonic() - began:.1f} s)", flush=True)
        except Failed as error:
            failed += 1
            print(f"FAIL python-grpc {name}: {error}", flush=True)
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL python-grpc {name}: {traceback.format_exc()}", flush=True)
    return 1 if failed else 0


sys.exit(asyncio.run(main()))
