"""Drives `agentyard serve` with the official A2A Python SDK client (a2a-sdk 0.3.x).

Run by tests/tests/interop.rs, which starts the servers and passes them in:

- AGENTYARD_URL: a server with the built-in agents, webhooks to loopback allowed;
- AGENTYARD_AUTH_URL and AGENTYARD_API_KEY: a server that wants that API key.

Every case runs, each with a time limit; one line per case (`ok` or `FAIL` with the
reason), and the exit status is 1 when any case failed.

AGENTYARD_BINDING names the binding the client is configured to support:
JSONRPC (the default) or HTTP+JSON, where the SDK calls the card's HTTP+JSON
interface under `/v1/...`. Over HTTP+JSON an A2A error arrives as an HTTP status
(404 for an unknown task, 409 for a task that cannot be canceled), which is how
this client reports it on that binding; the cases check that instead.
"""

import asyncio
import json
import os
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from a2a.client import (
    A2ACardResolver,
    A2AClientHTTPError,
    AuthInterceptor,
    ClientConfig,
    ClientFactory,
    CredentialService,
)
from a2a.client.errors import A2AClientError, A2AClientJSONRPCError
from a2a.types import (
    DataPart,
    GetTaskPushNotificationConfigParams,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
    TextPart,
)

BASE = os.environ["AGENTYARD_URL"].rstrip("/")
AUTH_BASE = os.environ["AGENTYARD_AUTH_URL"].rstrip("/")
API_KEY = os.environ["AGENTYARD_API_KEY"]
HANDOFF = "https://agentyard.dev/extensions/handoff/v1"
CASE_TIMEOUT = 25.0
BINDING = os.environ.get("AGENTYARD_BINDING", "JSONRPC")
REST = BINDING == "HTTP+JSON"
NAME = "python-rest" if REST else "python"
# The HTTP status each A2A error has on HTTP+JSON.
REST_STATUS = {-32001: 404, -32002: 409, -32602: 400}


class Failed(Exception):
    """A case's check did not hold."""


def check(condition, what):
    if not condition:
        raise Failed(what)


def text_message(text, task_id=None, context_id=None, parts=None):
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=parts or [Part(root=TextPart(text=text))],
        task_id=task_id,
        context_id=context_id,
    )


def text_of(message):
    if message is None:
        return ""
    return "".join(p.root.text for p in message.parts if isinstance(p.root, TextPart))


def http(event_hooks=None, headers=None):
    # Blocking sends wait for the agent; httpx's 5 s default is too short for that.
    return httpx.AsyncClient(
        timeout=httpx.Timeout(30.0), event_hooks=event_hooks, headers=headers)


async def connect(agent, *, base=BASE, polling=False, streaming=True, modes=None,
                  interceptors=None, extensions=None, push=None, event_hooks=None,
                  headers=None):
    config = ClientConfig(
        httpx_client=http(event_hooks, headers),
        polling=polling,
        streaming=streaming,
        accepted_output_modes=modes or [],
        push_notification_configs=[push] if push else [],
    )
    if REST:
        config.supported_transports = [BINDING]
    return await ClientFactory.connect(
        f"{base}/agents/{agent}",
        client_config=config,
        interceptors=interceptors,
        extensions=extensions,
    )


async def last_event(client, message):
    """Sends and returns the last thing the client yields (a Message or a Task)."""
    last = None
    async for event in client.send_message(message):
        last = event
    if isinstance(last, tuple):
        return last[0]
    return last


def check_a2a_error(error, code, what):
    """The A2A error `code` as this binding reports it: the JSON-RPC error, or over
    HTTP+JSON its HTTP status."""
    if isinstance(error, A2AClientJSONRPCError):
        check(not REST and error.error.code == code, f"{what}: {error.error}")
    elif isinstance(error, A2AClientHTTPError):
        check(REST and error.status_code == REST_STATUS[code], f"{what}: {error}")
    else:
        raise Failed(f"{what}: {type(error).__name__}: {error}")


async def wait_for_state(client, task_id, states, deadline=15.0):
    end = time.monotonic() + deadline
    while True:
        task = await client.get_task(TaskQueryParams(id=task_id))
        if task.status.state in states:
            return task
        check(time.monotonic() < end, f"task {task_id} stayed {task.status.state}, wanted {states}")
        await asyncio.sleep(0.1)


