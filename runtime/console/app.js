// The console page: agents, tasks, a task's story, a message box, charts, workflow
// graphs and the event feed, each refreshed from the server while the page is open.

import { credential, forget, getJson, request, setSignInHook, signingIn, streamSse } from './api.js';
import { figures, parsePrometheus, Sparkline } from './metrics.js';
import { drawWorkflow, nodeStates } from './graph.js';

const $ = (id) => document.getElementById(id);

/** An element with properties and children (strings become text, never HTML). */
function el(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') element.className = value;
    else if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else if (key in element) element[key] = value;
    else element.setAttribute(key, value);
  }
  element.append(...children.filter((c) => c !== null && c !== undefined));
  return element;
}

/** A random id; crypto.randomUUID needs a secure context, getRandomValues does not. */
function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A message's (or artifact's) parts as text: the text parts, and files by name; data
 * parts as JSON only when there is no text (a workflow's narration carries its event
 * both ways, and the words read better).
 */
function textOf(message) {
  const parts = message?.parts || [];
  const hasText = parts.some((part) => part.kind === 'text');
  return parts
    .map((part) => {
      if (part.kind === 'text') return part.text;
      if (part.kind === 'data') return hasText ? '' : JSON.stringify(part.data);
      if (part.kind === 'file') return `[file ${part.file?.name || part.file?.uri || ''}]`;
      return '';
    })
    .filter(Boolean)
    .join(' ');
}

function stateChip(state) {
  return el('span', { class: `state state-${state}` }, state);
}

function when(timestamp) {
  if (!timestamp) return '';
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? timestamp : date.toLocaleTimeString();
}

const short = (id) => (id && id.length > 12 ? `${id.slice(0, 8)}…` : id || '');

// ---------------------------------------------------------------- who am I

async function loadWhoami() {
  const me = await getJson('/api/console/whoami');
  const who = me.principal
    ? `signed in as ${me.principal}${me.operator ? ' (operator: sees every task)' : ''}`
    : 'open server: no key needed';
  $('whoami').textContent = who;
  $('sign-out').hidden = !me.authRequired || !credential();
}

// ---------------------------------------------------------------- agents

let agentNames = [];

async function loadAgents() {
  const { agents } = await getJson('/api/console/agents');
  $('agents').replaceChildren(
    ...agents.map((agent) => {
      const skills = agent.card?.skills?.map((s) => s.name).join(', ');
      return el(
        'li',
        { class: 'agent', 'data-agent': agent.name },
        el(
          'div',
          { class: 'agent-head' },
          el('button', {
            type: 'button',
            class: 'link',
            title: 'send to this agent',
            onclick: () => { $('send-agent').value = agent.name; $('send-text').focus(); },
          }, agent.name),
          el('span', { class: 'sessions', title: 'live sessions' }, `${agent.sessions} live`),
          agent.exposed ? null : el('span', { class: 'badge' }, 'internal'),
        ),
        el('p', { class: 'muted' }, agent.description || ''),
        skills ? el('p', { class: 'skills' }, `skills: ${skills}`) : null,
        agent.card
          ? el('details', {}, el('summary', {}, 'card'), el('pre', {}, JSON.stringify(agent.card, null, 2)))
          : null,
      );
    }),
  );
  const exposed = agents.filter((a) => a.exposed).map((a) => a.name);
  const names = agents.map((a) => a.name);
  if (names.join() !== agentNames.join()) {
    agentNames = names;
    fillSelect($('send-agent'), exposed, null);
    fillSelect($('filter-agent'), names, 'any');
  }
}

function fillSelect(select, names, anyLabel) {
  const chosen = select.value;
  const options = names.map((name) => el('option', { value: name }, name));
  if (anyLabel) options.unshift(el('option', { value: '' }, anyLabel));
  select.replaceChildren(...options);
  if ([...select.options].some((o) => o.value === chosen)) select.value = chosen;
}

// ---------------------------------------------------------------- tasks

let nextPage = null;

function taskQuery(pageToken) {
  const query = new URLSearchParams();
  if ($('filter-agent').value) query.set('agent', $('filter-agent').value);
  if ($('filter-state').value) query.set('state', $('filter-state').value);
  if ($('filter-context').value.trim()) query.set('context', $('filter-context').value.trim());
  query.set('pageSize', '25');
  if (pageToken) query.set('pageToken', pageToken);
  return `/api/console/tasks?${query}`;
}

function taskRow(task) {
  return el(
    'tr',
    { class: 'task', 'data-task': task.id, tabIndex: 0, onclick: () => showOpen(task.id),
      onkeydown: (e) => { if (e.key === 'Enter') showOpen(task.id); } },
    el('td', {}, when(task.status.timestamp)),
    el('td', {}, task.agent || ''),
    el('td', {}, stateChip(task.status.state)),
    el('td', { title: task.id }, el('code', {}, short(task.id))),
    el('td', { class: 'summary' }, textOf(task.status.message)),
  );
}

