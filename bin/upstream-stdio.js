// @ts-check
'use strict'

// The stdio upstream: a child process spoken to in JSON-RPC lines.
//
// Not the SDK's StdioClientTransport, because a transparent proxy needs what it cannot give: it
// JSON.parses every line and serializes every message again (integers beyond 2^53, 1e400 and the
// spelling of numbers change; lines over 10 MB are refused), it cannot stop reading while the
// client is not reading (backpressure), and it signals only its direct child, so a wrapper's
// children (npx -> node -> Chromium) outlived the proxy. The spawn itself is the same
// (cross-spawn, no shell, windowsHide).
//
// The interface the proxy uses, which any other upstream (e.g. an HTTP one) offers the same way:
//   start(): Promise<void>        rejects when the upstream cannot be started
//   send(text): boolean           one JSON text (string or Buffer, no newline); false: it was
//                                 queued, `ondrain` says when more is welcome
//   pause() / resume()            stop / restart delivering lines (the client is not reading)
//   close(): Promise<void>        stops it (idempotent); resolves once it is gone
//   exitDescription(): string     how it ended, for error messages (a child names its last stderr line)
//   exitCode                      its exit code once gone (a number), else undefined/null
// and the callbacks it calls:
//   online(line: Buffer)          one complete line (no newline), in arrival order
//   onerror(err)                  a MessageLineError (line too long) or a transport error
//   ondrain()                     after send() returned false, the queue emptied
//   onbroken(what)                a pipe closed while the process may still run ('closed its stdout')
//   onclose()                     the upstream is gone: no line will come any more
//   onrestart(reason)             (a remote upstream only) a new session replaced a lost one

const spawn = require('cross-spawn')

const { LineBuffer } = require('./line-buffer.js')

// How long the upstream gets after its stdin closes, then after SIGTERM, before SIGKILL
// (the escalation the SDK transport uses, with the same 2-second steps).
const SHUTDOWN_STEP_MS = 2000
const SHUTDOWN_POLL_MS = 25
// After the upstream process exits, how long its stdout may stay open (held by a process it
// started) before the upstream counts as gone anyway.
const EXIT_GRACE_MS = 1000
// The most of the upstream's last stderr line an error message quotes.
const STDERR_LINE_CHARS = 200

// POSIX: the upstream leads its own process group (spawn's `detached` calls setsid), so the
// stop signals reach everything it started. Windows has no process groups for this (and
// `detached` would open a console): there only the direct child is signalled.
const USE_PROCESS_GROUP = process.platform !== 'win32'

class StdioUpstream {
  /**
   * @param {object} opts
   * @param {string} opts.command
   * @param {string[]} opts.args
   * @param {NodeJS.ProcessEnv} [opts.env] the whole environment (default: the proxy's)
   * @param {number} [opts.stepMs] shutdown escalation step
   */
  constructor({ command, args, env, stepMs = SHUTDOWN_STEP_MS }) {
    this.command = command
    this.args = args
    this.env = env ?? { ...process.env }
    this.stepMs = stepMs
    this.lines = new LineBuffer()
    this.child = null
    this.exitCode = undefined
    this.exitSignal = undefined
    this.closing = null
    /** @type {NodeJS.Timeout | undefined} */
    this.exitTimer = undefined
    this.reportedClose = false
    /** The last line the upstream wrote to stderr (named when it dies), and the line being written. */
    this.lastStderrLine = ''
    this.stderrTail = ''
    /** @type {(line: Buffer) => void} */
    this.online = () => {}
    /** @type {(err: Error) => void} */
    this.onerror = () => {}
    /** @type {() => void} */
    this.ondrain = () => {}
    /** @type {(what: string) => void} */
    this.onbroken = () => {}
    /** @type {() => void} */
    this.onclose = () => {}
  }

