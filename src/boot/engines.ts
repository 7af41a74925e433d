/**
 * The Node versions agentcli itself runs on (its package.json `engines.node`; a test keeps the two equal). A tool
 * that declares no range of its own gets this one; one that does must satisfy both.
 */
export const FRAMEWORK_NODE_RANGE = '^22.22.2 || ^24.15.0 || >=26'

type Version = [number, number, number]

/**
 * {@link FRAMEWORK_NODE_RANGE} as `[from, before)` pairs, checked on every start without parsing a range (the
 * parser's first call costs ≈ 0.4 ms, this ≈ 0.04 ms). A test checks the two agree on every nearby version.
 */
export const FRAMEWORK_NODE_BOUNDS: ReadonlyArray<readonly [Version, Version | null]> = [
  [
    [22, 22, 2],
    [23, 0, 0],
  ],
  [
    [24, 15, 0],
    [25, 0, 0],
  ],
  [[26, 0, 0], null],
]

/** Whether a release version (`22.22.2`) is inside {@link FRAMEWORK_NODE_BOUNDS}. */
export function inFrameworkRange(version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map((p) => Number.parseInt(p, 10))
  const v: Version = [major, minor, patch]
  return FRAMEWORK_NODE_BOUNDS.some(([from, before]) => compare(v, from) >= 0 && (!before || compare(v, before) < 0))
}

function parseVersion(text: string): Version | undefined {
  const m = /^v?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+].*)?$/.exec(text.trim())
  if (!m) return undefined
  const part = (s: string | undefined) => (s === undefined || /[xX*]/.test(s) ? -1 : Number(s))
  return [Number(m[1]), part(m[2]), part(m[3])]
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return 0
}

/** `[lowest allowed, first excluded]` of one comparator; `undefined` when it is not one this matcher knows. */
function bounds(op: string, v: Version): { min?: Version; minOpen?: boolean; max?: Version; maxOpen?: boolean } {
  const [major, minor, patch] = v
  const lo: Version = [major, Math.max(minor, 0), Math.max(patch, 0)]
  // The first version past a partial (`1.2` → 1.3.0, `1` → 2.0.0) or caret/tilde range.
  const nextPartial: Version =
    minor < 0 ? [major + 1, 0, 0] : patch < 0 ? [major, minor + 1, 0] : [major, minor, patch + 1]
  if (op === '^') {
    const top: Version =
      major > 0 || minor < 0 ? [major + 1, 0, 0] : minor > 0 || patch < 0 ? [0, minor + 1, 0] : [0, 0, patch + 1]
    return { min: lo, max: top }
  }
  if (op === '~') return { min: lo, max: minor < 0 ? [major + 1, 0, 0] : [major, minor + 1, 0] }
  if (op === '>=') return { min: lo }
  if (op === '>') return minor < 0 || patch < 0 ? { min: nextPartial } : { min: lo, minOpen: true }
  if (op === '<') return { max: lo }
  if (op === '<=') return minor < 0 || patch < 0 ? { max: nextPartial } : { max: lo, maxOpen: true }
  return { min: lo, max: nextPartial }
}

function satisfiesSet(version: Version, set: string): boolean {
  const trimmed = set.trim()
  if (trimmed === '' || trimmed === '*' || /^[xX]$/.test(trimmed)) return true
  const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(trimmed)
  const comparators = hyphen ? [`>=${hyphen[1]}`, `<=${hyphen[2]}`] : trimmed.split(/\s+/)
  for (const comparator of comparators) {
    const m = /^(\^|~|>=|<=|>|<|=)?\s*(.+)$/.exec(comparator)
    const v = m ? parseVersion(m[2]!) : undefined
    if (!m || !v) throw new Error(`unsupported range ${JSON.stringify(set)}`)
    const b = bounds(m[1] ?? '=', v)
    if (b.min && (b.minOpen ? compare(version, b.min) <= 0 : compare(version, b.min) < 0)) return false
    if (b.max && (b.maxOpen ? compare(version, b.max) > 0 : compare(version, b.max) >= 0)) return false
  }
  return true
}

/**
 * Whether a Node version (`process.versions.node`) is in a semver range as npm writes `engines.node`: `||`,
 * space-joined comparators, `^`, `~`, `>=`, `>`, `<`, `<=`, `=`, x-ranges and hyphen ranges (prereleases are
 * compared by their release). A small matcher of our own: the `semver` package would cost start-up time on
 * every run for a check that almost always passes. Throws on syntax it does not know.
 */
export function satisfiesRange(version: string, range: string): boolean {
  const v = parseVersion(version)
  if (!v || v[1] < 0 || v[2] < 0) throw new Error(`not a version: ${version}`)
  return range.split('||').some((set) => satisfiesSet(v, set))
}

/**
 * The ranges this Node falls outside of: the framework's own, then the tool's `engines.node` (when it declares
 * one). Empty when it runs here. A tool range this matcher cannot read is reported on stderr and not enforced:
 * the framework's own range still is.
 */
export function unmetEngines(toolRange: unknown, version = process.versions.node): string[] {
  const unmet: string[] = []
  if (!inFrameworkRange(version)) unmet.push(FRAMEWORK_NODE_RANGE)
  if (typeof toolRange === 'string' && toolRange.trim() !== '' && toolRange !== FRAMEWORK_NODE_RANGE) {
    try {
      if (!satisfiesRange(version, toolRange)) unmet.push(toolRange)
    } catch (error) {
      process.stderr.write(`agentcli: engines.node ${(error as Error).message}; not checked\n`)
    }
  }
  return unmet
}
