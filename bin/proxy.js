'use strict'

// The proxy: forwards every JSON-RPC message between the client (our stdin/stdout) and the
// upstream (a child process) untouched, except the responses to requests it chose to rewrite,
// tracked by request id. Forwarding happens at the transport level on purpose: the SDK's
// high-level Server/Client swallow logging/setLevel, replace progress tokens, time out after
// 60 s and drop unknown fields.

const v8 = require('node:v8')
const vm = require('node:vm')

const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js')
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js')

const { LineBuffer, BigResponse, envelopeProblem, RAW_LINE } = require('./line-buffer.js')
const { log } = require('./log.js')

const LIST_METHODS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'])

// JSON-RPC error codes the proxy itself answers with.
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const UPSTREAM_GONE = -32000

// How long the upstream gets after its stdin closes, then after SIGTERM, before SIGKILL
// (the SDK transport's close() does the same escalation with these 2-second steps).
const SHUTDOWN_STEP_MS = 2000
// An upstream's stdout ends (and writes to its stdin fail) just before it exits; when the process
// is still there this long after, it lives on but can never answer again.
const UNREACHABLE_GRACE_MS = 1000
// Upstream response lines from this size on are routed by their natively read envelope and
// stay Buffers (see BigResponse): small lines are cheaper to parse in JS than to cross twice.
const BIG_LINE_BYTES = 256 * 1024

/**
 * V8's `gc` function, or null. A big line's Buffers (the socket chunks, the joined line, the
 * filtered line) are external memory owned by small young JS objects: with the line never
 * becoming a string, so little JS is allocated that scavenges are rare and ~30 MB of dead
 * Buffers piled up between them (peak RSS 113 MB over the bench; 76 MB with a scavenge after
 * each big line, which costs well under a millisecond).
 */
function exposedGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc
  try {
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc')
    return typeof gc === 'function' ? gc : null
  } catch {
    return null
  }
}

/** The request's `arguments` as JSON, for the filter (`null` when it had none). */
function argumentsJson(entry) {
  return entry.arguments === undefined ? null : JSON.stringify(entry.arguments)
}

function idKey(id) {
  return `${typeof id}:${id}`
}

function isRequest(msg) {
  return typeof msg.method === 'string' && 'id' in msg
}

function isResponse(msg) {
  return !('method' in msg) && ('result' in msg || 'error' in msg)
}

class Proxy {
  /**
   * @param {object} opts
   * @param {string} opts.command upstream executable
   * @param {string[]} opts.args upstream arguments
   * @param {import('../index').FilterSession} opts.session native filter session
   * @param {(code: number) => void} [opts.exit] called once, when the proxy is done
   * @param {NodeJS.ReadableStream} [opts.stdin]
   * @param {NodeJS.WritableStream} [opts.stdout]
   * @param {boolean} [opts.filtering] false: forward every response untouched (level off)
   * @param {(tool: string) => boolean} [opts.isFilteredTool] which tools' results go to the filter
   * @param {{has(name: string): boolean, call(name: string, args: object): object}} [opts.localTools]
   *   tools the proxy answers itself (expand_snapshot, search_snapshot)
   * @param {import('./upstream-http').HttpUpstream} [opts.remote] a remote upstream, instead of
   *   the command: its send() settles a request when answered, or rejects with the reason
   */
  constructor(opts) {
    this.command = opts.command
    this.args = opts.args
    this.session = opts.session
    this.exit = opts.exit ?? ((code) => process.exit(code))
    this.stdin = opts.stdin ?? process.stdin
    this.stdout = opts.stdout ?? process.stdout
    this.filtering = opts.filtering ?? true
    /** Which tools' results go to the native filter (all, when not given). */
    this.isFilteredTool = opts.isFilteredTool ?? (() => true)
    /** Client requests waiting for the upstream's answer: key -> { id, method, tool, arguments } */
    this.pending = new Map()
    /** Requests the proxy answers itself (its own tools), by tool name. */
    this.localTools = opts.localTools ?? null
    this.closing = null
    this.upstreamExited = false
    this.bigLineBytes = opts.bigLineBytes ?? BIG_LINE_BYTES
    this.gc = undefined
    this.gcScheduled = false
    this.remote = opts.remote ?? null
  }