async def case_cards():
    async with http() as h:
        root = await A2ACardResolver(h, BASE).get_agent_card()
        check(root.name == "echo", f"the root card is echo's, got {root.name}")
        card = await A2ACardResolver(h, f"{BASE}/agents/countdown").get_agent_card()
    check(card.protocol_version == "0.3.0", f"protocolVersion {card.protocol_version}")
    check(card.url == f"{BASE}/agents/countdown", f"url {card.url}")
    check(card.capabilities.streaming is True, "streaming capability")
    check(card.capabilities.push_notifications is True, "push capability")
    uris = [e.uri for e in card.capabilities.extensions or []]
    check(HANDOFF in uris, f"the handoff extension is declared: {uris}")


async def case_send():
    client = await connect("echo", streaming=False)
    answer = await last_event(client, text_message("hello from python"))
    check(isinstance(answer, Message), f"echo answers with a Message, got {answer!r}")
    check(text_of(answer) == "hello from python", f"echo's text: {text_of(answer)!r}")
    check(answer.task_id and answer.context_id, "the reply names its task and context")


async def case_stream():
    client = await connect("countdown")
    states, chunks, task = [], [], None
    async for task, update in client.send_message(text_message("2")):
        if update is None:
            continue
        if hasattr(update, "status"):
            states.append(update.status.state)
        else:
            chunks.append(update.artifact)
    check(task is not None, "the stream yields the task")
    check(TaskState.working in states, f"a working update: {states}")
    check(states[-1] == TaskState.completed, f"ends completed: {states}")
    check(len(chunks) >= 2, f"artifact chunks stream: {len(chunks)}")
    check(task.status.state == TaskState.completed, "the aggregated task is completed")
    text = "".join(text_of(a) for a in task.artifacts or [])
    check("liftoff" in text, f"the artifact is assembled: {text!r}")


async def case_get():
    client = await connect("countdown", streaming=False)
    done = await last_event(client, text_message("0"))
    check(isinstance(done, Task), f"countdown answers with a Task, got {done!r}")
    got = await client.get_task(TaskQueryParams(id=done.id, history_length=1))
    check(got.id == done.id, "the same task")
    check(got.status.state == TaskState.completed, f"state {got.status.state}")
    check(got.history is not None and len(got.history) == 1, f"historyLength 1: {got.history}")
    try:
        await client.get_task(TaskQueryParams(id="no-such-task"))
        raise Failed("an unknown task is found")
    except (A2AClientJSONRPCError, A2AClientHTTPError) as e:
        check_a2a_error(e, -32001, "TaskNotFound")


async def case_cancel():
    client = await connect("countdown", streaming=False, polling=True)
    started = await last_event(client, text_message("30"))
    check(isinstance(started, Task), f"a non-blocking send answers with a Task: {started!r}")
    await wait_for_state(client, started.id, {TaskState.working})
    canceled = await client.cancel_task(TaskIdParams(id=started.id))
    check(canceled.status.state == TaskState.canceled, f"state {canceled.status.state}")
    again = await client.get_task(TaskQueryParams(id=started.id))
    check(again.status.state == TaskState.canceled, f"stays canceled: {again.status.state}")
    try:
        await client.cancel_task(TaskIdParams(id=started.id))
        raise Failed("an ended task is canceled again")
    except (A2AClientJSONRPCError, A2AClientHTTPError) as e:
        check_a2a_error(e, -32002, "TaskNotCancelable")


async def case_resubscribe():
    client = await connect("countdown", polling=True, streaming=False)
    started = await last_event(client, text_message("2"))
    check(isinstance(started, Task), f"a Task: {started!r}")
    streaming = await connect("countdown")
    states = []
    async for task, update in streaming.resubscribe(TaskIdParams(id=started.id)):
        check(task.id == started.id, "events of the task resubscribed to")
        if update is not None and hasattr(update, "status"):
            states.append(update.status.state)
    check(states and states[-1] == TaskState.completed, f"followed to the end: {states}")


async def case_stream_error_resubscribe():
    # Errors of streaming methods come as one SSE event holding the JSON-RPC error.
    client = await connect("countdown")
    # Over HTTP+JSON an error before the stream starts is the HTTP status.
    try:
        async for _ in client.resubscribe(TaskIdParams(id="no-such-task")):
            pass
        raise Failed("resubscribing to an unknown task streams")
    except A2AClientJSONRPCError as e:
        check_a2a_error(e, -32001, "TaskNotFound")
    except A2AClientHTTPError as e:
        check(REST, f"the error did not come as a stream: {e}")
        # The SDK's resubscribe over HTTP+JSON checks the content type before the
        # status, and reports the 404 JSON answer as its own 400 naming it.
        if not (e.status_code == 400 and "application/json" in e.message):
            check_a2a_error(e, -32001, "TaskNotFound")


