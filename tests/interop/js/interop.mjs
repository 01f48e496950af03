// Drives `agentyard serve` with the official A2A JS SDK client (@a2a-js/sdk 0.3.x).
//
// Run by tests/tests/interop.rs, which starts the servers and passes them in:
// - AGENTYARD_URL: a server with the built-in agents, webhooks to loopback allowed;
// - AGENTYARD_AUTH_URL and AGENTYARD_API_KEY: a server that wants that API key.
//
// Every case runs, each with a time limit; one line per case (`ok` or `FAIL` with the
// reason), and the exit status is 1 when any case failed.

import { randomUUID } from "node:crypto";
import http from "node:http";

import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  createAuthenticatingFetchWithRetry,
  withA2AExtensions,
} from "@a2a-js/sdk/client";

const BASE = process.env.AGENTYARD_URL.replace(/\/$/, "");
const AUTH_BASE = process.env.AGENTYARD_AUTH_URL.replace(/\/$/, "");
const API_KEY = process.env.AGENTYARD_API_KEY;
const HANDOFF = "https://agentyard.dev/extensions/handoff/v1";
const CASE_TIMEOUT_MS = 25_000;

class Failed extends Error {}

function check(condition, what) {
  if (!condition) throw new Failed(what);
}

function textMessage(text, extra = {}) {
  return {
    kind: "message",
    role: "user",
    messageId: randomUUID(),
    parts: [{ kind: "text", text }],
    ...extra,
  };
}

function textOf(message) {
  return (message?.parts ?? [])
    .filter((p) => p.kind === "text")
    .map((p) => p.text)
    .join("");
}

/// The JSON-RPC error code an SDK error carries, for unary and streaming calls alike.
function rpcCode(error) {
  return error?.errorResponse?.error?.code ?? error?.cause?.errorResponse?.error?.code;
}

async function connect(agent, { base = BASE, clientConfig = {}, fetchImpl } = {}) {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    clientConfig,
    ...(fetchImpl ? { transports: [new JsonRpcTransportFactory({ fetchImpl })] } : {}),
  });
  // The resolver joins the card path as a relative URL: the base must end with `/`.
  return new ClientFactory(options).createFromUrl(`${base}/agents/${agent}/`);
}

