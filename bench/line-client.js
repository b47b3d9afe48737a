'use strict'

// The stdio JSON-RPC client of the benches (bench/run.js, bench/proxy-overhead.js, and the
// session replays of bench/replay.js).

/** Sequential JSON-RPC over a line stream: call(line, id) resolves with the response line. */
function lineClient(readable, write) {
  let buf = ''
  let waiting = null
  readable.setEncoding('utf8')
  readable.on('data', (chunk) => {
    buf += chunk
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      // One request is outstanding at a time: the response is the line carrying its id.
      if (waiting && line.slice(0, 200).includes(`"id":${waiting.id}`)) {
        const w = waiting
        waiting = null
        w.resolve(line)
      }
    }
  })
  return {
    call(line, id) {
      return new Promise((resolve) => {
        waiting = { id, resolve }
        write(line)
      })
    },
  }
}

module.exports = { lineClient }