async def case_stream_error_send():
    client = await connect("countdown")
    try:
        async for _ in client.send_message(text_message("1", task_id="no-such-task")):
            pass
        raise Failed("streaming to an unknown task streams")
    except A2AClientJSONRPCError as e:
        check_a2a_error(e, -32001, "TaskNotFound")
    except A2AClientHTTPError as e:
        check(REST, f"the error did not come as a stream: {e}")
        # The SDK's resubscribe over HTTP+JSON checks the content type before the
        # status, and reports the 404 JSON answer as its own 400 naming it.
        if not (e.status_code == 400 and "application/json" in e.message):
            check_a2a_error(e, -32001, "TaskNotFound")


async def case_input_required():
    client = await connect("ask", streaming=False)
    asked = await last_event(client, text_message("hi"))
    check(isinstance(asked, Task), f"a Task: {asked!r}")
    check(asked.status.state == TaskState.input_required, f"state {asked.status.state}")
    check("name" in text_of(asked.status.message), f"the question: {asked.status.message}")
    answered = await last_event(
        client, text_message("Ada", task_id=asked.id, context_id=asked.context_id))
    check(isinstance(answered, Task), f"a Task: {answered!r}")
    check(answered.id == asked.id, "the same task goes on")
    check(answered.status.state == TaskState.completed, f"state {answered.status.state}")
    check("Ada" in text_of(answered.status.message), f"the answer: {answered.status.message}")


class Webhook:
    """A local receiver of push notifications on 127.0.0.1."""

    def __init__(self):
        received = self.received = []
        lock = self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with lock:
                    received.append((dict(self.headers), json.loads(body or b"null")))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def snapshot(self):
        with self.lock:
            return list(self.received)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


async def case_push():
    hook = Webhook()
    try:
        token = "py-" + uuid.uuid4().hex
        push = PushNotificationConfig(url=hook.url, token=token, id="py-hook")
        client = await connect("countdown", streaming=False, polling=True, push=push)
        started = await last_event(client, text_message("1"))
        check(isinstance(started, Task), f"a Task: {started!r}")
        # The SDK's HTTP+JSON client names the config by its id; JSON-RPC may omit it.
        asked = (GetTaskPushNotificationConfigParams(
            id=started.id, push_notification_config_id="py-hook")
            if REST else TaskIdParams(id=started.id))
        got = await client.get_task_callback(asked)
        check(got.push_notification_config.url == hook.url, f"the webhook is kept: {got}")
        end = time.monotonic() + 15
        while True:
            seen = [(h, b) for h, b in hook.snapshot()
                    if isinstance(b, dict) and b.get("id") == started.id]
            states = [b.get("status", {}).get("state") for _, b in seen]
            if "completed" in states:
                break
            check(time.monotonic() < end, f"no completed notification: {states}")
            await asyncio.sleep(0.1)
        headers = {k.lower(): v for k, v in seen[-1][0].items()}
        check(headers.get("x-a2a-notification-token") == token,
              f"the token travels with it: {headers}")
    finally:
        hook.close()


class ApiKey(CredentialService):
    async def get_credentials(self, security_scheme_name, context):
        return API_KEY


async def case_auth():
    async with http() as h:
        card = await A2ACardResolver(h, f"{AUTH_BASE}/agents/echo").get_agent_card()
    check(card.security and card.security_schemes, f"the card says how to authenticate: {card}")
    anonymous = await connect("echo", base=AUTH_BASE, streaming=False)
    try:
        await last_event(anonymous, text_message("let me in"))
        raise Failed("an anonymous call is answered")
    except A2AClientHTTPError as e:
        check(e.status_code == 401, f"HTTP 401: {e}")
    # The SDK's 0.3 HTTP+JSON client runs no interceptors: there the key rides
    # on the HTTP client's headers instead.
    key = {"X-API-Key": API_KEY} if REST else None
    keyed = await connect("echo", base=AUTH_BASE, streaming=False,
                          interceptors=[AuthInterceptor(ApiKey())], headers=key)
    answer = await last_event(keyed, text_message("with a key"))
    check(text_of(answer) == "with a key", f"answered: {answer!r}")
    streaming = await connect("countdown", base=AUTH_BASE,
                              interceptors=[AuthInterceptor(ApiKey())], headers=key)
    task = await last_event(streaming, text_message("0"))
    check(task.status.state == TaskState.completed, f"a keyed stream: {task}")


def delegation(**fields):
    data = {
        "payloadType": "task_delegation",
        "taskId": "job-7",
        "taskTitle": "Review",
        "taskDescription": "Review PR #42",
    }
    data.update(fields)
    data = {k: v for k, v in data.items() if v is not None}
    return [
        Part(root=TextPart(text="0 please review PR #42")),
        Part(root=DataPart(data=data, metadata={HANDOFF: {"payloadType": "task_delegation"}})),
    ]