  async start() {
    if (this.remote) {
      this.upstream = this.remote
      this.upstream.onmessage = (msg) => this.fromUpstream(msg)
      await this.upstream.start()
      this.upstreamStarted = true
      return this.startClient()
    }
    this.upstream = new StdioClientTransport({
      command: this.command,
      args: this.args,
      // The caller's whole environment: the SDK would otherwise pass only a safe subset.
      env: { ...process.env },
      stderr: 'inherit',
    })
    const session = this.session
    const bigLines = typeof session?.peekResponse === 'function' && typeof session.filterToolResponseBuffer === 'function'
    this.upstream._readBuffer = new LineBuffer({
      bigLine: bigLines ? { bytes: this.bigLineBytes, peek: (line) => session.peekResponse(line) } : null,
    })
    this.upstream.onmessage = (msg) => this.fromUpstream(msg)
    this.upstream.onerror = (err) => this.upstreamError(err)
    this.upstream.onclose = () => this.upstreamClosed()
    try {
      await this.upstream.start()
    } catch (err) {
      log(`cannot start upstream ${JSON.stringify(this.command)}: ${err.message}`)
      this.exit(1)
      return false
    }
    this.upstreamStarted = true
    const child = this.upstream._process
    child?.once('exit', (code, signal) => {
      this.exitCode = code
      this.exitSignal = signal
    })
    child?.stdout?.once('end', () => this.upstreamMayBeUnreachable('closed its stdout'))
    return this.startClient()
  }

