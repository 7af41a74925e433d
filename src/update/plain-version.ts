import semverGt from 'semver/functions/gt.js'
import semverLt from 'semver/functions/lt.js'
import semverValid from 'semver/functions/valid.js'

/**
 * A plain `MAJOR.MINOR.PATCH`: no `v`, no space, no pre-release or build, no leading zero, each part below 10^15 (so
 * a safe integer). semver finds every such text valid, as itself, and orders two of them by their three numbers.
 */
const PLAIN = /^(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})$/

function parts(version: string): [number, number, number] | undefined {
  const m = PLAIN.exec(version)
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined
}

/** Two plain versions' order (−1, 0, 1), or undefined when either is not plain: then semver decides. */
function plainOrder(a: string, b: string): number | undefined {
  const x = parts(a)
  const y = parts(b)
  if (!x || !y) return undefined
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1
  return 0
}

// The three below answer as semver's functions of the same name, without evaluating semver for plain versions:
// its module builds a table of ≈ 40 regular expressions when evaluated (≈ 1.7 ms of a `doctor`, whose
// min_version check compares `0.1.0` with `0.1.0`). Anything not plain (a `v`, a pre-release, an invalid text) is
// semver's own answer. test/unit/update/plain-version.test.ts holds them equal to semver's over a corpus.

/** `semver.valid`: the version as semver normalises it, or null when it is not one. */
export function versionValid(version: string): string | null {
  return parts(version) ? version : semverValid(version)
}

/** `semver.gt(a, b)`: an invalid version throws as semver does. */
export function versionGt(a: string, b: string): boolean {
  const order = plainOrder(a, b)
  return order === undefined ? semverGt(a, b) : order > 0
}

/** `semver.lt(a, b)`: an invalid version throws as semver does. */
export function versionLt(a: string, b: string): boolean {
  const order = plainOrder(a, b)
  return order === undefined ? semverLt(a, b) : order < 0
}
