// Drives `agentyard serve` with the official A2A JS SDK 1.x client (@a2a-js/sdk 1.3),
// created with its DEFAULT options: no legacy (0.3) compatibility, so every call is
// A2A 1.0, chosen from the card's `supportedInterfaces`. AGENTYARD_BINDING names the
// binding: JSONRPC (the default, the card's first), HTTP+JSON, or GRPC, which the
// factory then prefers (`preferredTransports`); GRPC also adds the SDK's gRPC
// transport factory (`@a2a-js/sdk/client/grpc`, Node only, with its peers
// @grpc/grpc-js and @bufbuild/protobuf), which the default options lack. Either way
// the client must be on the named binding; on gRPC the card's interface gives the
// agent's name as `tenant`, which the SDK puts on every request.
//
// Run by tests/tests/interop.rs, which starts the servers and passes them in
// (AGENTYARD_URL, AGENTYARD_AUTH_URL and AGENTYARD_API_KEY). One line per case (`ok`
// or `FAIL` with the reason); the exit status is 1 when any case failed.

import { randomUUID } from "node:crypto";
import http from "node:http";

import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
  TaskState,
} from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  ServiceParameters,
  withA2AExtensions,
} from "@a2a-js/sdk/client";
import { A2AError, TaskNotCancelableError, TaskNotFoundError } from "@a2a-js/sdk/errors";

const BASE = process.env.AGENTYARD_URL.replace(/\/$/, "");
const AUTH_BASE = process.env.AGENTYARD_AUTH_URL.replace(/\/$/, "");
const API_KEY = process.env.AGENTYARD_API_KEY;
const BINDING = process.env.AGENTYARD_BINDING ?? "JSONRPC";
const NAME = { JSONRPC: "js1", "HTTP+JSON": "js1-rest", GRPC: "js1-grpc" }[BINDING];
const HANDOFF = "https://agentyard.dev/extensions/handoff/v1";
const CASE_TIMEOUT_MS = 25_000;
/// gRPC's UNAUTHENTICATED status code.
const GRPC_UNAUTHENTICATED = 16;

if (!NAME) {
  console.log(`FAIL js1: AGENTYARD_BINDING=${BINDING} is none of JSONRPC, HTTP+JSON, GRPC`);
  process.exit(1);
}

/// The options the client is made with: the SDK's defaults for JSON-RPC; for the
/// others, the binding preferred, and on gRPC the SDK's gRPC transport added (imported
/// only then: the default options do without @grpc/grpc-js).
async function factoryOptions() {
  if (BINDING === "JSONRPC") return ClientFactoryOptions.default;
  const transports = [];
  if (BINDING === "GRPC") {
    const { GrpcTransportFactory } = await import("@a2a-js/sdk/client/grpc");
    transports.push(new GrpcTransportFactory());
  }
  return ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports,
    preferredTransports: [BINDING],
  });
}
const OPTIONS = await factoryOptions();

class Failed extends Error {}

function check(condition, what) {
  if (!condition) throw new Failed(what);
}

/// A SendMessageRequest built from its ProtoJSON, as a 1.0 client writes it; `fields`
/// go on the message (taskId, contextId, parts).
function send(text, configuration, fields = {}) {
  return SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], ...fields },
    ...(configuration ? { configuration } : {}),
  });
}

