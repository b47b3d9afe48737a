// @ts-check
'use strict'

// A JSON reader that keeps byte positions, for `install`/`uninstall`: they change a few values
// in a user's config file and must leave every other byte as it was. JSON.parse + stringify
// would not: integers beyond 2^53 lose digits, `1e400` becomes null, bytes that are not UTF-8
// become U+FFFD, and of a duplicated key only the last value survives.
//
// parse(buffer) gives a tree of { type, start, end } nodes (byte offsets into the buffer;
// objects have `members: [{ key, value }]` in file order, duplicates included; arrays `items`),
// and checks the grammar (RFC 8259) as JSON.parse does. Structural characters are ASCII, so the
// bytes are scanned as they are; only keys and strings the caller asks for are decoded.

class JsonSyntaxError extends Error {}

const MAX_DEPTH = 1000
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/
const NUMBER_BYTE = new Set(Buffer.from('0123456789+-.eE'))

function parse(buf) {
  let pos = 0
  const fail = (what) => {
    throw new JsonSyntaxError(`${what} at byte ${pos}`)
  }
  const ws = () => {
    while (pos < buf.length && (buf[pos] === 0x20 || buf[pos] === 0x0a || buf[pos] === 0x0d || buf[pos] === 0x09)) pos++
  }
  const string = () => {
    const start = pos++
    while (pos < buf.length) {
      const c = buf[pos]
      if (c === 0x22) return { type: 'string', start, end: ++pos }
      if (c < 0x20) fail('control character in a string')
      if (c === 0x5c) {
        const e = buf[pos + 1]
        if (e === 0x75) {
          if (!/^[0-9a-fA-F]{4}$/.test(buf.toString('latin1', pos + 2, pos + 6))) fail('bad \\u escape')
          pos += 6
        } else if ([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74].includes(e)) pos += 2
        else fail('bad escape')
      } else pos++
    }
    return fail('unterminated string')
  }
  const value = (depth) => {
    if (depth > MAX_DEPTH) fail('nested too deep')
    ws()
    const c = buf[pos]
    const start = pos
    if (c === 0x7b) {
      pos++
      const members = []
      ws()
      if (buf[pos] === 0x7d) return { type: 'object', start, end: ++pos, members }
      for (;;) {
        ws()
        if (buf[pos] !== 0x22) fail('expected a key')
        const keyNode = string()
        ws()
        if (buf[pos] !== 0x3a) fail("expected ':'")
        pos++
        members.push({ key: decode(buf, keyNode), keyNode, value: value(depth + 1) })
        ws()
        if (buf[pos] === 0x2c) pos++
        else if (buf[pos] === 0x7d) return { type: 'object', start, end: ++pos, members }
        else fail("expected ',' or '}'")
      }
    }
    if (c === 0x5b) {
      pos++
      const items = []
      ws()
      if (buf[pos] === 0x5d) return { type: 'array', start, end: ++pos, items }
      for (;;) {
        items.push(value(depth + 1))
        ws()
        if (buf[pos] === 0x2c) pos++
        else if (buf[pos] === 0x5d) return { type: 'array', start, end: ++pos, items }
        else fail("expected ',' or ']'")
      }
    }
    if (c === 0x22) return string()
    for (const word of ['true', 'false', 'null']) {
      if (buf.toString('latin1', pos, pos + word.length) === word) {
        pos += word.length
        return { type: word === 'null' ? 'null' : 'boolean', start, end: pos }
      }
    }
    let end = pos
    while (end < buf.length && NUMBER_BYTE.has(buf[end])) end++
    if (end > pos && NUMBER.test(buf.toString('latin1', pos, end))) {
      pos = end
      return { type: 'number', start, end }
    }
    return fail(pos >= buf.length ? 'unexpected end' : 'unexpected character')
  }
  const root = value(0)
  ws()
  if (pos !== buf.length) fail('unexpected data after the value')
  return root
}

/** The decoded text of a string node (invalid UTF-8 decodes as U+FFFD: for reading only). */
function decode(buf, node) {
  return JSON.parse(buf.toString('utf8', node.start, node.end))
}

/** The last member named `key` of an object node (JSON.parse, and so every client, keeps the last). */
function member(node, key) {
  if (node?.type !== 'object') return undefined
  for (let i = node.members.length - 1; i >= 0; i--) if (node.members[i].key === key) return node.members[i]
  return undefined
}

/**
 * A plain value of a node, for deciding what to do (never written back): strings decoded,
 * numbers as JS numbers, objects with their last duplicate.
 */
function plain(buf, node) {
  switch (node.type) {
    case 'object': {
      const out = {}
      for (const m of node.members) Object.defineProperty(out, m.key, { value: plain(buf, m.value), enumerable: true, configurable: true, writable: true })
      return out
    }
    case 'array':
      return node.items.map((n) => plain(buf, n))
    default:
      return JSON.parse(buf.toString('utf8', node.start, node.end))
  }
}

/** The buffer with each edit { start, end, text: Buffer|string } applied (edits must not overlap). */
function applyEdits(buf, edits) {
  const sorted = [...edits].sort((a, b) => a.start - b.start)
  const parts = []
  let at = 0
  for (const e of sorted) {
    if (e.start < at) throw new Error('overlapping edits')
    parts.push(buf.subarray(at, e.start), Buffer.isBuffer(e.text) ? e.text : Buffer.from(e.text, 'utf8'))
    at = e.end
  }
  parts.push(buf.subarray(at))
  return Buffer.concat(parts)
}

module.exports = { parse, plain, member, decode, applyEdits, JsonSyntaxError }
