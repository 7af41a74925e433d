import { byCodePoint } from '../output/compare.js'

/** Damerau-Levenshtein distance (optimal string alignment), for did-you-mean suggestions. */
function distance(a: string, b: string): number {
  const rows = a.length + 1
  const cols = b.length + 1
  const d: number[] = new Array(rows * cols).fill(0)
  for (let i = 0; i < rows; i++) d[i * cols] = i
  for (let j = 0; j < cols; j++) d[j] = j
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[(i - 2) * cols + j - 2]! + 1)
      d[i * cols + j] = best
    }
  }
  return d[rows * cols - 1]!
}

/**
 * Up to `max` candidates close to `input`, closest first. A candidate that starts with the input also counts, so
 * `tasks li` suggests `list`.
 */
export function suggest(input: string, candidates: Iterable<string>, max = 3): string[] {
  const needle = input.toLowerCase()
  const limit = Math.max(1, Math.floor(needle.length / 3))
  const scored: Array<[string, number]> = []
  for (const candidate of new Set(candidates)) {
    const hay = candidate.toLowerCase()
    const score = hay.startsWith(needle) && needle.length > 0 ? 0.5 : distance(needle, hay)
    if (score <= limit) scored.push([candidate, score])
  }
  scored.sort((x, y) => x[1] - y[1] || byCodePoint(x[0], y[0]))
  return scored.slice(0, max).map(([candidate]) => candidate)
}
