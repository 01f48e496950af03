// The live console in headless Chromium against a running `agentyard serve`: sign in
// with a key (a wrong one first), see the agents, send a message and watch the reply
// stream in, answer an agent's question, open the task, see a workflow run drawn with
// its node states, check the charts, and save a screenshot. Started by
// tests/tests/browser.rs, which passes:
//   AGENTYARD_URL      the server's base URL (it wants an API key)
//   AGENTYARD_API_KEY  the key of an operator of the console
//   CHROMIUM           the browser (Debian's /usr/bin/chromium)
//   SCREENSHOT         where to save the screenshot
// Prints one line per step; exits non-zero with the reason on the first failure.

import { chromium } from 'playwright-core';

const base = process.env.AGENTYARD_URL;
const key = process.env.AGENTYARD_API_KEY;
const screenshot = process.env.SCREENSHOT;
// Each wait is bounded: a broken page fails in seconds, not at the harness's deadline.
const WAIT = 15_000;

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function step(name, body) {
  const started = Date.now();
  await body();
  console.log(`ok ${name} (${Date.now() - started} ms)`);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // As root (CI containers) Chromium refuses to start sandboxed.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const problems = [];
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1100 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // The browser logs every refused or missing resource: the 401 before the key is
    // entered and, until /metrics and /events exist, their 404s. Anything else is a
    // bug of the page.
    if (message.type() === 'error' && !/status of (401|404)/.test(message.text())) {
      problems.push(`console error: ${message.text()}`);
    }
  });

  await step('the page loads without credentials and asks for a key', async () => {
    const response = await page.goto(`${base}/ui`);
    check(response.ok(), `GET /ui answered ${response.status()}`);
    check(page.url().endsWith('/ui/'), `not redirected to /ui/: ${page.url()}`);
    await page.locator('#login').waitFor({ state: 'visible' });
    const why = await page.locator('#login-why').textContent();
    check(/needs a key/.test(why), `the sign-in says: ${why}`);
  });

  await step('a wrong key is refused and asked for again', async () => {
    await page.fill('#login-key', 'not-the-key');
    await page.click('#login-submit');
    await page.waitForFunction(() =>
      document.getElementById('login').open &&
      /refused/.test(document.getElementById('login-why').textContent));
  });

  await step('the right key signs in, kept for the session', async () => {
    await page.fill('#login-key', key);
    await page.click('#login-submit');
    await page.waitForFunction(() => /signed in as/.test(document.getElementById('whoami').textContent));
    const stored = await page.evaluate(() => sessionStorage.getItem('agentyard.console.credential'));
    check(stored && JSON.parse(stored).value, 'the key is not in sessionStorage');
  });

  await step('the agents are listed with cards and live sessions', async () => {
    await page.locator('li.agent[data-agent="echo"] .sessions').waitFor();
    await page.locator('li.agent[data-agent="countdown"]').waitFor();
    const card = await page.locator('li.agent[data-agent="echo"] details pre').textContent();
    check(JSON.parse(card).name === 'echo', 'the echo card is not shown');
    const options = await page.locator('#send-agent option').allTextContents();
    check(options.includes('echo'), `echo is not offered in the message box: ${options}`);
  });

  await step('a message to echo is answered in the reply box', async () => {
    await page.selectOption('#send-agent', 'echo');
    await page.fill('#send-text', 'hello from the browser');
    await page.click('#send-button');
    await page.locator('#reply .answer p', { hasText: 'hello from the browser' }).waitFor();
    await page.locator('#reply .states .state-completed').waitFor();
  });

  await step('a countdown streams: updates appear before the task completes', async () => {
    await page.selectOption('#send-agent', 'countdown');
    await page.fill('#send-text', '2');
    await page.click('#send-button');
    // The first update is on the page while the task still works (a tick is 1 s).
    await page.waitForFunction(() =>
      document.querySelectorAll('#reply .answer p').length >= 1 &&
      !document.querySelector('#reply .states .state-completed'));
    await page.locator('#reply .states .state-completed').waitFor();
    const said = await page.locator('#reply .answer p').count();
    check(said >= 2, `only ${said} update(s) reached the page`);
  });

  await step('a question from the agent is answered from the message box', async () => {
    await page.selectOption('#send-agent', 'ask');
    await page.uncheck('#send-same-context');
    await page.fill('#send-text', 'hi');
    await page.click('#send-button');
    await page.locator('#reply .answer p', { hasText: 'What is your name?' }).waitFor();
    await page.locator('#reply .states .state-input-required').waitFor();
    // Asked, the box offers to answer that task.
    check(await page.isChecked('#send-same-context'), 'the answer would not name the task');
    await page.waitForFunction(() => /answers task/.test(document.getElementById('send-hint').textContent));
    await page.fill('#send-text', 'Ada');
    await page.click('#send-button');
    await page.locator('#reply .answer p', { hasText: 'Nice to meet you, Ada.' }).waitFor();
    await page.locator('#reply .states .state-completed').waitFor();
    await page.uncheck('#send-same-context');
  });

  await step('the echo task is listed and opens to its history and timeline', async () => {
    await page.selectOption('#filter-agent', 'echo');
    const row = page.locator('#tasks tr.task', { hasText: 'hello from the browser' });
    await row.first().click();
    await page.locator('#detail-history li', { hasText: 'hello from the browser' }).first().waitFor();
    await page.locator('#detail-timeline li').first().waitFor();
    await page.waitForFunction(() => /ended|waiting/.test(document.getElementById('detail-live').textContent));
    await page.selectOption('#filter-agent', '');
  });

  await step('a workflow run is drawn with its node states', async () => {
    await page.selectOption('#send-agent', 'review');
    await page.fill('#send-text', 'actors for agents');
    await page.click('#send-button');
    await page.locator('#reply .states .state-completed').waitFor();
    await page.selectOption('#filter-agent', 'review');
    await page.locator('#tasks tr.task').first().click();
    await page.locator('#detail-graph g.node[data-node="draft"].state-completed').waitFor();
    const nodes = await page.locator('#detail-graph g.node').count();
    check(nodes === 5, `the review graph has ${nodes} nodes, not 5`);
    // The workflow panel shows the latest run of the workflow chosen.
    await page.selectOption('#workflow-name', 'review');
    await page.locator('#workflow-graph g.node[data-node="out"].state-completed').waitFor();
    await page.selectOption('#filter-agent', '');
  });

  await step('the charts read the metrics, or say they are off', async () => {
    await page.waitForFunction(() => {
      const values = [...document.querySelectorAll('#charts figure .value')].map((v) => v.textContent);
      const off = /metrics off/.test(document.getElementById('metrics-state').textContent);
      return values.length === 6 && (off || values.every((v) => /\d/.test(v)));
    });
  });

  await step('the metrics reader turns two scrapes into rates', async () => {
    const figures = await page.evaluate(async () => {
      const m = await import('./metrics.js');
      const before = m.parsePrometheus([
        '# TYPE agentyard_sends_total counter',
        'agentyard_sends_total{agent="echo",entry_point="http",outcome="completed"} 10',
        'agentyard_refusals_total{reason="rate"} 1',
        'agentyard_send_duration_seconds_sum{agent="echo"} 1.0',
        'agentyard_send_duration_seconds_count{agent="echo"} 10',
      ].join('\n'));
      const after = m.parsePrometheus([
        'agentyard_sends_total{agent="echo",entry_point="http",outcome="completed"} 30',
        'agentyard_sends_total{agent="ask",entry_point="http",outcome="failed"} 4',
        'agentyard_refusals_total{reason="rate"} 3',
        'agentyard_send_duration_seconds_sum{agent="echo"} 3.0',
        'agentyard_send_duration_seconds_count{agent="echo"} 30',
        'agentyard_sessions_live{agent="echo"} 2',
        'agentyard_sessions_live{agent="ask"} 1',
        'agentyard_tasks{state="working"} 5',
        'agentyard_tasks{state="completed"} 50',
      ].join('\n'));
      return m.figures(before, after, 2);
    });
    check(figures.sends === 12, `sends/s ${figures.sends}, not 12`);
    check(figures.refusals === 1, `refusals/s ${figures.refusals}, not 1`);
    check(Math.abs(figures.latency - 100) < 1e-9, `latency ${figures.latency} ms, not 100`);
    check(figures.sessions === 3 && figures.working === 5, `gauges ${JSON.stringify(figures)}`);
  });

  await step('no errors on the page', async () => {
    check(problems.length === 0, problems.join('\n'));
  });

  await step('screenshot', async () => {
    await page.locator('#detail-close').click();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshot, fullPage: true });
  });
} finally {
  await browser.close();
}