async function loadTasks(more = false) {
  const page = await getJson(taskQuery(more ? nextPage : null));
  const rows = page.tasks.map(taskRow);
  if (more) $('tasks').append(...rows);
  else $('tasks').replaceChildren(...rows);
  nextPage = page.nextPageToken;
  $('tasks-more').hidden = !nextPage;
  $('tasks-total').textContent = `${page.total} in all`;
}

// ---------------------------------------------------------------- one task

let openStream = null;
let openTaskId = null;
let workflows = new Set();

async function showTask(id) {
  const { agent, principal, task } = await getJson(`/api/console/tasks/${encodeURIComponent(id)}`);
  $('detail-state').replaceChildren(stateChip(task.status.state));
  $('detail-meta').textContent =
    `agent ${agent} · context ${task.contextId}${principal ? ` · by ${principal}` : ''}`;
  $('detail-history').replaceChildren(
    ...(task.history || []).map((m) =>
      el('li', { class: `role-${m.role}` }, el('b', {}, `${m.role}: `), textOf(m))),
  );
  $('detail-artifacts').replaceChildren(
    ...(task.artifacts || []).map((a) =>
      el('li', {}, el('b', {}, `${a.name || a.artifactId}: `), textOf(a))),
  );
  return agent;
}

async function openTask(id) {
  openStream?.abort();
  const controller = new AbortController();
  openStream = controller;
  openTaskId = id;
  $('detail-panel').hidden = false;
  $('detail-id').textContent = id;
  for (const part of ['detail-timeline', 'detail-history', 'detail-artifacts', 'detail-state']) {
    $(part).replaceChildren();
  }
  $('detail-meta').textContent = '';
  $('detail-live').textContent = '';
  $('detail-graph').hidden = true;
  const agent = await showTask(id);
  const isWorkflow = workflows.has(agent);
  const definition = isWorkflow
    ? await getJson(`/api/workflows/${encodeURIComponent(agent)}`).catch(() => null)
    : null;
  const events = [];
  let refresh = null;
  $('detail-live').textContent = '(live)';
  $('detail-panel').scrollIntoView({ block: 'nearest' });
  try {
    await streamSse(`/api/console/tasks/${encodeURIComponent(id)}/events`, { signal: controller.signal }, (event) => {
      const data = JSON.parse(event.data);
      events.push(data);
      $('detail-timeline').append(timelineEntry(event, data));
      if (definition) {
        $('detail-graph').hidden = false;
        drawWorkflow($('detail-graph'), definition, nodeStates(events));
      }
      // The history and artifacts change with the updates: read them again, once
      // per burst.
      clearTimeout(refresh);
      refresh = setTimeout(() => showTask(id).catch(() => {}), 150);
    });
    $('detail-live').textContent = '(ended or waiting for input)';
  } catch (error) {
    if (controller.signal.aborted) return;
    $('detail-live').textContent = `(${error.message})`;
  }
  clearTimeout(refresh);
  if (!controller.signal.aborted) await showTask(id).catch(() => {});
}

/** Opens a task, saying in the panel why when it cannot (gone, or not the viewer's). */
function showOpen(id) {
  openTask(id).catch((error) => {
    $('detail-panel').hidden = false;
    $('detail-id').textContent = id;
    $('detail-meta').textContent = error.message;
  });
}

function timelineEntry(event, data) {
  const seq = event.id ? `#${event.id} ` : '';
  let what = event.event;
  let detail = '';
  if (data.kind === 'status-update') {
    what = data.status.state;
    detail = textOf(data.status.message);
  } else if (data.kind === 'artifact-update') {
    what = `artifact ${data.artifact.name || data.artifact.artifactId}`;
    detail = textOf(data.artifact);
  } else if (data.kind === 'task') {
    what = `task ${data.status.state}`;
  }
  const at = data.status?.timestamp;
  return el('li', {}, el('span', { class: 'muted' }, `${seq}${when(at)} `), el('b', {}, what), detail ? ` ${detail}` : '');
}

// ---------------------------------------------------------------- send a message

// Per agent: the conversation it gave and its last task, so that the next message
// can continue the one or answer the other.
const lastContext = {};
const lastTask = {};

const waiting = (state) => state === 'input-required' || state === 'auth-required';

/** Says what the next message will do, given the agent chosen. */
function sendHint() {
  const agent = $('send-agent').value;
  const task = lastTask[agent];
  const hint = $('send-hint');
  if ($('send-same-context').checked && task && waiting(task.state)) {
    hint.textContent = `answers task ${short(task.id)}, which is ${task.state}`;
  } else if ($('send-same-context').checked && lastContext[agent]) {
    hint.textContent = `continues conversation ${short(lastContext[agent])}`;
  } else {
    hint.textContent = 'starts a new conversation';
  }
}

