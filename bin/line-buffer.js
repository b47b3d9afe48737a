'use strict'

// A drop-in for the SDK's stdio ReadBuffer (append / readMessage / clear), used by both stdio
// transports of the proxy. Why not the SDK's: it re-concatenates the whole pending buffer on
// every chunk (quadratic on a multi-megabyte snapshot), caps a line at 10 MB, and drops any
// message its strict zod schemas reject (unknown top-level fields, fractional ids), which a
// transparent proxy must forward. This one splits lines as chunks arrive, validates only the
// JSON-RPC envelope, and reports a bad line as an error carrying what a reply needs.

const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024

/**
 * A message's line as it arrived (its JSON text), kept on the parsed message under this
 * non-enumerable key: the proxy hands a big tools/call response to the filter as it came and
 * forwards an unchanged one as it came, instead of serializing it again.
 */
const RAW_LINE = Symbol('rawLine')

class MessageLineError extends Error {
  constructor(kind, message, details = {}) {
    super(message)
    this.name = 'MessageLineError'
    /** 'parse' (not JSON), 'invalid' (JSON but not JSON-RPC) or 'too-large' */
    this.kind = kind
    /** The request id when one could be read, so an error reply can name it. */
    this.id = details.id ?? null
    /** Length in bytes of the offending line. */
    this.bytes = details.bytes ?? 0
    /** A short prefix of the line, for the log. */
    this.preview = details.preview ?? ''
  }
}

function isValidId(id) {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))
}

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

/**
 * A big response line kept as its bytes (no trailing newline or CR): its envelope was read
 * natively, so it is routed by `id` and forwarded or filtered as it came, without ever becoming
 * a JS string or a parsed message (V8 would hold both in large-object space until a major GC).
 */
class BigResponse {
  constructor(line, id, hasResult) {
    /** @type {Buffer} */
    this.line = line
    /** @type {string | number} */
    this.id = id
    this.hasResult = hasResult
  }

  /** The message as the small-line path reads it, for the rare routes that need it parsed. */
  toMessage() {
    const text = this.line.toString('utf8')
    const msg = parseLine(text, this.line.length)
    if (!msg.batch) Object.defineProperty(msg, RAW_LINE, { value: text })
    return msg
  }
}

class LineBuffer {
  /**
   * @param {object} [opts]
   * @param {number} [opts.maxLineBytes] longer lines are dropped and reported
   * @param {{bytes: number, peek: (line: Buffer) => ({id: string | number, hasResult: boolean} | null)}} [opts.bigLine]
   *   lines of at least `bytes` whose envelope `peek` reads as a response come out as BigResponse;
   *   any other line (and every line without this option) is parsed as usual
   */
  constructor({ maxLineBytes = DEFAULT_MAX_LINE_BYTES, bigLine = null } = {}) {
    this.maxLineBytes = maxLineBytes
    this.bigLine = bigLine
    this.partial = []
    this.partialBytes = 0
    this.skipping = false
    this.skippedBytes = 0
    /** Complete lines (Buffers) or errors, in arrival order. */
    this.ready = []
  }

  append(chunk) {
    let start = 0
    let nl = chunk.indexOf(10, start)
    while (nl !== -1) {
      this.takePiece(chunk.subarray(start, nl))
      this.finishLine()
      start = nl + 1
      nl = chunk.indexOf(10, start)
    }
    if (start < chunk.length) this.takePiece(chunk.subarray(start))
  }

  takePiece(piece) {
    if (this.skipping) {
      this.skippedBytes += piece.length
      return
    }
    if (this.partialBytes + piece.length > this.maxLineBytes) {
      // Too long to hold: drop it as it streams, report it once the line ends.
      this.skipping = true
      this.skippedBytes = this.partialBytes + piece.length
      this.partial = []
      this.partialBytes = 0
      return
    }
    this.partial.push(piece)
    this.partialBytes += piece.length
  }

  finishLine() {
    if (this.skipping) {
      this.ready.push(
        new MessageLineError('too-large', `message of ${this.skippedBytes} bytes exceeds the ${this.maxLineBytes}-byte limit`, {
          bytes: this.skippedBytes,
        }),
      )
      this.skipping = false
      this.skippedBytes = 0
      return
    }
    const line = this.partial.length === 1 ? this.partial[0] : Buffer.concat(this.partial, this.partialBytes)
    this.partial = []
    this.partialBytes = 0
    this.ready.push(line)
  }

  /** The next message, `null` when none is complete; throws MessageLineError for a bad line. */
  readMessage() {
    while (this.ready.length > 0) {
      const item = this.ready.shift()
      if (item instanceof Error) throw item
      if (this.bigLine && item.length >= this.bigLine.bytes) {
        const line = item[item.length - 1] === 13 ? item.subarray(0, -1) : item
        const envelope = this.bigLine.peek(line)
        if (envelope) return new BigResponse(line, envelope.id, envelope.hasResult)
      }
      let text = item.toString('utf8')
      if (text.endsWith('\r')) text = text.slice(0, -1)
      if (text.trim() === '') continue
      const msg = parseLine(text, item.length)
      if (!msg.batch) Object.defineProperty(msg, RAW_LINE, { value: text })
      return msg
    }
    return null
  }

  clear() {
    this.partial = []
    this.partialBytes = 0
    this.ready = []
    this.skipping = false
  }
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

function parseLine(text, bytes) {
  let msg
  try {
    msg = JSON.parse(text)
  } catch (err) {
    throw new MessageLineError('parse', `not JSON: ${jsonErrorWithoutInput(err)}`, { bytes, preview: preview(text) })
  }
  if (Array.isArray(msg)) {
    // JSON-RPC batches (MCP 2025-03-26): hand each element on as its own message.
    if (msg.length === 0) throw new MessageLineError('invalid', 'empty batch', { bytes, preview: preview(text) })
    return { batch: msg }
  }
  const problem = envelopeProblem(msg)
  if (problem) {
    const id = msg && typeof msg === 'object' && isValidId(msg.id) ? msg.id : null
    throw new MessageLineError('invalid', `not a JSON-RPC message: ${problem}`, { id, bytes, preview: preview(text) })
  }
  return msg
}

module.exports = { LineBuffer, BigResponse, MessageLineError, envelopeProblem, DEFAULT_MAX_LINE_BYTES, RAW_LINE }
