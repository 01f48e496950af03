"""A small agent built with the official A2A Python SDK (a2a-sdk 0.3.x), for agentyard's
remote agents to call. Started by tests/tests/e2e/remote_agents.rs.

What it does depends on the first word of the message text:

- `ask ...`     asks "which colour?" (input-required); the answer completes the task
                with `colour: <answer>`.
- `fail ...`    fails the task with "the peer failed on purpose".
- `slow ...`    works for a long time (a status update every 100 ms, up to 60 s),
                until canceled or killed.
- `chunks ...`  streams an artifact in three chunks, then completes.
- `meta ...`    completes with a JSON reply: the message metadata, the request's
                `traceparent`, `Idempotency-Key` and `X-A2A-Extensions` headers and
                the kinds of the message's parts, as the SDK saw them.
- anything else completes with the artifact and reply `echo: <text>`.

JSON-RPC on `/`, the card at `/.well-known/agent-card.json`. `--no-streaming` publishes
a card without streaming (callers then send and poll). It binds 127.0.0.1 on an
ephemeral port and prints its base URL as its first line.
"""

import argparse
import asyncio
import json
import socket
import sys

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TaskState, TextPart
from a2a.utils import new_agent_text_message, new_task


def text_part(text: str) -> Part:
    return Part(root=TextPart(text=text))


class Peer(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        word = text.split(" ", 1)[0]
        say = lambda words: new_agent_text_message(words, task.context_id, task.id)

        if task.status.state == TaskState.input_required:
            await updater.complete(say("colour: " + text))
            return
        await updater.start_work()
        if word == "ask":
            await updater.requires_input(say("which colour?"), final=True)
        elif word == "fail":
            await updater.failed(say("the peer failed on purpose"))
        elif word == "slow":
            for step in range(600):
                await updater.update_status(TaskState.working, say(f"step {step}"))
                await asyncio.sleep(0.1)
            await updater.complete(say("slow done"))
        elif word == "chunks":
            for index, piece in enumerate(["one ", "two ", "three"]):
                await updater.add_artifact(
                    [text_part(piece)],
                    artifact_id="story",
                    name="story",
                    append=index > 0,
                    last_chunk=index == 2,
                )
            await updater.complete(say("told"))
        elif word == "meta":
            headers = {}
            if context.call_context is not None:
                headers = context.call_context.state.get("headers", {}) or {}
            seen = {
                "metadata": (context.message.metadata if context.message else None) or {},
                "traceparent": headers.get("traceparent"),
                "idempotencyKey": headers.get("idempotency-key"),
                "extensions": headers.get("x-a2a-extensions"),
                "parts": [part.root.kind for part in context.message.parts],
            }
            await updater.complete(say(json.dumps(seen)))
        else:
            await updater.add_artifact([text_part("echo: " + text)], name="echo")
            await updater.complete(say("echo: " + text))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.cancel()


def card(base: str, streaming: bool) -> AgentCard:
    return AgentCard(
        name="sdk-peer",
        description="an a2a-sdk 0.3 agent for agentyard's remote agents",
        url=base + "/",
        version="0.3.0",
        protocol_version="0.3.0",
        preferred_transport="JSONRPC",
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="peer", name="peer", description="echoes, asks, fails", tags=["test"])
        ],
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-streaming", action="store_true")
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the URL is printed: a client that connects at once waits in
    # the backlog instead of being refused.
    sock.listen(128)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    agent_card = card(base, not args.no_streaming)
    handler = DefaultRequestHandler(agent_executor=Peer(), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=agent_card, http_handler=handler).build()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(base, flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
