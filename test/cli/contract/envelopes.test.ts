import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import {
  FIXTURE,
  groups,
  needsProcess,
  play,
  RECORD,
  type Recorded,
  type Runner,
  recorded,
  replay,
} from '../../support/envelopes.js'
import { ROOT, tasks, useSandbox } from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'

/*
 * The recorded envelopes (test/support/envelopes.ts): recorded here from the real bin (`RECORD_ENVELOPES=1`), and
 * replayed here, spawning the bin, for the calls that need a process of their own (a clock preload), in their
 * group's order and state, and for a sample of groups whole; test/unit/contract/envelopes.test.ts replays every
 * other call in-process.
 */
const box = useSandbox()
/** Replayed through the real bin although no call needs it: the in-process tier's likeness, kept honest here too. */
const SPAWN_SAMPLE = new Set(['edges, empty store', 'update notice'])
/**
 * A group with a call that needs a process: that call through the bin, the group's other calls (which build its
 * state: a token, a cursor, the store) in-process, as the in-process tier replays them. Every step is still compared
 * byte for byte; a whole group through the bin spent 39 processes on calls that need none.
 */
const mixed: Runner = (b, args, options) =>
  options.env.NODE_OPTIONS === undefined ? tasksInProcess(b, args, options) : tasks(b, args, options)

describe('envelopes recorded before the redesign', () => {
  if (RECORD)
    it('are recorded from the current build (RECORD_ENVELOPES=1)', async () => {
      const all: Recorded[] = []
      const corpusBox = sandbox()
      try {
        for (const group of await groups(corpusBox, tasks)) {
          const b = sandbox()
          try {
            all.push({ group: group.name, setup: group.setup, blank: group.blank, steps: await play(b, group, tasks) })
          } finally {
            b.cleanup()
          }
        }
      } finally {
        corpusBox.cleanup()
      }
      mkdirSync(join(ROOT, 'test/fixtures/envelopes'), { recursive: true })
      writeFileSync(FIXTURE, `${JSON.stringify(all, null, 1)}\n`)
    }, 1_200_000)

  const fixture = recorded()
  if (!RECORD) {
    it('has a recorded fixture', () => expect(fixture.length).toBeGreaterThan(0))
    it('has calls that need a process, all replayed here', () =>
      expect(fixture.filter((g) => g.steps.some(needsProcess)).length).toBeGreaterThan(0))
  }
  for (const group of fixture.filter((g) => SPAWN_SAMPLE.has(g.group)))
    it(`replay byte for byte, spawned: ${group.group} (${group.steps.length} calls)`, async () => {
      expect(await replay(box(), group, tasks)).toBe(group.steps.length)
    }, 600_000)
  for (const group of fixture.filter((g) => !SPAWN_SAMPLE.has(g.group) && g.steps.some(needsProcess))) {
    const spawned = group.steps.filter(needsProcess).length
    it(`replay byte for byte, the calls needing a process spawned: ${group.group} (${spawned} of ${group.steps.length} calls)`, async () => {
      expect(await replay(box(), group, mixed)).toBe(group.steps.length)
    }, 600_000)
  }
})
