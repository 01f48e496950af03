// Talking to the server: the credential entered once, every call carrying it, and
// SSE read from a fetch body (EventSource cannot send an auth header).

const KEY = 'agentyard.console.credential';

/** The stored credential: {kind: 'apiKey'|'bearer', value, header}, or null. */
export function credential() {
  const text = sessionStorage.getItem(KEY) ?? localStorage.getItem(KEY);
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

export function forget() {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

function remember(cred, persist) {
  forget();
  (persist ? localStorage : sessionStorage).setItem(KEY, JSON.stringify(cred));
}

/** The headers that carry the credential, if there is one. */
export function authHeaders() {
  const cred = credential();
  if (!cred) return {};
  if (cred.kind === 'bearer') return { Authorization: `Bearer ${cred.value}` };
  return { [cred.header || 'X-API-Key']: cred.value };
}

/** The API key header a 401 names in its challenge (`ApiKey header="X-API-Key"`). */
function challengedHeader(response) {
  const challenge = response.headers.get('WWW-Authenticate') || '';
  const match = /ApiKey header="([^"]+)"/i.exec(challenge);
  return match ? match[1] : 'X-API-Key';
}

// One sign-in at a time: calls refused together wait for the same answer.
let pendingLogin = null;

/** Asks for a key (the dialog in index.html); resolves once one is stored. */
function askForKey(header, why) {
  if (pendingLogin) return pendingLogin;
  pendingLogin = new Promise((resolve) => {
    const dialog = document.getElementById('login');
    const form = document.getElementById('login-form');
    document.getElementById('login-why').textContent = why;
    const submit = (event) => {
      event.preventDefault();
      const value = document.getElementById('login-key').value.trim();
      if (!value) return;
      const kind = document.getElementById('login-kind').value;
      remember({ kind, value, header }, document.getElementById('login-remember').checked);
      form.removeEventListener('submit', submit);
      document.getElementById('login-key').value = '';
      dialog.close();
      pendingLogin = null;
      onSignIn();
      resolve();
    };
    form.addEventListener('submit', submit);
    // Nothing works without a key: Escape does not dismiss the question.
    dialog.oncancel = (event) => event.preventDefault();
    if (!dialog.open) dialog.showModal();
    document.getElementById('login-key').focus();
  });
  return pendingLogin;
}

/** Whether the page is waiting for a key (periodic refreshes wait for it too). */
export function signingIn() {
  return pendingLogin !== null;
}

let onSignIn = () => {};
/** Called after every sign-in (the page refreshes what it shows). */
export function setSignInHook(hook) {
  onSignIn = hook;
}

/**
 * fetch with the credential; a 401 asks for a key and tries again with it.
 * Resolves to the Response (any other status is the caller's to judge).
 */
export async function request(path, init = {}) {
  for (;;) {
    const headers = { ...(init.headers || {}), ...authHeaders() };
    const response = await fetch(path, { ...init, headers });
    if (response.status !== 401) return response;
    const why = credential()
      ? 'The server refused that key. Enter another.'
      : 'This server needs a key.';
    forget();
    await askForKey(challengedHeader(response), why);
  }
}

/** GET a JSON document; throws with the server's message on an error status. */
export async function getJson(path) {
  const response = await request(path);
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = (await response.json()).error || message;
    } catch { /* not JSON: keep the status */ }
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return response.json();
}

/**
 * Reads a server-sent event stream from a fetch body, calling onEvent({event, data,
 * id}) for each event; resolves when the stream ends. `signal` aborts it.
 */
export async function streamSse(path, init, onEvent) {
  const response = await request(path, init);
  if (!response.ok || !response.body) {
    const error = new Error(`${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const event = { event: 'message', data: '', id: null };
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue; // keep-alive comment
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event.event = text;
        else if (field === 'data') data.push(text);
        else if (field === 'id') event.id = text;
      }
      if (data.length === 0) continue;
      event.data = data.join('\n');
      onEvent(event);
    }
  }
}
