#!/usr/bin/env node
'use strict'

const { findCorpus, BESIDE } = require('./corpus.js')

// The sessions part of `npm run bench` (also `node bench/sessions.js [DIR ...]`): replays every
// recorded session (the JSONL of ../shared/corpus/sessions/, and /work/captured when present,
// or the directories given) through the real bin in front of a replaying upstream
// (__test__/fixtures/fixture-server.js answering each step with its recorded result), at each
// level, with snapshot deltas off and on, and prints the o200k tokens the agent receives:
// direct (no proxy), light, moderate, moderate with deltas, aggressive, aggressive with deltas;
// over whole sessions and over the snapshots that had a predecessor of the same page. Judged
// against the targets of the deltas issue; a benchmark, never a test.

const path = require('node:path')

const { sessionSets, readSession, snapshotBody, replay, defaultDirs } = require('./replay.js')

const CONFIGS = [
  { name: 'direct', args: null },
  { name: 'light', args: ['--filter-level=light'] },
  { name: 'moderate', args: ['--filter-level=moderate', '--snapshot-deltas=off'] },
  { name: 'moderate + deltas', args: ['--filter-level=moderate', '--snapshot-deltas=on'] },
  { name: 'aggressive', args: ['--filter-level=aggressive', '--snapshot-deltas=off'] },
  { name: 'aggressive + deltas', args: ['--filter-level=aggressive', '--snapshot-deltas=on'] },
]

/** Which steps carry a snapshot with a predecessor of the same page, and which repeat it unchanged. */
function classify(steps) {
  const last = new Map()
  const kinds = new Map()
  for (const s of steps) {
    if (s.tool === 'tools/list') continue
    const body = snapshotBody(s.result)
    if (body === null) continue
    const page = JSON.stringify(s.args?.pageId ?? null)
    if (last.has(page)) kinds.set(s.step, last.get(page) === body ? 'unchanged' : 'predecessor')
    else kinds.set(s.step, 'first')
    last.set(page, body)
  }
  return kinds
}

function pct(before, after) {
  return before === 0 ? 0 : ((before - after) / before) * 100
}

async function runSessions({ dirs, write = (s) => process.stdout.write(s) }) {
  let count
  try {
    ;({ countTokens: count } = require('gpt-tokenizer/encoding/o200k_base'))
  } catch {
    write('(gpt-tokenizer is not installed: run npm install for the o200k counts)\n')
    return
  }
  const sets = sessionSets(dirs)
  if (sets.length === 0) {
    write('(no recorded sessions found)\n')
    return
  }
  for (const { set, dir, files } of sets) {
    write(`\n### Sessions: ${set} (${dir}, ${files.length} sessions)\n\n`)
    const totals = CONFIGS.map(() => ({ all: 0, predecessor: 0 }))
    const unchangedMax = CONFIGS.map(() => 0)
    let predecessors = 0
    let unchanged = 0
    const rows = []
    for (const file of files) {
      const steps = readSession(file)
      const kinds = classify(steps)
      const perConfig = []
      for (const [i, config] of CONFIGS.entries()) {
        const got = await replay(steps, config.args)
        const t = { all: 0, predecessor: 0 }
        for (const { step, text } of got) {
          const tokens = count(text)
          t.all += tokens
          const kind = kinds.get(step.step)
          if (kind === 'predecessor' || kind === 'unchanged') t.predecessor += tokens
          if (kind === 'unchanged') unchangedMax[i] = Math.max(unchangedMax[i], tokens)
        }
        totals[i].all += t.all
        totals[i].predecessor += t.predecessor
        perConfig.push(t)
      }
      for (const kind of kinds.values()) {
        if (kind !== 'first') predecessors++
        if (kind === 'unchanged') unchanged++
      }
      rows.push([path.basename(file), ...perConfig.map((t) => t.all.toLocaleString('en-US'))])
    }
    const head = ['session', ...CONFIGS.map((c) => c.name)]
    const line = (cells) => `| ${cells.join(' | ')} |`
    write(`${line(head)}\n${line(head.map(() => '---'))}\n`)
    for (const r of rows) write(`${line(r)}\n`)
    write(`${line(['**all sessions**', ...totals.map((t) => `**${t.all.toLocaleString('en-US')}**`)])}\n`)
    write(`${line([`snapshots with a predecessor (${predecessors})`, ...totals.map((t) => t.predecessor.toLocaleString('en-US'))])}\n`)
    write(`${line([`largest unchanged re-snapshot (${unchanged})`, ...unchangedMax.map((m) => (unchanged ? m.toLocaleString('en-US') : '–'))])}\n`)
    const idx = (name) => CONFIGS.findIndex((c) => c.name === name)
    for (const level of ['moderate', 'aggressive']) {
      const off = totals[idx(level)]
      const on = totals[idx(`${level} + deltas`)]
      const session = pct(off.all, on.all)
      const pred = pct(off.predecessor, on.predecessor)
      const worst = unchangedMax[idx(`${level} + deltas`)]
      write(
        `\n${level} + deltas vs ${level}: sessions −${session.toFixed(1)}% (target ≥ 40%: ${session >= 40 ? 'met' : 'NOT met'}), ` +
          `snapshots with a predecessor −${pred.toFixed(1)}% (target ≥ 60%: ${pred >= 60 ? 'met' : 'NOT met'}), ` +
          `largest unchanged re-snapshot ${unchanged ? `${worst} tokens (target ≤ 60: ${worst <= 60 ? 'met' : 'NOT met'})` : 'none in these sessions'}.`,
      )
    }
    write('\n')
  }
  write(
    '\nTokens: o200k (gpt-tokenizer) of the text blocks of every tools/call result the client receives, stats line included (the default --stats=inline). ' +
      'Each session is replayed step by step through `node bin/cli.js` in front of the fixture server answering every call with its recorded result.\n',
  )
}

if (require.main === module) {
  const given = process.argv.slice(2)
  const corpus = findCorpus() ?? BESIDE
  const dirs = given.length > 0 ? given.map((d) => ({ set: d, dir: d })) : defaultDirs(corpus)
  runSessions({ dirs }).catch((err) => {
    process.stderr.write(`bench sessions: ${err.stack ?? err}\n`)
    process.exit(1)
  })
}

module.exports = { runSessions, defaultDirs }
