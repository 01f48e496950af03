// Drives `agentyard serve` with the official A2A JS SDK 1.x client (@a2a-js/sdk 1.3),
// created with its DEFAULT options: no legacy (0.3) compatibility, so every call is
// A2A 1.0, chosen from the card's `supportedInterfaces`. AGENTYARD_BINDING names the
// binding: JSONRPC (the default, the card's first) or HTTP+JSON, which the factory
// then prefers (`preferredTransports`); either way the client must be on it.
//
// Run by tests/tests/interop.rs, which starts the servers and passes them in
// (AGENTYARD_URL; the auth server's variables are not used here). One line per case
// (`ok` or `FAIL` with the reason); the exit status is 1 when any case failed.

import { randomUUID } from "node:crypto";

import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskState,
} from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";

const BASE = process.env.AGENTYARD_URL.replace(/\/$/, "");
const BINDING = process.env.AGENTYARD_BINDING ?? "JSONRPC";
const NAME = BINDING === "JSONRPC" ? "js1" : "js1-rest";
const CASE_TIMEOUT_MS = 25_000;

class Failed extends Error {}

function check(condition, what) {
  if (!condition) throw new Failed(what);
}

/// A SendMessageRequest built from its ProtoJSON, as a 1.0 client writes it.
function send(text, configuration) {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] },
    ...(configuration ? { configuration } : {}),
  });
}

function textOf(message) {
  return (message?.parts ?? [])
    .filter((p) => p.content?.$case === "text")
    .map((p) => p.content.value)
    .join("");
}

/// The task a SendMessage answered with (a Task, or a Message naming its task).
function taskIdOf(answer) {
  return answer?.id ?? answer?.taskId;
}

async function connect(agent) {
  const options =
    BINDING === "JSONRPC"
      ? ClientFactoryOptions.default
      : ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          preferredTransports: [BINDING],
        });
  // A trailing slash, as the SDK's samples write interface URLs.
  const client = await new ClientFactory(options).createFromUrl(`${BASE}/agents/${agent}/`);
  const chosen = client.transport?.protocolName;
  check(chosen === BINDING, `the ${BINDING} transport, got ${chosen}`);
  return client;
}

async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  return events;
}

function statesOf(events) {
  return events
    .filter((e) => e.payload?.$case === "statusUpdate")
    .map((e) => e.payload.value.status.state);
}

async function waitForState(client, id, states, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const task = await client.getTask(GetTaskRequest.fromJSON({ id }));
    if (states.includes(task.status.state)) return task;
    if (Date.now() > until) throw new Failed(`task ${id} stays ${task.status.state}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const cases = {
  async send() {
    const client = await connect("echo");
    const answer = await client.sendMessage(send("hello from js 1.x"));
    check(textOf(answer) === "hello from js 1.x", `echo's text: ${JSON.stringify(answer)}`);
    check(answer.taskId && answer.contextId, "the reply names its task and context");
  },

  async stream() {
    const client = await connect("countdown");
    const events = await collect(client.sendMessageStream(send("2")));
    check(events[0]?.payload?.$case === "task", `the task first: ${events[0]?.payload?.$case}`);
    const states = statesOf(events);
    check(states.includes(TaskState.TASK_STATE_WORKING), `a working update: ${states}`);
    check(states.at(-1) === TaskState.TASK_STATE_COMPLETED, `ends completed: ${states}`);
    const chunks = events.filter((e) => e.payload?.$case === "artifactUpdate");
    check(chunks.length >= 2, `artifact chunks stream: ${chunks.length}`);
  },

  async get() {
    const client = await connect("countdown");
    const done = await client.sendMessage(send("0"));
    const id = taskIdOf(done);
    const got = await client.getTask(GetTaskRequest.fromJSON({ id, historyLength: 1 }));
    check(got.id === id, "the same task");
    check(got.status.state === TaskState.TASK_STATE_COMPLETED, `state ${got.status.state}`);
    check(got.history.length === 1, `historyLength 1: ${got.history.length}`);
    const none = await client.getTask(GetTaskRequest.fromJSON({ id, historyLength: 0 }));
    check(none.history.length === 0, `historyLength 0: ${none.history.length}`);
  },

  async cancel() {
    const client = await connect("countdown");
    const started = await client.sendMessage(send("30", { returnImmediately: true }));
    const id = taskIdOf(started);
    await waitForState(client, id, [TaskState.TASK_STATE_WORKING]);
    const canceled = await client.cancelTask(CancelTaskRequest.fromJSON({ id }));
    check(canceled.status.state === TaskState.TASK_STATE_CANCELED, `state ${canceled.status.state}`);
  },

  async subscribe() {
    const client = await connect("countdown");
    const started = await client.sendMessage(send("2", { returnImmediately: true }));
    const id = taskIdOf(started);
    const events = await collect(client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id })));
    check(events[0]?.payload?.$case === "task", `the task first: ${events[0]?.payload?.$case}`);
    const states = statesOf(events);
    check(states.at(-1) === TaskState.TASK_STATE_COMPLETED, `followed to the end: ${states}`);
  },

  async list() {
    const client = await connect("countdown");
    const first = taskIdOf(await client.sendMessage(send("0")));
    const second = taskIdOf(await client.sendMessage(send("0")));
    const page = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 1 }));
    check(page.tasks.length === 1 && page.tasks[0].id === second, `newest first: ${page.tasks.map((t) => t.id)}`);
    check(page.totalSize >= 2 && page.nextPageToken !== "", `more pages: ${page.totalSize}`);
    const next = await client.listTasks(
      ListTasksRequest.fromJSON({ pageSize: 1, pageToken: page.nextPageToken }),
    );
    check(next.tasks[0]?.id === first, `the next page: ${next.tasks.map((t) => t.id)}`);
  },
};

const only = new Set(process.argv.slice(2));
let failed = 0;
for (const [name, run] of Object.entries(cases)) {
  if (only.size && !only.has(name)) continue;
  const began = Date.now();
  let timer;
  try {
    await Promise.race([
      run(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Failed(`no answer within ${CASE_TIMEOUT_MS / 1000} s`)),
          CASE_TIMEOUT_MS,
        );
      }),
    ]);
    console.log(`ok   ${NAME} ${name} (${((Date.now() - began) / 1000).toFixed(1)} s)`);
  } catch (error) {
    failed += 1;
    const detail = error instanceof Failed ? error.message : `${error?.stack ?? error}`;
    console.log(`FAIL ${NAME} ${name}: ${detail}`);
  } finally {
    clearTimeout(timer);
  }
}
process.exit(failed ? 1 : 0);
