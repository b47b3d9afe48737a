// @ts-check
'use strict'

// Splits a byte stream into lines as chunks arrive: the pieces of a line are kept and joined
// once, so a message costs linear time in its size (the SDK's stdio ReadBuffer concatenates the
// whole pending buffer on every chunk, quadratic on a multi-megabyte snapshot, and caps a line
// at 10 MB). Lines stay bytes; bin/jsonrpc.js reads them.

const { MessageLineError } = require('./jsonrpc.js')

const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024

class LineBuffer {
  /** @param {{maxLineBytes?: number}} [opts] longer lines are dropped and reported */
  constructor({ maxLineBytes = DEFAULT_MAX_LINE_BYTES } = {}) {
    this.maxLineBytes = maxLineBytes
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

  /**
   * The next complete line (a Buffer without its newline or a trailing CR), `null` when none is
   * complete; throws MessageLineError for a line that was too long.
   */
  readLine() {
    const item = this.ready.shift()
    if (item === undefined) return null
    if (item instanceof Error) throw item
    return item[item.length - 1] === 13 ? item.subarray(0, -1) : item
  }

  /**
   * Hands each complete line to `online` and each too-long line's MessageLineError to
   * `onerror`, in arrival order, until none is complete.
   * @param {(line: Buffer) => void} online
   * @param {(err: Error) => void} onerror
   */
  drain(online, onerror) {
    for (;;) {
      let line
      try {
        line = this.readLine()
      } catch (err) {
        onerror(err)
        continue
      }
      if (line === null) return
      online(line)
    }
  }

  clear() {
    this.partial = []
    this.partialBytes = 0
    this.ready = []
    this.skipping = false
  }
}

module.exports = { LineBuffer, DEFAULT_MAX_LINE_BYTES }
