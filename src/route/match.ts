/** The words before the first flag: the command or topic an argv names. */
export function leadingWords(argv: readonly string[]): string[] {
  const words: string[] = []
  for (const token of argv) {
    if (token.startsWith('-')) break
    words.push(token)
  }
  return words
}

/** What {@link longestMatch} found: the thing, its id (`login:approve`) and how many words named it. */
export type Match<T> = { found: T; id: string; words: number }

/** The most words any of `ids` has (`login:approve` has 2): no longer run of words can name one of them. */
export function idDepth(ids: Iterable<string>): number {
  let depth = 0
  for (const id of ids) depth = Math.max(depth, id.split(':').length)
  return depth
}

/**
 * The router's one rule, used by every surface (the entry, the boot's look-up, `reference <path>`, verify): the
 * longest run of leading `words` that names something wins (`login approve` over `login`). `find` is asked with
 * the colon id of each candidate, longest first, from at most `depth` words ({@link idDepth} of the ids `find`
 * knows): a batch's thousands of positional ids are never joined into ever-longer candidate ids.
 */
export function longestMatch<T>(
  words: readonly string[],
  find: (id: string) => T | undefined,
  depth: number = words.length,
): Match<T> | undefined {
  for (let n = Math.min(depth, words.length); n > 0; n--) {
    const id = words.slice(0, n).join(':')
    const found = find(id)
    if (found !== undefined) return { found, id, words: n }
  }
  return undefined
}