  async startClient() {
    this.client = new StdioServerTransport(this.stdin, this.stdout)
    this.client._readBuffer = new LineBuffer()
    this.client.onmessage = (msg) => this.fromClient(msg)
    this.client.onerror = (err) => this.clientError(err)
    // The SDK transport does not notice stdin EOF: the client closing its end means goodbye.
    this.stdin.once('end', () => this.shutdown(0, 'client closed stdin'))
    this.stdout.on('error', (err) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.shutdown(0, 'client went away (stdout closed)')
      else log(`stdout error: ${err.message}`)
    })
    await this.client.start()
    return true
  }

  // ---- client -> upstream ----

  fromClient(msg) {
    if (msg.batch) {
      for (const item of msg.batch) {
        const problem = envelopeProblem(item)
        if (problem) this.replyError(item?.id ?? null, INVALID_REQUEST, `Invalid Request: ${problem}`)
        else this.fromClient(item)
      }
      return
    }
    if (isRequest(msg)) {
      if (this.localTools && msg.method === 'tools/call' && this.localTools.has(msg.params?.name)) {
        this.answerLocally(msg)
        return
      }
      if (this.upstreamExited || this.closing) {
        this.replyError(msg.id, UPSTREAM_GONE, `upstream MCP server is not running (${this.goneDescription()})`)
        return
      }
      this.pending.set(idKey(msg.id), this.describeRequest(msg))
    } else if (msg.method === 'notifications/cancelled') {
      // The upstream may now never answer: nothing to fail on its behalf later.
      const requestId = msg.params?.requestId
      if (requestId !== undefined) this.pending.delete(idKey(requestId))
    }
    this.toUpstream(msg)
  }

  describeRequest(msg) {
    const entry = { id: msg.id, method: msg.method }
    if (msg.method === 'tools/call' && typeof msg.params?.name === 'string') {
      entry.tool = msg.params.name
      if (msg.params.arguments !== undefined) entry.arguments = msg.params.arguments
    }
    return entry
  }

  toUpstream(msg) {
    this.upstream.send(msg).catch((err) => {
      // A remote upstream rejects a request it cannot answer with the reason, already logged.
      if (!err.logged) log(`could not write to upstream: ${err.message}`)
      if (isRequest(msg)) {
        this.pending.delete(idKey(msg.id))
        this.replyError(msg.id, UPSTREAM_GONE, err.upstreamMessage ?? 'upstream MCP server is not accepting input')
      }
    })
  }

  clientError(err) {
    if (err.name !== 'MessageLineError') {
      log(`client transport error: ${err.message}`)
      return
    }
    log(`bad message from client (${err.bytes} bytes): ${err.message}`)
    if (err.kind === 'parse') this.replyError(null, PARSE_ERROR, `Parse error: ${err.message}`)
    else this.replyError(err.id, INVALID_REQUEST, `Invalid Request: ${err.message}`)
  }

  // ---- upstream -> client ----

  fromUpstream(msg) {
    if (msg instanceof BigResponse) {
      this.fromUpstreamBig(msg)
      return
    }
    if (msg.batch) {
      for (const item of msg.batch) this.fromUpstream(item)
      return
    }
    if (isResponse(msg) && 'id' in msg) {
      const key = idKey(msg.id)
      const entry = this.pending.get(key)
      if (entry) {
        this.pending.delete(key)
        if (this.filtering && 'result' in msg) msg = this.rewrite(entry, msg)
      }
    }
    this.toClient(msg)
  }

  /** A big response line: forwarded as its bytes, or filtered from them, in arrival order. */
  fromUpstreamBig(big) {
    this.collectBigLineSoon()
    const key = idKey(big.id)
    const entry = this.pending.get(key)
    if (!entry) return this.toClient(big.line)
    this.pending.delete(key)
    if (!this.filtering || !big.hasResult) return this.toClient(big.line)
    if (entry.method === 'tools/call' && entry.tool !== undefined) {
      if (!this.isFilteredTool(entry.tool)) return this.toClient(big.line)
      const filter = (args) => this.session.filterToolResponseBuffer(entry.tool, big.line, args)
      return this.toClient(this.filterResponseLine(entry, big.line, filter))
    }
    if (!LIST_METHODS.has(entry.method)) return this.toClient(big.line)
    // A big list result is compressed from its parsed form, as on the small-line path.
    let msg
    try {
      msg = big.toMessage()
    } catch (err) {
      this.upstreamError(err)
      return undefined
    }
    return this.toClient(this.rewrite(entry, msg))
  }

  /** A minor GC once the current big line is handled and written (see exposedGc). */
  collectBigLineSoon() {
    if (this.gcScheduled) return
    if (this.gc === undefined) this.gc = exposedGc()
    if (!this.gc) return
    this.gcScheduled = true
    setImmediate(() => {
      this.gcScheduled = false
      this.gc({ type: 'minor' })
    })
  }

  /**
   * The filtered response, or the original when nothing changed or the filter failed. A
   * tools/call response that arrived as one line goes to the filter as that line and comes back
   * as a line (a string), written as it is: a multi-megabyte result is then neither serialized
   * again for the filter nor parsed back and serialized again for the client.
   */
  rewrite(entry, msg) {
    if (entry.method === 'tools/call' && entry.tool !== undefined) {
      // Results no filter touches (screenshots, clicks without snapshot…) never cross.
      if (!this.isFilteredTool(entry.tool)) return msg
      const line = msg[RAW_LINE]
      if (line !== undefined && typeof this.session.filterToolResponse === 'function') {
        return this.filterResponseLine(entry, line, (args) => this.session.filterToolResponse(entry.tool, line, args))
      }
    }
    try {
      let out = null
      if (entry.method === 'tools/call' && entry.tool !== undefined) {
        out = this.session.filterToolResult(entry.tool, JSON.stringify(msg.result), argumentsJson(entry))
        this.logStatsLine()
      } else if (LIST_METHODS.has(entry.method)) {
        out = this.session.compressListResult(entry.method, JSON.stringify(msg.result))
      }
      if (out === null || out === undefined) return msg
      return { ...msg, result: JSON.parse(out) }
    } catch (err) {
      this.filterFailed(entry, err)
      return msg
    }
  }

  /**
   * A tools/call response line (a string or a Buffer, as the upstream wrote it) through
   * `filter(argumentsJson)`: the filtered line, or the line itself when nothing changed or the
   * filter failed.
   */
  filterResponseLine(entry, line, filter) {
    try {
      const response = filter(argumentsJson(entry))
      this.logStatsLine()
      return response ?? line
    } catch (err) {
      this.filterFailed(entry, err)
      return line
    }
  }

  filterFailed(entry, err) {
    const what = entry.tool === undefined ? entry.method : `${entry.method} ${JSON.stringify(entry.tool)}`
    log(`filter failed on ${what} (forwarding the original): ${err.code ? `${err.code}: ` : ''}${err.message}`)
  }

  logStatsLine() {
    const statsLine = this.session.takeStatsLine?.()
    if (statsLine) log(statsLine)
  }

  upstreamError(err) {
    // Before the child runs, start() reports the failure itself, in one line.
    if (!this.upstreamStarted) return
    if (err.name === 'MessageLineError') {
      log(`upstream printed a line that is not a JSON-RPC message (${err.bytes} bytes, dropped): ${err.message}${err.preview ? ` — ${JSON.stringify(err.preview)}` : ''}`)
      return
    }
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') {
      this.upstreamMayBeUnreachable('closed its stdin')
      return
    }
    log(`upstream transport error: ${err.message}`)
  }

  upstreamClosed() {
    clearTimeout(this.unreachableTimer)
    this.upstreamExited = true
    if (this.closing) return
    const why = this.exitDescription()
    this.failPending(`upstream MCP server exited (${why}) before answering`)
    log(`upstream exited (${why})`)
    const code = typeof this.exitCode === 'number' && this.exitCode !== 0 ? this.exitCode : 1
    this.shutdown(code, null)
  }

  /** A closed pipe usually means the upstream is exiting: give its exit a moment to show. */
  upstreamMayBeUnreachable(what) {
    if (this.unreachableTimer || this.upstreamExited || this.closing) return
    this.unreachableTimer = setTimeout(() => this.upstreamUnreachable(what), UNREACHABLE_GRACE_MS)
  }

  /** The upstream closed one of its pipes and kept running: it can never answer again. */
  upstreamUnreachable(what) {
    if (this.upstreamExited || this.closing) return
    this.stopReason = `it ${what}`
    this.failPending(`upstream MCP server ${what} before answering`)
    log(`upstream ${what} but is still running: stopping it`)
    this.shutdown(1, null)
  }

  failPending(message) {
    for (const entry of this.pending.values()) this.replyError(entry.id, UPSTREAM_GONE, `${message} ${entry.method}`)
    this.pending.clear()
  }

  exitDescription() {
    if (this.exitSignal) return `signal ${this.exitSignal}`
    if (typeof this.exitCode === 'number') return `exit code ${this.exitCode}`
    return 'exited'
  }

  /** Why a request that arrives now cannot be forwarded. */
  goneDescription() {
    if (this.upstreamExited) return this.exitDescription()
    return this.stopReason ?? 'the proxy is shutting down'
  }

  // ---- replies the proxy makes itself ----

  /** Sends a message, or a line already serialized (a string or a Buffer): all in call order. */
  toClient(msg) {
    if (this.stdout.destroyed || this.stdout.writableEnded) return
    // The transport writes synchronously too, so lines and messages keep their order; a write
    // error surfaces as the stream's 'error' event either way.
    if (typeof msg === 'string') this.stdout.write(`${msg}\n`)
    else if (Buffer.isBuffer(msg)) {
      this.stdout.write(msg)
      this.stdout.write('\n')
    } else this.client.send(msg).catch((err) => log(`could not write to client: ${err.message}`))
  }

  replyError(id, code, message) {
    this.toClient({ jsonrpc: '2.0', id, error: { code, message } })
  }

  answerLocally(msg) {
    Promise.resolve()
      .then(() => this.localTools.call(msg.params.name, msg.params.arguments ?? {}))
      .then(
        (result) => this.toClient({ jsonrpc: '2.0', id: msg.id, result }),
        (err) => this.replyError(msg.id, -32603, `Internal error: ${err.message}`),
      )
  }

  // ---- lifecycle ----

  /** The one way out: idempotent, stops the upstream (stdin end, SIGTERM, SIGKILL), then exits. */
  shutdown(code, reason) {
    if (this.closing) return this.closing
    if (reason) log(`shutting down: ${reason}`)
    this.closing = (async () => {
      try {
        const summary = this.session?.summary()
        if (summary) log(summary)
      } catch {
        // a summary is not worth failing the shutdown for
      }
      if (!this.upstreamExited && this.upstream) {
        await this.upstream.close().catch(() => {})
      }
      await flush(this.stdout)
      this.exit(code)
    })()
    return this.closing
  }
}

function flush(stream) {
  return new Promise((resolve) => {
    if (!stream.writableNeedDrain || stream.destroyed) return resolve()
    const timer = setTimeout(resolve, SHUTDOWN_STEP_MS)
    stream.once('drain', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

module.exports = { Proxy, LIST_METHODS }
