#!/usr/bin/env node
'use strict'

const { findCorpus, BESIDE } = require('./corpus.js')

// The reach part of `npm run bench` (also `node bench/reach.js [--misses=LEVEL] [DIR ...]`): replays every
// recorded session (../shared/corpus/sessions, __test__/fixtures/sessions, /work/captured when
// present, or the directories given) through the real bin (bench/replay.js) at light, moderate
// + deltas (the default) and aggressive + deltas, and asks of every step that acts on a uid
// (chrome-devtools-mcp `uid`, `from_uid`, `to_uid`, fill_form's `elements[].uid`; Playwright
// `ref`, `startRef`, `endRef`; and the option a `fill` or `fill_form` picks by its text on a
// select's uid, which the agent must see to name) whether the agent held that uid before the call: written as a node
// (on its own, among siblings, after ` > `, or as a table row's cell) in what it holds for the
// page, i.e. the last full view plus the deltas since (an unchanged run stands for the lines
// it names in the view before). A uid only inside a marker's range is not in reach: it needs
// an expand_snapshot or search_snapshot call. Prints intents in reach per level and session
// set, and every miss at moderate with the marker (or reason) that hid it. A benchmark, never a
// test.

const path = require('node:path')

const { ROOT, sessionSets, readSession, modelText, snapshotSection, replay, defaultDirs } = require('./replay.js')
const { nodeSegments } = require('./snapshot-measures.js')

const LEVELS = [
  { name: 'light', args: ['--filter-level=light'] },
  { name: 'moderate', args: ['--filter-level=moderate', '--snapshot-deltas=on'] },
  { name: 'aggressive', args: ['--filter-level=aggressive', '--snapshot-deltas=on'] },
]
const ID = /^(?:\d+_\d+|[a-z]*\d+e\d+|e\d+)$/ // chrome-devtools-mcp uids, Playwright refs
const missesAt = (process.argv.find((a) => a.startsWith('--misses=')) ?? '--misses=moderate').slice('--misses='.length)
// `--probes`: every miss at that level lists each candidate older uid and what upstream received for it.
const listProbes = process.argv.includes('--probes')
const UID_KEYS = new Set(['uid', 'from_uid', 'to_uid', 'ref', 'startRef', 'endRef'])

/** The uids a call's arguments name as elements to act on. */
function actedUids(args) {
  const out = []
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (UID_KEYS.has(k) && typeof x === 'string') out.push(x)
        else if (k !== 'fixture') walk(x)
      }
    }
  }
  walk(args)
  return out
}

// A Playwright line `- role "name" [ref=e5]:` or `- 'quoted item'`: its text as our notation reads it.
function unyaml(t) {
  if (!t.startsWith('- ')) return t
  let s = t.slice(2)
  if (s.startsWith("'") && s.endsWith("'")) s = s.slice(1, -1).replace(/''/g, "'")
  return s
}

// `(uid A…B)`, `(uid A, B)`, `uid A…B` inside a marker or a run line: its first and last uid.
// A marker without such a list names its range by its call (`expand_snapshot uid=A until=B`).
function rangeOf(line) {
  const m = /uid ([^\s,…)]+)(?:(?:…|, )([^\s,…)]+))?/.exec(line) ?? /uid=(\S+)(?: until=(\S+))?/.exec(line)
  return m ? { a: m[1], b: m[2] ?? m[1] } : null
}

/**
 * The lines of one snapshot section as entries in order: nodes { kind: 'node', uid, depth },
 * markers { kind: 'marker', depth, text, range }, runs of unchanged siblings or rows
 * { kind: 'run', depth, a, b }. `kind` of the section: 'full', 'delta' or 'same'.
 */
