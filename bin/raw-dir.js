// @ts-check
'use strict'

// The --raw-snapshots-dir directory: created private if missing, and refused when someone else
// could plant or swap files in it. The files themselves are created by the native session,
// exclusively (never through a link or over an existing file) and under names unique to the
// session (crates/core/src/session.rs).

const fs = require('node:fs')
const path = require('node:path')

/**
 * The directory's absolute path, created (mode 0700) when missing; throws an Error naming the
 * problem when it is not a directory, not ours, or writable by others without the sticky bit.
 */
function prepareRawSnapshotsDir(dir) {
  const abs = path.resolve(dir)
  try {
    fs.mkdirSync(abs, { recursive: true, mode: 0o700 })
  } catch (err) {
    throw new Error(`cannot create ${JSON.stringify(abs)}: ${err.message}`)
  }
  const problem = dirProblem(fs.statSync(abs))
  if (problem) throw new Error(`${JSON.stringify(abs)} ${problem}`)
  return abs
}

/** Why files in a directory with these stats could be tampered with by another user, or null. */
function dirProblem(stats, uid = process.geteuid?.()) {
  if (!stats.isDirectory()) return 'is not a directory'
  // Windows: no owner or mode bits to check here (ACLs decide).
  if (uid === undefined) return null
  if (stats.uid !== uid) return `belongs to another user (uid ${stats.uid}): use a directory of your own`
  const writableByOthers = (stats.mode & 0o022) !== 0
  const sticky = (stats.mode & 0o1000) !== 0
  if (writableByOthers && !sticky) return `is writable by other users (mode ${(stats.mode & 0o7777).toString(8)}): chmod go-w it, or use a directory of your own`
  return null
}

module.exports = { prepareRawSnapshotsDir, dirProblem }