async function send(event) {
  event.preventDefault();
  const agent = $('send-agent').value;
  const text = $('send-text').value;
  if (!agent || !text.trim()) return;
  const reply = $('reply');
  const states = el('div', { class: 'states' });
  const answer = el('div', { class: 'answer' });
  reply.replaceChildren(states, answer);
  const message = {
    kind: 'message',
    role: 'user',
    messageId: newId(),
    parts: [{ kind: 'text', text }],
  };
  if ($('send-same-context').checked && lastContext[agent]) message.contextId = lastContext[agent];
  // An answer to the agent's question names its task (A2A's human in the loop).
  const asked = lastTask[agent];
  if ($('send-same-context').checked && asked && waiting(asked.state)) {
    message.taskId = asked.id;
    message.contextId = asked.contextId;
  }
  const body = { jsonrpc: '2.0', id: newId(), method: 'message/stream', params: { message } };
  $('send-button').disabled = true;
  try {
    await streamSse(`/agents/${encodeURIComponent(agent)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(body),
    }, (sse) => {
      const rpc = JSON.parse(sse.data);
      if (rpc.error) {
        answer.append(el('p', { class: 'error' }, `${rpc.error.code}: ${rpc.error.message}`));
        return;
      }
      const result = rpc.result;
      if (result.contextId) lastContext[agent] = result.contextId;
      if (result.kind === 'task') {
        states.append(stateChip(result.status.state));
        states.dataset.task = result.id;
        lastTask[agent] = { id: result.id, contextId: result.contextId, state: result.status.state };
      } else if (result.kind === 'status-update') {
        states.append(stateChip(result.status.state));
        lastTask[agent] = { id: result.taskId, contextId: result.contextId, state: result.status.state };
        // Asked something: the next message answers, unless the user says otherwise.
        if (waiting(result.status.state)) $('send-same-context').checked = true;
        const said = textOf(result.status.message);
        if (said) answer.append(el('p', {}, said));
      } else if (result.kind === 'artifact-update') {
        answer.append(el('p', { class: 'artifact' }, textOf(result.artifact)));
      } else if (result.kind === 'message') {
        answer.append(el('p', {}, textOf(result)));
      }
      // Follow the newest words, as a chat does.
      answer.scrollTop = answer.scrollHeight;
    });
    reply.classList.add('done');
  } catch (error) {
    answer.append(el('p', { class: 'error' }, error.message));
  } finally {
    sendHint();
    $('send-button').disabled = false;
    loadTasks().catch(() => {});
  }
}

// ---------------------------------------------------------------- metrics

let charts = null;
let lastScrape = null;

function makeCharts() {
  const parent = $('charts');
  return {
    sends: new Sparkline(parent, 'sends', '/s'),
    refusals: new Sparkline(parent, 'refusals', '/s'),
    latency: new Sparkline(parent, 'send latency', 'ms'),
    sessions: new Sparkline(parent, 'live sessions', ''),
    working: new Sparkline(parent, 'tasks working', ''),
    http: new Sparkline(parent, 'HTTP requests', '/s'),
  };
}

async function scrape() {
  charts ||= makeCharts();
  const response = await request('/metrics');
  if (!response.ok) {
    for (const chart of Object.values(charts)) chart.off('metrics off');
    $('metrics-state').textContent = response.status === 404
      ? '(metrics off: this server serves no /metrics)'
      : `(metrics unavailable: ${response.status})`;
    lastScrape = null;
    return;
  }
  const samples = parsePrometheus(await response.text());
  const now = performance.now();
  const dt = lastScrape ? (now - lastScrape.at) / 1000 : 0;
  const values = figures(lastScrape?.samples || null, samples, dt);
  for (const [name, chart] of Object.entries(charts)) chart.push(values[name]);
  $('metrics-state').textContent = '';
  lastScrape = { at: now, samples };
}

// ---------------------------------------------------------------- workflows

async function loadWorkflows() {
  let names = [];
  try {
    names = (await getJson('/api/workflows')).workflows || [];
  } catch {
    names = [];
  }
  workflows = new Set(names);
  const select = $('workflow-name');
  if ([...select.options].map((o) => o.value).join() !== names.join()) {
    fillSelect(select, names, null);
    if (names.length) await showWorkflow();
  } else if (select.value && !$('workflow-run').value) {
    // Showing the definition alone: a run may have started since.
    await showWorkflow();
  }
}

let runStream = null;

async function showWorkflow() {
  const name = $('workflow-name').value;
  if (!name) return;
  runStream?.abort();
  const definition = await getJson(`/api/workflows/${encodeURIComponent(name)}`);
  drawWorkflow($('workflow-graph'), definition, {});
  const runs = await getJson(`/api/console/tasks?agent=${encodeURIComponent(name)}&pageSize=20`)
    .catch(() => ({ tasks: [] }));
  const select = $('workflow-run');
  select.replaceChildren(
    el('option', { value: '' }, 'definition only'),
    ...runs.tasks.map((t) => el('option', { value: t.id }, `${when(t.status.timestamp)} ${t.status.state} ${short(t.id)}`)),
  );
  if (runs.tasks.length) {
    select.value = runs.tasks[0].id;
    await showRun(definition);
  }
}

async function showRun(definition) {
  runStream?.abort();
  const id = $('workflow-run').value;
  definition ||= await getJson(`/api/workflows/${encodeURIComponent($('workflow-name').value)}`);
  if (!id) {
    drawWorkflow($('workflow-graph'), definition, {});
    return;
  }
  const controller = new AbortController();
  runStream = controller;
  const events = [];
  await streamSse(`/api/console/tasks/${encodeURIComponent(id)}/events`, { signal: controller.signal }, (event) => {
    events.push(JSON.parse(event.data));
    drawWorkflow($('workflow-graph'), definition, nodeStates(events));
  }).catch(() => {});
  drawWorkflow($('workflow-graph'), definition, nodeStates(events));
}

// ---------------------------------------------------------------- the event feed

async function followEvents() {
  for (;;) {
    try {
      $('events-state').textContent = '(live)';
      await streamSse('/events', {}, (event) => {
        if (event.event === 'lagged') {
          $('events').prepend(el('li', { class: 'error' }, `missed ${JSON.parse(event.data).missed} events (the page fell behind)`));
          return;
        }
        const data = JSON.parse(event.data);
        const route = [data.from, data.to].filter(Boolean).join(' → ');
        $('events').prepend(el(
          'li',
          { class: `event kind-${event.event.replace(/[^a-z0-9]+/gi, '-')}` },
          el('span', { class: 'muted' }, `${new Date().toLocaleTimeString()} `),
          el('b', {}, event.event),
          route ? ` ${route} ` : ' ',
          // A text node of its own: a button's leading space is not drawn.
          data.taskId ? el('button', { type: 'button', class: 'link', onclick: () => showOpen(data.taskId) }, short(data.taskId)) : '',
        ));
        while ($('events').children.length > 100) $('events').lastChild.remove();
        // The runtime's own events of the open task join its timeline.
        if (data.taskId && data.taskId === openTaskId) {
          $('detail-timeline').append(el('li', { class: 'runtime-event' },
            el('span', { class: 'muted' }, `${new Date().toLocaleTimeString()} `),
            el('b', {}, event.event), route ? ` ${route}` : ''));
        }
      });
    } catch (error) {
      if (error.status === 404) {
        $('events-state').textContent = '(events off: this server serves no /events)';
        return;
      }
      $('events-state').textContent = `(reconnecting: ${error.message})`;
    }
    // The stream ended or broke: try again shortly, as EventSource would.
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
}

// ---------------------------------------------------------------- start

function every(ms, job) {
  // While the key is asked for, the first round already waits on it: no pile-up.
  const run = () => (signingIn() ? null : job().catch((error) => console.warn(error)));
  run();
  return setInterval(run, ms);
}

function refreshAll() {
  loadWhoami().catch(() => {});
  loadAgents().catch(() => {});
  loadTasks().catch(() => {});
  loadWorkflows().catch(() => {});
}

function start() {
  setSignInHook(refreshAll);
  $('send-form').addEventListener('submit', send);
  $('send-form').addEventListener('change', sendHint);
  sendHint();
  $('task-filter').addEventListener('change', () => loadTasks().catch(() => {}));
  $('task-filter').addEventListener('submit', (e) => { e.preventDefault(); loadTasks().catch(() => {}); });
  $('tasks-more').addEventListener('click', () => loadTasks(true).catch(() => {}));
  $('detail-close').addEventListener('click', () => {
    openStream?.abort();
    openTaskId = null;
    $('detail-panel').hidden = true;
  });
  $('workflow-name').addEventListener('change', () => showWorkflow().catch(() => {}));
  $('workflow-run').addEventListener('change', () => showRun().catch(() => {}));
  $('sign-out').addEventListener('click', () => { forget(); location.reload(); });
  every(5000, loadWhoami);
  every(3000, loadAgents);
  // Paging further keeps what was loaded; the first page refreshes.
  every(3000, () => (nextPage && $('tasks').children.length > 25 ? Promise.resolve() : loadTasks()));
  every(2000, scrape);
  every(10000, loadWorkflows);
  followEvents();
}

start();
