'use strict'
// The chrome-devtools-mcp tools/call results of the corpus (plain and structured passes), for
// the benches that race filters on them (bench/seed.js, bench/ab.js).
const fs = require('node:fs')
const path = require('node:path')

/**
 * Every tools/call capture with a result under `corpus`'s chrome-devtools-mcp directories that
 * `keep(file, tool)` keeps (`file` relative to `corpus`), sorted by file: { file, tool, json }
 * with the result as JSON. Unreadable files are passed over.
 */
function toolCallResults(corpus, keep = () => true) {
  const out = []
  for (const dir of ['chrome-devtools-mcp', 'chrome-devtools-mcp-structured']) {
    const stack = [path.join(corpus, dir)]
    while (stack.length > 0) {
      const d = stack.pop()
      if (!fs.existsSync(d)) continue
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const full = path.join(d, e.name)
        if (e.isDirectory()) stack.push(full)
        else if (e.name.endsWith('.json')) {
          let doc
          try {
            doc = JSON.parse(fs.readFileSync(full, 'utf8'))
          } catch {
            continue
          }
          const tool = doc?.request?.params?.name
          if (doc?.request?.method !== 'tools/call' || !doc.result?.content) continue
          const file = path.relative(corpus, full)
          if (!keep(file, tool)) continue
          out.push({ file, tool, json: JSON.stringify(doc.result) })
        }
      }
    }
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : 1))
}

module.exports = { toolCallResults }
