import { describe, expect, it } from 'vitest'
import { needsProcess, recorded, replay } from '../../support/envelopes.js'
import { useSandbox } from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'

/*
 * The recorded envelopes (test/support/envelopes.ts) replayed in-process, byte for byte: every call but those that
 * need a process of their own (a clock preload), which test/cli/contract/envelopes.test.ts replays with the real
 * bin. test/cli/runtime/in-process.test.ts holds in-process and spawned runs side by side.
 */
const box = useSandbox()

describe('envelopes recorded before the redesign, in-process', () => {
  const fixture = recorded()
  it('has a recorded fixture', () => expect(fixture.length).toBeGreaterThan(0))
  for (const group of fixture) {
    const inProcess = group.steps.filter((s) => !needsProcess(s)).length
    it(`replay byte for byte: ${group.group} (${inProcess} of ${group.steps.length} calls)`, async () => {
      expect(await replay(box(), group, tasksInProcess, needsProcess)).toBe(inProcess)
    }, 120_000)
  }
})
