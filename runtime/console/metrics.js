// The Prometheus text format read, and small live charts drawn as SVG by hand.

/**
 * Parses Prometheus text exposition into samples {name, labels, value}. Comments,
 * blank lines and lines it cannot read are skipped (a chart of what it could read
 * beats no chart).
 */
export function parsePrometheus(text) {
  const samples = [];
  const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const raw of text.split('\n')) {
    const trimmed = raw.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const match = line.exec(trimmed);
    if (!match) continue;
    const labels = {};
    for (const [, key, value] of (match[2] || '').matchAll(label)) {
      labels[key] = value.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    const value = Number(match[3]);
    if (Number.isNaN(value) && match[3] !== 'NaN') continue;
    samples.push({ name: match[1], labels, value });
  }
  return samples;
}

/** The sum of every sample named `name` whose labels pass `keep`. */
export function total(samples, name, keep = () => true) {
  let sum = 0;
  for (const sample of samples) {
    if (sample.name === name && keep(sample.labels)) sum += sample.value;
  }
  return sum;
}

/**
 * What the console charts, from two scrapes `dt` seconds apart (`before` may be
 * null on the first scrape: rates are then unknown). Counters become rates per
 * second; the latency is the mean of the sends in between.
 */
export function figures(before, after, dt) {
  const rate = (name, keep) =>
    before && dt > 0
      ? Math.max(0, (total(after, name, keep) - total(before, name, keep)) / dt)
      : null;
  const count = 'agentyard_send_duration_seconds_count';
  const sum = 'agentyard_send_duration_seconds_sum';
  let latency = null;
  if (before) {
    const sends = total(after, count) - total(before, count);
    const seconds = total(after, sum) - total(before, sum);
    latency = sends > 0 ? (seconds / sends) * 1000 : 0;
  }
  return {
    sends: rate('agentyard_sends_total'),
    refusals: rate('agentyard_refusals_total'),
    latency,
    sessions: total(after, 'agentyard_sessions_live'),
    working: total(after, 'agentyard_tasks', (l) => l.state === 'working'),
    http: rate('agentyard_http_requests_total'),
  };
}

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes = {}) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  return element;
}

/** A small line chart of the last `points` values, redrawn on each push. */
export class Sparkline {
  constructor(parent, title, unit, points = 60) {
    this.values = [];
    this.points = points;
    this.unit = unit;
    this.root = document.createElement('figure');
    this.root.className = 'chart';
    const caption = document.createElement('figcaption');
    this.label = document.createElement('span');
    this.label.className = 'value';
    caption.append(title, ' ', this.label);
    this.svg = svg('svg', { viewBox: '0 0 200 50', preserveAspectRatio: 'none', role: 'img' });
    this.svg.setAttribute('aria-label', title);
    this.root.append(caption, this.svg);
    parent.append(this.root);
  }

  /** Adds a value (null: unknown, drawn as a gap) and redraws. */
  push(value) {
    this.values.push(value);
    if (this.values.length > this.points) this.values.shift();
    this.draw();
  }

  /** Shows a word instead of a line (e.g. "metrics off"). */
  off(word) {
    this.values = [];
    this.svg.replaceChildren();
    this.label.textContent = word;
  }

  draw() {
    const known = this.values.filter((v) => v !== null);
    const max = Math.max(1e-9, ...known);
    const last = this.values[this.values.length - 1];
    this.label.textContent = last === null || last === undefined
      ? '…'
      : `${format(last)} ${this.unit}`;
    const step = 200 / (this.points - 1);
    const offset = this.points - this.values.length;
    let path = '';
    let pen = false;
    this.values.forEach((value, i) => {
      if (value === null) {
        pen = false;
        return;
      }
      const x = (offset + i) * step;
      const y = 48 - (value / max) * 44;
      path += `${pen ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`;
      pen = true;
    });
    this.svg.replaceChildren(
      svg('line', { x1: 0, y1: 48, x2: 200, y2: 48, class: 'axis' }),
      svg('path', { d: path, class: 'line' }),
      Object.assign(svg('text', { x: 2, y: 9, class: 'max' }), { textContent: format(max) }),
    );
  }
}

function format(value) {
  if (Number.isInteger(value) || value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}
