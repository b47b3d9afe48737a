// The stats surface of FilterSession: the mode option, takeStatsLine() and summary().
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { FilterSession } = require('../index.js');

// A list_network_requests result with six successful images (hidden at moderate) and a failure.
const result = {
  content: [
    {
      type: 'text',
      text: [
        '## Network requests',
        'Showing 1-4 of 4 (Page 1 of 1).',
        'reqid=1 GET http://127.0.0.1/app.html [200]',
        ...Array.from({ length: 6 }, (_, i) => `reqid=${i + 2} GET http://127.0.0.1/img/photo-${i}.png [200]`),
        'reqid=9 GET http://127.0.0.1/missing.png [404]',
      ].join('\n'),
    },
  ],
};
const json = JSON.stringify(result);

test('an invalid stats mode is an InvalidArg error', () => {
  assert.throws(() => new FilterSession({ stats: 'loud' }), { code: 'InvalidArg' });
  assert.strictEqual(new FilterSession().stats, 'inline');
});

test('inline mode appends the stats line to the filtered text', () => {
  const session = new FilterSession({ filter: { level: 'moderate' } });
  const out = JSON.parse(session.filterToolResult('list_network_requests', json, '{}'));
  const lines = out.content[0].text.split('\n');
  assert.match(lines.at(-1), /^\[mcp-snapshot-filter: \d+ B → \d+ B \(−\d+%\), ~\d+ tokens saved \| session: \d+ B saved over 1 call \(−\d+%\)\]$/);
  assert.ok(lines.includes('reqid=9 GET http://127.0.0.1/missing.png [404]'));
  assert.strictEqual(session.takeStatsLine(), null);
});

test('stderr mode holds the line for the proxy, once', () => {
  const session = new FilterSession({ filter: { level: 'moderate' }, stats: 'stderr' });
  const out = session.filterToolResult('list_network_requests', json, '{}');
  assert.ok(!out.includes('[mcp-snapshot-filter:'));
  // Named by tool and without the bracketed prefix: the proxy's log adds `[mcp-snapshot-filter] `.
  assert.match(session.takeStatsLine(), /^list_network_requests: \d+ B → \d+ B \(−\d+%\), ~\d+ tokens saved \| session: /);
  assert.strictEqual(session.takeStatsLine(), null);
  assert.match(session.summary(), /shrinking 1 of 1 result of filtered tools/);
});

test('off mode adds no line but still counts', () => {
  const session = new FilterSession({ filter: { level: 'moderate' }, stats: 'off' });
  const out = session.filterToolResult('list_network_requests', json, '{}');
  assert.ok(!out.includes('[mcp-snapshot-filter:'));
  assert.strictEqual(session.takeStatsLine(), null);
  assert.match(session.summary(), /shrinking 1 of 1 result of filtered tools/);
});

test('the summary says why nothing was saved, never "0 B of 0 B"', () => {
  const off = new FilterSession({ filter: { level: 'off' } });
  assert.strictEqual(off.filterToolResult('list_network_requests', json, '{}'), null);
  assert.strictEqual(off.summary(), 'session: filter level off, every tool result forwarded unchanged');
  const idle = new FilterSession({ filter: { level: 'moderate' } });
  const small = JSON.stringify({ content: [{ type: 'text', text: '## Network requests\nreqid=1 GET http://127.0.0.1/ [200]' }] });
  assert.strictEqual(idle.filterToolResult('list_network_requests', small, '{}'), null);
  assert.match(idle.summary(), /^session: nothing saved; none of 1 result of filtered tools/);
  assert.doesNotMatch(idle.summary(), /0 B/);
});

test('toolTotals counts per upstream tool, figures only', () => {
  const session = new FilterSession({ filter: { level: 'moderate' }, stats: 'off' });
  session.filterToolResult('list_network_requests', json, '{}');
  session.filterToolResult('list_network_requests', json, '{}');
  const figures = session.lastFigures();
  const [row, ...rest] = session.toolTotals();
  assert.deepStrictEqual(rest, []);
  assert.strictEqual(row.tool, 'list_network_requests');
  assert.strictEqual(row.results, 2);
  assert.strictEqual(row.shrunk, 2);
  assert.strictEqual(row.bytesIn, 2 * figures.bytesIn);
  assert.strictEqual(row.tokensOut, 2 * figures.tokensOut);
  assert.ok(row.tokensIn > row.tokensOut && row.bytesIn > row.bytesOut);
});