/// Runs `call`, which must fail; returns the SDK's typed A2A error, or fails the case
/// naming `what`. On a JSON-RPC stream the SDK throws a plain Error for an SSE error
/// event, with the typed error as its `cause`; the other transports throw it as is.
async function refused(call, what) {
  try {
    await call();
  } catch (error) {
    return !(error instanceof A2AError) && error?.cause instanceof A2AError ? error.cause : error;
  }
  throw new Failed(`${what} is refused`);
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

/// A client of `agent` on `base`, with `interceptors` added to the options.
async function connect(agent, { base = BASE, interceptors } = {}) {
  const options = interceptors
    ? ClientFactoryOptions.createFrom(OPTIONS, { clientConfig: { interceptors } })
    : OPTIONS;
  // A trailing slash, as the SDK's samples write interface URLs.
  const client = await new ClientFactory(options).createFromUrl(`${base}/agents/${agent}/`);
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
    const again = await refused(
      () => client.cancelTask(CancelTaskRequest.fromJSON({ id })),
      "canceling a canceled task",
    );
    check(again instanceof TaskNotCancelableError, `TaskNotCancelableError, got ${again}`);
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

Object.assign(cases, {
  async "input-required"() {
    const client = await connect("ask");
    const asked = await client.sendMessage(send("hi"));
    check(asked.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, `a question: ${JSON.stringify(asked)}`);
    check(textOf(asked.status.message).includes("name"), "the question comes with it");
    const answered = await client.sendMessage(
      send("Grace", undefined, { taskId: asked.id, contextId: asked.contextId }),
    );
    check(answered.id === asked.id, "the same task goes on");
    check(answered.status.state === TaskState.TASK_STATE_COMPLETED, `state ${answered.status.state}`);
    check(textOf(answered.status.message).includes("Grace"), "the answer is used");
  },

  // Push-config CRUD on a running task, and the delivery: a webhook on a local
  // receiver (127.0.0.1; the open server allows it) gets the `completed` task, as a
  // 1.0 StreamResponse, with its token.
  async push() {
    const received = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        try {
          received.push({ url: req.url, headers: req.headers, body: JSON.parse(body || "null") });
        } catch {
          received.push({ url: req.url, headers: req.headers, body: null });
        }
        res.writeHead(200).end();
      });
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${server.address().port}/hook`;
      const token = `js1-${randomUUID()}`;
      const client = await connect("countdown");
      const taskId = taskIdOf(await client.sendMessage(send("2", { returnImmediately: true })));
      const config = (id, hook, secret) =>
        TaskPushNotificationConfig.fromJSON({ taskId, id, url: hook, token: secret });
      const created = await client.createTaskPushNotificationConfig(config("hook-1", url, token));
      check(created.id === "hook-1" && created.taskId === taskId, `created: ${JSON.stringify(created)}`);
      // A second webhook on the same live receiver: one that refused would be retried
      // with backoff, holding up the task's later notifications to hook-1.
      await client.createTaskPushNotificationConfig(config("hook-2", `${url}-2`, "t"));
      const got = await client.getTaskPushNotificationConfig(
        GetTaskPushNotificationConfigRequest.fromJSON({ taskId, id: "hook-1" }),
      );
      check(got.url === url && got.token === token, `got: ${JSON.stringify(got)}`);
      const listIds = async () =>
        (
          await client.listTaskPushNotificationConfig(
            ListTaskPushNotificationConfigsRequest.fromJSON({ taskId }),
          )
        ).configs
          .map((c) => c.id)
          .sort();
      const both = await listIds();
      check(both.join() === "hook-1,hook-2", `listed: ${both}`);
      await client.deleteTaskPushNotificationConfig(
        DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId, id: "hook-2" }),
      );
      const left = await listIds();
      check(left.join() === "hook-1", `deleted: ${left}`);
      const until = Date.now() + 15_000;
      let mine;
      for (;;) {
        mine = received.filter((r) => r.body?.task?.id === taskId && r.url === "/hook");
        if (mine.some((r) => r.body.task.status?.state === "TASK_STATE_COMPLETED")) break;
        check(Date.now() < until, `no completed notification: ${JSON.stringify(received)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      check(mine.at(-1).headers["x-a2a-notification-token"] === token, "the token travels");
    } finally {
      server.close();
    }
  },

  // An unknown task, as the SDK's typed error (from the gRPC status's ErrorInfo, the
  // REST body's, or the JSON-RPC code), on a unary call and on both streams.
  async "not-found"() {
    const client = await connect("countdown");
    const got = await refused(
      () => client.getTask(GetTaskRequest.fromJSON({ id: "no-such-task" })),
      "getting an unknown task",
    );
    check(got instanceof TaskNotFoundError, `TaskNotFoundError, got ${got}`);
    const subscribed = await refused(
      () => collect(client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: "no-such-task" }))),
      "subscribing to an unknown task",
    );
    check(subscribed instanceof TaskNotFoundError, `TaskNotFoundError on subscribe, got ${subscribed}`);
    const streamed = await refused(
      () => collect(client.sendMessageStream(send("1", undefined, { taskId: "no-such-task" }))),
      "streaming to an unknown task",
    );
    check(streamed instanceof TaskNotFoundError, `TaskNotFoundError on a stream, got ${streamed}`);
  },

  // The auth server wants its API key (X-API-Key): refused without it; with an
  // interceptor adding it as a service parameter (a header, or gRPC metadata), answered.
  async auth() {
    const anonymous = await connect("echo", { base: AUTH_BASE });
    const error = await refused(() => anonymous.sendMessage(send("let me in")), "an anonymous call");
    if (BINDING === "GRPC") {
      check(error.status === GRPC_UNAUTHENTICATED, `UNAUTHENTICATED, got ${error.status}: ${error}`);
      // The SDK keeps grpc-js's error as the cause, trailers and all.
      const challenges = error.cause?.metadata?.get("www-authenticate") ?? [];
      check(
        challenges.some((c) => String(c).includes("X-API-Key")),
        `a www-authenticate challenge naming the key's header: ${challenges}`,
      );
    } else {
      check(/401|auth/i.test(String(error)), `refused for want of a key: ${error}`);
    }
    const withKey = {
      async before(args) {
        args.options = {
          ...args.options,
          serviceParameters: { ...(args.options?.serviceParameters ?? {}), "X-API-Key": API_KEY },
        };
      },
      async after() {},
    };
    const keyed = await connect("echo", { base: AUTH_BASE, interceptors: [withKey] });
    const answer = await keyed.sendMessage(send("with a key"));
    check(textOf(answer) === "with a key", `answered: ${JSON.stringify(answer)}`);
    const streaming = await connect("countdown", { base: AUTH_BASE, interceptors: [withKey] });
    const states = statesOf(await collect(streaming.sendMessageStream(send("0"))));
    check(states.at(-1) === TaskState.TASK_STATE_COMPLETED, `a keyed stream: ${states}`);
  },

  // The handoff extension, activated by the A2A-Extensions service parameter: a
  // task_delegation data part marks the task; an invalid one is refused naming the
  // missing field; not activated, the same part is free text. (The SDK does not hand
  // back response headers or gRPC metadata, so the echo of the activated extension is
  // not seen here.)
  async extensions() {
    const delegation = (fields = {}) => {
      const data = {
        payloadType: "task_delegation",
        taskId: "job-7",
        taskTitle: "Review",
        taskDescription: "Review PR #42",
        ...fields,
      };
      for (const k of Object.keys(data)) if (data[k] === undefined) delete data[k];
      const text = "0 please review PR #42";
      return send(text, undefined, {
        parts: [{ text }, { data, metadata: { [HANDOFF]: { payloadType: "task_delegation" } } }],
      });
    };
    const client = await connect("countdown");
    const activated = { serviceParameters: ServiceParameters.create(withA2AExtensions(HANDOFF)) };
    const task = await client.sendMessage(delegation(), activated);
    check(task.status?.state === TaskState.TASK_STATE_COMPLETED, `state ${task.status?.state}`);
    check(
      task.metadata?.[HANDOFF]?.payloadType === "task_delegation",
      `the task is marked: ${JSON.stringify(task.metadata)}`,
    );
    const invalid = await refused(
      () => client.sendMessage(delegation({ taskTitle: undefined }), activated),
      "an invalid delegation",
    );
    check(String(invalid.message).includes("taskTitle"), `names the field: ${invalid}`);
    const free = await client.sendMessage(delegation({ taskTitle: undefined }));
    check(free.status?.state === TaskState.TASK_STATE_COMPLETED, "not activated, it is free text");
    check(!free.metadata?.[HANDOFF], `not marked: ${JSON.stringify(free.metadata)}`);
  },
});

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
