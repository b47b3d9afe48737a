'use strict'

// The scanner that reads an id's exact text (bin/jsonrpc.js) against JSON.parse, on random
// JSON with random spacing, escapes, nesting and duplicate keys: the span it finds is the
// member JSON.parse reads, and a batch splits into exactly its elements.

const test = require('node:test')
const assert = require('node:assert/strict')

const { memberText, elementTexts, readLine } = require('../bin/jsonrpc.js')

function rng(seed) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

const SPACES = ['', ' ', '\t', '\n ', '\r\n']
const STRINGS = ['', 'id', 'a"b', 'back\\slash', 'é😀', '\\"', 'x\\', '"id":1', '}]']
const NUMBERS = ['0', '-0', '1', '1.0', '1E400', '-1e-7', '12345678901234567891', '9007199254740993']

function gen(r, depth) {
  const sp = () => SPACES[Math.floor(r() * SPACES.length)]
  const kind = depth > 3 ? Math.floor(r() * 4) : Math.floor(r() * 6)
  switch (kind) {
    case 0:
      return JSON.stringify(STRINGS[Math.floor(r() * STRINGS.length)])
    case 1:
      return NUMBERS[Math.floor(r() * NUMBERS.length)]
    case 2:
      return ['true', 'false', 'null'][Math.floor(r() * 3)]
    case 3:
      return '"\\u0069\\u0064"' // "id", escaped
    case 4: {
      const n = Math.floor(r() * 4)
      return `[${sp()}${Array.from({ length: n }, () => gen(r, depth + 1)).join(`${sp()},${sp()}`)}${sp()}]`
    }
    default:
      return object(r, depth + 1)
  }
}

function object(r, depth) {
  const sp = () => SPACES[Math.floor(r() * SPACES.length)]
  const keys = ['id', 'params', 'x', '\\u0069d', 'i\\"d', 'result']
  const n = Math.floor(r() * 5)
  const members = Array.from({ length: n }, () => `${sp()}"${keys[Math.floor(r() * keys.length)]}"${sp()}:${sp()}${gen(r, depth)}${sp()}`)
  return `{${members.join(',')}${n === 0 ? sp() : ''}}`
}

test('memberText finds the member JSON.parse reads, duplicates and escaped keys included', () => {
  const r = rng(20)
  let checked = 0
  for (let i = 0; i < 5000; i++) {
    const text = SPACES[i % SPACES.length] + object(r, 0) + SPACES[(i + 2) % SPACES.length]
    const parsed = JSON.parse(text)
    for (const key of ['id', 'params', 'result', 'i"d', 'nope']) {
      const found = memberText(text, key)
      if (!(key in parsed)) {
        assert.equal(found, undefined, text)
        continue
      }
      assert.notEqual(found, undefined, text)
      assert.deepEqual(JSON.parse(found), parsed[key], text)
      checked++
    }
  }
  assert.ok(checked > 3000)
})

test('elementTexts splits a batch into exactly its elements', () => {
  const r = rng(21)
  for (let i = 0; i < 2000; i++) {
    const n = 1 + Math.floor(r() * 4)
    const elements = Array.from({ length: n }, () => object(r, 0))
    const text = ` [ ${elements.join(' ,\n')} ] `
    assert.deepEqual(elementTexts(text), elements)
    assert.deepEqual(readLine(text).batch, elements)
  }
})

test('the scanner ends on any text, valid JSON or not', () => {
  const r = rng(22)
  for (let i = 0; i < 3000; i++) {
    const valid = object(r, 0)
    const cut = valid.slice(0, Math.floor(r() * valid.length))
    // Only ever called on valid JSON, but it must never loop on anything, and what it returns
    // is always a piece of the text it was given: never text of its own.
    const member = memberText(cut, 'id')
    assert.ok(member === undefined || cut.includes(member), `member ${JSON.stringify(member)} is not in the text`)
    const array = `[${cut}`
    let from = 1
    for (const element of elementTexts(array)) {
      const at = array.indexOf(element, from)
      assert.ok(at >= from, `element ${JSON.stringify(element)} is not the next piece of the text`)
      from = at + element.length
    }
  }
})
