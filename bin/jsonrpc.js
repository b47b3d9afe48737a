// @ts-check
'use strict'

// Reads what the proxy needs of one JSON-RPC text (kind, method, id) without changing the text:
// the proxy forwards the text itself, so a message it does not rewrite arrives byte for byte.
// JSON.parse only validates and gives the structure; anything it would lose (integers beyond
// 2^53, 1e400, the spelling of a number) is read from the text by a small scanner instead:
// requests are keyed by the id's exact JSON text, and the proxy's own replies echo that text.

class MessageLineError extends Error {
  constructor(kind, message, details = {}) {
    super(message)
    this.name = 'MessageLineError'
    /** 'parse' (not JSON), 'invalid' (JSON but not JSON-RPC) or 'too-large' */
    this.kind = kind
    /** The request id's JSON text when one could be read, so an error reply can name it. */
    this.idJson = details.idJson ?? null
    /** Length in bytes of the offending line. */
    this.bytes = details.bytes ?? 0
    /** A short prefix of the line, for the log. */
    this.preview = details.preview ?? ''
  }
}

// ---- a scanner over text JSON.parse has already accepted ----

function skipSpace(s, i) {
  for (;;) {
    const c = s.charCodeAt(i)
    if (c === 32 || c === 9 || c === 10 || c === 13) i++
    else return i
  }
}

