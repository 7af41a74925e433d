import { Help } from '@oclif/core/help'
import { describe, expect, it } from 'vitest'
import { AgentHelp } from '../../../src/runtime/help-class.js'

type Item = { name?: string; id?: string; hidden?: boolean; n: number }

/** oclif's own lists beside ours, for one config. */
class Both extends AgentHelp {
  get ours() {
    return { commands: this.sortedCommands, topics: this.sortedTopics }
  }
}
class Oclifs extends Help {
  get theirs() {
    return { commands: this.sortedCommands, topics: this.sortedTopics }
  }
}

function config(topics: Item[], commands: Item[]) {
  return { topics, commands, topicSeparator: ' ', pjson: { oclif: {} } } as never
}

/** A pseudo-random sample of names: nested, repeated, hidden, one name inside another (`b` in `a:b:c`). */
function sample(seed: number, size: number): { topics: Item[]; commands: Item[] } {
  let state = seed
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state % n
  }
  const words = ['a', 'b', 'ab', 'job', 'list', 'b:c', '', 'x']
  const name = () => Array.from({ length: 1 + next(3) }, () => words[next(words.length)]).join(':')
  const item = (key: 'id' | 'name', n: number): Item => ({ [key]: name(), hidden: next(4) === 0, n })
  return {
    topics: Array.from({ length: size }, (_, n) => item('name', n)),
    commands: Array.from({ length: size }, (_, n) => item('id', n)),
  }
}

describe('the lists help sorts', () => {
  it('are the lists oclif computes, item for item, with and without hidden ones', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const { topics, commands } = sample(seed, 1 + (seed % 25))
      for (const all of [false, true]) {
        const theirs = new Oclifs(config(structuredClone(topics), structuredClone(commands)), { all }).theirs
        const ours = new Both(config(structuredClone(topics), structuredClone(commands)), { all }).ours
        expect(ours, `seed ${seed}, all ${all}`).toEqual(theirs)
      }
    }
  })

  it('keep the last of equal ids and names, and topics with a child only', () => {
    const topics = [
      { name: 'job', n: 0 },
      { name: 'job:list', n: 1 },
      { name: 'list', n: 2 },
      { name: 'job', n: 3 },
      { name: 'solo', n: 4 },
    ]
    const commands = [
      { id: 'b', n: 0 },
      { id: 'a', n: 1 },
      { id: 'b', n: 2 },
      { id: 'c', hidden: true, n: 3 },
    ]
    const ours = new Both(config(topics, commands)).ours
    expect(ours.commands.map((c) => (c as unknown as Item).n)).toEqual([1, 2])
    // `list` is inside `job:list` but nothing contains `list:`; `job` has a child, once.
    expect(ours.topics.map((t) => (t as unknown as Item).n)).toEqual([3])
  })
})