function parseView(section) {
  const entries = []
  let kind = 'full'
  const lines = section.split('\n')
  let rowsLeft = 0
  let rowDepth = 0
  let optionCounts = []
  for (const raw of lines) {
    const indent = raw.length - raw.trimStart().length
    const depth = indent / 2
    const t = unyaml(raw.trimStart())
    if (t === '') continue
    if (t.startsWith('#snapshot-filter snapshot')) {
      if (/: unchanged since snapshot/.test(t)) kind = 'same'
      else if (/: delta against snapshot/.test(t)) kind = 'delta'
      continue
    }
    if (t.startsWith('#') || t.startsWith('[mcp-snapshot-filter')) continue
    const table = /^… table of (\d+) records, a line each: (.*)$/.exec(t)
    if (table) {
      rowsLeft = Number(table[1])
      rowDepth = depth
      // The options a header states by its rule (`[options …: its next N uids]`) are in reach too.
      const cols = table[2].split(/; \d+ text cells? each not written| \(uid /)[0].split(' | ')
      optionCounts = cols.map((c) => Number(/: its next (\d+) uids\]/.exec(c)?.[1] ?? 0))
      continue
    }
    if (t.startsWith('…')) {
      const rowsRun = /^… (\d+) rows unchanged/.exec(t)
      if (rowsRun) rowsLeft -= Number(rowsRun[1])
      const range = rangeOf(t)
      if (rowsRun || / unchanged \(uid /.test(t)) {
        if (range) entries.push({ kind: 'run', depth, a: range.a, b: range.b })
      } else if (!t.startsWith('… removed')) entries.push({ kind: 'marker', depth, text: t, range })
      continue
    }
    if (rowsLeft > 0 && depth === rowDepth) {
      rowsLeft--
      nodeSegments(t).forEach(({ text }, k) => {
        const uid = text.trim().split(' ')[0]
        if (!ID.test(uid)) return
        entries.push({ kind: 'node', uid, depth })
        const [prefix, n] = uid.split('_')
        for (let j = 1; j <= (optionCounts[k] ?? 0); j++) entries.push({ kind: 'node', uid: `${prefix}_${Number(n) + j}`, depth: depth + 1 })
      })
      continue
    }
    rowsLeft = 0
    // A snapshot sent as it came (its filtered form was no shorter): upstream's own lines.
    const upstream = /^uid=(\S+)/.exec(t)
    if (upstream) {
      entries.push({ kind: 'node', uid: upstream[1], depth })
      continue
    }
    if (raw.trimStart().startsWith('- ')) {
      // Playwright: one node a line, its ref in `[ref=…]`.
      const ref = /\[ref=([^\]]+)\]/.exec(t)
      if (ref) entries.push({ kind: 'node', uid: ref[1], depth })
      continue
    }
    for (const { text, child } of nodeSegments(t)) {
      const uid = text.trim().split(' ')[0]
      if (ID.test(uid)) entries.push({ kind: 'node', uid, depth: child ? depth + 1 : depth })
    }
  }
  return { kind, entries }
}

/**
 * What the agent holds after `section`, given what it held (`held`, entries in order, or null)
 * and `prevRaw`, the raw order of the snapshot the held view came from: a run line names its
 * first and last uid there (either may be a node the level did not write, a table's text cell),
 * and stands for every held line from the first to the end of the last one's subtree.
 */
function hold(held, section, prevRaw) {
  const { kind, entries } = parseView(section)
  if (kind === 'same') return held
  if (kind === 'full' || held === null) return entries
  const key = (e) => prevRaw.get(e.kind === 'node' ? e.uid : e.range?.a)?.i
  const out = []
  for (const e of entries) {
    if (e.kind !== 'run') {
      out.push(e)
      continue
    }
    const span = rawSpan(prevRaw, e.a, e.b)
    if (!span) continue
    out.push(...held.filter((h) => {
      const i = key(h)
      return i !== undefined && i >= span.from && i <= span.to
    }))
  }
  return out
}

/**
 * Uid → { i: position, depth, parent } in a raw chrome-devtools-mcp (or Playwright) snapshot, as
 * an ordered list too; `options` maps a node's uid to its `option` children's { uid, name }.
 */
function rawOrder(section) {
  const pos = new Map()
  const options = new Map()
  const labels = new Map() // uid → its line's role and name
  const stack = [] // the uids of the open ancestors, by depth
  for (const line of section.split('\n')) {
    const m = /^( *)uid=(\S+)/.exec(line) ?? /^( *)- .*\[ref=([^\]]+)\]/.exec(line)
    if (!m || pos.has(m[2])) continue
    const depth = m[1].length
    while (stack.length > 0 && stack[stack.length - 1].depth >= depth) stack.pop()
    const parent = stack[stack.length - 1]?.uid
    pos.set(m[2], { i: pos.size, depth })
    const label = roleAndName(line)
    if (label !== null) labels.set(m[2], label)
    const option = /^ *uid=\S+ option "((?:[^"\\]|\\.)*)"/.exec(line)
    if (option && parent !== undefined) {
      if (!options.has(parent)) options.set(parent, [])
      options.get(parent).push({ uid: m[2], name: option[1] })
    }
    stack.push({ uid: m[2], depth })
  }
  pos.order = [...pos.values()]
  pos.options = options
  pos.labels = labels
  return pos
}

/** A raw snapshot line's role and name (`button "Save"`), as chrome-devtools-mcp or Playwright write it. */
function roleAndName(line) {
  const m = /^ *uid=\S+ (\S+)(?: ("(?:[^"\\]|\\.)*"))?/.exec(line) ?? /^ *- ([^\s:"[]+)(?: ("(?:[^"\\]|\\.)*"))?/.exec(line)
  return m ? `${m[1]} ${m[2] ?? ''}` : null
}

