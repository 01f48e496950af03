"""A tiny official A2A server (a2a-sdk 1.3) for agentyard's own client to call.

Run by tests/tests/interop.rs. An echo agent: a message becomes a task that works,
adds one artifact `echo: <text>` and completes. JSON-RPC on `/`, the card at
`/.well-known/agent-card.json`. With no option it is the SDK's default: A2A 1.0
only, the card listing one 1.0 interface. `--compat` turns on the SDK's 0.3
compatibility (`enable_v0_3_compat`) and lists a 0.3 interface after the 1.0 one.

It binds 127.0.0.1 on an ephemeral port and prints its base URL as its first line.
"""

import argparse
import asyncio
import socket
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
from starlette.applications import Starlette


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task(
            context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED
        )
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        await updater.add_artifact([new_text_part("echo: " + context.get_user_input())])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card(base: str, compat: bool) -> AgentCard:
    versions = ["1.0", "0.3"] if compat else ["1.0"]
    return AgentCard(
        name="sdk-echo",
        description="an a2a-sdk 1.3 echo agent",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version=v)
            for v in versions
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])
        ],
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compat", action="store_true", help="also serve A2A 0.3")
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the URL is printed: a client that connects at once waits in
    # the backlog until uvicorn accepts, instead of being refused.
    sock.listen(128)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    agent_card = card(base, args.compat)
    handler = DefaultRequestHandlerV2(
        agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=agent_card
    )
    routes = create_agent_card_routes(agent_card) + create_jsonrpc_routes(
        handler, "/", enable_v0_3_compat=args.compat
    )
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(base, flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