async def case_extensions():
    # The SDK hides response headers; its httpx client's hook sees them.
    echoed = []

    async def record(response):
        if response.request.method == "POST":
            echoed.append(response.headers.get("x-a2a-extensions"))

    client = await connect("countdown", streaming=False, extensions=[HANDOFF],
                           event_hooks={"response": [record]})
    task = await last_event(client, text_message("", parts=delegation()))
    check(echoed == [HANDOFF], f"the activated extension is echoed: {echoed}")
    check(isinstance(task, Task), f"a Task: {task!r}")
    check(task.status.state == TaskState.completed, f"state {task.status.state}")
    if REST:
        # The 0.3 proto's Part has no `metadata`, where the payload's marker rides:
        # over the 0.3 HTTP+JSON (and gRPC) binding the payload is free text.
        return
    marker = (task.metadata or {}).get(HANDOFF)
    check(marker == {"payloadType": "task_delegation"}, f"the task is marked: {task.metadata}")
    try:
        await last_event(client, text_message("", parts=delegation(taskTitle=None)))
        raise Failed("an invalid payload is taken")
    except A2AClientJSONRPCError as e:
        check(e.error.code == -32602, f"-32602: {e.error}")
        check("taskTitle" in e.error.message, f"names the field: {e.error.message}")
    except A2AClientHTTPError as e:
        # The SDK's HTTP+JSON client keeps the status, not the body naming the field.
        check_a2a_error(e, -32602, "-32602")
    plain = await connect("countdown", streaming=False)
    free = await last_event(plain, text_message("", parts=delegation(taskTitle=None)))
    check(free.status.state == TaskState.completed, "not activated, it is free text")


async def case_output_modes():
    # The official samples' CLI client sends acceptedOutputModes ["text"].
    client = await connect("echo", streaming=False, modes=["text"])
    answer = await last_event(client, text_message("modes"))
    check(isinstance(answer, Message) and text_of(answer) == "modes", f"answered: {answer!r}")
    streaming = await connect("countdown", modes=["text", "text/plain"])
    task = await last_event(streaming, text_message("0"))
    check(task.status.state == TaskState.completed, f"streamed: {task}")


async def case_busy_conversation():
    # A non-blocking send to a conversation whose task is still running returns at
    # once, queued behind it, and runs after it.
    client = await connect("countdown", streaming=False, polling=True)
    first = await last_event(client, text_message("4"))
    check(isinstance(first, Task), f"a Task: {first!r}")
    began = time.monotonic()
    second = await last_event(client, text_message("0", context_id=first.context_id))
    took = time.monotonic() - began
    check(isinstance(second, Task), f"a Task: {second!r}")
    check(took < 2.0, f"the second send waited {took:.1f} s for the first task")
    check(second.id != first.id, "a task of its own")
    done = await wait_for_state(client, second.id, {TaskState.completed}, deadline=20)
    first_now = await client.get_task(TaskQueryParams(id=first.id))
    check(first_now.status.state == TaskState.completed, "the first ran to its end")
    check(done.status.state == TaskState.completed, "the queued one ran after it")


CASES = [
    ("cards", case_cards),
    ("send", case_send),
    ("stream", case_stream),
    ("get", case_get),
    ("cancel", case_cancel),
    ("resubscribe", case_resubscribe),
    ("stream-error-resubscribe", case_stream_error_resubscribe),
    ("stream-error-send", case_stream_error_send),
    ("input-required", case_input_required),
    ("push", case_push),
    ("auth", case_auth),
    ("extensions", case_extensions),
    ("accepted-output-modes", case_output_modes),
    ("busy-conversation", case_busy_conversation),
]


async def main():
    only = set(sys.argv[1:])
    failed = 0
    for name, case in CASES:
        if only and name not in only:
            continue
        began = time.monotonic()
        try:
            await asyncio.wait_for(case(), CASE_TIMEOUT)
            print(f"ok   {NAME} {name} ({time.monotonic() - began:.1f} s)", flush=True)
        except Failed as e:
            failed += 1
            print(f"FAIL {NAME} {name}: {e}", flush=True)
        except asyncio.TimeoutError:
            failed += 1
            print(f"FAIL {NAME} {name}: no answer within {CASE_TIMEOUT:.0f} s", flush=True)
        except A2AClientError as e:
            failed += 1
            print(f"FAIL {NAME} {name}: {type(e).__name__}: {e}", flush=True)
        except Exception as e:  # noqa: BLE001 — anything else is a failed case too
            failed += 1
            print(f"FAIL {NAME} {name}: {type(e).__name__}: {e}", flush=True)
            traceback.print_exc(file=sys.stdout)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