/**
 * The options a step picks by name: chrome-devtools-mcp's `fill` and `fill_form` choose a
 * select's option by its text on the select's uid, so the agent needs that option in view to
 * name it (or to know the select offers it). Each is an intent too, on the option's uid.
 */
function pickedOptions(args, raw) {
  const fills = Array.isArray(args?.elements) ? args.elements : [args ?? {}]
  const out = []
  for (const { uid, value } of fills) {
    const hit = (raw.options.get(uid) ?? []).find((o) => o.name === value)
    if (hit) out.push(hit.uid)
  }
  return out
}

/** The raw positions from `a` to the end of `b`'s subtree, or null when either is unknown. */
function rawSpan(raw, a, b) {
  const pa = raw.get(a)
  const pb = raw.get(b)
  if (!pa || !pb || pb.i < pa.i) return null
  let to = pb.i
  while (to + 1 < raw.order.length && raw.order[to + 1].depth > pb.depth) to++
  return { from: pa.i, to }
}

/** Why `uid` is not in `held`: the marker whose range holds it in the raw order, or a reason. */
function missReason(uid, held, raw) {
  if (held === null) return 'no snapshot of the page held'
  const p = raw.get(uid)
  if (p === undefined) return 'not in the latest raw snapshot either'
  for (const e of held) {
    // A "layout nodes dropped" line names no control: it is no marker of what hid one.
    if (e.kind !== 'marker' || !e.range || / layout nodes dropped/.test(e.text)) continue
    const span = rawSpan(raw, e.range.a, e.range.b)
    if (span && p.i >= span.from && p.i <= span.to) return e.text.replace(/: expand_snapshot.*$/, '')
  }
  return 'not shown, under no marker'
}

/**
 * Replays `steps` at `args`; per intent { step, uid, inReach, reason, older }. A miss on a uid the
 * action sends upstream whose element the agent holds by an older uid is probed through the bin
 * (`olderUid`): `older` is then { uid, tried } when exactly one uid shown of the same role and name
 * arrives upstream as the recorded one.
 */
async function reachOf(steps, args) {
  const got = await replay(steps, args)
  const held = new Map() // page → entries
  const raw = new Map() // page → raw order of its latest snapshot
  const labels = new Map() // page → uid → role and name, over every raw snapshot of the page
  // page → every uid written as a node in a view the agent received: its context keeps them all,
  // also those a later full view or a delta against an older snapshot no longer repeats.
  const shown = new Map()
  const out = []
  for (const { step, text } of got) {
    const page = JSON.stringify(step.args?.pageId ?? null)
    const view = held.get(page) ?? null
    const picked = step.tool === 'fill' || step.tool === 'fill_form' ? pickedOptions(step.args, raw.get(page) ?? rawOrder('')) : []
    const acted = actedUids(step.args)
    for (const uid of [...acted, ...picked]) {
      const inReach = view !== null && view.some((e) => e.kind === 'node' && e.uid === uid)
      const r = { step, uid, inReach, reason: inReach ? null : missReason(uid, view, raw.get(page) ?? rawOrder('')), older: null }
      // Only a uid the action itself sends can reach upstream as another; a picked option is named by its text.
      if (!inReach && acted.includes(uid)) r.older = await olderUid(steps, args, step, uid, shown.get(page) ?? new Set(), labels.get(page) ?? new Map())
      out.push(r)
    }
    const section = snapshotSection(text)
    if (section !== null) {
      held.set(page, hold(view, section, raw.get(page) ?? rawOrder('')))
      if (!shown.has(page)) shown.set(page, new Set())
      for (const e of parseView(section).entries) if (e.kind === 'node') shown.get(page).add(e.uid)
    }
    const rawSection = snapshotSection(modelText(step.result))
    if (rawSection !== null) {
      const order = rawOrder(rawSection)
      raw.set(page, order)
      if (!labels.has(page)) labels.set(page, new Map())
      for (const [uid, label] of order.labels) labels.get(page).set(uid, label)
    }
  }
  return out
}

/** `args` with every uid key naming `from` naming `to` instead. */
function withUid(args, from, to) {
  const walk = (v) => {
    if (Array.isArray(v)) return v.map(walk)
    if (!v || typeof v !== 'object') return v
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, UID_KEYS.has(k) && x === from ? to : walk(x)]))
  }
  return walk(args)
}

/**
 * Whether the agent reaches `uid` at `step` through an older uid it holds: the uids it was shown
 * on the page whose raw line showed the same role and name as `uid`'s are candidates; each is sent through the real
 * bin in place of `uid` (a fresh replay up to the step), and the one counts only when exactly
 * one candidate arrives upstream with the action's recorded uids. { uid, tried } or null.
 */
