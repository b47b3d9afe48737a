// The one token estimate (estimateTokens, crates/core/src/tokens.rs) against o200k on the samples the
// repository ships: it must err high (a budget built on it stays within budget), by little.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { estimateTokens, FilterSession } = require('../index.js');
const { countTokens } = require('gpt-tokenizer/encoding/o200k_base');

const SAMPLES = path.join(__dirname, '..', 'samples');
const textOf = (result) => result.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');

function sampleTexts() {
  const texts = [];
  for (const file of fs.readdirSync(SAMPLES).filter((f) => f.endsWith('.json')).sort()) {
    const doc = JSON.parse(fs.readFileSync(path.join(SAMPLES, file), 'utf8'));
    if (!Array.isArray(doc.result?.content)) {
      texts.push({ file, text: JSON.stringify(doc.result) });
      continue;
    }
    texts.push({ file, text: textOf(doc.result) });
    for (const level of ['light', 'moderate', 'aggressive']) {
      const session = new FilterSession({ filter: { level }, stats: 'off' });
      const out = session.filterToolResult(doc.request.params.name, JSON.stringify(doc.result), JSON.stringify(doc.request.params.arguments ?? {}));
      if (out) texts.push({ file: `${file} at ${level}`, text: textOf(JSON.parse(out)) });
    }
  }
  return texts;
}

test('the estimate is never below o200k on the shipped samples, and at most 30% above', () => {
  const texts = sampleTexts();
  assert.ok(texts.length >= 15, `only ${texts.length} sample texts`);
  for (const { file, text } of texts) {
    const o200k = countTokens(text);
    const est = estimateTokens(text);
    assert.ok(est >= o200k, `${file}: estimate ${est} < o200k ${o200k}`);
    assert.ok(est <= o200k * 1.3, `${file}: estimate ${est} > 1.3 x o200k ${o200k}`);
  }
});

test('the estimate is linear: twice the text, twice the tokens (within rounding)', () => {
  const text = textOf(JSON.parse(fs.readFileSync(path.join(SAMPLES, 'app-grid.take_snapshot.json'), 'utf8')).result);
  const one = estimateTokens(text);
  const two = estimateTokens(`${text}${text}`);
  assert.ok(Math.abs(two - 2 * one) <= 2, `${two} vs 2 x ${one}`);
  assert.strictEqual(estimateTokens(''), 0);
  assert.throws(() => estimateTokens(42), { code: 'StringExpected' });
});

test('the stats line counts its tokens with the same estimate', () => {
  const doc = JSON.parse(fs.readFileSync(path.join(SAMPLES, 'rust-book-ch04-01.take_snapshot.json'), 'utf8'));
  const session = new FilterSession({ filter: { level: 'moderate' }, stats: 'stderr' });
  const out = JSON.parse(session.filterToolResult('take_snapshot', JSON.stringify(doc.result), '{}'));
  const before = estimateTokens(textOf(doc.result));
  const after = estimateTokens(textOf(out));
  const figures = session.lastFigures();
  assert.strictEqual(figures.tokensIn, before);
  assert.strictEqual(figures.tokensOut, after);
  const saved = ((before - after) / 1000).toFixed(1);
  assert.ok(session.takeStatsLine().includes(`~${saved}k tokens saved`));
});

test('the estimate is never below o200k on adversarial text: runs, base64, hex, digits, every plane, emoji', () => {
  const { adversarialTexts } = require('./adversarial-texts.js');
  const under = [];
  for (const [name, text] of Object.entries(adversarialTexts(4000))) {
    const o200k = countTokens(text);
    const est = estimateTokens(text);
    if (est < o200k) under.push(`${name}: estimate ${est} < o200k ${o200k}`);
  }
  assert.deepStrictEqual(under, []);
});