  /** @returns {Promise<void>} */
  start() {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, this.args, {
        env: this.env,
        // stderr goes on to the proxy's stderr as it comes; its last line is kept, to name
        // why the upstream died.
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: process.platform === 'win32',
        detached: USE_PROCESS_GROUP,
      })
      this.child = child
      let started = false
      child.once('spawn', () => {
        started = true
        resolve()
      })
      child.on('error', (err) => {
        if (!started) reject(err)
        else this.onerror(err)
      })
      child.once('exit', (code, signal) => {
        this.exitCode = code
        this.exitSignal = signal
        // A child it left behind may hold stdout open: then 'close' never comes.
        this.exitTimer = setTimeout(() => this.closed(), EXIT_GRACE_MS)
      })
      // 'close': exited and every pipe closed, so every line it wrote has been read.
      child.once('close', () => this.closed())
      child.stdin.on('error', (err) => {
        if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.onbroken('closed its stdin')
        else this.onerror(err)
      })
      child.stdin.on('drain', () => this.ondrain())
      child.stdout.on('data', (chunk) => this.receive(chunk))
      child.stderr.on('data', (chunk) => this.stderr(chunk))
      child.stderr.on('error', () => {})
      child.stdout.on('error', (err) => this.onerror(err))
      child.stdout.once('end', () => this.onbroken('closed its stdout'))
    })
  }

  closed() {
    clearTimeout(this.exitTimer)
    if (this.reportedClose) return
    this.reportedClose = true
    this.onclose()
  }

  receive(chunk) {
    this.lines.append(chunk)
    this.lines.drain((line) => this.online(line), (err) => this.onerror(err))
  }

  /** Passes the upstream's stderr on, remembering its last non-empty line. */
  stderr(chunk) {
    process.stderr.write(chunk)
    const text = this.stderrTail + chunk.toString('utf8')
    const lines = text.split(/\r?\n/)
    // The last piece has no newline yet (bounded: only its end can become the last line).
    this.stderrTail = (lines.pop() ?? '').slice(-4 * STDERR_LINE_CHARS)
    for (let i = lines.length - 1; i >= 0; i--) {
      if (lines[i].trim() !== '') {
        this.lastStderrLine = lines[i].trim()
        break
      }
    }
  }

  send(text) {
    const stdin = this.child?.stdin
    if (!stdin || stdin.destroyed || stdin.writableEnded) {
      this.onbroken('closed its stdin')
      return true
    }
    if (typeof text === 'string') return stdin.write(`${text}\n`)
    stdin.write(text)
    return stdin.write('\n')
  }

  pause() {
    this.child?.stdout.pause()
  }

  resume() {
    this.child?.stdout.resume()
  }

  exitDescription() {
    const how = this.exitSignal ? `signal ${this.exitSignal}` : typeof this.exitCode === 'number' ? `exit code ${this.exitCode}` : 'exited'
    const last = (this.stderrTail.trim() || this.lastStderrLine).slice(0, STDERR_LINE_CHARS)
    return last ? `${how}; its last stderr line: ${JSON.stringify(last)}` : how
  }

  /** True while the upstream (its whole process group on POSIX) has a process left. */
  running() {
    const child = this.child
    if (!child?.pid) return false
    if (!USE_PROCESS_GROUP) return child.exitCode === null && child.signalCode === null
    try {
      process.kill(-child.pid, 0)
      return true
    } catch (err) {
      return err.code === 'EPERM'
    }
  }

  signal(name) {
    const child = this.child
    try {
      if (USE_PROCESS_GROUP) process.kill(-child.pid, name)
      else child.kill(name)
    } catch {
      // already gone
    }
  }

  /** Waits up to `ms` for everything to be gone; true when it is. */
  async gone(ms) {
    const end = Date.now() + ms
    while (this.running()) {
      if (Date.now() >= end) return false
      await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_POLL_MS))
    }
    return true
  }

  /** stdin EOF, then SIGTERM, then SIGKILL, each step to the whole group, until none is left. */
  close() {
    if (this.closing) return this.closing
    this.closing = (async () => {
      const child = this.child
      if (!child) return
      // The upstream may be stopped, but what it already wrote is not read any more.
      child.stdout.resume()
      try {
        child.stdin.end()
      } catch {
        // already closed
      }
      if (await this.gone(this.stepMs)) return
      this.signal('SIGTERM')
      if (await this.gone(this.stepMs)) return
      this.signal('SIGKILL')
      await this.gone(this.stepMs)
    })()
    return this.closing
  }
}

module.exports = { StdioUpstream, SHUTDOWN_STEP_MS }