async function olderUid(steps, args, step, uid, shown, labels) {
  const label = labels.get(uid)
  if (label === undefined) return null
  const candidates = [...shown].filter((x) => x !== uid && labels.get(x) === label)
  const want = JSON.stringify(actedUids(step.args))
  const tried = []
  for (const x of candidates) {
    const { arrived } = await replay(steps, args, { step: step.step, args: withUid(step.args, uid, x) })
    tried.push({ uid: x, arrived: arrived === null ? null : actedUids(arrived) })
  }
  const hits = tried.filter((t) => JSON.stringify(t.arrived) === want)
  return { uid: hits.length === 1 ? hits[0].uid : null, tried }
}

async function runReach({ dirs, write = (s) => process.stdout.write(s) }) {
  const sets = sessionSets(dirs)
  if (sets.length === 0) {
    write('(no recorded sessions found)\n')
    return
  }
  const head = ['session set', ...LEVELS.flatMap((l) => [l.name + (l.name === 'light' ? '' : ' + deltas'), 'through an older uid'])]
  const line = (cells) => `| ${cells.join(' | ')} |`
  const rows = []
  const misses = []
  const totals = LEVELS.map(() => ({ in: 0, older: 0, all: 0 }))
  for (const { set, dir, files } of sets) {
    const counts = LEVELS.map(() => ({ in: 0, older: 0, all: 0 }))
    for (const file of files) {
      const steps = readSession(file)
      for (const [k, level] of LEVELS.entries()) {
        for (const r of await reachOf(steps, level.args)) {
          counts[k].all++
          if (r.inReach) counts[k].in++
          else {
            if (r.older?.uid) counts[k].older++
            if (level.name === missesAt) misses.push({ file: path.basename(file), ...r })
          }
        }
      }
    }
    counts.forEach((c, k) => {
      totals[k].in += c.in
      totals[k].older += c.older
      totals[k].all += c.all
    })
    rows.push([`${set} (${path.relative(ROOT, dir) || dir}, ${files.length} sessions)`, ...counts.flatMap((c) => [`${c.in}/${c.all}`, `+${c.older}`])])
  }
  write(`${line(head)}\n${line(head.map(() => '---'))}\n`)
  for (const r of rows) write(`${line(r)}\n`)
  write(`${line(['**all**', ...totals.flatMap((c) => [`**${c.in}/${c.all}**`, `**+${c.older}**`])])}\n`)
  write(`\nIn reach through an older uid: ${LEVELS.map((l, k) => `${l.name} ${totals[k].older}`).join(', ')}\n`)
  write(`\nMisses at ${missesAt}${missesAt === 'light' ? '' : ' + deltas'} (${misses.length}, ${misses.filter((m) => m.older?.uid).length} in reach through an older uid):\n`)
  const arrivedAs = (t) => `${t.uid} → ${t.arrived === null ? 'nothing' : t.arrived.join(', ')}`
  for (const m of misses) {
    const older = m.older?.uid
      ? `; in reach through an older uid: ${m.older.uid} (sent through the bin, arrived upstream as ${m.uid}: the only one of ${m.older.tried.length} uids of its role and name shown)`
      : ''
    const probes = listProbes && m.older ? ` [probes: ${m.older.tried.map(arrivedAs).join('; ') || 'none'}]` : ''
    write(`- ${m.file} step ${m.step.step} ${m.step.tool} ${m.uid}${m.step.targetName ? ` "${m.step.targetName}"` : ''}: ${m.reason}${older}${probes}\n`)
  }
  write(
    '\nIn reach: the uid an action names is written as a node in what the agent holds for its page before the call (the last full snapshot plus the deltas since; ' +
      'a table row writes its controls\' uids, its header states its options\'). Each session replayed through `node bin/cli.js` in front of the fixture server. ' +
      'Through an older uid: a miss where, of the uids shown to the agent on the page whose raw line showed the recorded uid\'s role and name, exactly one arrives upstream as the recorded uid when sent in its place through the bin.\n',
  )
}

function reachDirs(corpusDir) {
  const [shared, captured] = defaultDirs(corpusDir)
  return [shared, { set: 'own app sessions', dir: path.join(ROOT, '__test__', 'fixtures', 'sessions') }, captured]
}

if (require.main === module) {
  // `--misses=LEVEL` lists the misses of that level instead of moderate's; `--probes` adds what each probe delivered.
  const given = process.argv.slice(2).filter((a) => !a.startsWith('--misses=') && a !== '--probes')
  const corpus = findCorpus() ?? BESIDE
  const dirs = given.length > 0 ? given.map((d) => ({ set: d, dir: d })) : reachDirs(corpus)
  runReach({ dirs }).catch((err) => {
    process.stderr.write(`bench reach: ${err.stack ?? err}\n`)
    process.exit(1)
  })
}

module.exports = { runReach, reachDirs, parseView, hold, actedUids }
