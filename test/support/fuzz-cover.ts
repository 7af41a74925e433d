import { invocation, prng } from '../../src/verify/fuzz.js'
import { commandFor } from '../../src/verify/invariants.js'
import type { Ref } from '../../src/verify/reference-types.js'

/**
 * The commands of `ref` that none of the first `runs` invocations `verify --fuzz <runs> --seed <seed>` draws (each
 * invocation's command read as verify reads it, by the longest matching path). A test that cuts its fuzz count to
 * stay cheap asserts this is empty: the count still sends fuzzed input to every command.
 */
export function undrawnCommands(ref: Ref, runs: number, seed: number): string[] {
  const r = prng(seed)
  const drawn = new Set<string>()
  for (let i = 0; i < runs; i++) {
    const found = commandFor(ref, invocation(r, ref).args)
    if (found) drawn.add(found.path)
  }
  return ref.commands.map((c) => c.path).filter((path) => !drawn.has(path))
}