/** Index after the string opening at `i`. */
function stringEnd(s, i) {
  let from = i + 1
  for (;;) {
    const quote = s.indexOf('"', from)
    // (Only ever given valid JSON; the end of the text stops it whatever it is given.)
    if (quote === -1) return s.length
    let backslashes = 0
    while (s.charCodeAt(quote - 1 - backslashes) === 92) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** Index after the value starting at `i` (no leading space). */
function valueEnd(s, i) {
  const c = s.charCodeAt(i)
  if (c === 34) return stringEnd(s, i)
  if (c === 123 || c === 91) {
    let depth = 0
    for (;;) {
      const ch = s.charCodeAt(i)
      if (ch === 34) {
        i = stringEnd(s, i)
        continue
      }
      if (Number.isNaN(ch)) return s.length
      if (ch === 123 || ch === 91) depth++
      else if (ch === 125 || ch === 93) {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
  }
  // a number, true, false or null
  for (;;) {
    const ch = s.charCodeAt(i)
    if (ch === 44 || ch === 125 || ch === 93 || ch === 32 || ch === 9 || ch === 10 || ch === 13 || Number.isNaN(ch)) return i
    i++
  }
}

function decodeKey(json) {
  try {
    return JSON.parse(json)
  } catch {
    return undefined
  }
}

/**
 * The [start, end) span of the value of member `key` of the object text `s` (valid JSON); the
 * last one when the key repeats, as JSON.parse reads it; null when absent or `s` is no object.
 */
function memberSpan(s, key) {
  let i = skipSpace(s, 0)
  if (s.charCodeAt(i) !== 123) return null
  let found = null
  i = skipSpace(s, i + 1)
  if (s.charCodeAt(i) === 125) return null
  for (;;) {
    if (s.charCodeAt(i) !== 34) return found
    const keyEnd = stringEnd(s, i)
    const raw = s.slice(i + 1, keyEnd - 1)
    const name = raw.includes('\\') ? decodeKey(s.slice(i, keyEnd)) : raw
    i = skipSpace(s, skipSpace(s, keyEnd) + 1) // past the colon
    const end = valueEnd(s, i)
    if (name === key) found = [i, end]
    i = skipSpace(s, end)
    if (s.charCodeAt(i) !== 44) return found
    i = skipSpace(s, i + 1)
  }
}

/** The exact text of member `key` of the object text `s`, or undefined. */
function memberText(s, key) {
  const span = memberSpan(s, key)
  return span ? s.slice(span[0], span[1]) : undefined
}

/** The texts of the elements of the array text `s` (valid JSON). */
function elementTexts(s) {
  const out = []
  let i = skipSpace(s, skipSpace(s, 0) + 1)
  if (s.charCodeAt(i) === 93) return out
  for (;;) {
    const end = valueEnd(s, i)
    if (end <= i) return out
    out.push(s.slice(i, end))
    i = skipSpace(s, end)
    if (s.charCodeAt(i) !== 44) return out
    i = skipSpace(s, i + 1)
  }
}

// ---- ids ----

/**
 * The pending-map key of an id given its parsed value and its JSON text: a string by its value
 * (escapes spell the same string), a number by its exact text (9007199254740993 and
 * 9007199254740992 are two ids, as are 1 and 1.0).
 */
function idKey(value, json) {
  return typeof value === 'string' ? `s${value}` : `n${json}`
}

/** The key of an id known by its JSON text only (the native envelope reader gives that). */
function idKeyOfJson(json) {
  return json.charCodeAt(0) === 34 ? idKey(JSON.parse(json), json) : `n${json}`
}

/**
 * A numeric id's exact value as text, or null for a string (or anything else): `1`, `1.0` and
 * `10e-1` give one, 9007199254740993 and 9007199254740992 two. An upstream's JSON writer may
 * respell the id it echoes (a JS server answers `1.0` as `1`); the answer is matched by value
 * only when no id has its exact text (the Router's `number_value` reads a cancellation so).
 */
function numberValueKey(json) {
  const m = /^\s*(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?\s*$/.exec(json)
  if (!m) return null
  const frac = m[3] ?? ''
  const digits = `${m[2]}${frac}`.replace(/^0+/, '')
  if (digits === '') return '0'
  const significant = digits.replace(/0+$/, '')
  // BigInt: an exponent past a double's range keeps its exact value.
  const exponent = BigInt(m[4] ?? 0) + BigInt(digits.length - significant.length) - BigInt(frac.length)
  return `${m[1]}${significant}e${exponent}`
}

/** The id's JSON text: a string's own serialization, a number's text as it came. */
function idJsonIn(text, msg) {
  if (typeof msg.id === 'string') return JSON.stringify(msg.id)
  return memberText(text, 'id')
}

// ---- messages ----

/** Checks the JSON-RPC 2.0 envelope only; method params and results pass as they are. */
function envelopeProblem(msg) {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return 'not a JSON-RPC object'
  if (msg.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"'
  if ('method' in msg) {
    if (typeof msg.method !== 'string') return 'method must be a string'
    if ('id' in msg && !isValidId(msg.id)) return 'id must be a string or a number'
    return null
  }
  if ('result' in msg || 'error' in msg) {
    if ('error' in msg && (msg.error === null || typeof msg.error !== 'object')) return 'error must be an object'
    return null
  }
  return 'neither a request, a notification nor a response'
}

// Any JSON number is an id (1E400 too, which JSON.parse reads as Infinity): it is keyed and
// echoed by its text.
function isValidId(id) {
  return typeof id === 'string' || typeof id === 'number'
}

function preview(text) {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text
}

/**
 * A JSON.parse error without the input: V8 quotes the text around the error ("Unexpected token
 * 'x', "...secret..." is not valid JSON"), and that text may be a request's arguments, which
 * must reach neither the log nor an error reply.
 */
function jsonErrorWithoutInput(err) {
  const message = err.message
  if (!/ is not valid JSON$/.test(message)) return message
  const token = /^Unexpected token '([^']{1,2})'/u.exec(message)
  return token ? `Unexpected token ${JSON.stringify(token[1])}` : 'invalid JSON'
}

/**
 * One JSON-RPC message as the proxy routes it. `text` is forwarded as it is; `msg` is its
 * parsed form, for the routing decisions only (never serialized again).
 */
class Message {
  constructor(text, msg) {
    this.text = text
    /** @type {Buffer | undefined} The line's bytes when the message is a whole line (the proxy forwards those). */
    this.line = undefined
    this.msg = msg
    this.method = typeof msg.method === 'string' ? msg.method : undefined
    this.hasId = 'id' in msg
    /** The id's JSON text (exact), or undefined. */
    this.idJson = this.hasId ? idJsonIn(text, msg) : undefined
    this.key = this.hasId ? idKey(msg.id, this.idJson) : undefined
  }

  get isRequest() {
    return this.method !== undefined && this.hasId
  }

  get isResponse() {
    return this.method === undefined && ('result' in this.msg || 'error' in this.msg)
  }

  /** The exact text of a member of `params`, or undefined. */
  paramText(name) {
    const params = memberText(this.text, 'params')
    return params === undefined ? undefined : memberText(params, name)
  }
}

/**
 * Reads one line's text: a Message, or `{ batch: [text, ...] }` for a JSON-RPC batch (its
 * elements are then read one by one with `readMessage`). Throws MessageLineError.
 */
function readLine(text, bytes = Buffer.byteLength(text)) {
  let msg
  try {
    msg = JSON.parse(text)
  } catch (err) {
    throw new MessageLineError('parse', `not JSON: ${jsonErrorWithoutInput(err)}`, { bytes, preview: preview(text) })
  }
  if (Array.isArray(msg)) {
    // JSON-RPC batches (MCP 2025-03-26): each element goes on as its own message, as its text.
    if (msg.length === 0) throw new MessageLineError('invalid', 'empty batch', { bytes, preview: preview(text) })
    return { batch: elementTexts(text) }
  }
  return readParsed(text, msg, bytes)
}

/** One batch element (or any JSON text) as a Message; throws MessageLineError when invalid. */
function readMessage(text) {
  return readParsed(text, JSON.parse(text), Buffer.byteLength(text))
}

function readParsed(text, msg, bytes) {
  const problem = envelopeProblem(msg)
  if (problem) {
    const idJson = msg && typeof msg === 'object' && !Array.isArray(msg) && isValidId(msg.id) ? idJsonIn(text, msg) : null
    throw new MessageLineError('invalid', `not a JSON-RPC message: ${problem}`, { idJson, bytes, preview: preview(text) })
  }
  return new Message(text, msg)
}

/** `text` (a JSON object) with the value of its member `key` replaced by `json`. */
function replaceMember(text, key, json) {
  const span = memberSpan(text, key)
  if (!span) return null
  return text.slice(0, span[0]) + json + text.slice(span[1])
}

module.exports = {
  MessageLineError,
  Message,
  readLine,
  readMessage,
  envelopeProblem,
  memberSpan,
  memberText,
  elementTexts,
  replaceMember,
  idKey,
  idKeyOfJson,
  idJsonIn,
  numberValueKey,
}