async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function waitForState(client, id, states, deadlineMs = 15_000) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const task = await client.getTask({ id });
    if (states.includes(task.status.state)) return task;
    check(Date.now() < end, `task ${id} stayed ${task.status.state}, wanted ${states}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function expectRpcError(promise, code, what) {
  try {
    await promise;
  } catch (error) {
    check(rpcCode(error) === code, `${what}: wanted ${code}, got ${error}`);
    return error;
  }
  throw new Failed(`${what}: no error`);
}

const cases = {
  async cards() {
    const resolver = new DefaultAgentCardResolver();
    const root = await resolver.resolve(`${BASE}/`);
    check(root.name === "echo", `the root card is echo's, got ${root.name}`);
    const card = await resolver.resolve(`${BASE}/agents/countdown/`);
    check(card.protocolVersion === "0.3.0", `protocolVersion ${card.protocolVersion}`);
    check(card.url === `${BASE}/agents/countdown`, `url ${card.url}`);
    check(card.capabilities.streaming === true, "streaming capability");
    check(card.capabilities.pushNotifications === true, "push capability");
    const uris = (card.capabilities.extensions ?? []).map((e) => e.uri);
    check(uris.includes(HANDOFF), `the handoff extension is declared: ${uris}`);
  },

  async send() {
    const client = await connect("echo");
    const answer = await client.sendMessage({ message: textMessage("hello from js") });
    check(answer.kind === "message", `echo answers with a Message: ${JSON.stringify(answer)}`);
    check(textOf(answer) === "hello from js", `echo's text: ${textOf(answer)}`);
    check(answer.taskId && answer.contextId, "the reply names its task and context");
  },

  async stream() {
    const client = await connect("countdown");
    const events = await collect(client.sendMessageStream({ message: textMessage("2") }));
    check(events[0]?.kind === "task", `the task first: ${events[0]?.kind}`);
    const states = events.filter((e) => e.kind === "status-update").map((e) => e.status.state);
    const chunks = events.filter((e) => e.kind === "artifact-update");
    check(states.includes("working"), `a working update: ${states}`);
    check(states.at(-1) === "completed", `ends completed: ${states}`);
    check(events.at(-1).final === true, "the last update is final");
    check(chunks.length >= 2, `artifact chunks stream: ${chunks.length}`);
    check(events.every((e) => e.kind === "task" ? e.id === events[0].id : e.taskId === events[0].id),
      "every event is of the task");
  },

  async get() {
    const client = await connect("countdown");
    const done = await client.sendMessage({ message: textMessage("0") });
    check(done.kind === "task", `countdown answers with a Task: ${done.kind}`);
    const got = await client.getTask({ id: done.id, historyLength: 1 });
    check(got.id === done.id, "the same task");
    check(got.status.state === "completed", `state ${got.status.state}`);
    check(got.history?.length === 1, `historyLength 1: ${JSON.stringify(got.history)}`);
    await expectRpcError(client.getTask({ id: "no-such-task" }), -32001, "an unknown task");
  },

  async cancel() {
    const client = await connect("countdown", { clientConfig: { polling: true } });
    const started = await client.sendMessage({ message: textMessage("30") });
    check(started.kind === "task", `a non-blocking send answers with a Task: ${started.kind}`);
    await waitForState(client, started.id, ["working"]);
    const canceled = await client.cancelTask({ id: started.id });
    check(canceled.status.state === "canceled", `state ${canceled.status.state}`);
    const again = await client.getTask({ id: started.id });
    check(again.status.state === "canceled", `stays canceled: ${again.status.state}`);
    await expectRpcError(client.cancelTask({ id: started.id }), -32002, "cancel again");
  },

  async resubscribe() {
    const client = await connect("countdown", { clientConfig: { polling: true } });
    const started = await client.sendMessage({ message: textMessage("2") });
    check(started.kind === "task", `a Task: ${started.kind}`);
    const events = await collect(client.resubscribeTask({ id: started.id }));
    const states = events.filter((e) => e.kind === "status-update").map((e) => e.status.state);
    check(states.at(-1) === "completed", `followed to the end: ${states}`);
  },

  // Errors of streaming methods come as one SSE event holding the JSON-RPC error.
  async "stream-error-resubscribe"() {
    const client = await connect("countdown");
    await expectRpcError(collect(client.resubscribeTask({ id: "no-such-task" })), -32001,
      "resubscribe to an unknown task");
  },

  async "stream-error-send"() {
    const client = await connect("countdown");
    const message = textMessage("1", { taskId: "no-such-task" });
    await expectRpcError(collect(client.sendMessageStream({ message })), -32001,
      "message/stream to an unknown task");
  },

  async "input-required"() {
    const client = await connect("ask");
    const asked = await client.sendMessage({ message: textMessage("hi") });
    check(asked.kind === "task", `a Task: ${asked.kind}`);
    check(asked.status.state === "input-required", `state ${asked.status.state}`);
    check(textOf(asked.status.message).includes("name"), "the question comes with it");
    const answer = textMessage("Grace", { taskId: asked.id, contextId: asked.contextId });
    const answered = await client.sendMessage({ message: answer });
    check(answered.kind === "task" && answered.id === asked.id, "the same task goes on");
    check(answered.status.state === "completed", `state ${answered.status.state}`);
    check(textOf(answered.status.message).includes("Grace"), "the answer is used");
  },

  async push() {
    const received = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        received.push({ headers: req.headers, body: JSON.parse(body || "null") });
        res.writeHead(200).end();
      });
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${server.address().port}/hook`;
      const token = `js-${randomUUID()}`;
      const client = await connect("countdown", {
        clientConfig: { polling: true, pushNotificationConfig: { url, token } },
      });
      const started = await client.sendMessage({ message: textMessage("1") });
      const listed = await client.listTaskPushNotificationConfig({ id: started.id });
      check(listed.length === 1 && listed[0].pushNotificationConfig.url === url,
        `the webhook is kept: ${JSON.stringify(listed)}`);
      const end = Date.now() + 15_000;
      let mine;
      for (;;) {
        mine = received.filter((r) => r.body?.id === started.id);
        if (mine.some((r) => r.body.status?.state === "completed")) break;
        check(Date.now() < end,
          `no completed notification: ${mine.map((r) => r.body.status?.state)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      check(mine.at(-1).headers["x-a2a-notification-token"] === token, "the token travels");
    } finally {
      server.close();
    }
  },

  async auth() {
    const card = await new DefaultAgentCardResolver().resolve(`${AUTH_BASE}/agents/echo/`);
    check(card.security?.length && card.securitySchemes, "the card says how to authenticate");
    const anonymous = await connect("echo", { base: AUTH_BASE });
    try {
      await anonymous.sendMessage({ message: textMessage("let me in") });
      throw new Failed("an anonymous call is answered");
    } catch (error) {
      if (error instanceof Failed) throw error;
      // HTTP 401 with a JSON-RPC error body, which this client surfaces as the error.
      check(/authentication|401/.test(String(error)), `refused for want of a key: ${error}`);
    }
    const scheme = Object.values(card.securitySchemes).find((s) => s.type === "apiKey");
    check(scheme?.in === "header", "an API key scheme in a header");
    const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({ [scheme.name]: API_KEY }),
      shouldRetryWithHeaders: async () => undefined,
    });
    const keyed = await connect("echo", { base: AUTH_BASE, fetchImpl });
    const answer = await keyed.sendMessage({ message: textMessage("with a key") });
    check(textOf(answer) === "with a key", `answered: ${JSON.stringify(answer)}`);
    const streaming = await connect("countdown", { base: AUTH_BASE, fetchImpl });
    const events = await collect(streaming.sendMessageStream({ message: textMessage("0") }));
    check(events.at(-1)?.status?.state === "completed", "a keyed stream");
  },

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
      return textMessage("0 please review PR #42", {
        parts: [
          { kind: "text", text: "0 please review PR #42" },
          { kind: "data", data, metadata: { [HANDOFF]: { payloadType: "task_delegation" } } },
        ],
      });
    };
    // The SDK hides response headers; a fetch of our own sees them.
    const echoed = [];
    const fetchImpl = async (...args) => {
      const response = await fetch(...args);
      echoed.push(response.headers.get("x-a2a-extensions"));
      return response;
    };
    const client = await connect("countdown", { fetchImpl });
    const activated = { serviceParameters: ServiceParameters.create(withA2AExtensions(HANDOFF)) };
    const task = await client.sendMessage({ message: delegation() }, activated);
    check(echoed.length === 1 && echoed[0] === HANDOFF,
      `the activated extension is echoed: ${echoed}`);
    check(task.kind === "task" && task.status.state === "completed", `state ${task.status?.state}`);
    check(task.metadata?.[HANDOFF]?.payloadType === "task_delegation",
      `the task is marked: ${JSON.stringify(task.metadata)}`);
    const error = await expectRpcError(
      client.sendMessage({ message: delegation({ taskTitle: undefined }) }, activated),
      -32602, "an invalid payload");
    check(error.errorResponse.error.message.includes("taskTitle"), "names the field");
    const free = await client.sendMessage({ message: delegation({ taskTitle: undefined }) });
    check(free.status?.state === "completed", "not activated, it is free text");
  },

  // The official samples' CLI client sends acceptedOutputModes ["text"].
  async "accepted-output-modes"() {
    const client = await connect("echo", { clientConfig: { acceptedOutputModes: ["text"] } });
    const answer = await client.sendMessage({ message: textMessage("modes") });
    check(answer.kind === "message" && textOf(answer) === "modes", "answered");
    const streaming = await connect("countdown", {
      clientConfig: { acceptedOutputModes: ["text", "text/plain"] },
    });
    const events = await collect(streaming.sendMessageStream({ message: textMessage("0") }));
    check(events.at(-1)?.status?.state === "completed", "streamed");
  },

  // A non-blocking send to a conversation whose task is still running returns at once,
  // queued behind it, and runs after it.
  async "busy-conversation"() {
    const client = await connect("countdown", { clientConfig: { polling: true } });
    const first = await client.sendMessage({ message: textMessage("4") });
    check(first.kind === "task", `a Task: ${first.kind}`);
    const began = Date.now();
    const second = await client.sendMessage({
      message: textMessage("0", { contextId: first.contextId }),
    });
    const took = (Date.now() - began) / 1000;
    check(took < 2.0, `the second send waited ${took.toFixed(1)} s for the first task`);
    check(second.kind === "task" && second.id !== first.id, "a task of its own");
    await waitForState(client, second.id, ["completed"], 20_000);
    const firstNow = await client.getTask({ id: first.id });
    check(firstNow.status.state === "completed", "the first ran to its end");
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
    console.log(`ok   js ${name} (${((Date.now() - began) / 1000).toFixed(1)} s)`);
  } catch (error) {
    failed += 1;
    // An SDK error that carries the server's JSON-RPC error is shown by that error.
    const rpc = error?.errorResponse?.error ?? error?.cause?.errorResponse?.error;
    const detail = error instanceof Failed
      ? error.message
      : rpc
        ? `${error.name}: ${JSON.stringify(rpc)}`
        : `${error?.stack ?? error}`;
    console.log(`FAIL js ${name}: ${detail}`);
  } finally {
    clearTimeout(timer);
  }
}
process.exit(failed ? 1 : 0);
