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
  assert.match(session.takeStatsLine(), /^\[mcp-snapshot-filter: /);
  assert.strictEqual(session.takeStatsLine(), null);
  assert.match(session.summary(), /in 1 of 1 tool results$/);
});

test('off mode adds no line but still counts', () => {
  const session = new FilterSession({ filter: { level: 'moderate' }, stats: 'off' });
  const out = session.filterToolResult('list_network_requests', json, '{}');
  assert.ok(!out.includes('[mcp-snapshot-filter:'));
  assert.strictEqual(session.takeStatsLine(), null);
  assert.match(session.summary(), /in 1 of 1 tool results$/);
});
