// Workflow runs drawn as a graph: the definition's nodes in layers by dependency,
// each coloured by its state in a run.

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes = {}) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  return element;
}

/**
 * The edges of a definition (`GET /api/workflows/{name}`): a node depends on the
 * nodes in its `from` and `depends_on`, and on those its prompt names in a template
 * (`{{draft}}`, `{{draft.data}}`, `{{draft.parts[0]}}`).
 */
export function edges(definition) {
  const ids = new Set(definition.nodes.map((n) => n.id));
  const result = [];
  for (const node of definition.nodes) {
    const sources = new Set([...(node.from || []), ...(node.depends_on || [])]);
    for (const [, name] of (node.prompt || '').matchAll(/\{\{\s*([A-Za-z0-9_-]+)/g)) {
      sources.add(name);
    }
    for (const source of sources) {
      if (ids.has(source) && source !== node.id) result.push([source, node.id]);
    }
  }
  return result;
}

/** Each node's layer: 0 for nodes with no dependency, else one past its deepest. */
function layers(definition, links) {
  const layer = new Map(definition.nodes.map((n) => [n.id, 0]));
  // Longest path by relaxation; a definition is acyclic (the server checks), and
  // the bound keeps a bad one from looping.
  for (let round = 0; round < definition.nodes.length; round++) {
    let moved = false;
    for (const [from, to] of links) {
      if (layer.get(to) < layer.get(from) + 1) {
        layer.set(to, layer.get(from) + 1);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return layer;
}

/**
 * The node states a run's task log tells: each status update of a workflow run
 * carries its run event as a data part (`{"event": "node.started", "node": ...}`).
 */
export function nodeStates(events) {
  const states = {};
  const word = {
    'node.started': 'working',
    'node.retrying': 'retrying',
    'node.completed': 'completed',
    'node.error': 'failed',
    'node.canceled': 'canceled',
    'node.input_required': 'input-required',
  };
  for (const event of events) {
    const parts = event?.status?.message?.parts || [];
    for (const part of parts) {
      const data = part.kind === 'data' ? part.data : null;
      if (data && data.node && word[data.event]) states[data.node] = word[data.event];
    }
  }
  return states;
}

// Marker ids are document-wide: each drawing gets its own, or a graph would point at
// the arrowhead of another (perhaps hidden) one.
let drawings = 0;

/** Draws `definition` into `parent`, nodes coloured by `states` (node id → state). */
export function drawWorkflow(parent, definition, states = {}) {
  const arrow = `arrow-${++drawings}`;
  const links = edges(definition);
  const layer = layers(definition, links);
  const columns = [];
  for (const node of definition.nodes) {
    const l = layer.get(node.id);
    (columns[l] ||= []).push(node);
  }
  const width = 130;
  const height = 44;
  const gapX = 50;
  const gapY = 18;
  const tallest = Math.max(...columns.map((c) => c.length));
  const totalHeight = tallest * (height + gapY) + gapY;
  const place = new Map();
  columns.forEach((column, x) => {
    const top = (totalHeight - column.length * (height + gapY) + gapY) / 2;
    column.forEach((node, y) => {
      place.set(node.id, { x: gapY + x * (width + gapX), y: top + y * (height + gapY) });
    });
  });
  const totalWidth = gapY * 2 + columns.length * (width + gapX) - gapX;
  const root = svg('svg', {
    viewBox: `0 0 ${totalWidth} ${totalHeight}`,
    width: totalWidth,
    height: totalHeight,
    role: 'img',
    'aria-label': `workflow ${definition.name}`,
  });
  const defs = svg('defs');
  const marker = svg('marker', {
    id: arrow, viewBox: '0 0 10 10', refX: 10, refY: 5,
    markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse',
  });
  marker.append(svg('path', { d: 'M0,0L10,5L0,10z', class: 'arrow' }));
  defs.append(marker);
  root.append(defs);
  for (const [from, to] of links) {
    const a = place.get(from);
    const b = place.get(to);
    const x1 = a.x + width;
    const y1 = a.y + height / 2;
    const x2 = b.x;
    const y2 = b.y + height / 2;
    const bend = (x2 - x1) / 2;
    root.append(svg('path', {
      d: `M${x1},${y1}C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`,
      class: 'edge',
      'marker-end': `url(#${arrow})`,
    }));
  }
  for (const node of definition.nodes) {
    const { x, y } = place.get(node.id);
    const state = states[node.id] || 'pending';
    const group = svg('g', { class: `node state-${state}`, 'data-node': node.id });
    const title = svg('title');
    title.textContent = `${node.id} (${node.kind}${node.agent ? `: ${node.agent}` : ''}): ${state}`;
    group.append(
      title,
      svg('rect', { x, y, width, height, rx: 8 }),
      Object.assign(svg('text', { x: x + 10, y: y + 18, class: 'id' }), { textContent: node.id }),
      Object.assign(svg('text', { x: x + 10, y: y + 34, class: 'kind' }), {
        textContent: `${node.agent || node.tool || node.kind} · ${state}`,
      }),
    );
    root.append(group);
  }
  parent.replaceChildren(root);
}
